//! HTTP semantics for retrying (feature `http`), used by the tower layer
//! and the reqwest middleware, and open to your own classification:
//! [`status_class`], the server hints ([`parse_retry_after`],
//! [`grpc_pushback`]) that [`HttpFailure::classify`] combines,
//! [`may_resend`], and [`ReplayBody`] (a body kept for sending again, up to
//! the policy's `max_replay_body`, 64 KiB by default).
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
