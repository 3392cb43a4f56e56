//! A policy's schedule of computed waits.

use crate::policy::Policy;
use std::time::Duration;

/// The state a schedule carries from one wait to the next.
#[derive(Debug, Clone)]
pub(crate) struct ScheduleState {
    pub(crate) retries: u32,
    pub(crate) prev: Duration,
    /// The jitter seed (`None`: the thread's generator).
    pub(crate) seed: Option<u64>,
}

impl ScheduleState {
    pub(crate) fn new(seed: Option<u64>) -> Self {
        ScheduleState {
            retries: 0,
            prev: Duration::ZERO,
            seed,
        }
    }

    /// The next computed (jittered, clamped) wait; advances the schedule.
    pub(crate) fn next_delay(&mut self, policy: &Policy) -> Duration {
        let prev = crate::backoff::nanos(self.prev);
        let retries = self.retries;
        let d = Duration::from_nanos(
            policy.delay_ns(retries, prev, || crate::rng::sample(self.seed, retries)),
        );
        self.retries = self.retries.saturating_add(1);
        self.prev = d;
        d
    }
}

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
    state: ScheduleState,
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
            state: ScheduleState::new(seed),
        }
    }
}

impl Iterator for Schedule<'_> {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        Some(self.state.next_delay(self.policy))
    }
}
