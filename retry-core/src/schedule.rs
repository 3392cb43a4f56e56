//! A policy's schedule of computed waits.

use crate::policy::Policy;
use std::time::Duration;

/// An endless iterator over a policy's computed waits (no hints, no limits),
/// for showing and plotting a schedule.
///
/// ```
/// use retrykit_core::{Jitter, Policy, kernel::Schedule};
/// use std::time::Duration;
/// let p = Policy::builder().jitter(Jitter::None).build().unwrap();
/// let waits: Vec<_> = Schedule::new(&p, None).take(3).collect();
/// assert_eq!(waits, [100, 200, 400].map(Duration::from_millis));
/// ```
#[derive(Debug, Clone)]
pub struct Schedule<'p> {
    policy: &'p Policy,
    /// Waits computed so far.
    retries: u32,
    /// The last computed wait, which decorrelated jitter grows from.
    prev: Duration,
    /// The jitter seed (`None`: the thread's generator).
    seed: Option<u64>,
}

impl<'p> Schedule<'p> {
    /// A schedule for `policy`, seeded when `seed` is given.
    ///
    /// ```
    /// let p = retrykit_core::Policy::default();
    /// let a: Vec<_> = retrykit_core::kernel::Schedule::new(&p, Some(9)).take(5).collect();
    /// let b: Vec<_> = retrykit_core::kernel::Schedule::new(&p, Some(9)).take(5).collect();
    /// assert_eq!(a, b);
    /// ```
    pub fn new(policy: &'p Policy, seed: Option<u64>) -> Self {
        Schedule {
            policy,
            retries: 0,
            prev: Duration::ZERO,
            seed,
        }
    }
}

impl Iterator for Schedule<'_> {
    type Item = Duration;
    /// The next computed (jittered, clamped) wait.
    fn next(&mut self) -> Option<Duration> {
        let (prev, retries) = (crate::backoff::nanos(self.prev), self.retries);
        let sample = || crate::rng::sample(self.seed, retries);
        let d = Duration::from_nanos(self.policy.delay_ns(retries, prev, sample));
        self.retries = self.retries.saturating_add(1);
        self.prev = d;
        Some(d)
    }
}
