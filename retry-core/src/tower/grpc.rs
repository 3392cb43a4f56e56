//! The layer over gRPC services, with the semantics of [`Grpc`].

use super::http::RequestHooks;
use super::{RetryLayer, RetryService, SharedHooks, send};
use crate::decide::time_limit;
use crate::drive;
use crate::grpc::{GRPC_PREVIOUS_RPC_ATTEMPTS, GRPC_STATUS, GRPC_TIMEOUT, GrpcFailure};
use crate::hooks::HookSet;
use crate::http::{BoxError, ReplayBody};
use crate::retry::Retry;
use crate::tower::{FailedAttempt, ResponseFuture};
use bytes::{Buf, Bytes};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use tower::Service;

/// gRPC semantics (feature `grpc`, gRFC A6) for services of
/// `http::Request<tonic::body::Body>` such as tonic's `Channel`, wrapped as
/// it is. `grpc-status` decides: the policy's `grpc_retry_on` codes
/// (`UNAVAILABLE` alone by default) are retried, any other ends the call
/// ([`GrpcFailure::with_retry_on`]). Every call may be resent, its body
/// kept up to `max_replay_body`; an attempt whose response began commits
/// the call (the others are dropped, ending `committed` on failure);
/// `grpc-retry-pushback-ms` sets the next wait or stops; each retry and
/// hedge carries `grpc-previous-rpc-attempts`, each attempt the
/// `grpc-timeout` it has left, and a call a time limit ended fails with
/// `DEADLINE_EXCEEDED`. The response is read ahead to its trailers (at most
/// `max_replay_body` bytes) and carries the call's
/// [`Report`](crate::Report): meant for unary calls and short server
/// streams. docs/grpc.md sets each rule beside A6's and grpc-go's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grpc;

impl<K, H> RetryLayer<K, H> {
    /// Judges with the gRPC semantics (see [`Grpc`]).
    pub fn grpc(self) -> RetryLayer<Grpc, H> {
        RetryLayer {
            source: self.source,
            judge: Grpc,
            hooks: self.hooks,
        }
    }
}

/// A failed attempt of a gRPC call, as the loop and its hooks see it; `R`
/// is the inner service's response body.
pub type GrpcFailedAttempt<R = tonic::body::Body> = FailedAttempt<GrpcBody<R>, GrpcFailure>;

/// What an `on_give_up` hook on a gRPC layer is given. With a tonic
/// `Channel`, the hook takes `&GrpcGiveUpEvent<'_>`; a `.map_response` on
/// the layered service names the request type it serves (the layer serves
/// any request body):
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::tower::{GrpcGiveUpEvent, RetryLayer};
/// use retrykit_core::{Ending, Hooks, Policy};
/// use std::sync::{Arc, Mutex};
/// use tower::{Layer, ServiceExt};
/// # use http::{Request, Response};
/// // A server that answers UNAVAILABLE every time.
/// let server = tower::service_fn(|_: Request<tonic::body::Body>| async {
///     let response = Response::builder().header("grpc-status", "14").body(tonic::body::Body::empty());
///     Ok::<_, std::convert::Infallible>(response.unwrap())
/// });
/// let endings = Arc::new(Mutex::new(Vec::new()));
/// let seen = Arc::clone(&endings);
/// let hooks = Hooks::new().on_give_up(move |event: &GrpcGiveUpEvent<'_>| {
///     seen.lock().unwrap().push(event.report.ending);
/// });
/// let policy = Policy::builder().max_attempts(2).build().unwrap();
/// let svc = RetryLayer::new(policy).grpc().hooks(hooks).layer(server);
/// let svc = ServiceExt::<Request<tonic::body::Body>>::map_response(svc, |response| {
///     response.headers()["grpc-status"].to_str().unwrap().to_owned()
/// });
/// let status = svc.oneshot(Request::new(tonic::body::Body::empty())).await.unwrap();
/// assert_eq!(status, "14");
/// assert_eq!(*endings.lock().unwrap(), [Ending::Exhausted]);
/// # }
/// ```
pub type GrpcGiveUpEvent<'a, R = tonic::body::Body> = crate::GiveUpEvent<'a, GrpcFailedAttempt<R>>;

