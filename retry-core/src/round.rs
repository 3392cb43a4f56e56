//! The one retry loop: [`drive!`](crate::drive) runs rounds until the call
//! ends, and every entry point uses it: `Retry::call` and the blocking
//! calls, `#[retry]`'s expansion, the tower layer and the reqwest
//! middleware. A round is an attempt (an [`Attempt`]: raced against the
//! policy's `attempt_timeout`, after an adaptive budget's pacing wait if
//! any), then `Run::settle` (the success, or the decision and its hooks),
//! then the wait on the call's timer.
//!
//! It is a macro, not a function, because each round's attempt is made by
//! an `FnOnce` written in place: so an attempt may borrow what the caller
//! owns mutably (a `#[retry]` method's `&mut self`), and the caller's future
//! stays `Send` exactly when its parts are (a generic driver over an
//! attempt-making closure cannot prove that for borrowed attempts today).
//!
//! The error of a failed attempt is consumed by the decision before any
//! await, so a `!Send` error cannot make the future `!Send`.

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::hooks::HookSet;
use crate::policy::Policy;
use crate::run::Run;
use std::borrow::Borrow;
use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

/// Runs rounds of `$run` (a `Run`), each attempt made by calling `$make`
/// (an `FnOnce`, usually a closure written in place), until the call ends;
/// evaluates to the call's result. Used inside an `async` context.
/// Statements given before it (`drive!(run, each { let a = x.clone(); } || ...)`)
/// run at the start of each round, in the loop's scope, so an attempt may
/// borrow or take what they make.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{Hooks, Policy};
/// use retrykit_core::__private::run::{drive, Run};
/// let mut run = Run::for_policy(Policy::default().into(), Hooks::new());
/// let name = String::from("a");
/// let out: Result<usize, std::io::Error> = drive!(run, each { let copy = name.clone(); } || async { Ok(copy.len()) });
/// assert_eq!(out.unwrap(), 1);
/// # }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! drive {
    ($run:expr, each { $($each:tt)* } $make:expr) => {
        loop {
            $($each)*
            let result = $run.attempt($make).await;
            if let ::core::ops::ControlFlow::Break(result) = $run.settle(result) {
                break result;
            }
            $run.wait().await;
        }
    };
    ($run:expr, $make:expr) => {
        $crate::drive!($run, each {} $make)
    };
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// This round's attempt, made by `make` (an `FnOnce`, so it may hand
    /// out what it borrows) as it begins: now, or, when an adaptive budget
    /// paces the call's first attempt, once that wait is over.
    #[inline]
    pub fn attempt<M, Fut, T, E>(&mut self, make: M) -> Attempt<'_, P, C, S, H, M, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        H: HookSet<E>,
    {
        let stage = if self.pace_first_attempt() {
            Stage::Pacing { make: Some(make) }
        } else {
            self.begin_attempt::<E>();
            Stage::Running { fut: make() }
        };
        Attempt { run: self, stage }
    }

    /// What an attempt's result makes of the call: its end (`Break`: the
    /// success, or the error it gives up with), or a retry (`Continue`: the
    /// wait is armed, see [`wait`](Self::wait)).
    #[inline]
    pub fn settle<T, E>(&mut self, result: Result<T, E>) -> ControlFlow<Result<T, E>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        match result {
            Ok(value) => {
                self.succeeded();
                ControlFlow::Break(Ok(value))
            }
            Err(error) => match self.decide(error) {
                Ok(()) => ControlFlow::Continue(()),
                Err(error) => ControlFlow::Break(Err(error)),
            },
        }
    }

    /// The wait `settle` armed (ready at once when nothing is armed).
    pub fn wait(&mut self) -> impl Future<Output = ()> {
        poll_fn(|cx| self.timer.poll(cx).unwrap_or(Poll::Ready(())))
    }
}

pin_project_lite::pin_project! {
    /// Where an [`Attempt`] stands.
    #[project = StageProj]
    enum Stage<M, Fut> {
        /// An adaptive budget's wait before the call's first attempt.
        Pacing { make: Option<M> },
        /// Begun: the attempt, raced against its timeout.
        Running { #[pin] fut: Fut },
    }
}

pin_project_lite::pin_project! {
    /// One attempt of a call (see [`Run::attempt`]): begun (counted, its
    /// timeout armed, its future made) when made, or after the wait an
    /// adaptive budget imposes on a call's first attempt. A
    /// timeout the error type cannot stand for (`Classify::from_timeout`
    /// gives `None`) lets the attempt run on (`init()` and the build refuse
    /// such a policy where they can). Polled inside the call's span.
    #[must_use = "an attempt does nothing until awaited"]
    pub struct Attempt<'r, P, C, S: Sleeper, H, M, Fut> {
        run: &'r mut Run<P, C, S, H>,
        #[pin]
        stage: Stage<M, Fut>,
    }
}

impl<P, C, S, H, M, Fut, T, E> Future for Attempt<'_, P, C, S, H, M, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    M: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let mut this = self.project();
        let run = this.run;
        #[cfg(feature = "tracing")]
        let _span = run.span().clone().entered();
        loop {
            let make = match this.stage.as_mut().project() {
                StageProj::Running { fut } => {
                    if let Poll::Ready(result) = fut.poll(cx) {
                        return Poll::Ready(result);
                    }
                    return match run.timer.poll(cx) {
                        Some(Poll::Ready(())) => match E::from_timeout(AttemptTimeout {
                            attempt: run.tally.attempts,
                            timeout: run.policy().attempt_timeout().unwrap_or_default(),
                        }) {
                            Some(timed_out) => Poll::Ready(Err(timed_out)),
                            None => Poll::Pending,
                        },
                        _ => Poll::Pending,
                    };
                }
                StageProj::Pacing { make } => {
                    ready!(run.timer.poll(cx).unwrap_or(Poll::Ready(())));
                    make.take()
                }
            };
            run.begin_attempt::<E>();
            let make = make.expect("an attempt is made once");
            this.stage.set(Stage::Running { fut: make() });
        }
    }
}
