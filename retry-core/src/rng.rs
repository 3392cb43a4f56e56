//! Where jitter gets its randomness.
//!
//! The default is a small, fast, non-cryptographic generator kept per thread
//! (no global lock, nothing shared between concurrent calls). A seed gives a
//! private generator whose schedule repeats exactly from run to run.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;

thread_local! {
    static THREAD_RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_os_rng());
}

/// A source of uniform samples in `[0, 1)` for jitter.
///
/// ```
/// use retry_core::JitterRng;
/// let mut a = JitterRng::seeded(7);
/// let mut b = JitterRng::seeded(7);
/// assert_eq!(a.unit(), b.unit());
/// let u = JitterRng::thread().unit();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Debug, Clone)]
pub enum JitterRng {
    /// The calling thread's generator, seeded from the OS once per thread.
    Thread,
    /// A private generator with a fixed seed: reproducible schedules.
    Seeded(SmallRng),
}

impl JitterRng {
    /// The per-thread default source.
    ///
    /// ```
    /// let _ = retry_core::JitterRng::thread();
    /// ```
    pub const fn thread() -> Self {
        JitterRng::Thread
    }

    /// A reproducible source: the same seed gives the same samples.
    ///
    /// ```
    /// let _ = retry_core::JitterRng::seeded(42);
    /// ```
    pub fn seeded(seed: u64) -> Self {
        JitterRng::Seeded(SmallRng::seed_from_u64(seed))
    }

    /// A source that is seeded when `seed` is given, per-thread otherwise.
    ///
    /// ```
    /// use retry_core::JitterRng;
    /// assert!(matches!(JitterRng::from_seed(None), JitterRng::Thread));
    /// ```
    pub fn from_seed(seed: Option<u64>) -> Self {
        seed.map_or(JitterRng::Thread, JitterRng::seeded)
    }

    /// One uniform sample in `[0, 1)`.
    ///
    /// ```
    /// let u = retry_core::JitterRng::seeded(1).unit();
    /// assert!((0.0..1.0).contains(&u));
    /// ```
    pub fn unit(&mut self) -> f64 {
        match self {
            JitterRng::Thread => THREAD_RNG.with(|r| r.borrow_mut().random::<f64>()),
            JitterRng::Seeded(r) => r.random::<f64>(),
        }
    }
}
