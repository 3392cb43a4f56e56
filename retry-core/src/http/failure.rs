//! A failed response in the engine's terms: its class and server hint.

use super::pushback::{GRPC_RETRY_PUSHBACK_MS, Pushback, grpc_pushback};
use super::retry_after::parse_retry_after;
use super::status::status_class;
use crate::class::Class;
use crate::classify::Classify;
use crate::policy::Policy;
use http::{HeaderMap, StatusCode};
use std::fmt;
use std::time::{Duration, SystemTime};

/// A failed HTTP response, classified: use it as (or inside) the error type
/// of your own HTTP calls to get the tower layer's decisions. Build one
/// with [`classify`](Self::classify) (`#[non_exhaustive]`).
///
/// ```
/// use http::{HeaderMap, StatusCode};
/// use retrykit_core::{Class, Classify, Policy, http::HttpFailure};
/// let mut headers = HeaderMap::new();
/// headers.insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
/// let f = HttpFailure::classify(StatusCode::SERVICE_UNAVAILABLE, &headers, &Policy::default()).unwrap();
/// assert_eq!(f.class(), Class::Permanent); // the server asked not to be retried
/// assert!(HttpFailure::classify(StatusCode::OK, &HeaderMap::new(), &Policy::default()).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpFailure {
    /// The response's status.
    pub status: StatusCode,
    /// Its class (see [`status_class`](super::status_class)).
    pub class: Class,
    /// The server's hint: `grpc-retry-pushback-ms`, else a valid `Retry-After`.
    pub retry_after: Option<Duration>,
}

impl HttpFailure {
    /// The failure a response with `status` and `headers` is under
    /// `policy`, or `None` when the status is not a failure. A
    /// `grpc-retry-pushback-ms` that is not a non-negative integer makes it
    /// permanent (gRFC A6); a malformed `Retry-After` is ignored. An
    /// HTTP-date is read against the system clock.
    ///
    /// ```
    /// use http::{HeaderMap, StatusCode};
    /// use retrykit_core::{Policy, http::HttpFailure};
    /// use std::time::Duration;
    /// let mut headers = HeaderMap::new();
    /// headers.insert("retry-after", "7".parse().unwrap());
    /// let f = HttpFailure::classify(StatusCode::TOO_MANY_REQUESTS, &headers, &Policy::default()).unwrap();
    /// assert_eq!(f.retry_after, Some(Duration::from_secs(7)));
    /// ```
    pub fn classify(status: StatusCode, headers: &HeaderMap, policy: &Policy) -> Option<Self> {
        let class = status_class(status, policy)?;
        let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
        let (class, retry_after) = match text(GRPC_RETRY_PUSHBACK_MS).map(grpc_pushback) {
            Some(Pushback::DoNotRetry) => (Class::Permanent, None),
            Some(Pushback::Wait(wait)) => (class, Some(wait)),
            None => (
                class,
                text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())),
            ),
        };
        Some(HttpFailure {
            status,
            class,
            retry_after,
        })
    }
}

impl Classify for HttpFailure {
    fn class(&self) -> Class {
        self.class
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} ({})", self.status, self.class.name())?;
        match self.retry_after {
            Some(wait) => write!(f, ", server asked to wait {wait:?}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for HttpFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn pushback_wins_over_retry_after_and_a_bad_one_stops() {
        let policy = Policy::default();
        let both = headers(&[("retry-after", "9"), ("grpc-retry-pushback-ms", "250")]);
        let f = HttpFailure::classify(StatusCode::SERVICE_UNAVAILABLE, &both, &policy).unwrap();
        assert_eq!(
            (f.class, f.retry_after),
            (Class::TRANSIENT, Some(Duration::from_millis(250)))
        );
        let stop = headers(&[("grpc-retry-pushback-ms", "later")]);
        let f = HttpFailure::classify(StatusCode::TOO_MANY_REQUESTS, &stop, &policy).unwrap();
        assert_eq!((f.class, f.retry_after), (Class::Permanent, None));
        let garbage = headers(&[("retry-after", "soon")]);
        let f = HttpFailure::classify(StatusCode::BAD_GATEWAY, &garbage, &policy).unwrap();
        assert_eq!((f.class, f.retry_after), (Class::TRANSIENT, None));
    }
}
