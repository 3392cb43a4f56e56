//! gRPC semantics for retrying (feature `grpc`): a call's outcome is its
//! `grpc-status`, read from the response's headers (a Trailers-Only
//! response, the usual form of `UNAVAILABLE`) or from its trailers, and
//! its server's hint is `grpc-retry-pushback-ms` (gRFC A6). The tower
//! layer's [`grpc`](crate::tower::RetryLayer::grpc) mode uses it.
//!
//! - [`code_class`]: the class of each status code: `UNAVAILABLE`
//!   transient, `RESOURCE_EXHAUSTED` throttled, `DEADLINE_EXCEEDED` timeout,
//!   `OK` no failure, every other code permanent (the table is
//!   [`retrykit_schema::grpc`]'s).
//! - [`GrpcFailure::classify`]: a status and its pushback, combined. A
//!   pushback that is not a non-negative integer stops the retrying (A6);
//!   a valid one sets the next wait, clamped by the policy's
//!   `max_retry_after` as every hint is.
//! - A malformed `grpc-status`, or none where one must be, is a failure
//!   (permanent) that says what was wrong: never a success.
//!
//! ```
//! use http::HeaderMap;
//! use retrykit_core::grpc::{GrpcFailure, GrpcStatus};
//! use retrykit_core::{Class, Classify};
//! let mut trailers = HeaderMap::new();
//! trailers.insert("grpc-status", "14".parse().unwrap());
//! trailers.insert("grpc-retry-pushback-ms", "250".parse().unwrap());
//! let failure = GrpcFailure::classify(&trailers).unwrap();
//! assert_eq!((&failure.status, failure.class()), (&GrpcStatus::Code(14), Class::TRANSIENT));
//! assert_eq!(failure.retry_after(), Some(std::time::Duration::from_millis(250)));
//! trailers.insert("grpc-status", "0".parse().unwrap());
//! assert!(GrpcFailure::classify(&trailers).is_none()); // OK
//! ```

mod failure;

pub use failure::{GRPC_STATUS, GrpcFailure, GrpcStatus, code_class};

/// The header each retry and hedge carries: how many attempts of the call
/// were sent before it (gRFC A6).
///
/// ```
/// assert_eq!(retrykit_core::grpc::GRPC_PREVIOUS_RPC_ATTEMPTS, "grpc-previous-rpc-attempts");
/// ```
pub const GRPC_PREVIOUS_RPC_ATTEMPTS: &str = "grpc-previous-rpc-attempts";

/// The header that tells the server how long the call has left (gRPC over
/// HTTP/2): each attempt under a policy with a `deadline` or an
/// `attempt_timeout` carries what it has left.
///
/// ```
/// assert_eq!(retrykit_core::grpc::GRPC_TIMEOUT, "grpc-timeout");
/// ```
pub const GRPC_TIMEOUT: &str = "grpc-timeout";