impl<S, B, R, H> Service<Request<B>> for RetryService<S, Grpc, H>
where
    S: Service<Request<tonic::body::Body>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError> + Send,
    B: Body + Send + 'static,
    B::Error: Into<BoxError>,
    R: Body + Unpin + Send + 'static,
    R::Error: Into<BoxError>,
    H: HookSet<GrpcFailedAttempt<R>> + Send + Sync + 'static,
{
    type Response = Response<GrpcBody<R>>;
    type Error = BoxError;
    type Future = ResponseFuture<Response<GrpcBody<R>>, BoxError>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let policy = self.source.for_path(request.uri().path());
        let service = self.take_ready();
        let (parts, body) = request.into_parts();
        let limit = policy.max_replay_body();
        // A body known to exceed the limit is not hedged.
        let fits = body.size_hint().lower() <= limit;
        let body = ReplayBody::new(body, limit);
        let committed = Arc::new(AtomicBool::new(false));
        let hooks = RequestHooks {
            hooks: SharedHooks(self.hooks.clone()),
            resendable: true,
            body: body.clone(),
            committed: Some(Arc::clone(&committed)),
        };
        Box::pin(async move {
            let mut run = Retry::new(&policy).hooks(hooks).start(false);
            if !fits {
                run.unhedged(crate::Ending::BodyNotReplayable);
            }
            let policy = &*policy;
            let mut sent = 0u32;
            let started = tokio::time::Instant::now();
            let mut make = move || {
                let body = tonic::body::Body::new(body.clone());
                let mut request = Request::from_parts(parts.clone(), body);
                let began = started.elapsed();
                let limit = time_limit(policy, sent.saturating_add(1), began);
                if let Some((left, _)) = limit {
                    set_timeout(request.headers_mut(), left);
                }
                if sent > 0 {
                    let previous = HeaderValue::from(sent);
                    request
                        .headers_mut()
                        .insert(GRPC_PREVIOUS_RPC_ATTEMPTS, previous);
                }
                sent = sent.saturating_add(1);
                let (service, committed) = (service.clone(), Arc::clone(&committed));
                let attempt = async move {
                    let response = send(service, request).await.map_err(Into::into);
                    // The channel enforces the `grpc-timeout` it was given:
                    // its error at the attempt's limit is that limit's.
                    if let (Err(_), Some((left, timeout))) = (&response, limit)
                        && started.elapsed() >= began.saturating_add(left)
                    {
                        return Err(FailedAttempt::TimedOut(timeout));
                    }
                    settle(response, policy, &committed).await
                };
                #[cfg(feature = "tracing")]
                let attempt =
                    tracing::Instrument::instrument(attempt, super::http::resend_span(sent - 1));
                attempt
            };
            match drive!(run, make) {
                Err(FailedAttempt::TimedOut(timeout)) => {
                    let status = tonic::Status::deadline_exceeded(timeout.to_string());
                    Err(Box::new(status) as BoxError)
                }
                Err(FailedAttempt::Injected(fault)) => {
                    Err(Box::new(injected_status(fault)) as BoxError)
                }
                result => FailedAttempt::respond(result, run.report()),
            }
        })
    }
}

/// The status a call that an injected fault ended fails with: its code
/// follows from the fault's class (transient `UNAVAILABLE`, timeout
/// `DEADLINE_EXCEEDED`, throttled `RESOURCE_EXHAUSTED`, permanent
/// `INVALID_ARGUMENT`), its message says it was injected.
fn injected_status(fault: crate::chaos::InjectedFault) -> tonic::Status {
    let code = match fault.class {
        crate::Class::TRANSIENT => tonic::Code::Unavailable,
        crate::Class::TIMEOUT => tonic::Code::DeadlineExceeded,
        crate::Class::THROTTLED => tonic::Code::ResourceExhausted,
        _ => tonic::Code::InvalidArgument,
    };
    tonic::Status::new(code, fault.to_string())
}

