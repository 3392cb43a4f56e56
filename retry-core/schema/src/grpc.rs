//! gRPC status codes by name, as service configs write them
//! (`"UNAVAILABLE"`), with their numbers and the class each has by default:
//! the one table that retrykit-core's gRPC mode, the policy file and
//! `retry-policy import grpc` read.
//!
//! Retried by default (when a policy names no codes): `UNAVAILABLE` only
//! ([`DEFAULT_RETRY_ON`]), as gRFC A6 retries only the codes a policy lists
//! and grpc-go's examples list. A policy that names its codes
//! (`grpc_retry_on`) retries those.
//!
//! Classes (what a breaker, a budget and `retry_on` see of a code the
//! policy retries):
//! - `UNAVAILABLE`: `transient` (the server or the path to it is down for
//!   now; gRFC A6's example of a retryable code);
//! - `RESOURCE_EXHAUSTED`: `throttled` (a quota or rate limit, gRPC's 429);
//! - `DEADLINE_EXCEEDED`: `timeout` (as an attempt that ran out of time);
//! - `OK`: not a failure;
//! - every other code: permanent (the same request gets the same answer, or,
//!   as for `ABORTED` and `INTERNAL`, only the application knows whether a
//!   retry is safe: it opts in by naming the code).
//!
//! ```
//! use retrykit_schema::grpc::{code_named, default_class, CODES};
//! assert_eq!(code_named("UNAVAILABLE"), Some(14));
//! assert_eq!(default_class(8), Some("throttled"));
//! assert_eq!(default_class(0), None); // OK
//! assert_eq!(CODES.len(), 17);
//! ```

use crate::classes::{PERMANENT, THROTTLED, TIMEOUT, TRANSIENT};

/// The policy name of a service config's every-method entry.
pub const DEFAULT_POLICY: &str = "grpc-default";

/// The policy name `retry-policy import grpc` gives a service config's
/// `name` entry, and the gRPC layer's per-method choice looks up:
/// `service/method`, or `service` for a service-wide entry, with each
/// character a policy name cannot hold (anything but ASCII letters, digits,
/// `-` and `_`) written as `-`; the empty entry is [`DEFAULT_POLICY`].
///
/// ```
/// use retrykit_schema::grpc::policy_name;
/// assert_eq!(policy_name("helloworld.Greeter/SayHello"), "helloworld-Greeter-SayHello");
/// assert_eq!(policy_name("helloworld.Greeter"), "helloworld-Greeter");
/// assert_eq!(policy_name(""), "grpc-default");
/// ```
pub fn policy_name(entry: &str) -> String {
    if entry.is_empty() {
        return DEFAULT_POLICY.to_owned();
    }
    entry
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => c,
            _ => '-',
        })
        .collect()
}

/// The policy names a call to gRPC method `path` (`/service/method`, as an
/// HTTP/2 request's path gives it) is looked up by, in gRFC A6's order:
/// the method's own entry, its service's, then every method's.
///
/// ```
/// use retrykit_schema::grpc::policy_names_for;
/// assert_eq!(
///     policy_names_for("/helloworld.Greeter/SayHello"),
///     ["helloworld-Greeter-SayHello", "helloworld-Greeter", "grpc-default"]
/// );
/// ```
pub fn policy_names_for(path: &str) -> [String; 3] {
    let path = path.strip_prefix('/').unwrap_or(path);
    let service = path.rsplit_once('/').map_or(path, |(service, _)| service);
    [
        policy_name(path),
        policy_name(service),
        DEFAULT_POLICY.to_owned(),
    ]
}

/// The codes retried when a policy names none: `UNAVAILABLE` (14).
///
/// ```
/// assert_eq!(retrykit_schema::grpc::DEFAULT_RETRY_ON, [14]);
/// ```
pub const DEFAULT_RETRY_ON: &[u8] = &[14];
use crate::suggest::did_you_mean;

