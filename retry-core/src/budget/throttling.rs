//! gRFC A6's retry throttling (a service config's `retryThrottling`): a
//! token bucket of `max_tokens`, full at the start, that every failed
//! attempt drains by one and every successful one fills by `token_ratio`;
//! retries and hedges are allowed only while more than half the tokens are
//! left. Kept in thousandths of a token, as A6 allows three decimal places
//! in `token_ratio` (and as gRPC's own clients do), in one atomic.

use crate::problem::Problems;
use std::sync::atomic::{AtomicU32, Ordering};

/// A6's largest `max_tokens`.
pub const MAX_TOKENS: f64 = 1000.0;

/// Thousandths of a token in a token.
const MILLI: f64 = 1000.0;

/// The token bucket of A6's retry throttling (see the module docs).
///
/// ```
/// use retrykit_core::GrpcThrottling;
/// let t = GrpcThrottling::new(10.0, 0.1).unwrap();
/// for _ in 0..5 { t.record(true); }
/// assert!(!t.allows()); // 5 tokens left: not more than half of 10
/// t.record(false);
/// assert!(t.allows()); // 5.1
/// ```
#[derive(Debug)]
pub struct GrpcThrottling {
    max: u32,
    ratio: u32,
    tokens: AtomicU32,
}

impl GrpcThrottling {
    /// A full bucket of `max_tokens` (above 0, at most 1000) filled by
    /// `token_ratio` (above 0; its fourth decimal and beyond are dropped,
    /// as A6 says) per success. Either out of range is an error naming it.
    ///
    /// ```
    /// let e = retrykit_core::GrpcThrottling::new(0.0, 0.1).unwrap_err();
    /// assert!(e.to_string().contains("max_tokens"));
    /// ```
    pub fn new(max_tokens: f64, token_ratio: f64) -> Result<Self, crate::PolicyError> {
        let ratio = (token_ratio * MILLI).floor();
        let mut problems = Problems::default();
        problems.require(
            max_tokens > 0.0 && max_tokens <= MAX_TOKENS,
            "max_tokens",
            "must be above 0 and at most 1000 (gRFC A6's bounds on retryThrottling.maxTokens)",
            format!("use a bucket such as 10 (got {max_tokens:?})"),
        );
        problems.require(
            (1.0..=f64::from(u32::MAX / 2)).contains(&ratio),
            "token_ratio",
            "must be at least 0.001 (gRFC A6's retryThrottling.tokenRatio, three decimals)",
            format!("use a ratio such as 0.1 (got {token_ratio:?})"),
        );
        let problems = problems.into_vec();
        if !problems.is_empty() {
            return Err(crate::PolicyError::budget(problems));
        }
        let max = (max_tokens * MILLI) as u32;
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

    /// Records an attempt's outcome: a failure (a retryable or non-fatal
    /// status, or server pushback) takes one token, down to 0; a success
    /// gives back `token_ratio`, up to `max_tokens`.
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

    #[test]
    fn token_ratio_keeps_three_decimals_and_bad_settings_are_named() {
        let t = GrpcThrottling::new(3.0, 0.5559).unwrap();
        assert_eq!(t.token_ratio(), 0.555);
        for (max, ratio, named) in [
            (0.0, 0.1, "max_tokens"),
            (1000.5, 0.1, "max_tokens"),
            (f64::NAN, 0.1, "max_tokens"),
            (10.0, 0.0, "token_ratio"),
            (10.0, 0.0009, "token_ratio"),
            (10.0, -1.0, "token_ratio"),
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
