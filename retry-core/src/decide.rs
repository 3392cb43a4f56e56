//! The one place that decides, after a failed attempt, whether to wait and
//! retry or to give up. The async loop, the blocking loop and the fleet
//! simulator all go through [`Decider`], so they cannot disagree.

use crate::classify::Class;
use crate::policy::Policy;
use crate::report::{Ending, Report};
use crate::rng::JitterRng;
use crate::schedule::ScheduleState;
use std::time::{Duration, Instant};

/// The verdict on a failed attempt.
///
/// ```
/// use retry_core::{Ending, Step};
/// assert_ne!(Step::Retry { wait: Default::default(), hinted: false }, Step::GiveUp(Ending::Deadline));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Wait this long, then make the next attempt.
    Retry {
        /// The wait.
        wait: Duration,
        /// Whether it came from a server hint.
        hinted: bool,
    },
    /// Stop and return the last error.
    GiveUp(Ending),
}

/// What the engine knows of one failed attempt.
///
/// ```
/// use retry_core::{Class, Failure};
/// let f = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
/// assert!(f.class.is_retryable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The error's class.
    pub class: Class,
    /// The error's server hint.
    pub hint: Option<Duration>,
    /// Whether the call site's own predicate allows a retry.
    pub allowed: bool,
}

/// The per-call state of the retry decision: attempts made, time waited, the
/// schedule's position and randomness. One per call, never shared, so
/// concurrent calls cannot disturb each other's statistics.
///
/// ```
/// use retry_core::{Class, Decider, Failure, Jitter, Policy, Step};
/// use std::time::{Duration, Instant};
/// let p = Policy::builder().jitter(Jitter::None).max_attempts(2).build().unwrap();
/// let mut d = Decider::new(None);
/// let t0 = Instant::now();
/// d.begin_attempt(&p, t0);
/// let fail = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
/// assert_eq!(d.after_failure(&p, fail, t0), Step::Retry { wait: Duration::from_millis(100), hinted: false });
/// d.begin_attempt(&p, t0);
/// assert!(matches!(d.after_failure(&p, fail, t0), Step::GiveUp(_)));
/// ```
#[derive(Debug, Clone)]
pub struct Decider {
    schedule: ScheduleState,
    attempts: u32,
    waited: Duration,
    started: Option<Instant>,
}

impl Decider {
    /// A fresh decision state, seeded for reproducible jitter when `seed` is given.
    ///
    /// ```
    /// let d = retry_core::Decider::new(Some(1));
    /// assert_eq!(d.attempts(), 0);
    /// ```
    pub fn new(seed: Option<u64>) -> Self {
        Self::with_rng(JitterRng::from_seed(seed))
    }

    /// A fresh decision state drawing jitter from `rng`.
    ///
    /// ```
    /// let _ = retry_core::Decider::with_rng(retry_core::JitterRng::thread());
    /// ```
    pub fn with_rng(rng: JitterRng) -> Self {
        Decider {
            schedule: ScheduleState::new(rng),
            attempts: 0,
            waited: Duration::ZERO,
            started: None,
        }
    }

    /// Attempts begun so far.
    ///
    /// ```
    /// assert_eq!(retry_core::Decider::new(None).attempts(), 0);
    /// ```
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Records the start of an attempt at `now`. The first one starts the
    /// deadline's clock and counts as a call in the policy's retry budget.
    ///
    /// ```
    /// let mut d = retry_core::Decider::new(None);
    /// d.begin_attempt(&retry_core::Policy::default(), std::time::Instant::now());
    /// assert_eq!(d.attempts(), 1);
    /// ```
    pub fn begin_attempt(&mut self, policy: &Policy, now: Instant) {
        self.begin_attempt_with(policy, true, || now);
    }

    /// Like [`begin_attempt`](Self::begin_attempt), reading the clock only
    /// when something needs the start time: a deadline, a budget, or a caller
    /// that wants the elapsed time reported (`timed`). This keeps the clock
    /// off the success path of the common policy.
    ///
    /// ```
    /// let mut d = retry_core::Decider::new(None);
    /// let p = retry_core::Policy::default();
    /// d.begin_attempt_with(&p, false, || unreachable!("no deadline, no budget"));
    /// assert_eq!(d.attempts(), 1);
    /// ```
    pub fn begin_attempt_with(
        &mut self,
        policy: &Policy,
        timed: bool,
        now: impl FnOnce() -> Instant,
    ) {
        if self.attempts == 0 && self.started.is_none() {
            let needs_start = timed || policy.deadline().is_some() || policy.budget().is_some();
            if needs_start {
                let now = now();
                self.started = Some(now);
                if let Some(budget) = policy.budget() {
                    budget.deposit(now);
                }
            }
        }
        self.attempts = self.attempts.saturating_add(1);
    }

