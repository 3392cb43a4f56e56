//! A `reqwest_middleware::Middleware` over the one retry loop (feature
//! `reqwest-middleware`; reqwest 0.13, reqwest-middleware 0.5), with the
//! HTTP semantics of [`crate::http`].
//!
//! A retry sends a clone of the request's buffered body; a body larger
//! than the policy's `max_replay_body`, or a stream, is sent once, and the
//! call ends "body not replayable" when it would have been retried. A
//! failed call returns the last response (a 503 is still a response); a
//! response carries the call's [`Report`] in its extensions. A call the
//! circuit breaker ended returns `reqwest_middleware::Error::Middleware`
//! wrapping the [`BreakerOpen`].
//!
//! ```no_run
//! # async fn run() -> Result<(), reqwest_middleware::Error> {
//! use retrykit_core::reqwest::RetryMiddleware;
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(RetryMiddleware::policy("http"))
//!     .build();
//! let response = client.get("http://127.0.0.1:8080/orders/17").send().await?;
//! let report = response.extensions().get::<retrykit_core::Report>().unwrap();
//! assert!(report.attempts >= 1);
//! # Ok(()) }
//! ```

use crate::breaker::BreakerOpen;
use crate::class::Class;
use crate::classify::{AttemptTimeout, Classify};
use crate::drive;
use crate::hooks::{HookSet, Unrepeatable};
use crate::http::{HttpFailure, may_resend};
use crate::policy::Policy;
use crate::policy_source::PolicySource;
use crate::report::Report;
use crate::retry::Retry;
use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Error, Middleware, Next, Result};
use std::sync::Arc;
use std::time::Duration;

/// Retries requests through a reqwest-middleware client with a named
/// policy or a [`Policy`] value (see [`new`](Self::new)'s example).
#[derive(Debug, Clone)]
pub struct RetryMiddleware {
    source: PolicySource,
}

impl RetryMiddleware {
    /// Retries with the registry's policy `name`, looked up on each request
    /// (a name the registry lacks warns once and runs one attempt).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::reqwest::RetryMiddleware;
    /// # use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// # use std::{future::Future, pin::Pin};
    /// # static CALLS: AtomicU32 = AtomicU32::new(0);
    /// # type Answer<'a> = Pin<Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>>;
    /// # /// Stands in for the server (no network): always a 503.
    /// # fn server<'a>(_: reqwest::Request, _: &'a mut http::Extensions, _: reqwest_middleware::Next<'a>) -> Answer<'a> {
    /// #     let status = { CALLS.fetch_add(1, SeqCst); 503 };
    /// #     Box::pin(async move { Ok(http::Response::builder().status(status).body("").unwrap().into()) })
    /// # }
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(RetryMiddleware::policy("doc-no-such-policy")) // warns once, then one attempt
    ///     .with(server)
    ///     .build();
    /// let response = client.get("http://orders.invalid/17").send().await.unwrap();
    /// assert_eq!((response.status().as_u16(), CALLS.load(SeqCst)), (503, 1));
    /// # }
    /// ```
    #[track_caller]
    pub fn policy(name: &'static str) -> Self {
        RetryMiddleware {
            source: PolicySource::named(name, FUNCTION),
        }
    }

    /// Retries with `policy`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{reqwest::RetryMiddleware, Policy, Report};
    /// # use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// # use std::{future::Future, pin::Pin};
    /// # static CALLS: AtomicU32 = AtomicU32::new(0);
    /// # type Answer<'a> = Pin<Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>>;
    /// # /// Stands in for the server (no network): always a 503.
    /// # fn server<'a>(_: reqwest::Request, _: &'a mut http::Extensions, _: reqwest_middleware::Next<'a>) -> Answer<'a> {
    /// #     let status = { CALLS.fetch_add(1, SeqCst); 503 };
    /// #     Box::pin(async move { Ok(http::Response::builder().status(status).body("").unwrap().into()) })
    /// # }
    /// let p = Policy::builder().max_attempts(2).build().unwrap();
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(RetryMiddleware::new(p))
    ///     .with(server)
    ///     .build();
    /// let response = client.get("http://orders.invalid/17").send().await.unwrap();
    /// assert_eq!((response.status().as_u16(), CALLS.load(SeqCst)), (503, 2)); // the last response
    /// assert_eq!(response.extensions().get::<Report>().unwrap().attempts, 2);
    /// # }
    /// ```
    #[track_caller]
    pub fn new(policy: impl Into<Arc<Policy>>) -> Self {
        RetryMiddleware {
            source: PolicySource::fixed(policy.into(), FUNCTION),
        }
    }
}

/// What warnings call the middleware's site.
const FUNCTION: &str = "reqwest RetryMiddleware";

