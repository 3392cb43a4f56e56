//! Where jitter gets its randomness.
//!
//! The default is a small, fast, non-cryptographic generator kept per thread
//! (no global lock, nothing shared between concurrent calls). A seed instead
//! makes each sample a pure function of the seed and the retry it is for
//! (a counter-based generator), so a seeded schedule repeats exactly, and a
//! schedule saved half-way (the [`Oracle`](crate::Oracle)'s state) resumes
//! with the very samples an uninterrupted run would have drawn. Nothing of
//! `rand` is visible outside this module.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;

thread_local! {
    static THREAD_RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_os_rng());
}

/// A source of uniform samples in `[0, 1)` for jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JitterRng {
    /// The calling thread's generator, seeded from the OS once per thread.
    Thread,
    /// Samples derived from this seed and the retry number.
    Seeded(u64),
}

impl JitterRng {
    /// Seeded when `seed` is given, per-thread otherwise.
    pub(crate) const fn from_seed(seed: Option<u64>) -> Self {
        match seed {
            Some(seed) => JitterRng::Seeded(seed),
            None => JitterRng::Thread,
        }
    }

    /// The sample for retry `retry` (0 for the wait after the first failure).
    pub(crate) fn unit(&self, retry: u32) -> f64 {
        match self {
            JitterRng::Thread => THREAD_RNG.with(|r| r.borrow_mut().random::<f64>()),
            JitterRng::Seeded(seed) => to_unit(split_mix(*seed, u64::from(retry))),
        }
    }
}

/// The `index`-th output of a SplitMix64 generator started at `seed`: every
/// bit of the output depends on every bit of both, so neighbouring indices
/// (and neighbouring seeds) give unrelated values. Seeded jitter draws its
/// samples with it, and the fleet simulator its per-client seeds.
///
/// ```
/// use retry_core::__private::kernel::split_mix;
/// assert_eq!(split_mix(7, 3), split_mix(7, 3));
/// assert_ne!(split_mix(7, 3), split_mix(7, 4));
/// assert_ne!(split_mix(7, 3), split_mix(8, 3));
/// ```
pub const fn split_mix(seed: u64, index: u64) -> u64 {
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GOLDEN_GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The top 53 bits as a float in `[0, 1)`.
fn to_unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_sample_depends_only_on_the_seed_and_the_retry() {
        let a = JitterRng::Seeded(7);
        assert_eq!(a.unit(3), JitterRng::Seeded(7).unit(3));
        assert_ne!(a.unit(3), a.unit(4));
        assert_ne!(a.unit(3), JitterRng::Seeded(8).unit(3));
        for retry in [0, 1, u32::MAX] {
            assert!((0.0..1.0).contains(&a.unit(retry)));
            assert!((0.0..1.0).contains(&JitterRng::Thread.unit(retry)));
        }
    }
}
