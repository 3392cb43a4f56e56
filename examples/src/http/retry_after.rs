//! Parsing `Retry-After` (RFC 9110 §10.2.3): `delay-seconds` or an HTTP-date.

use std::time::{Duration, SystemTime};

/// The wait a `Retry-After` value asks for, measured from `now`.
///
/// - `delay-seconds` (ASCII digits only): that many seconds, saturating.
/// - an HTTP-date: the time until then; a date in the past means "now" (zero).
/// - anything else (garbage, a negative or fractional number): `None`, so
///   the policy's own wait applies. A far-future value is returned as is:
///   the policy's `max_retry_after` clamps it.
///
/// ```
/// use examples::http::parse_retry_after;
/// use std::time::{Duration, SystemTime};
/// let now = SystemTime::now();
/// assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
/// assert_eq!(parse_retry_after("-5", now), None);
/// assert_eq!(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", now), Some(Duration::ZERO));
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Longer than u64 seconds: saturate rather than reject.
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
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
