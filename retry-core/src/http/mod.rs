//! HTTP semantics for retrying (feature `http`), in one place: the tower
//! layer and the reqwest middleware use it, and so can anyone who writes
//! their own classification.
//!
//! - [`status_class`]: 408, 429, 500, 502, 503 and 504 are retryable
//!   (429 as `throttled`, the rest `transient`), as is any status the
//!   policy's `retry_on_status` adds; other 4xx and 5xx are permanent;
//!   1xx, 2xx and 3xx are not failures.
//! - Server hints: [`parse_retry_after`] (both RFC 9110 forms) and
//!   [`grpc_pushback`] (`grpc-retry-pushback-ms`), combined by
//!   [`HttpFailure::classify`].
//! - [`may_resend`]: only idempotent methods (GET, HEAD, OPTIONS, PUT,
//!   DELETE, TRACE), requests with an `Idempotency-Key`, or methods the
//!   policy's `retry_methods` opts in are sent again.
//! - [`ReplayBody`]: a request body kept as it is sent, up to the policy's
//!   `max_replay_body` (64 KiB by default), so it can be sent again.
//!
//! ```
//! use http::{Method, Request, StatusCode};
//! use retrykit_core::http::{HttpFailure, may_resend};
//! use retrykit_core::{Class, Classify, Policy};
//!
//! let policy = Policy::default();
//! let response = http::Response::builder().status(503).header("retry-after", "2").body(()).unwrap();
//! let failure = HttpFailure::classify(response.status(), response.headers(), &policy).unwrap();
//! assert_eq!(failure.class(), Class::TRANSIENT);
//! assert_eq!(failure.retry_after(), Some(std::time::Duration::from_secs(2)));
//!
//! let post = Request::post("/orders").body(()).unwrap();
//! assert!(!may_resend(post.method(), post.headers(), &policy));
//! ```

mod failure;
mod idempotency;
mod pushback;
mod replay;
mod retry_after;
mod status;

pub use failure::HttpFailure;
pub use idempotency::{IDEMPOTENCY_KEY, is_idempotent, may_resend};
pub use pushback::{GRPC_RETRY_PUSHBACK_MS, Pushback, grpc_pushback};
pub use replay::{BoxError, ReplayBody};
pub use retry_after::{RetryAfterValue, parse_retry_after};
pub use status::status_class;
