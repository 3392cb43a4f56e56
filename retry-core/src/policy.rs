//! Policies as validated values: a [`PolicyBuilder`] collects settings, and
//! [`PolicyBuilder::build`] checks every rule at once and returns either a
//! [`Policy`] that cannot misbehave or a [`PolicyError`] naming each field.

use crate::backoff::{Backoff, clamp_nanos};
use crate::budget::RetryBudget;
use crate::jitter::Jitter;
use crate::rng::JitterRng;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A validated retry policy. Build one with [`Policy::builder`].
///
/// ```
/// use retry_core::{Backoff, Jitter, Policy};
/// use std::time::Duration;
/// let policy = Policy::builder()
///     .backoff(Backoff::Exponential { factor: 2.0 })
///     .base(Duration::from_millis(100))
///     .cap(Duration::from_secs(30))
///     .jitter(Jitter::Full)
///     .max_attempts(8)
///     .build()
///     .unwrap();
/// assert_eq!(policy.envelope(3), Duration::from_millis(800));
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
    name: Option<Arc<str>>,
    backoff: Backoff,
    base: Duration,
    cap: Duration,
    min_delay: Duration,
    jitter: Jitter,
    max_attempts: u32,
    deadline: Option<Duration>,
    attempt_timeout: Option<Duration>,
    retry_on: Option<Arc<[Box<str>]>>,
    max_retry_after: Option<Duration>,
    budget: Option<Arc<RetryBudget>>,
}

impl Default for Policy {
    /// Exponential ×2 from 100 ms to 10 s, full jitter, 3 calls, hints capped at 60 s.
    fn default() -> Self {
        Policy::builder()
            .build()
            .expect("the default builder is valid")
    }
}

impl Policy {
    /// The longest duration any field accepts: 100 years. Keeping every
    /// duration far below `u64::MAX` nanoseconds is what lets the engine add
    /// them without overflow.
    pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

    /// The largest growth factor accepted.
    pub const MAX_FACTOR: f64 = 1e6;

    /// A builder with the defaults: exponential ×2, base 100 ms, cap 10 s,
    /// full jitter, 3 calls, no deadline, hints capped at 60 s.
    ///
    /// ```
    /// let p = retry_core::Policy::builder().max_attempts(1).build().unwrap();
    /// assert_eq!(p.max_attempts(), Some(1));
    /// ```
    pub const fn builder() -> PolicyBuilder {
        PolicyBuilder::new()
    }

