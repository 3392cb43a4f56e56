//! One attempt of a plain round ([`Attempt`]): sent, or refused by the
//! breaker or the concurrency limit; raced against the call's timer and
//! polled in the call's span. A hedged round's attempts are `race`'s.

use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::policy::Policy;
use crate::run::{Refusal, Run};
use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// One attempt of a plain round (see [`Run::attempt`]). Sent, it races
    /// the call's timer, armed at its first `Pending` (`Run::arm_timeout`);
    /// a timeout the error type cannot stand for (`Classify::from_timeout`
    /// gives `None`) lets it run on. Refused, it was never made and ends at
    /// once with the refusal's error, built when polled, so a `!Send` error
    /// type is never held across an await.
    #[project = AttemptProj]
    #[must_use = "an attempt does nothing until awaited"]
    pub enum Attempt<'r, P, C, S: Sleeper, H, Fut> {
        /// Sent.
        Sent { #[pin] fut: Fut, run: &'r mut Run<P, C, S, H> },
        /// Refused.
        Refused { open: Option<Box<Refusal>>, run: &'r mut Run<P, C, S, H> },
    }
}

impl<P, C, S, H, Fut, T, E> Future for Attempt<'_, P, C, S, H, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let (fut, run) = match self.project() {
            AttemptProj::Sent { fut, run } => (fut, run),
            AttemptProj::Refused { open, .. } => {
                let open = open.take().expect("a refused attempt is polled once");
                return Poll::Ready(Err(refusal(*open)));
            }
        };
        #[cfg(feature = "tracing")]
        let _span = run.span().clone().entered();
        if let Poll::Ready(result) = fut.poll(cx) {
            return Poll::Ready(result);
        }
        run.arm_timeout();
        match run.timer.poll(cx) {
            Some(Poll::Ready(())) => match E::from_timeout(run.timed_out()) {
                Some(timed_out) => Poll::Ready(Err(timed_out)),
                None => Poll::Pending,
            },
            _ => Poll::Pending,
        }
    }
}

/// The error of type `E` that stands for `refused` (`begin_attempt`
/// checked that `E` can).
pub(crate) fn refusal<E: Classify>(refused: Refusal) -> E {
    match refused {
        Refusal::Breaker(open) => E::from_breaker_open(open),
        Refusal::Limit(full) => E::from_limit_full(full),
    }
    .expect("begin_attempt refuses only for a type that carries it")
}
