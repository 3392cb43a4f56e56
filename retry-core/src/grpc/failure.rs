//! A failed gRPC call in the engine's terms: its status, class and hint.

use crate::class::Class;
use crate::classify::Classify;
use crate::http::{GRPC_RETRY_PUSHBACK_MS, Pushback, grpc_pushback};
use http::{HeaderMap, StatusCode};
use retrykit_schema::classes::{THROTTLED, TIMEOUT, TRANSIENT};
use retrykit_schema::grpc::{code_name, default_class};
use std::fmt;
use std::time::Duration;

/// The header that carries a call's status code.
pub const GRPC_STATUS: &str = "grpc-status";

/// The most characters of a bad header value a message repeats.
const SHOWN: usize = 40;

/// The class of status code `code`: `UNAVAILABLE` transient,
/// `RESOURCE_EXHAUSTED` throttled, `DEADLINE_EXCEEDED` timeout, `None` for
/// `OK`, every other code permanent ([`retrykit_schema::grpc`]'s table).
pub fn code_class(code: u8) -> Option<Class> {
    Some(match default_class(code)? {
        TRANSIENT => Class::TRANSIENT,
        THROTTLED => Class::THROTTLED,
        TIMEOUT => Class::TIMEOUT,
        _ => Class::Permanent,
    })
}

/// What a failed call's status was.
///
/// ```
/// use retrykit_core::grpc::GrpcStatus;
/// assert_eq!(GrpcStatus::Code(14).to_string(), "UNAVAILABLE (14)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrpcStatus {
    /// A status code, 1 to 16.
    Code(u8),
    /// A `grpc-status` that is not a number from 0 to 16 (the value, cut
    /// to 40 characters).
    Malformed(Box<str>),
    /// The call ended (its trailers came, or its body ended) with no
    /// `grpc-status`.
    Missing,
    /// An HTTP status other than 200 with no `grpc-status`: the code the
    /// gRPC spec maps it to (429, 502, 503, 504: `UNAVAILABLE`; 401:
    /// `UNAUTHENTICATED`; 403: `PERMISSION_DENIED`; 404: `UNIMPLEMENTED`;
    /// 400: `INTERNAL`; the rest `UNKNOWN`).
    Http {
        /// The HTTP status.
        status: u16,
        /// The code it stands for.
        code: u8,
    },
}

impl GrpcStatus {
    /// The status code, if it has one.
    fn code(&self) -> Option<u8> {
        match self {
            GrpcStatus::Code(code) | GrpcStatus::Http { code, .. } => Some(*code),
            GrpcStatus::Malformed(_) | GrpcStatus::Missing => None,
        }
    }
}

impl fmt::Display for GrpcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |code| code_name(code).unwrap_or("?");
        match self {
            GrpcStatus::Code(code) => write!(f, "{} ({code})", name(*code)),
            GrpcStatus::Malformed(value) => write!(
                f,
                "grpc-status {value:?} is not a status code (a whole number from 0 to 16): \
                 the server must send one; taken as a permanent failure"
            ),
            GrpcStatus::Missing => f.write_str(
                "no grpc-status: the call ended without a status (the server must end every \
                 call with grpc-status in its trailers); taken as a permanent failure",
            ),
            GrpcStatus::Http { status, code } => write!(
                f,
                "HTTP {status} with no grpc-status, taken as {} ({code}) as the gRPC spec maps it",
                name(*code)
            ),
        }
    }
}

/// A failed gRPC call, classified: use it as (or inside) the error type of
/// your own gRPC calls to get the tower layer's decisions. Build one with
/// [`classify`](Self::classify) (`#[non_exhaustive]`).
///
/// ```
/// use http::HeaderMap;
/// use retrykit_core::{Class, Classify, grpc::GrpcFailure};
/// let mut headers = HeaderMap::new();
/// headers.insert("grpc-status", "14".parse().unwrap());
/// headers.insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
/// let f = GrpcFailure::classify(&headers).unwrap();
/// assert_eq!(f.class(), Class::Permanent); // the server asked not to be retried
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GrpcFailure {
    /// The call's status.
    pub status: GrpcStatus,
    /// Its class: the status code's, or permanent when the server's
    /// pushback asked not to be retried.
    pub class: Class,
    /// The server's hint: a valid `grpc-retry-pushback-ms`.
    pub retry_after: Option<Duration>,
    /// A `grpc-retry-pushback-ms` that asked not to be retried (negative or
    /// malformed; the value, cut to 40 characters).
    pub do_not_retry: Option<Box<str>>,
}