    /// The policy's name, when it came from a registry or config file.
    ///
    /// ```
    /// let p = retry_core::Policy::builder().name("outbox").build().unwrap();
    /// assert_eq!(p.name(), Some("outbox"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The backoff shape.
    ///
    /// ```
    /// assert_eq!(retry_core::Policy::default().backoff().name(), "exponential");
    /// ```
    pub const fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The first wait's envelope.
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::Policy::default().base(), Duration::from_millis(100));
    /// ```
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The longest computed wait (server hints are bounded by
    /// [`max_retry_after`](Self::max_retry_after) instead).
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::Policy::default().cap(), Duration::from_secs(10));
    /// ```
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// The shortest computed wait, applied after jitter.
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::Policy::default().min_delay(), Duration::ZERO);
    /// ```
    pub const fn min_delay(&self) -> Duration {
        self.min_delay
    }

    /// The jitter mode.
    ///
    /// ```
    /// assert_eq!(retry_core::Policy::default().jitter(), retry_core::Jitter::Full);
    /// ```
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// How many calls are allowed, the first included; `None` is unlimited.
    ///
    /// ```
    /// assert_eq!(retry_core::Policy::default().max_attempts(), Some(3));
    /// ```
    pub const fn max_attempts(&self) -> Option<u32> {
        if self.max_attempts == 0 {
            None
        } else {
            Some(self.max_attempts)
        }
    }

    /// The budget on the whole call, measured from the start of the first attempt.
    ///
    /// ```
    /// assert_eq!(retry_core::Policy::default().deadline(), None);
    /// ```
    pub const fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// The longest one attempt may run before it is cancelled.
    ///
    /// ```
    /// assert_eq!(retry_core::Policy::default().attempt_timeout(), None);
    /// ```
    pub const fn attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// The error classes that may be retried; `None` means every non-permanent error.
    ///
    /// ```
    /// let p = retry_core::Policy::builder().retry_on(["throttled"]).build().unwrap();
    /// assert_eq!(p.retry_on().unwrap().len(), 1);
    /// ```
    pub fn retry_on(&self) -> Option<&[Box<str>]> {
        self.retry_on.as_deref()
    }

    /// Whether an error of class `class` may be retried under `retry_on`.
    ///
    /// ```
    /// let p = retry_core::Policy::builder().retry_on(["throttled"]).build().unwrap();
    /// assert!(p.retries_class("throttled"));
    /// assert!(!p.retries_class("transient"));
    /// ```
    pub fn retries_class(&self, class: &str) -> bool {
        self.retry_on
            .as_deref()
            .is_none_or(|set| set.iter().any(|c| &**c == class))
    }

    /// The ceiling on a server's Retry-After hint; `None` means unbounded
    /// (only the deadline limits it).
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::Policy::default().max_retry_after(), Some(Duration::from_secs(60)));
    /// ```
    pub const fn max_retry_after(&self) -> Option<Duration> {
        self.max_retry_after
    }

    /// The shared retry budget, if any.
    ///
    /// ```
    /// assert!(retry_core::Policy::default().budget().is_none());
    /// ```
    pub fn budget(&self) -> Option<&Arc<RetryBudget>> {
        self.budget.as_ref()
    }

    /// The upper end of the wait before retry `n` (0-based): `min(cap, base·factor^n)`
    /// for exponential, likewise for the other shapes. Never below `min_delay`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let p = retry_core::Policy::default();
    /// assert_eq!(p.envelope(u32::MAX), p.cap());
    /// ```
    pub fn envelope(&self, n: u32) -> Duration {
        self.envelope_at(f64::from(n))
    }

    /// The envelope for a real `n`, for tabulating and plotting a schedule.
    /// Negative or NaN `n` is read as 0.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let p = retry_core::Policy::default();
    /// assert!(p.envelope_at(0.5) > p.envelope(0) && p.envelope_at(0.5) < p.envelope(1));
    /// ```
    pub fn envelope_at(&self, n: f64) -> Duration {
        let n = if n.is_nan() { 0.0 } else { n.max(0.0) };
        let raw = self.backoff.raw_nanos(self.base.as_nanos() as f64, n);
        clamp_nanos(raw, self.cap).max(self.min_delay)
    }

    /// The jittered wait before retry `n`, given the previous wait (used by
    /// decorrelated jitter) and a randomness source. Always in `[min_delay, cap]`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use retry_core::{JitterRng, Policy};
    /// let p = Policy::default();
    /// let d = p.delay(4, p.base(), &mut JitterRng::seeded(3));
    /// assert!(d >= p.min_delay() && d <= p.cap());
    /// ```
    pub fn delay(&self, n: u32, prev: Duration, rng: &mut JitterRng) -> Duration {
        let jittered = match self.jitter {
            Jitter::None => self.envelope(n),
            Jitter::Decorrelated => {
                Jitter::decorrelated(self.base, self.cap, prev.max(self.base), rng.unit())
            }
            mode => mode.apply_to_envelope(self.envelope(n), rng.unit()),
        };
        jittered.clamp(self.min_delay, self.cap)
    }

    /// A builder holding this policy's settings, to derive a variant.
    ///
    /// ```
    /// let fast = retry_core::Policy::default().to_builder().max_attempts(2).build().unwrap();
    /// assert_eq!(fast.max_attempts(), Some(2));
    /// ```
    pub fn to_builder(&self) -> PolicyBuilder {
        PolicyBuilder {
            name: self.name.clone(),
            backoff: self.backoff,
            base: self.base,
            cap: self.cap,
            min_delay: self.min_delay,
            jitter: self.jitter,
            max_attempts: self.max_attempts,
            deadline: self.deadline,
            attempt_timeout: self.attempt_timeout,
            retry_on: self.retry_on.clone(),
            max_retry_after: self.max_retry_after,
            budget: self.budget.clone(),
        }
    }
}

/// Collects a policy's settings; [`build`](Self::build) validates them.
///
/// ```
/// use retry_core::{Backoff, Policy};
/// use std::time::Duration;
/// let err = Policy::builder()
///     .backoff(Backoff::Exponential { factor: 0.5 })
///     .cap(Duration::from_millis(1))
///     .build()
///     .unwrap_err();
/// assert_eq!(err.problems().len(), 2); // factor < 1 and cap < base
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct PolicyBuilder {
    name: Option<Arc<str>>,
    backoff: Backoff,
    base: Duration,
    cap: Duration,
    min_delay: Duration,
    jitter: Jitter,
    max_attempts: u32,
    deadline: Option<Duration>,
    attempt_timeout: Option<Duration>,
    retry_on: Option<Arc<[Box<str>]>>,
    max_retry_after: Option<Duration>,
    budget: Option<Arc<RetryBudget>>,
}

