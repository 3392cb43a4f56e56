//! Where jitter gets its randomness.
//!
//! The default is a SplitMix64 stream kept per thread, its start drawn from
//! the operating system once per thread (no global lock, nothing shared
//! between concurrent calls; its state is one `u64` in a `Cell`, so a draw
//! is a few instructions). A seed instead
//! makes each sample a pure function of the seed and the retry it is for
//! (a counter-based generator), so a seeded schedule repeats exactly, and a
//! schedule saved half-way (the [`Oracle`](crate::Oracle)'s state) resumes
//! with the very samples an uninterrupted run would have drawn. Nothing of
//! `rand` is visible outside this module.

use rand::TryRngCore;
use rand::rngs::OsRng;
use std::cell::Cell;

thread_local! {
    /// This thread's stream: where it starts (0 until the first draw seeds
    /// it) and how many samples it gave, in one word: the start's low bit
    /// is set, and each draw adds the stream's odd increment.
    static THREAD_STREAM: Cell<u64> = const { Cell::new(0) };
}

/// The next sample of this thread's stream.
#[inline]
fn thread_unit() -> f64 {
    THREAD_STREAM.with(|stream| {
        let mut state = stream.get();
        if state == 0 {
            state = os_seed() | 1;
        }
        stream.set(state.wrapping_add(GOLDEN_GAMMA));
        to_unit(split_mix(state, 0))
    })
}

/// A start for a thread's stream; should the OS refuse, the address of a
/// thread-local and the time still give each thread its own.
#[cold]
fn os_seed() -> u64 {
    OsRng.try_next_u64().unwrap_or_else(|_| {
        let here = THREAD_STREAM.with(|s| s as *const Cell<u64> as u64);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        split_mix(here, now)
    })
}

/// SplitMix64's increment.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

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
            JitterRng::Thread => thread_unit(),
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
    fn a_threads_samples_are_uniform_distinct_and_its_own() {
        let draw = || {
            (0..10_000)
                .map(|_| JitterRng::Thread.unit(0))
                .collect::<Vec<f64>>()
        };
        let here = draw();
        assert!(here.iter().all(|u| (0.0..1.0).contains(u)));
        let mean = here.iter().sum::<f64>() / here.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        let mut distinct = here.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert_eq!(distinct.len(), here.len());
        let there = std::thread::spawn(draw).join().unwrap();
        assert_ne!(here[..8], there[..8], "each thread starts its own stream");
    }

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
