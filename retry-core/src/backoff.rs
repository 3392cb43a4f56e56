//! Backoff shapes and the envelope: the upper end of the wait before retry `n`.
//!
//! All arithmetic is done in `f64` nanoseconds and compared against the cap
//! *before* converting back, so `factor^n` for any `n` up to `u32::MAX` (or
//! an infinite/NaN intermediate) saturates to the cap instead of overflowing.

use std::time::Duration;

/// How the wait grows from one retry to the next, before jitter.
///
/// `n` counts retries from 0: the wait before the first retry is `envelope(0)`.
///
/// ```
/// use retry_core::Backoff;
/// assert_eq!(Backoff::Linear.raw_nanos(10.0, 2.0), 30.0);
/// assert_eq!(Backoff::Exponential { factor: 2.0 }.raw_nanos(10.0, 3.0), 80.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Backoff {
    /// Every wait is `base`.
    Constant,
    /// The wait before retry `n` is `base·(n+1)`.
    Linear,
    /// The wait before retry `n` is `base·factor^n`, with a real `factor ≥ 1`.
    Exponential {
        /// The growth factor; validated to be finite and at least 1.
        factor: f64,
    },
}

impl Backoff {
    /// The shape's name as written in configuration files.
    ///
    /// ```
    /// assert_eq!(retry_core::Backoff::Constant.name(), "constant");
    /// ```
    pub const fn name(&self) -> &'static str {
        match self {
            Backoff::Constant => "constant",
            Backoff::Linear => "linear",
            Backoff::Exponential { .. } => "exponential",
        }
    }

    /// The unbounded wait in nanoseconds for (possibly fractional) retry `n`,
    /// given `base` in nanoseconds. May be infinite; callers clamp it.
    ///
    /// ```
    /// use retry_core::Backoff;
    /// let huge = Backoff::Exponential { factor: 1e6 }.raw_nanos(1.0, u32::MAX as f64);
    /// assert!(huge.is_infinite());
    /// ```
    pub fn raw_nanos(&self, base_nanos: f64, n: f64) -> f64 {
        match *self {
            Backoff::Constant => base_nanos,
            Backoff::Linear => base_nanos * (n + 1.0),
            Backoff::Exponential { factor } => base_nanos * factor.powf(n),
        }
    }
}

/// `min(cap, raw)` as a `Duration`, saturating on infinity, NaN and negatives.
pub(crate) fn clamp_nanos(raw: f64, cap: Duration) -> Duration {
    let cap_nanos = cap.as_nanos() as f64;
    // NaN and +inf compare as "not less": both saturate to the cap.
    if raw.partial_cmp(&cap_nanos) != Some(std::cmp::Ordering::Less) {
        return cap;
    }
    // `as` saturates, and raw < cap ≤ Policy::MAX_DURATION < u64::MAX ns.
    Duration::from_nanos(raw.max(0.0).round() as u64).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamp_saturates_on_non_finite_values() {
        let cap = Duration::from_secs(5);
        assert_eq!(clamp_nanos(f64::INFINITY, cap), cap);
        assert_eq!(clamp_nanos(f64::NAN, cap), cap);
        assert_eq!(clamp_nanos(-3.0, cap), Duration::ZERO);
        assert_eq!(clamp_nanos(1e9, cap), Duration::from_secs(1));
    }

    #[test]
    fn exponential_at_the_largest_attempt_is_infinite_not_a_panic() {
        let raw = Backoff::Exponential { factor: 1.000_001 }.raw_nanos(1e9, u32::MAX as f64);
        assert!(raw.is_infinite());
        let raw = Backoff::Linear.raw_nanos(86_400e9, u32::MAX as f64);
        assert!(raw.is_finite() && raw > 1e22);
    }
}
