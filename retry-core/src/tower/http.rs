//! The layer over `http::Request<B>` services, with the HTTP semantics of
//! [`crate::http`].

use super::{Http, ResponseFuture, RetryService, SharedHooks, send};
use crate::breaker::BreakerOpen;
use crate::class::Class;
use crate::classify::{AttemptTimeout, Classify};
use crate::drive;
use crate::hooks::{GiveUpEvent, HookSet, RetryEvent, Unrepeatable};
use crate::http::{BoxError, HttpFailure, ReplayBody, may_resend};
use crate::limit::LimitFull;
use crate::retry::Retry;
use http::{Request, Response};
use http_body::Body;
use std::fmt;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::Service;

/// One failed attempt of an HTTP call (or, with `F = GrpcFailure`, of a
/// gRPC call), as the loop and its hooks see it.
///
/// ```
/// use retrykit_core::{Class, Classify, tower::FailedAttempt};
/// let e: FailedAttempt<()> = FailedAttempt::Transport("connection reset".into());
/// assert_eq!(e.class(), Class::TRANSIENT);
/// ```
pub enum FailedAttempt<R, F = HttpFailure> {
    /// The server answered with a failure status.
    Status {
        /// The response, returned to the caller if this is the last attempt.
        response: Response<R>,
        /// Its class and server hint.
        failure: F,
    },
    /// The request got no response (connection refused or reset, the inner
    /// service failed): transient, as an idempotent request may be sent again.
    Transport(BoxError),
    /// The attempt ran past the policy's `attempt_timeout`.
    TimedOut(AttemptTimeout),
    /// The policy's circuit breaker refused the attempt: nothing was sent.
    /// Permanent; when it ends the call, the caller's `BoxError` downcasts
    /// to the [`BreakerOpen`].
    BreakerOpen(BreakerOpen),
    /// The policy's concurrency limit gave no permit in time: nothing was
    /// sent. Permanent; the caller's `BoxError` downcasts to the [`LimitFull`].
    LimitFull(LimitFull),
    /// The policy's chaos injected a fault in place of the attempt: nothing
    /// was sent. Of the fault's class, with its Retry-After (a throttled
    /// fault's hint is taken like a 429's); the caller's `BoxError`
    /// downcasts to the [`InjectedFault`](crate::chaos::InjectedFault)
    /// (docs/chaos.md).
    Injected(crate::chaos::InjectedFault),
}

impl<R, F: Classify> Classify for FailedAttempt<R, F> {
    fn class(&self) -> Class {
        match self {
            FailedAttempt::Status { failure, .. } => failure.class(),
            FailedAttempt::Transport(_) => Class::TRANSIENT,
            FailedAttempt::TimedOut(_) => Class::TIMEOUT,
            FailedAttempt::BreakerOpen(_) | FailedAttempt::LimitFull(_) => Class::Permanent,
            FailedAttempt::Injected(fault) => fault.class,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            FailedAttempt::Status { failure, .. } => failure.retry_after(),
            FailedAttempt::Injected(fault) => fault.retry_after,
            _ => None,
        }
    }
    fn from_timeout(timeout: AttemptTimeout) -> Option<Self> {
        Some(FailedAttempt::TimedOut(timeout))
    }
    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(FailedAttempt::BreakerOpen(open))
    }
    fn from_limit_full(full: LimitFull) -> Option<Self> {
        Some(FailedAttempt::LimitFull(full))
    }
    fn from_chaos(fault: crate::chaos::InjectedFault) -> Option<Self> {
        Some(FailedAttempt::Injected(fault))
    }
}

impl<R, F: fmt::Display> fmt::Debug for FailedAttempt<R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailedAttempt::Status { failure, .. } => write!(f, "Status({failure})"),
            FailedAttempt::Transport(e) => write!(f, "Transport({e})"),
            FailedAttempt::TimedOut(t) => write!(f, "TimedOut({t})"),
            FailedAttempt::BreakerOpen(open) => write!(f, "BreakerOpen({open})"),
            FailedAttempt::LimitFull(full) => write!(f, "LimitFull({full})"),
            FailedAttempt::Injected(fault) => write!(f, "Injected({fault})"),
        }
    }
}

impl<R, F> FailedAttempt<R, F> {
    /// What the caller gets: the (last) response carrying the call's
    /// `report`, or the error.
    pub(super) fn respond(
        result: Result<Response<R>, Self>,
        report: crate::Report,
    ) -> Result<Response<R>, BoxError> {
        let mut response = match result {
            Ok(response) | Err(FailedAttempt::Status { response, .. }) => response,
            Err(FailedAttempt::Transport(error)) => return Err(error),
            Err(FailedAttempt::TimedOut(timeout)) => return Err(Box::new(timeout)),
            Err(FailedAttempt::BreakerOpen(open)) => return Err(Box::new(open)),
            Err(FailedAttempt::LimitFull(full)) => return Err(Box::new(full)),
            Err(FailedAttempt::Injected(fault)) => return Err(Box::new(fault)),
        };
        response.extensions_mut().insert(report);
        Ok(response)
    }
}