/// One failed attempt.
enum Failed {
    Status(Response, HttpFailure),
    Error(reqwest_middleware::Error),
    TimedOut(AttemptTimeout),
    Refused(BreakerOpen),
    LimitFull(crate::limit::LimitFull),
    Injected(crate::chaos::InjectedFault),
}

impl Classify for Failed {
    fn class(&self) -> Class {
        match self {
            Failed::Status(_, failure) => failure.class,
            // A request reqwest could not even build, or a redirect loop,
            // fails the same way every time; another middleware's error is
            // its own business.
            Failed::Error(Error::Reqwest(e)) if !(e.is_builder() || e.is_redirect()) => {
                Class::TRANSIENT
            }
            Failed::Error(_) => Class::Permanent,
            Failed::TimedOut(_) => Class::TIMEOUT,
            Failed::Refused(_) | Failed::LimitFull(_) => Class::Permanent,
            Failed::Injected(fault) => fault.class,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failed::Status(_, failure) => failure.retry_after,
            Failed::Injected(fault) => fault.retry_after,
            _ => None,
        }
    }
    fn from_timeout(timeout: AttemptTimeout) -> Option<Self> {
        Some(Failed::TimedOut(timeout))
    }
    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(Failed::Refused(open))
    }
    fn from_limit_full(full: crate::limit::LimitFull) -> Option<Self> {
        Some(Failed::LimitFull(full))
    }
    fn from_chaos(fault: crate::chaos::InjectedFault) -> Option<Self> {
        Some(Failed::Injected(fault))
    }
}

/// What the request says about being sent again.
struct RequestHooks {
    resendable: bool,
    replayable: bool,
}

impl<E> HookSet<E> for RequestHooks {
    fn unrepeatable(&self) -> Option<Unrepeatable> {
        if !self.resendable {
            Some(Unrepeatable::NotIdempotent)
        } else if !self.replayable {
            Some(Unrepeatable::BodyNotReplayable)
        } else {
            None
        }
    }
}

#[async_trait::async_trait]
impl Middleware for RetryMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let policy = self.source.current();
        let resendable = may_resend(request.method(), request.headers(), &policy);
        let replayable = match request.body() {
            None => true,
            Some(body) => body
                .as_bytes()
                .is_some_and(|bytes| bytes.len() as u64 <= policy.max_replay_body()),
        };
        let hooks = RequestHooks {
            resendable,
            replayable,
        };
        // A request that cannot be sent again cannot be hedged either.
        let unrepeatable = HookSet::<Failed>::unrepeatable(&hooks);
        let mut run = Retry::new(&policy).hooks(hooks).start(false);
        if let Some(why) = unrepeatable {
            run.unhedged(why.ending());
        }
        // Each attempt sends a clone while the original can be sent again,
        // else the original itself (the hooks then stop any retry), with its
        // own copy of the extensions.
        let policy = &policy;
        let (mut original, base) = (Some(request), extensions.clone());
        let mut make = move || {
            let request = match &original {
                Some(r) if resendable && replayable => r.try_clone(),
                _ => None,
            }
            .or_else(|| original.take());
            let (mut extensions, next) = (base.clone(), next.clone());
            async move {
                let Some(request) = request else {
                    // Not reached: the hooks refuse a retry once the original is sent.
                    let gone = std::io::Error::other("request body not replayable");
                    return Err(Failed::Error(Error::middleware(gone)));
                };
                sent(next.run(request, &mut extensions).await, policy)
            }
        };
        let result = drive!(run, make);
        finish(result, run.report())
    }
}

/// An attempt's outcome: the response, or why it failed.
// The failure carries the response by value, as each attempt returns it.
#[allow(clippy::result_large_err)]
fn sent(sent: Result<Response>, policy: &Policy) -> std::result::Result<Response, Failed> {
    let response = sent.map_err(Failed::Error)?;
    match HttpFailure::classify(response.status(), response.headers(), policy) {
        None => Ok(response),
        Some(failure) => Err(Failed::Status(response, failure)),
    }
}

/// The call's answer: the last response (with its report), or the error.
fn finish(result: std::result::Result<Response, Failed>, report: Report) -> Result<Response> {
    let mut response = match result {
        Ok(response) | Err(Failed::Status(response, _)) => response,
        Err(Failed::Error(error)) => return Err(error),
        Err(Failed::TimedOut(timeout)) => return Err(Error::middleware(timeout)),
        Err(Failed::Refused(open)) => return Err(Error::middleware(open)),
        Err(Failed::LimitFull(full)) => return Err(Error::middleware(full)),
        Err(Failed::Injected(fault)) => return Err(Error::middleware(fault)),
    };
    response.extensions_mut().insert(report);
    Ok(response)
}
