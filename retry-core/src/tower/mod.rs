//! A `tower::Layer` that retries with a policy (feature `tower`), through
//! the same loop as `#[retry]` and [`Retry`](crate::Retry), with the inner
//! service's `poll_ready` before each attempt.
//!
//! - [`RetryLayer::policy`] looks a named policy up on each call, as
//!   `#[retry]` does; [`RetryLayer::new`] takes a [`Policy`] value.
//! - By default ([`ByClassify`]) the request must be `Clone` and the
//!   service's error must [`Classify`](crate::Classify) itself; every
//!   response is a success. [`RetryLayer::http`] applies the HTTP
//!   semantics instead ([`Http`]), and [`RetryLayer::grpc`] (feature
//!   `grpc`) gRFC A6's (`Grpc`).
//!
//! Dropping the response future stops the retrying: the call lives in it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! use retrykit_core::tower::RetryLayer;
//! use retrykit_core::Policy;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use tower::{Layer, ServiceExt};
//!
//! static CALLS: AtomicU32 = AtomicU32::new(0);
//! let flaky = tower::service_fn(|n: u32| async move {
//!     match CALLS.fetch_add(1, Ordering::SeqCst) {
//!         0 => Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
//!         _ => Ok(n * 2),
//!     }
//! });
//! let policy = Policy::builder().max_attempts(3).build().unwrap();
//! let service = RetryLayer::new(policy).layer(flaky);
//! assert_eq!(service.oneshot(21).await.unwrap(), 42);
//! assert_eq!(CALLS.load(Ordering::SeqCst), 2);
//! # }
//! ```

mod classify;
#[cfg(feature = "grpc")]
mod grpc;
mod http;

#[cfg(feature = "grpc")]
pub use grpc::{Grpc, GrpcBody, GrpcFailedAttempt, GrpcGiveUpEvent};
pub use http::FailedAttempt;

use crate::hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent, Unrepeatable};
use crate::policy::Policy;
use crate::policy_source::PolicySource;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What warnings call the layer's site.
const FUNCTION: &str = "tower RetryLayer";

/// The response future of a [`RetryService`]: the whole retried call.
pub type ResponseFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'static>>;

/// The default judgement of a [`RetryLayer`]: errors classify themselves
/// ([`Classify`](crate::Classify)); any response is a success.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::tower::{ByClassify, RetryLayer};
/// use tower::{Layer, ServiceExt};
/// # use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
/// # static CALLS: AtomicU32 = AtomicU32::new(0);
/// let layer: RetryLayer<ByClassify> = RetryLayer::new(retrykit_core::Policy::default());
/// let missing = tower::service_fn(|_: ()| async {
///     CALLS.fetch_add(1, SeqCst);
///     Err::<(), _>(std::io::Error::from(std::io::ErrorKind::NotFound))
/// });
/// assert!(layer.layer(missing).oneshot(()).await.is_err());
/// assert_eq!(CALLS.load(SeqCst), 1); // `NotFound` classifies itself as permanent
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ByClassify;

/// HTTP semantics for `http::Request<B>` services (see [`crate::http`]):
/// the status and server hints decide; the body is kept for replay up to
/// the policy's `max_replay_body`; only requests that
/// [`may_resend`](crate::http::may_resend) are sent again. A failed call
/// returns the last response (a 503 is still a response), or the last
/// error as a [`BoxError`](crate::http::BoxError), which downcasts to
/// [`BreakerOpen`](crate::breaker::BreakerOpen) when the breaker ended the
/// call. The final response carries the call's [`Report`](crate::Report)
/// in its extensions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Http;

/// Retries the services it wraps with one policy; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct RetryLayer<K = ByClassify, H = Hooks> {
    source: PolicySource,
    judge: K,
    hooks: Arc<H>,
}

impl RetryLayer {
    /// Retries with the registry's policy `name`, looked up on each call. A
    /// name the registry lacks warns once (naming this line) and each call
    /// makes one attempt; `RETRY_STRICT=1` makes that fatal.
    #[track_caller]
    pub fn policy(name: &'static str) -> Self {
        Self::from_source(PolicySource::named(name, FUNCTION))
    }

    /// Retries with `policy`.
    #[track_caller]
    pub fn new(policy: impl Into<Arc<Policy>>) -> Self {
        Self::from_source(PolicySource::fixed(policy.into(), FUNCTION))
    }

    /// Retries each gRPC call under the registry's policy for its method,
    /// chosen by the request's path as gRFC A6 chooses a `methodConfig`:
    /// the method's own (`helloworld-Greeter-SayHello` for
    /// `/helloworld.Greeter/SayHello`), else its service's
    /// (`helloworld-Greeter`), else `grpc-default`, the names `retry-policy
    /// import grpc` writes. A method none names runs once, with a warning
    /// once per method. Judges with the gRPC semantics ([`Grpc`]).
    #[cfg(feature = "grpc")]
    #[track_caller]
    pub fn by_grpc_method() -> RetryLayer<Grpc> {
        Self::from_source(PolicySource::by_method(FUNCTION)).grpc()
    }

    fn from_source(source: PolicySource) -> Self {
        RetryLayer {
            source,
            judge: ByClassify,
            hooks: Arc::new(Hooks::new()),
        }
    }
}

impl<K, H> RetryLayer<K, H> {
    /// Judges with the HTTP semantics (see [`Http`]).
    pub fn http(self) -> RetryLayer<Http, H> {
        RetryLayer {
            source: self.source,
            judge: Http,
            hooks: self.hooks,
        }
    }

    /// Uses these hooks (a [`Hooks`] or your own [`HookSet`]) on every call.
    /// Under [`Http`], they see each failed attempt as a [`FailedAttempt`].
    pub fn hooks<H2>(self, hooks: H2) -> RetryLayer<K, H2> {
        RetryLayer {
            source: self.source,
            judge: self.judge,
            hooks: Arc::new(hooks),
        }
    }
}

impl<S, K: Clone, H> tower::Layer<S> for RetryLayer<K, H> {
    type Service = RetryService<S, K, H>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            source: self.source.clone(),
            _judge: self.judge.clone(),
            hooks: Arc::clone(&self.hooks),
        }
    }
}

/// A service whose calls are retried; made by [`RetryLayer`].
#[derive(Debug, Clone)]
pub struct RetryService<S, K = ByClassify, H = Hooks> {
    inner: S,
    source: PolicySource,
    /// Which semantics judge the results: a marker, chosen by type.
    _judge: K,
    hooks: Arc<H>,
}

impl<S: Clone, K, H> RetryService<S, K, H> {
    /// The inner service `poll_ready` made ready, for the call's future; a
    /// clone stays behind (tower's rule for services moved into futures).
    fn take_ready(&mut self) -> S {
        let fresh = self.inner.clone();
        std::mem::replace(&mut self.inner, fresh)
    }
}

/// Sends `request` on `service` once it is ready.
async fn send<S: tower::Service<Req>, Req>(
    mut service: S,
    request: Req,
) -> Result<S::Response, S::Error> {
    std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
    service.call(request).await
}

/// A layer's shared hooks, seen as hooks by the loop.
struct SharedHooks<H>(Arc<H>);

impl<E, H: HookSet<E>> HookSet<E> for SharedHooks<H> {
    fn retry_if(&self, error: &E) -> bool {
        self.0.retry_if(error)
    }
    fn unrepeatable(&self) -> Option<Unrepeatable> {
        HookSet::<E>::unrepeatable(&*self.0)
    }
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        self.0.on_retry(event);
    }
    fn on_give_up(&self, event: &GiveUpEvent<'_, E>) {
        self.0.on_give_up(event);
    }
}
