//! Which requests may be sent again without doing their work twice.

use crate::policy::Policy;
use http::{HeaderMap, Method};

/// The header by which a client makes a request safe to repeat (the IETF
/// `Idempotency-Key` draft): the server does its work once per key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Whether RFC 9110 §9.2.2 defines `method` as idempotent: GET, HEAD,
/// OPTIONS, PUT, DELETE, TRACE.
///
/// ```
/// use http::Method;
/// assert!(retrykit_core::http::is_idempotent(&Method::PUT));
/// assert!(!retrykit_core::http::is_idempotent(&Method::POST));
/// ```
pub fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::PUT | Method::DELETE | Method::TRACE
    )
}

/// Whether a request may be sent again under `policy`: its method is
/// idempotent, it carries an `Idempotency-Key`, or the policy's
/// `retry_methods` lists its method.
///
/// ```
/// use http::{HeaderMap, Method};
/// use retrykit_core::{Policy, http::may_resend};
/// let policy = Policy::default();
/// let mut headers = HeaderMap::new();
/// assert!(!may_resend(&Method::POST, &headers, &policy));
/// headers.insert("idempotency-key", "order-17".parse().unwrap());
/// assert!(may_resend(&Method::POST, &headers, &policy));
/// let opted_in = Policy::builder().retry_methods(["PATCH"]).build().unwrap();
/// assert!(may_resend(&Method::PATCH, &HeaderMap::new(), &opted_in));
/// ```
pub fn may_resend(method: &Method, headers: &HeaderMap, policy: &Policy) -> bool {
    is_idempotent(method)
        || headers.contains_key(IDEMPOTENCY_KEY)
        || policy
            .retry_methods()
            .iter()
            .any(|m| **m == *method.as_str())
}