    /// Decides what follows a failed attempt, observed at `now`. A `Retry`
    /// verdict is final: the wait is counted and the budget is charged.
    ///
    /// The order of checks is the order a reader would ask: is it retryable
    /// at all, is there an attempt left, how long to wait, does that wait fit
    /// the deadline, and does the shared budget allow it.
    ///
    /// ```
    /// use retry_core::{Class, Decider, Ending, Failure, Policy, Step};
    /// let p = Policy::default();
    /// let mut d = Decider::new(None);
    /// let now = std::time::Instant::now();
    /// d.begin_attempt(&p, now);
    /// let f = Failure { class: Class::Permanent, hint: None, allowed: true };
    /// assert_eq!(d.after_failure(&p, f, now), Step::GiveUp(Ending::Permanent));
    /// ```
    pub fn after_failure(&mut self, policy: &Policy, failure: Failure, now: Instant) -> Step {
        self.after_failure_with(policy, failure, || now)
    }

    /// Like [`after_failure`](Self::after_failure), reading the clock only
    /// when the verdict depends on the time: a deadline or a budget. The
    /// retry loop's failure path then skips the clock for the common policy
    /// (reading tokio's paused clock takes a lock).
    ///
    /// ```
    /// use retry_core::{Class, Decider, Failure, Policy, Step};
    /// let p = Policy::default();
    /// let mut d = Decider::new(None);
    /// d.begin_attempt_with(&p, false, || unreachable!());
    /// let f = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
    /// let step = d.after_failure_with(&p, f, || unreachable!("no deadline, no budget"));
    /// assert!(matches!(step, Step::Retry { .. }));
    /// ```
    pub fn after_failure_with(
        &mut self,
        policy: &Policy,
        failure: Failure,
        now: impl FnOnce() -> Instant,
    ) -> Step {
        let class = match failure.class {
            Class::Permanent => return Step::GiveUp(Ending::Permanent),
            Class::Retryable(name) => name,
        };
        // A timed-out attempt is always retryable; other classes must be in `retry_on`.
        let in_policy = failure.class == Class::TIMEOUT || policy.retries_class(class);
        if !in_policy || !failure.allowed {
            return Step::GiveUp(Ending::NotRetryable);
        }
        if policy
            .max_attempts()
            .is_some_and(|max| self.attempts >= max)
        {
            return Step::GiveUp(Ending::Exhausted);
        }
        let computed = self.schedule.next_delay(policy);
        let (wait, hinted) = match failure.hint {
            Some(hint) => {
                let hint = policy.max_retry_after().map_or(hint, |max| hint.min(max));
                // A server's instruction is never shortened, only clamped by
                // max_retry_after; the cap bounds computed waits only.
                if hint > computed {
                    (hint, true)
                } else {
                    (computed, false)
                }
            }
            None => (computed, false),
        };
        let now = (policy.deadline().is_some() || policy.budget().is_some()).then(now);
        if let (Some(deadline), Some(now)) = (policy.deadline(), now) {
            let wake = self.elapsed(now).saturating_add(wait);
            if wake >= deadline {
                return Step::GiveUp(Ending::Deadline);
            }
        }
        if let (Some(budget), Some(now)) = (policy.budget(), now)
            && !budget.try_withdraw(now)
        {
            return Step::GiveUp(Ending::BudgetEmpty);
        }
        self.waited = self.waited.saturating_add(wait);
        Step::Retry { wait, hinted }
    }

    /// Time since the first attempt began (zero before it).
    ///
    /// ```
    /// let d = retry_core::Decider::new(None);
    /// assert_eq!(d.elapsed(std::time::Instant::now()), std::time::Duration::ZERO);
    /// ```
    pub fn elapsed(&self, now: Instant) -> Duration {
        self.started
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }

    /// The report for a call that ended with `ending` at `now`.
    ///
    /// ```
    /// use retry_core::{Decider, Ending};
    /// let r = Decider::new(None).report(Ending::Success, std::time::Instant::now());
    /// assert_eq!(r.attempts, 0);
    /// ```
    pub fn report(&self, ending: Ending, now: Instant) -> Report {
        Report {
            ending,
            attempts: self.attempts,
            waited: self.waited,
            elapsed: self.elapsed(now),
        }
    }
}