impl Default for PolicyBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PolicyBuilder {
    /// The defaults described on [`Policy::builder`].
    ///
    /// ```
    /// let _ = retry_core::PolicyBuilder::new();
    /// ```
    pub const fn new() -> Self {
        PolicyBuilder {
            name: None,
            backoff: Backoff::Exponential { factor: 2.0 },
            base: Duration::from_millis(100),
            cap: Duration::from_secs(10),
            min_delay: Duration::ZERO,
            jitter: Jitter::Full,
            max_attempts: 3,
            deadline: None,
            attempt_timeout: None,
            retry_on: None,
            max_retry_after: Some(Duration::from_secs(60)),
            budget: None,
        }
    }

    /// Names the policy (used in diagnostics, hooks and tracing).
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().name("db");
    /// ```
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the backoff shape.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().backoff(retry_core::Backoff::Linear);
    /// ```
    pub const fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the first wait's envelope.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().base(std::time::Duration::from_millis(5));
    /// ```
    pub const fn base(mut self, base: Duration) -> Self {
        self.base = base;
        self
    }

    /// Sets the longest computed wait.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().cap(std::time::Duration::from_secs(2));
    /// ```
    pub const fn cap(mut self, cap: Duration) -> Self {
        self.cap = cap;
        self
    }

    /// Sets the shortest computed wait (applied after jitter).
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().min_delay(std::time::Duration::from_millis(1));
    /// ```
    pub const fn min_delay(mut self, min_delay: Duration) -> Self {
        self.min_delay = min_delay;
        self
    }

    /// Sets the jitter mode.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().jitter(retry_core::Jitter::Equal);
    /// ```
    pub const fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets how many calls are allowed, the first included (1 = no retry,
    /// 0 = unlimited, which needs a deadline).
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().max_attempts(5);
    /// ```
    pub const fn max_attempts(mut self, calls: u32) -> Self {
        self.max_attempts = calls;
        self
    }

    /// Sets or clears the whole-call deadline.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().deadline(Some(std::time::Duration::from_secs(30)));
    /// ```
    pub const fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets or clears the per-attempt timeout.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().attempt_timeout(Some(std::time::Duration::from_secs(1)));
    /// ```
    pub const fn attempt_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// Restricts retries to these error classes.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().retry_on(["transient", "throttled"]);
    /// ```
    pub fn retry_on<I, S>(mut self, classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        self.retry_on = Some(classes.into_iter().map(Into::into).collect());
        self
    }

    /// Retries every non-permanent error again (undoes [`retry_on`](Self::retry_on)).
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().retry_on(["x"]).retry_any_class();
    /// ```
    pub fn retry_any_class(mut self) -> Self {
        self.retry_on = None;
        self
    }

    /// Sets or clears the ceiling on server hints.
    ///
    /// ```
    /// let _ = retry_core::Policy::builder().max_retry_after(None);
    /// ```
    pub const fn max_retry_after(mut self, ceiling: Option<Duration>) -> Self {
        self.max_retry_after = ceiling;
        self
    }

    /// Shares a retry budget with every other policy holding the same `Arc`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use retry_core::RetryBudget;
    /// let budget = Arc::new(RetryBudget::builder().build().unwrap());
    /// let _ = retry_core::Policy::builder().budget(Some(budget));
    /// ```
    pub fn budget(mut self, budget: Option<Arc<RetryBudget>>) -> Self {
        self.budget = budget;
        self
    }

    /// Checks every rule and returns the policy, or every problem found.
    ///
    /// ```
    /// let err = retry_core::Policy::builder().max_attempts(0).build().unwrap_err();
    /// assert_eq!(err.problems()[0].field, "max_attempts");
    /// ```
    pub fn build(self) -> Result<Policy, PolicyError> {
        let mut problems = Vec::new();
        let mut check = |ok: bool, field: &'static str, rule: &'static str, fix: String| {
            if !ok {
                problems.push(Problem { field, rule, fix });
            }
        };
        let max = Policy::MAX_DURATION;
        for (field, value) in [
            ("base", Some(self.base)),
            ("cap", Some(self.cap)),
            ("min_delay", Some(self.min_delay)),
            ("deadline", self.deadline),
            ("attempt_timeout", self.attempt_timeout),
            ("max_retry_after", self.max_retry_after),
        ] {
            if let Some(v) = value {
                check(
                    v <= max,
                    field,
                    "must be at most 100 years",
                    format!("use a shorter {field} (got {v:?})"),
                );
            }
        }
        if let Backoff::Exponential { factor } = self.backoff {
            check(
                factor.is_finite() && (1.0..=Policy::MAX_FACTOR).contains(&factor),
                "factor",
                "must be a finite number from 1 to 1e6",
                format!("set factor to a value such as 2.0 (got {factor})"),
            );
        }
        check(
            self.cap >= self.base,
            "cap",
            "must not be less than base",
            format!(
                "raise cap to at least {:?} or lower base (cap is {:?})",
                self.base, self.cap
            ),
        );
        check(
            self.min_delay <= self.cap,
            "min_delay",
            "must not be greater than cap",
            format!(
                "lower min_delay to at most {:?} (got {:?})",
                self.cap, self.min_delay
            ),
        );
        if let Jitter::Proportional(r) = self.jitter {
            check(
                (0.0..=1.0).contains(&r),
                "jitter",
                "proportional ratio must be between 0 and 1",
                format!("use a ratio such as 0.25 (got {r})"),
            );
        }
        check(
            self.max_attempts != 0 || self.deadline.is_some(),
            "max_attempts",
            "0 (unlimited) is allowed only with a deadline",
            "set a deadline, or a finite max_attempts such as 5".to_string(),
        );
        for (field, value) in [
            ("deadline", self.deadline),
            ("attempt_timeout", self.attempt_timeout),
        ] {
            check(
                value != Some(Duration::ZERO),
                field,
                "must be greater than zero when set",
                format!("remove {field} or give it a positive duration"),
            );
        }
        if let Some(classes) = &self.retry_on {
            check(
                classes.iter().all(|c| !c.trim().is_empty()),
                "retry_on",
                "class names must not be empty",
                "remove the empty name from retry_on".to_string(),
            );
        }
        if !problems.is_empty() {
            let subject = match self.name.as_deref() {
                Some(name) => format!("invalid retry policy `{name}`"),
                None => "invalid retry policy".to_owned(),
            };
            return Err(PolicyError { subject, problems });
        }
        Ok(Policy {
            name: self.name,
            backoff: self.backoff,
            base: self.base,
            cap: self.cap,
            min_delay: self.min_delay,
            jitter: self.jitter,
            max_attempts: self.max_attempts,
            deadline: self.deadline,
            attempt_timeout: self.attempt_timeout,
            retry_on: self.retry_on,
            max_retry_after: self.max_retry_after,
            budget: self.budget,
        })
    }
}

/// One broken rule: the field, the rule it breaks, and how to fix it.
///
/// ```
/// let err = retry_core::Policy::builder().max_attempts(0).build().unwrap_err();
/// let p = &err.problems()[0];
/// assert!(p.to_string().contains("max_attempts"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field, as named in configuration files.
    pub field: &'static str,
    /// The rule that was broken.
    pub rule: &'static str,
    /// What to change.
    pub fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}; {}", self.field, self.rule, self.fix)
    }
}

