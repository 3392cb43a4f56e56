//! One attempt of a plain round ([`Attempt`]): sent, refused by the
//! breaker or the concurrency limit, or delayed (and maybe faulted) by the
//! policy's chaos; raced against the call's timer and polled in the call's
//! span. A hedged round's attempts are `race`'s.

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
    /// gives `None`) lets it run on. Refused (or faulted by chaos at once),
    /// it was never made and ends at once with the refusal's error, built
    /// when polled, so a `!Send` error type is never held across an await.
    /// Delayed by chaos, it waits out the delay against the same timer, then
    /// is made (or ends with the fault drawn with the delay).
    #[project = AttemptProj]
    #[must_use = "an attempt does nothing until awaited"]
    pub enum Attempt<'r, P, C, S: Sleeper, H, M, Fut> {
        /// Sent.
        Sent { #[pin] fut: Fut, run: &'r mut Run<P, C, S, H> },
        /// Refused.
        Refused { open: Option<Box<Refusal>>, run: &'r mut Run<P, C, S, H> },
        /// Delayed by chaos (`run` is taken when the delay is over).
        Delayed { delay: Pin<Box<Delay<M, S::Sleep>>>, run: Option<&'r mut Run<P, C, S, H>> },
    }
}

pin_project_lite::pin_project! {
    /// What chaos holds an attempt back with: its delay, then the closure
    /// that makes the attempt, or the fault it ends with instead.
    pub struct Delay<M, Sl> {
        #[pin]
        pub(crate) sleep: Sl,
        pub(crate) make: Option<M>,
        pub(crate) then: Option<Box<Refusal>>,
    }
}

impl<P, C, S, H, M, Fut, T, E> Future for Attempt<'_, P, C, S, H, M, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    M: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let (fut, run) = match self.as_mut().project() {
            AttemptProj::Sent { fut, run } => (fut, run),
            AttemptProj::Refused { open, .. } => {
                let open = open.take().expect("a refused attempt is polled once");
                return Poll::Ready(Err(refusal(*open)));
            }
            AttemptProj::Delayed { .. } => return self.poll_delayed(cx),
        };
        #[cfg(feature = "tracing")]
        let _span = run.span().clone().entered();
        if let Poll::Ready(result) = fut.poll(cx) {
            return Poll::Ready(result);
        }
        timed_out(run, cx)
    }
}

impl<P, C, S, H, M, Fut, T, E> Attempt<'_, P, C, S, H, M, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    M: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    /// Polls an attempt chaos delays: its delay against the call's timer,
    /// then the fault drawn with it, or the attempt, made and polled now.
    #[inline(never)]
    fn poll_delayed(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let AttemptProj::Delayed { delay, run } = self.as_mut().project() else {
            unreachable!("only a delayed attempt waits out a delay");
        };
        let delay = delay.as_mut().project();
        if delay.sleep.poll(cx).is_pending() {
            let run = run.as_mut().expect("a delayed attempt holds its run");
            return timed_out(run, cx);
        }
        if let Some(fault) = delay.then.take() {
            return Poll::Ready(Err(refusal(*fault)));
        }
        let make = delay.make.take().expect("a delayed attempt is made once");
        let run = run.take().expect("a delayed attempt is made once");
        self.set(Attempt::Sent { fut: make(), run });
        self.poll(cx)
    }
}

/// The call's timer for an attempt still pending: armed at its first
/// `Pending`, and the timeout's error once it fires (if `E` can stand for one).
fn timed_out<P, C, S, H, T, E>(
    run: &mut Run<P, C, S, H>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, E>>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    E: Classify,
{
    run.arm_timeout();
    match run.timer.poll(cx) {
        Some(Poll::Ready(())) => match E::from_timeout(run.timed_out()) {
            Some(timed_out) => Poll::Ready(Err(timed_out)),
            None => Poll::Pending,
        },
        _ => Poll::Pending,
    }
}

/// The error of type `E` that stands for `refused` (`begin_attempt`, or
/// the chaos draw, checked that `E` can).
pub(crate) fn refusal<E: Classify>(refused: Refusal) -> E {
    match refused {
        Refusal::Breaker(open) => E::from_breaker_open(open),
        Refusal::Limit(full) => E::from_limit_full(full),
        Refusal::Chaos(fault) => E::from_chaos(fault),
    }
    .expect("refused only for a type that carries it")
}
