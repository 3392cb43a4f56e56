//! The one retry loop: [`drive!`](crate::drive) runs rounds until the call
//! ends, and every entry point uses it: `Retry::call` and the blocking
//! calls, `#[retry]`'s expansion, the tower layer and the reqwest
//! middleware. Before the first round comes the wait an adaptive budget
//! may impose (`Run::pace`); a round is an attempt (an [`Attempt`]: raced
//! against the policy's `attempt_timeout`), then `Run::settle` (the
//! success, or the decision and its hooks), then the wait on the call's
//! timer.
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
use std::task::{Context, Poll};

/// Runs rounds of `$run` (a `Run`), each attempt made by calling `$make`
/// (an `FnOnce`, usually a closure written in place), until the call ends;
/// evaluates to the call's result. `drive!(run, hedged make)` takes an
/// `FnMut` instead, and each round is a race of hedged attempts
/// ([`Run::race`]), for a policy with `hedge_after` (see [`Run::hedges`]). Used inside an `async` context.
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
    (@rounds $run:expr, each { $($each:tt)* } $attempt:expr) => {{
        $run.pace().await;
        loop {
            $($each)*
            let result = $attempt.await;
            if let ::core::ops::ControlFlow::Break(result) = $run.settle(result) {
                break result;
            }
            $run.wait().await;
        }
    }};
    ($run:expr, hedged $make:expr) => {
        $crate::drive!(@rounds $run, each {} $run.race(&mut $make))
    };
    ($run:expr, each { $($each:tt)* } $make:expr) => {
        $crate::drive!(@rounds $run, each { $($each)* } $run.attempt($make))
    };
    ($run:expr, $make:expr) => {
        $crate::drive!($run, each {} $make)
    };
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// The wait an adaptive budget imposes before the call's first attempt:
    /// ready at once for every other policy (one inline test).
    #[inline]
    pub fn pace(&mut self) -> impl Future<Output = ()> {
        let paced = self.pace_first_attempt();
        poll_fn(move |cx| match paced {
            true => self.timer.poll(cx).unwrap_or(Poll::Ready(())),
            false => Poll::Ready(()),
        })
    }

    /// This round's attempt: begun (counted, the breaker asked, its
    /// timeout armed) as `make` makes it; an attempt the breaker refused is
    /// never made, and ends at once with the error standing for the refusal.
    #[inline]
    pub fn attempt<M, Fut, T, E>(&mut self, make: M) -> Attempt<'_, P, C, S, H, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        let fut = match self.begin_attempt::<E>() {
            None => Gated::Sent { fut: make() },
            Some(refusal) => Gated::Refused {
                out: Some(Err(refusal)),
            },
        };
        Attempt { run: self, fut }
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
    /// One attempt of a call (see [`Run::attempt`]), raced against the
    /// policy's `attempt_timeout`. A timeout the error type cannot stand
    /// for (`Classify::from_timeout` gives `None`) lets the attempt run on
    /// (`init()` and the build refuse such a policy where they can). Polled
    /// inside the call's span.
    #[must_use = "an attempt does nothing until awaited"]
    pub struct Attempt<'r, P, C, S: Sleeper, H, Fut: Future> {
        run: &'r mut Run<P, C, S, H>,
        #[pin]
        fut: Gated<Fut>,
    }
}

pin_project_lite::pin_project! {
    /// An attempt sent, or refused by the policy's breaker (never made).
    #[project = GatedProj]
    enum Gated<Fut: Future> {
        Sent { #[pin] fut: Fut },
        Refused { out: Option<Fut::Output> },
    }
}

impl<P, C, S, H, Fut, T, E> Future for Attempt<'_, P, C, S, H, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.project();
        let run = this.run;
        #[cfg(feature = "tracing")]
        let _span = run.span().clone().entered();
        let fut = match this.fut.project() {
            GatedProj::Sent { fut } => fut,
            GatedProj::Refused { out } => {
                return Poll::Ready(out.take().expect("a refused attempt is polled once"));
            }
        };
        if let Poll::Ready(result) = fut.poll(cx) {
            return Poll::Ready(result);
        }
        match run.timer.poll(cx) {
            Some(Poll::Ready(())) => match E::from_timeout(AttemptTimeout {
                attempt: run.tally.attempts,
                timeout: run.policy().attempt_timeout().unwrap_or_default(),
            }) {
                Some(timed_out) => Poll::Ready(Err(timed_out)),
                None => Poll::Pending,
            },
            _ => Poll::Pending,
        }
    }
}