impl GrpcFailure {
    /// The failure the `grpc-status` and `grpc-retry-pushback-ms` of `map`
    /// (a Trailers-Only response's headers, or the trailers) say, or `None`
    /// for `OK`. A missing or malformed status is a permanent failure.
    pub fn classify(map: &HeaderMap) -> Option<Self> {
        let status = match map.get(GRPC_STATUS) {
            None => GrpcStatus::Missing,
            Some(value) => match value.to_str().ok().and_then(parse_code) {
                Some(0) => return None,
                Some(code) => GrpcStatus::Code(code),
                None => GrpcStatus::Malformed(shown(value.as_bytes())),
            },
        };
        Some(Self::with_pushback(status, map))
    }

    /// The failure of a response whose HTTP status is not 200 and which
    /// carries no `grpc-status` (a proxy's answer, say), by the gRPC spec's
    /// mapping (see [`GrpcStatus::Http`]).
    pub fn from_http(status: StatusCode, headers: &HeaderMap) -> Self {
        let code = match status.as_u16() {
            400 => 13,
            401 => 16,
            403 => 7,
            404 => 12,
            429 | 502 | 503 | 504 => 14,
            _ => 2,
        };
        let status = GrpcStatus::Http {
            status: status.as_u16(),
            code,
        };
        Self::with_pushback(status, headers)
    }

    /// The failure as a policy that names its codes
    /// ([`grpc_retry_on`](crate::PolicyBuilder::grpc_retry_on)) classes it:
    /// a code in `codes` keeps its default class, or is transient when that
    /// is permanent; any other code is permanent. A malformed or missing
    /// status, and a "do not retry" pushback, stay permanent.
    pub fn with_retry_on(mut self, codes: &[u8]) -> Self {
        let Some(code) = self.status.code() else {
            return self;
        };
        if self.do_not_retry.is_none() {
            self.class = match code_class(code) {
                _ if !codes.contains(&code) => Class::Permanent,
                Some(Class::Permanent) | None => Class::TRANSIENT,
                Some(class) => class,
            };
        }
        self
    }

    fn with_pushback(status: GrpcStatus, map: &HeaderMap) -> Self {
        let class = status.code().and_then(code_class);
        let mut failure = GrpcFailure {
            status,
            class: class.unwrap_or(Class::Permanent),
            retry_after: None,
            do_not_retry: None,
        };
        if let Some(value) = map.get(GRPC_RETRY_PUSHBACK_MS) {
            match value.to_str().map(grpc_pushback) {
                Ok(Pushback::Wait(wait)) => failure.retry_after = Some(wait),
                _ => {
                    failure.class = Class::Permanent;
                    failure.do_not_retry = Some(shown(value.as_bytes()));
                }
            }
        }
        failure
    }
}

/// A status code: ASCII digits, 0 to 16.
fn parse_code(value: &str) -> Option<u8> {
    let value = value.trim();
    if value.is_empty() || value.len() > 2 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok().filter(|code| *code <= 16)
}

/// A header value as a message shows it: lossy, at most [`SHOWN`] characters.
fn shown(bytes: &[u8]) -> Box<str> {
    String::from_utf8_lossy(bytes).chars().take(SHOWN).collect()
}

