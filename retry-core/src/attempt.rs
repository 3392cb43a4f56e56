//! One attempt, plain or hedged: sent or refused by the breaker
//! ([`Gated`]), raced against its time limit and polled in its span
//! ([`Timed`]). A plain round's limit is the call's timer ([`OnRun`]); each
//! attempt of a hedged round has its own ([`Own`]).

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::policy::Policy;
use crate::run::{Refusal, Run};
use crate::timer::poll_sleep;
use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What an attempt is raced against, and the span it is polled in.
pub trait Limit {
    /// `Some` once the attempt's time is up (said once).
    fn expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Option<AttemptTimeout>;

    /// The span the attempt is polled in.
    #[cfg(feature = "tracing")]
    fn span(&self) -> tracing::Span;
}

pin_project_lite::pin_project! {
    /// An attempt raced against its [`Limit`], polled inside its span. A
    /// timeout the error type cannot stand for (`Classify::from_timeout`
    /// gives `None`) lets the attempt run on.
    #[must_use = "an attempt does nothing until awaited"]
    pub struct Timed<Fut, L> {
        #[pin]
        pub(crate) fut: Fut,
        #[pin]
        pub(crate) limit: L,
    }
}

impl<Fut, L, T, E> Future for Timed<Fut, L>
where
    Fut: Future<Output = Result<T, E>>,
    L: Limit,
    E: Classify,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.project();
        #[cfg(feature = "tracing")]
        let _span = this.limit.span().entered();
        if let Poll::Ready(result) = this.fut.poll(cx) {
            return Poll::Ready(result);
        }
        match this.limit.expired(cx).and_then(E::from_timeout) {
            Some(timed_out) => Poll::Ready(Err(timed_out)),
            None => Poll::Pending,
        }
    }
}

pin_project_lite::pin_project! {
    /// An attempt sent, or refused by the breaker: never made, it ends at
    /// once with the refusal's error; or delayed by chaos, its closure
    /// called when the delay is over (or, for an injected fault, never).
    /// The error is built when polled, so a `!Send` error type is never
    /// held across an await.
    #[project = GatedProj]
    pub enum Gated<M, Fut, Sl> {
        /// Sent.
        Sent { #[pin] fut: Fut },
        /// Refused, or an injected fault.
        Refused { open: Option<Box<Refusal>> },
        /// Delayed by chaos; then made by `make`, or failed with `then`.
        Delayed { sleep: std::pin::Pin<Box<Sl>>, make: Option<M>, then: Option<Box<Refusal>> },
    }
}

impl<M, Fut, Sl, T, E> Future for Gated<M, Fut, Sl>
where
    M: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    Sl: Future<Output = ()>,
    E: Classify,
{
    type Output = Result<T, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        loop {
            match self.as_mut().project() {
                GatedProj::Sent { fut } => return fut.poll(cx),
                GatedProj::Refused { open } => {
                    let open = open.take().expect("a refused attempt is polled once");
                    return Poll::Ready(Err(refusal(*open)));
                }
                GatedProj::Delayed { sleep, make, then } => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    if let Some(fault) = then.take() {
                        return Poll::Ready(Err(refusal(*fault)));
                    }
                    let make = make.take().expect("a delayed attempt is made once");
                    self.set(Gated::Sent { fut: make() });
                }
            }
        }
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

/// A plain round's limit: the call's timer, armed at the attempt's first
/// `Pending` (`Run::arm_timeout`); polled in the call's span.
pub struct OnRun<'r, P, C, S: Sleeper, H>(pub(crate) &'r mut Run<P, C, S, H>);

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Limit for OnRun<'_, P, C, S, H> {
    fn expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Option<AttemptTimeout> {
        let run = &mut *self.get_mut().0;
        run.arm_timeout();
        match run.timer.poll(cx) {
            Some(Poll::Ready(())) => Some(run.timed_out()),
            _ => None,
        }
    }

    #[cfg(feature = "tracing")]
    fn span(&self) -> tracing::Span {
        self.0.span().clone()
    }
}

pin_project_lite::pin_project! {
    /// A hedged attempt's own limit: its sleep (none without a
    /// [`time_limit`](crate::decide::time_limit)), the timeout it ends
    /// with, and its `attempt` span.
    pub struct Own<Sl> {
        #[pin]
        pub(crate) sleep: Option<Sl>,
        pub(crate) timeout: Option<AttemptTimeout>,
        pub(crate) span: AttemptSpan,
    }
}

/// An attempt's span (nothing without the `tracing` feature).
#[cfg(feature = "tracing")]
pub(crate) type AttemptSpan = tracing::Span;
#[cfg(not(feature = "tracing"))]
pub(crate) type AttemptSpan = ();

impl<Sl: Future<Output = ()>> Limit for Own<Sl> {
    fn expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Option<AttemptTimeout> {
        let mut this = self.project();
        let fired = poll_sleep(this.sleep.as_mut().as_pin_mut()?, cx).is_ready();
        if !fired {
            return None;
        }
        this.sleep.set(None);
        *this.timeout
    }

    #[cfg(feature = "tracing")]
    fn span(&self) -> tracing::Span {
        self.span.clone()
    }
}
