//! Parsing `Retry-After` (RFC 9110 §10.2.3): `delay-seconds` or an HTTP-date.

use std::time::{Duration, SystemTime};

/// A valid `Retry-After` value, in the form it was written.
///
/// ```
/// use retrykit_core::http::RetryAfterValue;
/// assert_eq!(RetryAfterValue::parse("120"), Some(RetryAfterValue::Seconds(120)));
/// assert!(matches!(RetryAfterValue::parse("Thu, 01 Jan 1970 00:00:00 GMT"), Some(RetryAfterValue::Date(_))));
/// assert_eq!(RetryAfterValue::parse("soon"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfterValue {
    /// `delay-seconds`: wait this many seconds (saturating at `u64::MAX`).
    Seconds(u64),
    /// An HTTP-date (whole seconds): wait until then.
    Date(SystemTime),
}

impl RetryAfterValue {
    /// `delay-seconds` (ASCII digits only) or an HTTP-date; anything else
    /// (garbage, a negative or fractional number) is `None`.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            return Some(RetryAfterValue::Seconds(value.parse().unwrap_or(u64::MAX)));
        }
        httpdate::parse_http_date(value)
            .ok()
            .map(RetryAfterValue::Date)
    }

    /// The wait it asks for, measured from `now`; a date in the past asks
    /// for none.
    pub fn wait_from(&self, now: SystemTime) -> Duration {
        match *self {
            RetryAfterValue::Seconds(secs) => Duration::from_secs(secs),
            RetryAfterValue::Date(when) => when.duration_since(now).unwrap_or(Duration::ZERO),
        }
    }
}

/// The wait a `Retry-After` value asks for, measured from `now`
/// ([`RetryAfterValue`]); `None` when malformed, so the policy's own wait
/// applies. A far-future value is returned as is: `max_retry_after` clamps it.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    RetryAfterValue::parse(value).map(|v| v.wait_from(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_and_the_bad_ones() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let p = |v| parse_retry_after(v, now);
        assert_eq!(p("0"), Some(Duration::ZERO));
        assert_eq!(p(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(
            p("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            p("Sun, 06 Nov 1994 08:49:40 GMT"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(p("Sun, 06 Nov 1994 08:00:00 GMT"), Some(Duration::ZERO));
        for bad in ["", "soon", "-1", "1.5", "0x10", "Sun, 06 Nov 1994", "2 s"] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }
}
