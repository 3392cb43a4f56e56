//! One round of the retry loop, and the one outer loop over rounds.
//!
//! A round is the attempt (raced against the policy's `attempt_timeout`),
//! then, on failure, the decision and the wait. [`drive!`](crate::drive)
//! runs rounds until one ends the call; every entry point uses it:
//! `Retry::call` and the blocking calls, `#[retry]`'s expansion, the tower
//! layer and the reqwest middleware. It is a macro, not a function, because
//! each round's attempt is made by an `FnOnce` written in place: so an
//! attempt may borrow what the caller owns mutably (a `#[retry]` method's
//! `&mut self`), and the caller's future stays `Send` exactly when its parts
//! are (a generic driver over an attempt-making closure cannot prove that
//! for borrowed attempts today).
//!
//! The error of a failed attempt is consumed by the decision before any
//! await, so a `!Send` error cannot make the future `!Send`.

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::hooks::HookSet;
use crate::policy::Policy;
use crate::run::{Run, Timer};
use std::borrow::Borrow;
use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Runs rounds of `$run` (a `Run`), each attempt made by `$make` (an
/// expression evaluated once per round, usually a closure), until the call
/// ends; evaluates to the call's result. Used inside an `async` context.
/// Statements given before it (`drive!(run, each { let a = x.clone(); } || ...)`)
/// run at the start of each round, in the loop's scope, so an attempt may
/// borrow or take what they make.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{Hooks, Policy};
/// use retry_core::__private::run::{drive, Run};
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
            if let ::core::ops::ControlFlow::Break(result) = $run.round($make).await {
                break result;
            }
        }
    };
    ($run:expr, $make:expr) => {
        loop {
            if let ::core::ops::ControlFlow::Break(result) = $run.round($make).await {
                break result;
            }
        }
    };
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// One round: an attempt made by `make` (unless an adaptive budget
    /// paces the first attempt: then the round is that wait alone, and the
    /// next makes it), and on failure the decision and the wait. `Break`
    /// carries the call's result; `Continue` means make the next attempt.
    /// The round runs inside the call's `retry` span.
    pub fn round<M, Fut, T, E>(
        &mut self,
        make: M,
    ) -> impl Future<Output = ControlFlow<Result<T, E>>>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        #[cfg(feature = "tracing")]
        {
            let span = self.span().clone();
            tracing::Instrument::instrument(self.round_unspanned(make), span)
        }
        #[cfg(not(feature = "tracing"))]
        self.round_unspanned(make)
    }

    async fn round_unspanned<M, Fut, T, E>(&mut self, make: M) -> ControlFlow<Result<T, E>>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        if self.pace_first_attempt().is_some() {
            wait(&mut self.timer).await;
            return ControlFlow::Continue(());
        }
        self.begin_attempt::<E>();
        let attempt = Attempt {
            fut: make(),
            timer: &mut self.timer,
            attempt: self.tally.attempts,
            policy: self.policy.borrow(),
        };
        let error = match attempt.await {
            Ok(value) => {
                self.succeeded();
                return ControlFlow::Break(Ok(value));
            }
            Err(error) => error,
        };
        if let Err(error) = self.decide(error) {
            return ControlFlow::Break(Err(error));
        }
        wait(&mut self.timer).await;
        ControlFlow::Continue(())
    }
}

/// Waits for the call's timer (a no-op when nothing is armed).
fn wait<Sl: Future<Output = ()>>(timer: &mut Timer<Sl>) -> impl Future<Output = ()> {
    poll_fn(|cx| timer.poll(cx).unwrap_or(Poll::Ready(())))
}

pin_project_lite::pin_project! {
    /// An attempt raced against the call's timer when it holds the
    /// attempt's timeout. A timeout the error type cannot stand for
    /// (`Classify::from_timeout` gives `None`) lets the attempt run on
    /// (`init()` and the build refuse such a policy where they can).
    struct Attempt<'t, Fut, Sl> {
        #[pin]
        fut: Fut,
        timer: &'t mut Timer<Sl>,
        attempt: u32,
        policy: &'t Policy,
    }
}

impl<Fut, Sl, T, E> Future for Attempt<'_, Fut, Sl>
where
    Fut: Future<Output = Result<T, E>>,
    Sl: Future<Output = ()>,
    E: Classify,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.project();
        if let Poll::Ready(result) = this.fut.poll(cx) {
            return Poll::Ready(result);
        }
        match this.timer.poll(cx) {
            Some(Poll::Ready(())) => match E::from_timeout(AttemptTimeout {
                attempt: *this.attempt,
                timeout: this.policy.attempt_timeout().unwrap_or_default(),
            }) {
                Some(timed_out) => Poll::Ready(Err(timed_out)),
                None => Poll::Pending,
            },
            _ => Poll::Pending,
        }
    }
}
