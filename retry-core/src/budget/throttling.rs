//! gRFC A6's retry throttling (a service config's `retryThrottling`).

use crate::problem::Problems;
use retrykit_schema::keys::Key;
use std::sync::atomic::{AtomicU32, Ordering};

/// A6's largest `max_tokens`.
pub const MAX_TOKENS: f64 = 1000.0;

/// The largest `token_ratio`.
const MAX_RATIO: f64 = 1e6;

/// Thousandths of a token in a token.
const MILLI: f64 = 1000.0;

/// `value` in thousandths, when it is a whole number of them (within float
/// rounding): `None` for a fourth decimal, NaN or an infinity.
fn milli(value: f64) -> Option<f64> {
    let scaled = value * MILLI;
    let whole = scaled.round();
    ((scaled - whole).abs() <= 1e-12 * whole.abs().max(1.0)).then_some(whole)
}

/// gRFC A6's token bucket: `max_tokens`, full at the start; every failed
/// attempt drains one token and every success adds `token_ratio`. Retries
/// and hedges are allowed only while more than half the tokens are left.
/// Kept in thousandths of a token, in one atomic: a setting with a fourth
/// decimal is refused rather than silently cut, as gRPC's clients would.
#[derive(Debug)]
pub struct GrpcThrottling {
    max: u32,
    ratio: u32,
    tokens: AtomicU32,
}

impl GrpcThrottling {
    /// A full bucket of `max_tokens` (above 0, at most 1000) filled by
    /// `token_ratio` (at least 0.001) per success, each with three decimals
    /// at most.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`](crate::PolicyError) naming `max_tokens` or
    /// `token_ratio` when it is out of range, not finite, or has a fourth
    /// decimal.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Result<Self, crate::PolicyError> {
        let max = milli(max_tokens).filter(|m| (1.0..=MAX_TOKENS * MILLI).contains(m));
        let ratio = milli(token_ratio).filter(|r| (1.0..=MAX_RATIO * MILLI).contains(r));
        let mut problems = Problems::default();
        problems.require(
            max.is_some(),
            Key::MaxTokens.name(),
            "must be above 0 and at most 1000, with three decimals at most \
             (gRFC A6's retryThrottling.maxTokens)",
            format!("use a bucket such as 10 (got {max_tokens:?})"),
        );
        problems.require(
            ratio.is_some(),
            Key::TokenRatio.name(),
            "must be at least 0.001 and at most 1000000, with three decimals at most \
             (gRFC A6's retryThrottling.tokenRatio: above 0, three decimals)",
            format!("use a ratio such as 0.1 (got {token_ratio:?})"),
        );
        // A problem was found exactly when a value is missing.
        let (Some(max), Some(ratio)) = (max, ratio) else {
            let kind = crate::PolicyErrorKind::Budget;
            return Err(crate::PolicyError::new(kind, None, problems.into_vec()));
        };
        let max = max as u32;
        Ok(GrpcThrottling {
            max,
            ratio: ratio as u32,
            tokens: AtomicU32::new(max),
        })
    }

    /// Whether a retry or a hedge may be sent now: more than half of
    /// `max_tokens` is left.
    pub fn allows(&self) -> bool {
        self.tokens.load(Ordering::Relaxed) > self.max / 2
    }

    /// Records an attempt's outcome: a failure takes one token, down to 0;
    /// a success gives back `token_ratio`, up to `max_tokens`.
    pub fn record(&self, failed: bool) {
        let step = |t: u32| {
            Some(match failed {
                true => t.saturating_sub(1000),
                false => t.saturating_add(self.ratio).min(self.max),
            })
        };
        // `step` always returns `Some`, so the update cannot fail.
        let _ = self
            .tokens
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, step);
    }

    /// Tokens left.
    pub fn tokens(&self) -> f64 {
        f64::from(self.tokens.load(Ordering::Relaxed)) / MILLI
    }

    /// `max_tokens`.
    pub fn max_tokens(&self) -> f64 {
        f64::from(self.max) / MILLI
    }

    /// `token_ratio`, to three decimals.
    pub fn token_ratio(&self) -> f64 {
        f64::from(self.ratio) / MILLI
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gRFC A6's worked example: maxTokens 10, tokenRatio 0.1. Retries stop
    /// once the count is at most 5 (half), and come back above it.
    #[test]
    fn a6_vectors() {
        let t = GrpcThrottling::new(10.0, 0.1).unwrap();
        assert_eq!((t.tokens(), t.allows()), (10.0, true));
        for left in [9.0, 8.0, 7.0, 6.0] {
            t.record(true);
            assert_eq!((t.tokens(), t.allows()), (left, true));
        }
        t.record(true);
        assert_eq!((t.tokens(), t.allows()), (5.0, false)); // equal to half: throttled
        t.record(false);
        assert_eq!((t.tokens(), t.allows()), (5.1, true));
        t.record(true);
        assert_eq!((t.tokens(), t.allows()), (4.1, false));
        for _ in 0..20 {
            t.record(true);
        }
        assert_eq!(t.tokens(), 0.0); // never below 0
        for _ in 0..1000 {
            t.record(false);
        }
        assert_eq!(t.tokens(), 10.0); // never above max_tokens
    }

    /// Three decimals are kept exactly: 1.001 × 1000 is 1000.9999999999999
    /// in floating point.
    #[test]
    fn three_decimals_are_kept_exactly() {
        for (max, ratio) in [
            (1.001, 1.001),
            (10.001, 0.557),
            (999.999, 1.003),
            (3.0, 0.555),
        ] {
            let t = GrpcThrottling::new(max, ratio).unwrap();
            assert_eq!((t.max_tokens(), t.token_ratio()), (max, ratio));
        }
    }

    #[test]
    fn a_fourth_decimal_and_bad_settings_are_named() {
        for (max, ratio, named) in [
            (0.0, 0.1, "max_tokens"),
            (1000.5, 0.1, "max_tokens"),
            (f64::NAN, 0.1, "max_tokens"),
            (10.0005, 0.1, "max_tokens"),
            (0.0004, 0.1, "max_tokens"),
            (10.0, 0.0, "token_ratio"),
            (10.0, 0.0009, "token_ratio"),
            (10.0, 0.5559, "token_ratio"),
            (10.0, -1.0, "token_ratio"),
            (10.0, 1e7, "token_ratio"),
            (10.0, f64::INFINITY, "token_ratio"),
        ] {
            let e = GrpcThrottling::new(max, ratio).unwrap_err().to_string();
            assert!(e.contains(named), "{max} {ratio}: {e}");
        }
        assert_eq!(
            GrpcThrottling::new(1000.0, 1.0).unwrap().max_tokens(),
            1000.0
        );
    }

    #[test]
    fn racing_failures_and_successes_keep_the_count_in_bounds() {
        let t = std::sync::Arc::new(GrpcThrottling::new(4.0, 0.25).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let t = std::sync::Arc::clone(&t);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        t.record(i % 2 == 0);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert!((0.0..=4.0).contains(&t.tokens()), "{}", t.tokens());
    }
}
