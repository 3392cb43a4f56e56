//! A policy's waits in the form the kernel reads them, computed once when
//! the policy is built: the envelope of the first retries as whole
//! nanoseconds, and the bounds every wait is clamped into.

use crate::backoff::{Backoff, clamp_to_nanos, nanos};
use std::time::Duration;

/// How many retries' envelopes are kept: past these, the formula.
const KEPT: usize = 16;

/// The precomputed part of a policy's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Waits {
    /// `envelope(n)` for `n < KEPT`, in nanoseconds.
    envelopes: [u64; KEPT],
    pub(crate) base_ns: u64,
    pub(crate) cap_ns: u64,
    pub(crate) min_ns: u64,
}

impl Waits {
    /// Nothing computed yet: what a builder's draft holds until `build`.
    pub(crate) const UNSET: Waits = Waits {
        envelopes: [0; KEPT],
        base_ns: 0,
        cap_ns: 0,
        min_ns: 0,
    };

    /// The waits of a schedule shaped `backoff` from `base` to `cap`, never
    /// below `min_delay`.
    pub(crate) fn new(
        backoff: Backoff,
        base: Duration,
        cap: Duration,
        min_delay: Duration,
    ) -> Self {
        let mut waits = Waits {
            envelopes: [0; KEPT],
            base_ns: nanos(base),
            cap_ns: nanos(cap),
            min_ns: nanos(min_delay),
        };
        for n in 0..KEPT {
            waits.envelopes[n] = waits.computed(backoff, n as u32);
        }
        waits
    }

    /// The envelope of retry `n` (0-based), in nanoseconds.
    pub(crate) fn envelope(&self, backoff: Backoff, n: u32) -> u64 {
        match self.envelopes.get(n as usize) {
            Some(&kept) => kept,
            None => self.computed(backoff, n),
        }
    }

    /// The envelope from the formula: `min(cap, shape(base, n))`, never
    /// below the minimum: past the kept retries.
    fn computed(&self, backoff: Backoff, n: u32) -> u64 {
        let raw = backoff.raw_nanos_at(self.base_ns as f64, n);
        clamp_to_nanos(raw, self.cap_ns).max(self.min_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_envelopes_are_the_formulas() {
        let ms = Duration::from_millis;
        for backoff in [
            Backoff::Constant,
            Backoff::Linear,
            Backoff::Exponential { factor: 1.5 },
            Backoff::Exponential { factor: 2.0 },
            Backoff::Exponential { factor: 1e6 },
        ] {
            let waits = Waits::new(backoff, ms(7), ms(90_000), ms(3));
            for n in 0..KEPT as u32 + 4 {
                assert_eq!(
                    waits.envelope(backoff, n),
                    waits.computed(backoff, n),
                    "{backoff:?} {n}"
                );
            }
            assert_eq!(
                waits.envelope(backoff, u32::MAX),
                waits.computed(backoff, u32::MAX)
            );
        }
    }

    #[test]
    fn past_the_kept_ones_the_formula_still_saturates_at_the_cap() {
        let waits = Waits::new(
            Backoff::Exponential { factor: 2.0 },
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
