//! The stateful oracle, for callers that schedule retries themselves: an
//! outbox relay that stores each event's next attempt time in a table asks
//! [`Oracle::failure`] how long to wait and [`Oracle::success`] what follows
//! a success, and persists [`OracleState`] between calls (and restarts).
//!
//! Times are wall-clock (`SystemTime`) because the state outlives the process.

use crate::policy::Policy;
use crate::rng::JitterRng;
use crate::schedule::ScheduleState;
use std::time::{Duration, SystemTime};

/// The oracle's answer to a failure.
///
/// ```
/// use retry_core::Verdict;
/// assert!(Verdict::GiveUp.wait().is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Try again after this long.
    Wait(Duration),
    /// The policy is exhausted: stop (dead-letter the work).
    GiveUp,
}

impl Verdict {
    /// The wait, if any.
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::Verdict::Wait(Duration::ZERO).wait(), Some(Duration::ZERO));
    /// ```
    pub const fn wait(&self) -> Option<Duration> {
        match self {
            Verdict::Wait(d) => Some(*d),
            Verdict::GiveUp => None,
        }
    }
}

/// What the oracle remembers between failures; small, `Copy`, and
/// serialisable with the `serde` feature so a restarted process resumes the
/// schedule instead of starting again at the smallest wait.
///
/// ```
/// let s = retry_core::OracleState::default();
/// assert_eq!(s.failures, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OracleState {
    /// Failures since the last success (attempts made, for `max_attempts`).
    pub failures: u32,
    /// The last computed wait, which decorrelated jitter grows from.
    pub last_delay: Duration,
    /// When the current run of failures began.
    pub first_failure: Option<SystemTime>,
    /// When the oracle last said to try again.
    pub due: Option<SystemTime>,
}

/// A policy plus the state of one retried piece of work.
///
/// ```
/// use retry_core::{Jitter, Oracle, Policy, Verdict};
/// use std::time::{Duration, SystemTime};
/// let p = Policy::builder().jitter(Jitter::None).build().unwrap();
/// let mut o = Oracle::new(&p);
/// let now = SystemTime::UNIX_EPOCH;
/// assert_eq!(o.failure(now), Verdict::Wait(Duration::from_millis(100)));
/// assert_eq!(o.success(now), Duration::ZERO);
/// assert_eq!(o.state().failures, 0);
/// ```
#[derive(Debug, Clone)]
pub struct Oracle<'p> {
    policy: &'p Policy,
    state: OracleState,
    rng: JitterRng,
    consider_actual_delay: bool,
    delay_on_success: Duration,
    total_limit: Option<Duration>,
}

impl<'p> Oracle<'p> {
    /// A fresh oracle; its total-duration limit is the policy's deadline.
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Oracle::new(&p);
    /// ```
    pub fn new(policy: &'p Policy) -> Self {
        Self::resume(policy, OracleState::default())
    }

    /// An oracle that continues from saved state.
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let o = retry_core::Oracle::resume(&p, retry_core::OracleState { failures: 2, ..Default::default() });
    /// assert_eq!(o.state().failures, 2);
    /// ```
    pub fn resume(policy: &'p Policy, state: OracleState) -> Self {
        Oracle {
            policy,
            state,
            rng: JitterRng::thread(),
            consider_actual_delay: false,
            delay_on_success: Duration::ZERO,
            total_limit: policy.deadline(),
        }
    }

    /// Seeds the jitter (the generator's state is not part of the saved state).
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Oracle::new(&p).seed(3);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.rng = JitterRng::seeded(seed);
        self
    }

    /// Schedules from the time the oracle said to retry rather than the time
    /// the failure is reported: a caller that comes back early owes the rest
    /// of the previous wait, one that comes back late has it subtracted from
    /// the next wait (never below zero).
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Oracle::new(&p).consider_actual_delay(true);
    /// ```
    pub fn consider_actual_delay(mut self, yes: bool) -> Self {
        self.consider_actual_delay = yes;
        self
    }

    /// The wait [`success`](Self::success) answers (default zero).
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Oracle::new(&p).delay_on_success(std::time::Duration::from_secs(1));
    /// ```
    pub fn delay_on_success(mut self, d: Duration) -> Self {
        self.delay_on_success = d;
        self
    }

    /// Limits the time from the first failure of a run to the end of the
    /// last wait; a wait may end exactly at the limit. Defaults to the
    /// policy's deadline.
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Oracle::new(&p).total_limit(Some(std::time::Duration::from_secs(60)));
    /// ```
    pub fn total_limit(mut self, limit: Option<Duration>) -> Self {
        self.total_limit = limit;
        self
    }

    /// The state to persist.
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// assert_eq!(retry_core::Oracle::new(&p).state().failures, 0);
    /// ```
    pub const fn state(&self) -> OracleState {
        self.state
    }

    /// Records a failure at `now` and says how long to wait, or to give up.
    /// Giving up leaves the state as it was, so asking again gives up again.
    ///
    /// ```
    /// use retry_core::{Oracle, Policy, Verdict};
    /// let p = Policy::builder().max_attempts(1).build().unwrap();
    /// assert_eq!(Oracle::new(&p).failure(std::time::SystemTime::now()), Verdict::GiveUp);
    /// ```
    pub fn failure(&mut self, now: SystemTime) -> Verdict {
        let failures = self.state.failures.saturating_add(1);
        if self
            .policy
            .max_attempts()
            .is_some_and(|max| failures >= max)
        {
            return Verdict::GiveUp;
        }
        let mut schedule = ScheduleState {
            retries: self.state.failures,
            prev: self.state.last_delay,
            rng: self.rng.clone(),
        };
        let delay = schedule.next_delay(self.policy);
        let wait = match (self.consider_actual_delay, self.state.due) {
            // Anchor on when the last retry was due: early callers owe the
            // difference, late callers are credited with it.
            (true, Some(due)) => add(due, delay)
                .duration_since(now)
                .unwrap_or(Duration::ZERO),
            _ => delay,
        };
        let first = self.state.first_failure.unwrap_or(now);
        if let Some(limit) = self.total_limit {
            let spent = now.duration_since(first).unwrap_or(Duration::ZERO);
            if spent.saturating_add(wait) > limit {
                return Verdict::GiveUp;
            }
        }
        self.rng = schedule.rng;
        self.state = OracleState {
            failures,
            last_delay: delay,
            first_failure: Some(first),
            due: Some(add(now, wait)),
        };
        Verdict::Wait(wait)
    }

    /// Records a success at `now`: the attempt count resets, and the answer
    /// is the wait before the next piece of work (`delay_on_success`).
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let mut o = retry_core::Oracle::new(&p);
    /// assert_eq!(o.success(std::time::SystemTime::now()), std::time::Duration::ZERO);
    /// ```
    pub fn success(&mut self, now: SystemTime) -> Duration {
        self.state = OracleState {
            due: Some(add(now, self.delay_on_success)),
            ..OracleState::default()
        };
        self.delay_on_success
    }
}

/// `t + d`, saturating instead of panicking at the end of `SystemTime`.
fn add(t: SystemTime, d: Duration) -> SystemTime {
    t.checked_add(d).unwrap_or(t)
}
