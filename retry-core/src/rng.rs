//! Where jitter gets its randomness: a SplitMix64 stream per thread, seeded
//! from the OS once per thread; or, given a seed, a pure function of the
//! seed and the retry number, so a seeded schedule repeats exactly and a
//! saved [`Oracle`](crate::Oracle) state resumes with the same samples.

use rand::TryRngCore;
use rand::rngs::OsRng;
use std::cell::Cell;

thread_local! {
    /// This thread's stream state: 0 until the first draw seeds it (with the
    /// low bit set); each draw adds the odd increment.
    static THREAD_STREAM: Cell<u64> = const { Cell::new(0) };
}

/// A sample from the calling thread's stream, seeded from the OS at its first draw.
pub(crate) fn thread_sample() -> Sample {
    THREAD_STREAM.with(|stream| {
        let mut state = stream.get();
        if state == 0 {
            state = os_seed() | 1;
        }
        stream.set(state.wrapping_add(GOLDEN_GAMMA));
        Sample::from_bits(split_mix(state, 0))
    })
}

/// A start for a thread's stream; if the OS refuses, a thread-local's
/// address and the time.
pub(crate) fn os_seed() -> u64 {
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

/// A uniform sample in `[0, 1)`: the fraction `k / 2^53` for a whole
/// `k < 2^53` (a generator's top 53 bits), exact both as an integer and as
/// an `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample(u64);

impl Sample {
    const FRACTION_BITS: u32 = 53;

    pub(crate) const fn from_bits(bits: u64) -> Self {
        Sample(bits >> (64 - Self::FRACTION_BITS))
    }

    /// The sample nearest below `unit`; NaN and values out of range land
    /// in range (NaN at 0), never past its end.
    pub(crate) fn from_unit(unit: f64) -> Self {
        let unit = if unit.is_nan() {
            0.0
        } else {
            unit.clamp(0.0, 1.0 - f64::EPSILON)
        };
        // Exact: scaling by a power of two, and the result is below 2^53.
        Sample((unit * (1u64 << Self::FRACTION_BITS) as f64) as u64)
    }

    /// The sample as a float in `[0, 1)`, exactly.
    pub(crate) fn as_f64(self) -> f64 {
        self.0 as f64 * (1.0 / (1u64 << Self::FRACTION_BITS) as f64)
    }

    /// `ns` scaled by the sample, rounded to the nearest nanosecond (halves
    /// up): at most `ns`, and without overflow for any `ns`.
    pub(crate) fn of_ns(self, ns: u64) -> u64 {
        let half = 1u128 << (Self::FRACTION_BITS - 1);
        // ns·k < 2^117 and the rounded quotient is at most ns: no overflow.
        ((u128::from(ns) * u128::from(self.0) + half) >> Self::FRACTION_BITS) as u64
    }
}

/// The jitter sample for retry `retry` (0 for the wait after the first
/// failure): with a seed, a pure function of the seed and `retry`; without,
/// the calling thread's generator, seeded from the OS once per thread.
pub(crate) fn sample(seed: Option<u64>, retry: u32) -> Sample {
    match seed {
        Some(seed) => Sample::from_bits(split_mix(seed, u64::from(retry))),
        None => thread_sample(),
    }
}

/// The `index`-th output of a SplitMix64 generator started at `seed`:
/// neighbouring indices (and seeds) give unrelated values.
///
/// ```
/// use retrykit_core::kernel::split_mix;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_samples_are_uniform_distinct_and_its_own() {
        let draw = || {
            (0..10_000)
                .map(|_| sample(None, 0).as_f64())
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
        let a = Some(7);
        assert_eq!(sample(a, 3), sample(Some(7), 3));
        assert_ne!(sample(a, 3), sample(a, 4));
        assert_ne!(sample(a, 3), sample(Some(8), 3));
        for retry in [0, 1, u32::MAX] {
            assert!((0.0..1.0).contains(&sample(a, retry).as_f64()));
            assert!((0.0..1.0).contains(&sample(None, retry).as_f64()));
        }
    }

    #[test]
    fn a_sample_scales_as_its_float_does() {
        let samples = (0..2000).map(|i| sample(Some(11), i));
        for (i, drawn) in samples.enumerate() {
            let ns = [0, 1, 999, 1_000_000_007, 100 * 365 * 86_400 * 1_000_000_000][i % 5];
            let float = (ns as f64 * drawn.as_f64()).round() as u64;
            assert!(drawn.of_ns(ns) <= ns);
            // Within a nanosecond, or the float's own resolution above 2^53.
            let tolerance = 1 + (ns >> 52);
            assert!(
                drawn.of_ns(ns).abs_diff(float) <= tolerance,
                "{ns} × {drawn:?}"
            );
        }
        let top = Sample::from_unit(1.0);
        assert!(top.of_ns(u64::MAX) < u64::MAX && top.as_f64() < 1.0);
        assert_eq!(Sample::from_unit(f64::NAN), Sample::from_unit(0.0));
        assert_eq!(Sample::from_unit(-3.0).of_ns(u64::MAX), 0);
        assert_eq!(Sample::from_unit(0.5).of_ns(100), 50);
        assert_eq!(Sample::from_unit(0.25).as_f64(), 0.25);
    }
}