/// Sets the `grpc-timeout` header to `left` unless it already asks for
/// less: at most 8 digits and the finest unit that fits, rounded up.
fn set_timeout(headers: &mut http::HeaderMap, left: std::time::Duration) {
    let own = headers
        .get(GRPC_TIMEOUT)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_timeout);
    if own.is_some_and(|own| own <= left) {
        return;
    }
    if let Some(value) = encode_timeout(left) {
        headers.insert(GRPC_TIMEOUT, value);
    }
}

/// gRPC's timeout units, finest first, in nanoseconds.
const UNITS: [(char, u128); 6] = [
    ('n', 1),
    ('u', 1_000),
    ('m', 1_000_000),
    ('S', 1_000_000_000),
    ('M', 60_000_000_000),
    ('H', 3_600_000_000_000),
];

/// `d` as a `grpc-timeout` value; `None` past 99,999,999 hours.
fn encode_timeout(d: std::time::Duration) -> Option<HeaderValue> {
    let nanos = d.as_nanos();
    UNITS.iter().find_map(|&(unit, size)| {
        let count = nanos.div_ceil(size);
        (count <= 99_999_999).then(|| HeaderValue::from_str(&format!("{count}{unit}")).ok())?
    })
}

/// A `grpc-timeout` value; `None` when malformed.
fn parse_timeout(value: &str) -> Option<std::time::Duration> {
    let unit = value.chars().last()?;
    let digits = &value[..value.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let size = UNITS.iter().find(|(u, _)| *u == unit)?.1;
    let nanos = digits.parse::<u128>().ok()? * size;
    Some(std::time::Duration::from_nanos(
        u64::try_from(nanos).unwrap_or(u64::MAX),
    ))
}

/// An attempt's outcome: its response, read ahead to its status, or why
/// it failed. The response's first message sets `committed`.
// The failure carries the response by value, as each attempt returns it.
#[allow(clippy::result_large_err)]
async fn settle<R>(
    sent: Result<Response<R>, BoxError>,
    policy: &crate::Policy,
    committed: &AtomicBool,
) -> Result<Response<GrpcBody<R>>, GrpcFailedAttempt<R>>
where
    R: Body + Unpin,
    R::Error: Into<BoxError>,
{
    let response = sent.map_err(FailedAttempt::Transport)?;
    let (parts, body) = response.into_parts();
    let mut body = GrpcBody {
        kept: VecDeque::new(),
        ended: false,
        began: false,
        inner: body,
    };
    // Trailers-Only: the status is in the headers, and there is no body.
    let failure = if parts.headers.contains_key(GRPC_STATUS) {
        GrpcFailure::classify(&parts.headers)
    } else if parts.status != StatusCode::OK {
        Some(GrpcFailure::from_http(parts.status, &parts.headers))
    } else {
        match body.read_ahead(policy.max_replay_body(), committed).await {
            Ok(ReadAhead::Trailers(failure)) => failure,
            Ok(ReadAhead::PastLimit) => None,
            Err(error) => return Err(FailedAttempt::Transport(error)),
        }
    };
    let response = Response::from_parts(parts, body);
    let codes = policy
        .grpc_retry_on()
        .unwrap_or(retrykit_schema::grpc::DEFAULT_RETRY_ON);
    let failure = failure.map(|f| f.with_retry_on(codes));
    // A "do not retry" pushback still counts for A6's throttling, as in
    // grpc-go's `shouldRetry`.
    if failure.as_ref().is_some_and(|f| f.do_not_retry.is_some()) {
        policy.budgets.throttle(true);
    }
    match failure {
        None => Ok(response),
        Some(failure) => Err(FailedAttempt::Status { response, failure }),
    }
}

/// How far a response was read ahead.
enum ReadAhead {
    /// To its end: the failure its trailers say (or their absence), `None`
    /// for `OK`.
    Trailers(Option<GrpcFailure>),
    /// Past the limit: handed over, its status still to come.
    PastLimit,
}

/// The body of a response of the [`Grpc`] layer: what the layer read ahead
/// (its messages and trailers), then the rest, as it comes.
#[derive(Debug)]
pub struct GrpcBody<R> {
    kept: VecDeque<Frame<Bytes>>,
    /// Whether the inner body has ended (its trailers were read ahead).
    ended: bool,
    /// Whether a data frame came: the response was committed.
    began: bool,
    inner: R,
}

impl<R> GrpcBody<R>
where
    R: Body + Unpin,
    R::Error: Into<BoxError>,
{
    /// Reads the body's frames into `kept` until its trailers or end, or
    /// past `limit` bytes of data. The first data frame sets `committed`.
    async fn read_ahead(
        &mut self,
        limit: u64,
        committed: &AtomicBool,
    ) -> Result<ReadAhead, BoxError> {
        let mut read = 0u64;
        loop {
            match poll_fn(|cx| Pin::new(&mut self.inner).poll_frame(cx)).await {
                None => {
                    // The body ended with no trailers: no `grpc-status`.
                    self.ended = true;
                    let missing = GrpcFailure::classify(&http::HeaderMap::new());
                    return Ok(ReadAhead::Trailers(missing));
                }
                Some(Err(error)) => return Err(error.into()),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(mut data) => {
                        let chunk = data.copy_to_bytes(data.remaining());
                        if !self.began {
                            self.began = true;
                            committed.store(true, Ordering::Release);
                        }
                        read = read.saturating_add(chunk.len() as u64);
                        self.kept.push_back(Frame::data(chunk));
                        if read > limit {
                            return Ok(ReadAhead::PastLimit);
                        }
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            let failure = GrpcFailure::classify(&trailers);
                            self.kept.push_back(Frame::trailers(trailers));
                            self.ended = true;
                            return Ok(ReadAhead::Trailers(failure));
                        }
                    }
                },
            }
        }
    }
}

