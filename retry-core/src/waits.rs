//! A policy's wait bounds as whole nanoseconds.

use crate::backoff::{Backoff, clamp_to_nanos, nanos};
use std::time::Duration;

/// The base, the cap and the minimum every wait is clamped into.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Waits {
    pub(crate) base_ns: u64,
    pub(crate) cap_ns: u64,
    pub(crate) min_ns: u64,
}

impl Waits {
    pub(crate) fn new(base: Duration, cap: Duration, min_delay: Duration) -> Self {
        Waits {
            base_ns: nanos(base),
            cap_ns: nanos(cap),
            min_ns: nanos(min_delay),
        }
    }

    /// The envelope of retry `n` (0-based) of a schedule shaped `backoff`,
    /// in nanoseconds: `min(cap, shape(base, n))`, never below the minimum.
    pub(crate) fn envelope(&self, backoff: Backoff, n: u32) -> u64 {
        let raw = backoff.raw_nanos_at(self.base_ns as f64, n);
        clamp_to_nanos(raw, self.cap_ns).max(self.min_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_saturates_at_the_cap() {
        let waits = Waits::new(
            Duration::from_millis(1),
            Duration::from_secs(60),
            Duration::ZERO,
        );
        assert_eq!(
            waits.envelope(Backoff::Exponential { factor: 2.0 }, 40),
            60_000_000_000
        );
        assert_eq!(
            waits.envelope(Backoff::Exponential { factor: 2.0 }, 3),
            8_000_000
        );
    }
}