/// Every gRPC status code: its name as service configs write it, and its
/// number, in number order (`CODES[n].1 == n`).
///
/// ```
/// assert_eq!(retrykit_schema::grpc::CODES[14], ("UNAVAILABLE", 14));
/// ```
pub const CODES: [(&str, u8); 17] = [
    ("OK", 0),
    ("CANCELLED", 1),
    ("UNKNOWN", 2),
    ("INVALID_ARGUMENT", 3),
    ("DEADLINE_EXCEEDED", 4),
    ("NOT_FOUND", 5),
    ("ALREADY_EXISTS", 6),
    ("PERMISSION_DENIED", 7),
    ("RESOURCE_EXHAUSTED", 8),
    ("FAILED_PRECONDITION", 9),
    ("ABORTED", 10),
    ("OUT_OF_RANGE", 11),
    ("UNIMPLEMENTED", 12),
    ("INTERNAL", 13),
    ("UNAVAILABLE", 14),
    ("DATA_LOSS", 15),
    ("UNAUTHENTICATED", 16),
];

/// The number of the code written `name` (exactly, upper case), if any.
///
/// ```
/// assert_eq!(retrykit_schema::grpc::code_named("unavailable"), None);
/// ```
pub fn code_named(name: &str) -> Option<u8> {
    CODES.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
}

/// The name of code `code`, if it is one (0 to 16).
///
/// ```
/// assert_eq!(retrykit_schema::grpc::code_name(4), Some("DEADLINE_EXCEEDED"));
/// assert_eq!(retrykit_schema::grpc::code_name(17), None);
/// ```
pub fn code_name(code: u8) -> Option<&'static str> {
    CODES.get(usize::from(code)).map(|&(name, _)| name)
}

/// The class code `code` has when a policy names none: `None` for `OK` (not
/// a failure), else a class name (see the module docs).
///
/// ```
/// assert_eq!(retrykit_schema::grpc::default_class(5), Some("permanent"));
/// ```
pub fn default_class(code: u8) -> Option<&'static str> {
    match code {
        0 => None,
        14 => Some(TRANSIENT),
        8 => Some(THROTTLED),
        4 => Some(TIMEOUT),
        _ => Some(PERMANENT),
    }
}

/// The code a misspelled `name` was probably meant to be (another case,
/// a typo, or a number written as a name).
///
/// ```
/// use retrykit_schema::grpc::suggest_code;
/// assert_eq!(suggest_code("UNAVAILIBLE").as_deref(), Some("UNAVAILABLE"));
/// assert_eq!(suggest_code("unavailable").as_deref(), Some("UNAVAILABLE"));
/// assert_eq!(suggest_code("14").as_deref(), Some("UNAVAILABLE"));
/// ```
pub fn suggest_code(name: &str) -> Option<String> {
    if let Some(code) = name.parse::<u8>().ok().and_then(code_name) {
        return Some(code.to_owned());
    }
    let upper = name.trim().to_ascii_uppercase().replace(['-', ' '], "_");
    if code_named(&upper).is_some() {
        return Some(upper);
    }
    did_you_mean(&upper, CODES.iter().map(|(n, _)| *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_number_order_and_the_defaults_are_the_documented_ones() {
        for (i, (name, code)) in CODES.iter().enumerate() {
            assert_eq!(usize::from(*code), i);
            assert_eq!(code_named(name), Some(*code));
        }
        let retryable: Vec<_> = (0..17u8)
            .filter_map(|c| default_class(c).filter(|k| *k != PERMANENT).map(|k| (c, k)))
            .collect();
        assert_eq!(retryable, [(4, TIMEOUT), (8, THROTTLED), (14, TRANSIENT)]);
        assert_eq!(
            suggest_code("RESOURCE_EXHAUSTD").as_deref(),
            Some("RESOURCE_EXHAUSTED")
        );
        assert_eq!(suggest_code("NO_SUCH_THING_AT_ALL"), None);
    }
}
