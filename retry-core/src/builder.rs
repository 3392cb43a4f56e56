//! The policy builder: collects settings with const setters, then checks
//! every rule at once and reports each broken one with its field and fix.

use crate::backoff::Backoff;
use crate::budget::RetryBudget;
use crate::jitter::Jitter;
use crate::policy::Policy;
use crate::problem::{PolicyError, Problem};
use std::sync::Arc;
use std::time::Duration;

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
    pub(crate) name: Option<Arc<str>>,
    pub(crate) backoff: Backoff,
    pub(crate) base: Duration,
    pub(crate) cap: Duration,
    pub(crate) min_delay: Duration,
    pub(crate) jitter: Jitter,
    pub(crate) max_attempts: u32,
    pub(crate) deadline: Option<Duration>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) retry_on: Option<Arc<[Box<str>]>>,
    pub(crate) max_retry_after: Option<Duration>,
    pub(crate) budget: Option<Arc<RetryBudget>>,
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
            return Err(PolicyError::policy(self.name.as_deref(), problems));
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