impl Classify for GrpcFailure {
    fn class(&self) -> Class {
        self.class
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl fmt::Display for GrpcFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gRPC {} ({})", self.status, self.class.name())?;
        if let Some(value) = &self.do_not_retry {
            write!(
                f,
                ", grpc-retry-pushback-ms {value:?} is not a whole number of milliseconds: \
                 gRFC A6 reads it as 'do not retry'"
            )?;
        }
        match self.retry_after {
            Some(wait) => write!(f, ", server asked to wait {wait:?}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for GrpcFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, http::HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    #[test]
    fn every_code_and_every_bad_status_has_its_class_and_is_never_a_success() {
        for code in 1..=16u8 {
            let f = GrpcFailure::classify(&map(&[("grpc-status", code.to_string().as_bytes())]));
            let expected = match code {
                14 => Class::TRANSIENT,
                8 => Class::THROTTLED,
                4 => Class::TIMEOUT,
                _ => Class::Permanent,
            };
            assert_eq!(f.map(|f| f.class), Some(expected), "{code}");
            assert_eq!(code_class(code), Some(expected), "{code}");
        }
        assert_eq!(code_class(0), None);
        let aborted = GrpcFailure::classify(&map(&[("grpc-status", b"10")])).unwrap();
        assert_eq!(
            aborted.clone().with_retry_on(&[10, 14]).class,
            Class::TRANSIENT
        );
        let unavailable = GrpcFailure::classify(&map(&[("grpc-status", b"14")])).unwrap();
        assert_eq!(unavailable.with_retry_on(&[10]).class, Class::Permanent);
        assert_eq!(aborted.with_retry_on(&[14]).class, Class::Permanent);
        assert!(GrpcFailure::classify(&map(&[("grpc-status", b"0")])).is_none());
        for bad in [
            &b"17"[..],
            b"-1",
            b"14 ",
            b"",
            b"UNAVAILABLE",
            b"1e1",
            b"014",
            b"\xff",
        ] {
            let f = GrpcFailure::classify(&map(&[("grpc-status", bad)])).unwrap();
            // " 14 " trims to a code: the only lenient case.
            if bad == b"14 " {
                assert_eq!(f.status, GrpcStatus::Code(14));
                continue;
            }
            assert_eq!(f.class, Class::Permanent, "{bad:?}");
            assert!(matches!(f.status, GrpcStatus::Malformed(_)), "{bad:?}");
            assert!(f.to_string().contains("not a status code"), "{f}");
        }
        let long = vec![b'9'; 10_000];
        let f = GrpcFailure::classify(&map(&[("grpc-status", &long)])).unwrap();
        assert!(f.to_string().len() < 400, "a long value is cut: {f}");
        let f = GrpcFailure::classify(&HeaderMap::new()).unwrap();
        assert_eq!(
            (f.status.clone(), f.class),
            (GrpcStatus::Missing, Class::Permanent)
        );
        assert!(
            f.to_string()
                .contains("must end every call with grpc-status")
        );
    }

    #[test]
    fn a_valid_pushback_waits_and_a_negative_or_malformed_one_stops() {
        let f = GrpcFailure::classify(&map(&[
            ("grpc-status", b"8"),
            ("grpc-retry-pushback-ms", b"1500"),
        ]))
        .unwrap();
        assert_eq!(
            (f.class, f.retry_after),
            (Class::THROTTLED, Some(Duration::from_millis(1500)))
        );
        for stop in [&b"-1"[..], b"soon", b"1.5", b""] {
            let f = GrpcFailure::classify(&map(&[
                ("grpc-status", b"14"),
                ("grpc-retry-pushback-ms", stop),
            ]))
            .unwrap();
            assert_eq!(
                (f.class, f.retry_after),
                (Class::Permanent, None),
                "{stop:?}"
            );
            assert!(f.to_string().contains("do not retry"), "{f}");
        }
    }

    #[test]
    fn an_http_status_without_grpc_status_maps_as_the_grpc_spec_says() {
        let class = |s: u16| {
            GrpcFailure::from_http(StatusCode::from_u16(s).unwrap(), &HeaderMap::new()).class
        };
        for s in [429, 502, 503, 504] {
            assert_eq!(class(s), Class::TRANSIENT, "{s}");
        }
        for s in [400, 401, 403, 404, 500] {
            assert_eq!(class(s), Class::Permanent, "{s}");
        }
    }
}
