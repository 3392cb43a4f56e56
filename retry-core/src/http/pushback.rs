//! gRPC's server pushback (gRFC A6), `grpc-retry-pushback-ms`.

use std::time::Duration;

/// The header a gRPC server pushes back with.
pub const GRPC_RETRY_PUSHBACK_MS: &str = "grpc-retry-pushback-ms";

/// What a `grpc-retry-pushback-ms` value asks for.
///
/// ```
/// use retrykit_core::http::{Pushback, grpc_pushback};
/// use std::time::Duration;
/// assert_eq!(grpc_pushback("250"), Pushback::Wait(Duration::from_millis(250)));
/// assert_eq!(grpc_pushback("-1"), Pushback::DoNotRetry);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushback {
    /// Wait this long before the next attempt.
    Wait(Duration),
    /// The server asks not to be retried (a negative or malformed value).
    DoNotRetry,
}

/// Reads a `grpc-retry-pushback-ms` value: ASCII digits are milliseconds
/// (saturating; `max_retry_after` clamps them), anything else "do not retry".
pub fn grpc_pushback(value: &str) -> Pushback {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Pushback::DoNotRetry;
    }
    Pushback::Wait(Duration::from_millis(value.parse().unwrap_or(u64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_wait_and_everything_else_stops() {
        assert_eq!(
            grpc_pushback("1500"),
            Pushback::Wait(Duration::from_millis(1500))
        );
        assert_eq!(
            grpc_pushback("99999999999999999999999"),
            Pushback::Wait(Duration::from_millis(u64::MAX))
        );
        assert_eq!(grpc_pushback(" 0 "), Pushback::Wait(Duration::ZERO));
        for stop in ["", "-5", "1.5", "1e3", "ten", "+3"] {
            assert_eq!(grpc_pushback(stop), Pushback::DoNotRetry, "{stop:?}");
        }
    }
}