/// Every problem found while validating a policy.
///
/// ```
/// let err = retry_core::Policy::builder().max_attempts(0).build().unwrap_err();
/// assert!(err.to_string().contains("unlimited"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    subject: String,
    problems: Vec<Problem>,
}

impl PolicyError {
    pub(crate) fn budget(problems: Vec<Problem>) -> Self {
        PolicyError {
            subject: "invalid retry budget".to_owned(),
            problems,
        }
    }

    /// The problems, in the order the fields were checked.
    ///
    /// ```
    /// let err = retry_core::Policy::builder().max_attempts(0).build().unwrap_err();
    /// assert_eq!(err.problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.subject)?;
        for (i, p) in self.problems.iter().enumerate() {
            write!(f, "{}{p}", if i == 0 { ": " } else { "; " })?;
        }
        Ok(())
    }
}

impl std::error::Error for PolicyError {}

/// The state a schedule carries from one wait to the next.
#[derive(Debug, Clone)]
pub(crate) struct ScheduleState {
    pub(crate) retries: u32,
    pub(crate) prev: Duration,
    pub(crate) rng: JitterRng,
}

impl ScheduleState {
    pub(crate) fn new(rng: JitterRng) -> Self {
        ScheduleState {
            retries: 0,
            prev: Duration::ZERO,
            rng,
        }
    }

    /// The next computed (jittered, clamped) wait; advances the schedule.
    pub(crate) fn next_delay(&mut self, policy: &Policy) -> Duration {
        let d = policy.delay(self.retries, self.prev, &mut self.rng);
        self.retries = self.retries.saturating_add(1);
        self.prev = d;
        d
    }
}

/// An endless iterator over a policy's computed waits (no hints, no limits),
/// for showing and plotting a schedule.
///
/// ```
/// use retry_core::{Jitter, Policy, Schedule};
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
    /// let p = retry_core::Policy::default();
    /// let a: Vec<_> = retry_core::Schedule::new(&p, Some(9)).take(5).collect();
    /// let b: Vec<_> = retry_core::Schedule::new(&p, Some(9)).take(5).collect();
    /// assert_eq!(a, b);
    /// ```
    pub fn new(policy: &'p Policy, seed: Option<u64>) -> Self {
        Schedule {
            policy,
            state: ScheduleState::new(JitterRng::from_seed(seed)),
        }
    }
}

impl Iterator for Schedule<'_> {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        Some(self.state.next_delay(self.policy))
    }
}