impl<R> Body for GrpcBody<R>
where
    R: Body + Unpin,
    R::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Some(frame) = this.kept.pop_front() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        let frame = std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx));
        Poll::Ready(frame.map(|frame| {
            frame
                .map_err(Into::into)
                .map(|frame| frame.map_data(|mut data| data.copy_to_bytes(data.remaining())))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.kept.is_empty() && (self.ended || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.kept.is_empty() && !self.ended {
            self.inner.size_hint()
        } else {
            SizeHint::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timeouts_take_the_finest_unit_that_fits_eight_digits() {
        let shown = |d| encode_timeout(d).unwrap().to_str().unwrap().to_owned();
        assert_eq!(shown(Duration::from_millis(400)), "400000u");
        assert_eq!(shown(Duration::from_nanos(99_999_999)), "99999999n");
        assert_eq!(shown(Duration::from_secs(30)), "30000000u");
        assert_eq!(shown(Duration::from_secs(100_000)), "100000S");
        assert_eq!(shown(Duration::from_nanos(1_000_000_001)), "1000001u");
        assert_eq!(encode_timeout(Duration::MAX), None);
    }

    #[test]
    fn a_nearer_timeout_of_the_request_is_kept() {
        let mut headers = http::HeaderMap::new();
        headers.insert(GRPC_TIMEOUT, HeaderValue::from_static("100m"));
        set_timeout(&mut headers, Duration::from_millis(400));
        assert_eq!(headers[GRPC_TIMEOUT], "100m");
        set_timeout(&mut headers, Duration::from_millis(50));
        assert_eq!(headers[GRPC_TIMEOUT], "50000000n");
        for bad in ["", "m", "123456789m", "12x", "1.5S"] {
            assert_eq!(parse_timeout(bad), None, "{bad}");
        }
        assert_eq!(parse_timeout("2H"), Some(Duration::from_secs(7_200)));
    }
}
