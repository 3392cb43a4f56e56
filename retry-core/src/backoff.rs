//! Backoff shapes and the envelope: the upper end of the wait before retry
//! `n`. The arithmetic is in `f64` nanoseconds, compared with the cap before
//! converting back, so any `n` (or an infinite or NaN value) saturates to
//! the cap instead of overflowing.

use std::time::Duration;

/// How the wait grows from one retry to the next, before jitter. `n` counts
/// retries from 0: the wait before the first retry is `envelope(0)`.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Backoff, Policy};
/// use std::time::Duration;
/// let shaped = |b: Backoff| Policy::builder().backoff(b).base(Duration::from_millis(10)).build().unwrap();
/// assert_eq!(shaped(Backoff::Linear).envelope(2), Duration::from_millis(30));
/// assert_eq!(shaped(Backoff::Exponential { factor: 2.0 }).envelope(3), Duration::from_millis(80));
/// assert_eq!(Backoff::Constant.name(), "constant");
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
    pub const fn name(&self) -> &'static str {
        match self {
            Backoff::Constant => "constant",
            Backoff::Linear => "linear",
            Backoff::Exponential { .. } => "exponential",
        }
    }

    /// The unbounded wait in nanoseconds for a (possibly fractional) retry
    /// `n`; may be infinite, and callers clamp it.
    pub(crate) fn raw_nanos(&self, base_nanos: f64, n: f64) -> f64 {
        match *self {
            Backoff::Constant => base_nanos,
            Backoff::Linear => base_nanos * (n + 1.0),
            Backoff::Exponential { factor } => base_nanos * growth(factor, n),
        }
    }

    /// [`raw_nanos`](Self::raw_nanos) for a whole retry number.
    pub(crate) fn raw_nanos_at(&self, base_nanos: f64, n: u32) -> f64 {
        match *self {
            Backoff::Exponential { factor } => base_nanos * growth_whole(factor, n),
            shape => shape.raw_nanos(base_nanos, f64::from(n)),
        }
    }
}

/// `factor^n` for a real `n`, exact at 0 and 1.
fn growth(factor: f64, n: f64) -> f64 {
    if n == 0.0 {
        1.0
    } else if n == 1.0 {
        factor
    } else {
        factor.powf(n)
    }
}

/// `factor^n` for a whole `n`, by repeated squaring.
fn growth_whole(factor: f64, n: u32) -> f64 {
    match i32::try_from(n) {
        Ok(n) => factor.powi(n),
        Err(_) => factor.powf(f64::from(n)),
    }
}

/// `d` in whole nanoseconds, saturating.
pub(crate) const fn nanos(d: Duration) -> u64 {
    let n = d.as_nanos();
    if n > u64::MAX as u128 {
        u64::MAX
    } else {
        n as u64
    }
}

/// `raw` nanoseconds rounded to the nearest whole one and clamped to
/// `cap`: NaN and +inf saturate to the cap, negatives to zero.
pub(crate) fn clamp_to_nanos(raw: f64, cap: u64) -> u64 {
    if raw.partial_cmp(&(cap as f64)) != Some(std::cmp::Ordering::Less) {
        return cap;
    }
    round_nanos(raw).min(cap)
}

/// `x` rounded half up; `as` saturates, so negatives and NaN become 0.
pub(crate) fn round_nanos(x: f64) -> u64 {
    x.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_powers_agree_with_real_ones() {
        for factor in [1.0, 1.000_001, 1.5, 2.0, 3.7, 1e6] {
            for n in [
                0u32,
                1,
                2,
                3,
                10,
                63,
                64,
                65,
                1000,
                i32::MAX as u32,
                u32::MAX,
            ] {
                let (whole, real) = (growth_whole(factor, n), growth(factor, f64::from(n)));
                let close = whole == real || (whole - real).abs() <= 1e-12 * real.abs();
                assert!(close, "{factor}^{n}: {whole} vs {real}");
            }
        }
        for factor in [1.0, 1.5, 2.0, 3.7, 1e6] {
            for n in [0.0, 1.0, 2.0, 0.5, 7.0] {
                assert_eq!(growth(factor, n), factor.powf(n), "{factor}^{n}");
            }
        }
    }

    #[test]
    fn clamp_saturates_on_non_finite_values() {
        let cap = Duration::from_secs(5);
        let cap = nanos(cap);
        assert_eq!(clamp_to_nanos(f64::INFINITY, cap), cap);
        assert_eq!(clamp_to_nanos(f64::NAN, cap), cap);
        assert_eq!(clamp_to_nanos(-3.0, cap), 0);
        assert_eq!(clamp_to_nanos(1e9, cap), 1_000_000_000);
        assert_eq!(
            clamp_to_nanos(2.5, cap),
            3,
            "halves round up, as f64::round does"
        );
        assert_eq!(round_nanos(1e300), u64::MAX, "saturates");
    }

    #[test]
    fn exponential_at_the_largest_attempt_is_infinite_not_a_panic() {
        let huge = Backoff::Exponential { factor: 1e6 }.raw_nanos(1.0, u32::MAX as f64);
        assert!(huge.is_infinite());
        let exp = Backoff::Exponential { factor: 1.5 };
        assert_eq!(exp.raw_nanos_at(10.0, 3), exp.raw_nanos(10.0, 3.0));
        let raw = Backoff::Exponential { factor: 1.000_001 }.raw_nanos(1e9, u32::MAX as f64);
        assert!(raw.is_infinite());
        let raw = Backoff::Linear.raw_nanos(86_400e9, u32::MAX as f64);
        assert!(raw.is_finite() && raw > 1e22);
    }
}
