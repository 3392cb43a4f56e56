//! gRPC semantics for retrying (feature `grpc`, gRFC A6), used by the
//! tower layer's [`grpc`](crate::tower::RetryLayer::grpc) mode: a call's
//! outcome is its `grpc-status` ([`code_class`]), from a Trailers-Only
//! response's headers or from its trailers, and its server's hint is
//! `grpc-retry-pushback-ms`; [`GrpcFailure::classify`] combines them. A
//! malformed or missing `grpc-status` is a permanent failure that says
//! what was wrong, never a success.
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

/// The header each retry and hedge carries: how many attempts were sent before it.
pub const GRPC_PREVIOUS_RPC_ATTEMPTS: &str = "grpc-previous-rpc-attempts";

/// The header that tells the server how long the call has left.
pub const GRPC_TIMEOUT: &str = "grpc-timeout";
