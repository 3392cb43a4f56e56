//! The stateful oracle, for callers that schedule retries themselves (an
//! outbox relay storing each event's next attempt time): it asks the same
//! decision kernel as the retry loop, and its [`OracleState`] can be
//! persisted between calls and restarts. Times are wall-clock
//! (`SystemTime`) because the state outlives the process.

use crate::class::Class;
use crate::classify::Classify;
use crate::decide::{Failure, Owed, Step, Tally, decide};
use crate::policy::Policy;
use crate::report::Ending;
use std::time::{Duration, SystemTime};

/// The oracle's answer to a failure.
///
/// ```
/// use retrykit_core::{Ending, Verdict};
/// assert!(Verdict::GiveUp(Ending::Exhausted).wait().is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Try again after this long.
    Wait(Duration),
    /// Stop (dead-letter the work), for this reason.
    GiveUp(Ending),
}

impl Verdict {
    /// The wait, if any.
    pub const fn wait(&self) -> Option<Duration> {
        match self {
            Verdict::Wait(d) => Some(*d),
            Verdict::GiveUp(_) => None,
        }
    }
}

/// What the oracle remembers between failures; serialisable with the
/// `serde` feature, so a restarted process resumes the schedule (and its
/// jitter, when seeded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OracleState {
    /// Failed attempts since the last success (attempts made, for `max_attempts`).
    pub failures: u32,
    /// The last computed wait, which decorrelated jitter grows from.
    pub last_delay: Duration,
    /// The waits chosen since the last success.
    #[cfg_attr(feature = "serde", serde(default))]
    pub waited: Duration,
    /// When the first attempt of the current run of failures began (the
    /// deadline counts from here).
    pub first_failure: Option<SystemTime>,
    /// When the oracle last said to try again.
    pub due: Option<SystemTime>,
}

/// A policy plus the state of one retried piece of work.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Jitter, Oracle, Policy, Verdict};
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
    /// The jitter seed (`None`: the thread's generator).
    seed: Option<u64>,
    /// An attempt was begun with [`Oracle::attempt`] and not yet reported.
    open: bool,
    consider_actual_delay: bool,
    delay_on_success: Duration,
}

impl<'p> Oracle<'p> {
    /// A fresh oracle.
    pub fn new(policy: &'p Policy) -> Self {
        Self::resume(policy, OracleState::default())
    }

    /// An oracle that continues from saved state.
    pub fn resume(policy: &'p Policy, state: OracleState) -> Self {
        Oracle {
            policy,
            state,
            seed: None,
            open: false,
            consider_actual_delay: false,
            delay_on_success: Duration::ZERO,
        }
    }

    /// Seeds the jitter. A sample depends only on the seed and the retry
    /// number, so a resumed oracle draws what an uninterrupted one would.
    ///
    /// ```
    /// use retrykit_core::{Oracle, Policy};
    /// use std::time::SystemTime;
    /// let p = Policy::default();
    /// let mut a = Oracle::new(&p).seed(3);
    /// a.failure(SystemTime::UNIX_EPOCH);
    /// let mut b = Oracle::resume(&p, a.state()).seed(3);
    /// assert_eq!(a.failure(SystemTime::UNIX_EPOCH), b.failure(SystemTime::UNIX_EPOCH));
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Schedules from the time the oracle said to retry, not the time the
    /// failure is reported: a caller back early owes the rest of the wait,
    /// one back late has the delay taken off the next wait (down to zero).
    pub fn consider_actual_delay(mut self, yes: bool) -> Self {
        self.consider_actual_delay = yes;
        self
    }

    /// The wait [`success`](Self::success) answers (default zero).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// let p = retrykit_core::Policy::default();
    /// let mut o = retrykit_core::Oracle::new(&p).delay_on_success(Duration::from_secs(1));
    /// assert_eq!(o.success(SystemTime::UNIX_EPOCH), Duration::from_secs(1));
    /// ```
    pub fn delay_on_success(mut self, d: Duration) -> Self {
        self.delay_on_success = d;
        self
    }

    /// The state to persist.
    pub const fn state(&self) -> OracleState {
        self.state
    }

    /// Records that an attempt begins at `now`; the first of a run starts
    /// the deadline's clock and counts as a call in the budget. Optional: a
    /// failure reported without it began when reported (its own duration
    /// is then left out of the deadline).
    ///
    /// ```
    /// use retrykit_core::{Oracle, Policy};
    /// use std::time::{Duration, SystemTime};
    /// let p = Policy::builder().deadline(Some(Duration::from_secs(1))).build().unwrap();
    /// let mut o = Oracle::new(&p);
    /// o.attempt(SystemTime::UNIX_EPOCH);
    /// assert_eq!(o.state().first_failure, Some(SystemTime::UNIX_EPOCH));
    /// ```
    pub fn attempt(&mut self, now: SystemTime) {
        if self.state.first_failure.is_none() {
            self.state.first_failure = Some(now);
            self.policy.budgets.deposit(crate::window::now());
        }
        self.open = true;
    }

    /// Records a failure at `now` of a transient error without a hint, and
    /// says how long to wait, or why to give up. Giving up leaves the state
    /// as it was, so asking again gives up again.
    pub fn failure(&mut self, now: SystemTime) -> Verdict {
        self.decide(Class::TRANSIENT, None, now)
    }

    /// Records the failure `error` at `now`, judged by its class and server
    /// hint as the retry loop judges it.
    ///
    /// ```
    /// use retrykit_core::{Ending, Oracle, Policy, Verdict};
    /// use std::io::{Error, ErrorKind};
    /// let p = Policy::default();
    /// let mut o = Oracle::new(&p);
    /// let now = std::time::SystemTime::now();
    /// assert_eq!(o.failure_of(&Error::from(ErrorKind::NotFound), now), Verdict::GiveUp(Ending::Permanent));
    /// assert!(o.failure_of(&Error::from(ErrorKind::ConnectionReset), now).wait().is_some());
    /// ```
    pub fn failure_of<E: Classify + ?Sized>(&mut self, error: &E, now: SystemTime) -> Verdict {
        self.decide(error.class(), error.retry_after(), now)
    }

    fn decide(&mut self, class: Class, hint: Option<Duration>, now: SystemTime) -> Verdict {
        if !self.open {
            self.attempt(now);
        }
        self.open = false;
        let mut tally = Tally::new(
            self.state.failures.saturating_add(1),
            self.state.last_delay,
            self.state.waited,
        );
        let owed = match (self.consider_actual_delay, self.state.due) {
            (true, Some(due)) => match due.duration_since(now) {
                Ok(early) => Owed::Early(early),
                Err(late) => Owed::Late(late.duration()),
            },
            _ => Owed::Nothing,
        };
        let started = self.state.first_failure.unwrap_or(now);
        let failure = Failure {
            class,
            hint,
            allowed: true,
        };
        let step = decide(self.policy, &mut tally, self.seed, failure, owed, || {
            let elapsed = now.duration_since(started).unwrap_or(Duration::ZERO);
            (elapsed, crate::window::now())
        });
        match step {
            Step::Retry { wait, .. } => {
                self.state = OracleState {
                    failures: tally.attempts,
                    last_delay: tally.last_delay(),
                    waited: tally.waited(),
                    first_failure: Some(started),
                    due: Some(add(now, wait)),
                };
                Verdict::Wait(wait)
            }
            Step::GiveUp(ending) => Verdict::GiveUp(ending),
        }
    }

    /// Records a success at `now`: the state resets, and the answer is the
    /// wait before the next piece of work (`delay_on_success`).
    pub fn success(&mut self, now: SystemTime) -> Duration {
        self.open = false;
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