/// The layer's hooks plus what only the request knows: whether it may be
/// sent again (its method) and can be (its body), and (gRPC) whether an
/// attempt committed.
pub(super) struct RequestHooks<H, B> {
    pub(super) hooks: SharedHooks<H>,
    pub(super) resendable: bool,
    pub(super) body: ReplayBody<B>,
    /// Set by a gRPC attempt as its response's first message comes (gRFC
    /// A6's commit). A hedged round sees it just after polling that attempt
    /// and drops every other, so only the committed attempt's failure is
    /// judged under it.
    pub(super) committed: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl<E, H: HookSet<E>, B> HookSet<E> for RequestHooks<H, B> {
    fn retry_if(&self, error: &E) -> bool {
        self.hooks.retry_if(error)
    }
    fn unrepeatable(&self) -> Option<Unrepeatable> {
        let committed = self.committed.as_ref();
        if committed.is_some_and(|c| c.load(std::sync::atomic::Ordering::Acquire)) {
            Some(Unrepeatable::Committed)
        } else if !self.resendable {
            Some(Unrepeatable::NotIdempotent)
        } else if !self.body.is_replayable() {
            Some(Unrepeatable::BodyNotReplayable)
        } else {
            HookSet::<E>::unrepeatable(&self.hooks)
        }
    }
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        self.hooks.on_retry(event);
    }
    fn on_give_up(&self, event: &GiveUpEvent<'_, E>) {
        self.hooks.on_give_up(event);
    }
}

impl<S, B, R, H> Service<Request<B>> for RetryService<S, Http, H>
where
    S: Service<Request<ReplayBody<B>>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError> + Send,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
    R: Send + 'static,
    H: HookSet<FailedAttempt<R>> + Send + Sync + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = ResponseFuture<Response<R>, BoxError>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let policy = self.source.current();
        let service = self.take_ready();
        let resendable = may_resend(request.method(), request.headers(), &policy);
        let (parts, body) = request.into_parts();
        // A hedge replays the body while the first send may still be
        // reading it: only a body known to fit the limit hedges.
        let fits = http_body::Body::size_hint(&body)
            .upper()
            .is_some_and(|n| n <= policy.max_replay_body());
        let body = ReplayBody::new(body, policy.max_replay_body());
        let hooks = RequestHooks {
            hooks: SharedHooks(self.hooks.clone()),
            resendable,
            body: body.clone(),
            committed: None,
        };
        Box::pin(async move {
            let mut run = Retry::new(&policy).hooks(hooks).start(false);
            #[cfg(feature = "tracing")]
            let mut sends = 0u32;
            if !resendable {
                run.unhedged(crate::Ending::NotIdempotent);
            } else if !fits {
                run.unhedged(crate::Ending::BodyNotReplayable);
            }
            let policy = &*policy;
            let mut make = move || {
                let request = Request::from_parts(parts.clone(), body.clone());
                let service = service.clone();
                let attempt = async move {
                    let sent = send(service, request).await.map_err(Into::into);
                    settle_response(sent, policy)
                };
                #[cfg(feature = "tracing")]
                let attempt = {
                    sends += 1;
                    tracing::Instrument::instrument(attempt, resend_span(sends - 1))
                };
                attempt
            };
            let result = drive!(run, make);
            FailedAttempt::respond(result, run.report())
        })
    }
}

/// An attempt's outcome: its response, or why it failed.
// The failure carries the response by value, as each attempt returns it.
#[allow(clippy::result_large_err)]
fn settle_response<B>(
    sent: Result<Response<B>, BoxError>,
    policy: &crate::Policy,
) -> Result<Response<B>, FailedAttempt<B>> {
    let response = sent.map_err(FailedAttempt::Transport)?;
    match HttpFailure::classify(response.status(), response.headers(), policy) {
        None => Ok(response),
        Some(failure) => Err(FailedAttempt::Status { response, failure }),
    }
}

/// The span of one attempt, with OpenTelemetry's `http.request.resend_count`
/// on every resend (the first send leaves it unset, as the convention says).
#[cfg(feature = "tracing")]
pub(super) fn resend_span(resends: u32) -> tracing::Span {
    let span = tracing::debug_span!(
        "http.attempt",
        "http.request.resend_count" = tracing::field::Empty
    );
    if resends > 0 {
        span.record("http.request.resend_count", resends);
    }
    span
}
