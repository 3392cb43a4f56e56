//! The policy builder: every rule is checked at once, in `build`.

use crate::backoff::Backoff;
use crate::breaker::CircuitBreaker;
use crate::budget::{Budgets, RetryBudget};
use crate::hedge::{HedgeSettings, Hedging};
use crate::jitter::Jitter;
use crate::policy::{Policy, RequestRules};
use crate::problem::{PolicyError, PolicyErrorKind, Problems};
use retrykit_schema::keys::Key;
use std::sync::Arc;
use std::time::Duration;

/// Collects a policy's settings; [`build`](Self::build) validates them.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Backoff, Policy};
/// use std::time::Duration;
/// let err = Policy::builder()
///     .backoff(Backoff::Exponential { factor: 0.5 })
///     .cap(Duration::from_millis(1))
///     .build()
///     .unwrap_err();
/// assert_eq!(err.problems().len(), 2); // factor < 1 and cap < base
/// ```
///
/// Each setter sets what its getter on [`Policy`] reads:
///
/// ```
/// use retrykit_core::{Backoff, Class, Jitter, Policy, RetryBudget};
/// use retrykit_core::{breaker::CircuitBreaker, chaos::Chaos, limit::ConcurrencyLimit};
/// use std::{sync::Arc, time::Duration};
/// let (ms, budget) = (Duration::from_millis, Arc::new(RetryBudget::builder().build().unwrap()));
/// let breaker = Arc::new(CircuitBreaker::builder().build().unwrap());
/// let limit = Arc::new(ConcurrencyLimit::fixed(4, None, 16).unwrap());
/// let chaos = Arc::new(Chaos::new(Some(1)).fault(0.5, Class::TRANSIENT, None).unwrap());
/// let p = Policy::builder().name("db").backoff(Backoff::Linear).base(ms(5)).min_delay(ms(1))
///     .jitter(Jitter::Equal).max_attempts(5).deadline(Some(ms(30_000))).attempt_timeout(Some(ms(1_000)))
///     .max_retry_after(None).budget(Some(budget.clone())).breaker(Some(breaker.clone()))
///     .limit(Some(limit.clone())).chaos(Some(chaos)).build().unwrap();
/// assert_eq!((p.name(), p.backoff(), p.base(), p.min_delay(), p.jitter()), (Some("db"), Backoff::Linear, ms(5), ms(1), Jitter::Equal));
/// assert_eq!((p.max_attempts(), p.deadline(), p.attempt_timeout(), p.max_retry_after()), (Some(5), Some(ms(30_000)), Some(ms(1_000)), None));
/// assert!(Arc::ptr_eq(p.budget().unwrap(), &budget) && Arc::ptr_eq(p.breaker().unwrap(), &breaker));
/// assert!(Arc::ptr_eq(p.limit().unwrap(), &limit) && p.chaos().unwrap().fault_rate() == 0.5);
/// let q = p.to_builder().max_attempts(2).build().unwrap(); // a variant keeps the rest
/// assert_eq!((q.name(), q.max_attempts(), q.base()), (Some("db"), Some(2), ms(5)));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct PolicyBuilder {
    /// The settings so far, unchecked.
    pub(crate) draft: Policy,
}

impl From<Policy> for PolicyBuilder {
    fn from(policy: Policy) -> Self {
        PolicyBuilder { draft: policy }
    }
}

impl Default for PolicyBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PolicyBuilder {
    /// The defaults described on [`Policy::builder`].
    pub const fn new() -> Self {
        PolicyBuilder {
            draft: Policy {
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
                budgets: Budgets::NONE,
                requests: RequestRules::DEFAULT,
                hedge: None,
                breaker: None,
                limit: None,
                chaos: None,
            },
        }
    }

    /// Names the policy (used in diagnostics, hooks and tracing).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.draft.name = Some(name.into());
        self
    }

    /// Sets the backoff shape.
    pub const fn backoff(mut self, backoff: Backoff) -> Self {
        self.draft.backoff = backoff;
        self
    }

    /// Sets the first wait's envelope.
    pub const fn base(mut self, base: Duration) -> Self {
        self.draft.base = base;
        self
    }

    /// Sets the longest computed wait.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let p = retrykit_core::Policy::builder().cap(Duration::from_secs(2)).build().unwrap();
    /// assert_eq!(p.envelope(10), Duration::from_secs(2)); // 100 ms × 2¹⁰ is capped
    /// ```
    pub const fn cap(mut self, cap: Duration) -> Self {
        self.draft.cap = cap;
        self
    }

    /// Sets the shortest computed wait.
    pub const fn min_delay(mut self, min_delay: Duration) -> Self {
        self.draft.min_delay = min_delay;
        self
    }

    /// Sets the jitter mode.
    pub const fn jitter(mut self, jitter: Jitter) -> Self {
        self.draft.jitter = jitter;
        self
    }

    /// Sets how many calls are allowed, the first included (1 = no retry,
    /// 0 = unlimited, which needs a deadline).
    pub const fn max_attempts(mut self, calls: u32) -> Self {
        self.draft.max_attempts = calls;
        self
    }

    /// Sets or clears the whole-call deadline.
    pub const fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.draft.deadline = deadline;
        self
    }

    /// Sets or clears the per-attempt timeout.
    pub const fn attempt_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.draft.attempt_timeout = timeout;
        self
    }

    /// Restricts retries to these error classes.
    ///
    /// ```
    /// let p = retrykit_core::Policy::builder().retry_on(["transient", "throttled"]).build().unwrap();
    /// assert!(p.retries_class("throttled"));
    /// assert!(!p.retries_class("timeout"));
    /// ```
    pub fn retry_on<I, S>(mut self, classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        self.draft.retry_on = Some(classes.into_iter().map(Into::into).collect());
        self
    }

    /// Retries every non-permanent error again (undoes [`retry_on`](Self::retry_on)).
    ///
    /// ```
    /// let p = retrykit_core::Policy::builder().retry_on(["throttled"]).retry_any_class().build().unwrap();
    /// assert!(p.retry_on().is_none() && p.retries_class("timeout"));
    /// ```
    pub fn retry_any_class(mut self) -> Self {
        self.draft.retry_on = None;
        self
    }

    /// Sets or clears the ceiling on server hints.
    pub const fn max_retry_after(mut self, ceiling: Option<Duration>) -> Self {
        self.draft.max_retry_after = ceiling;
        self
    }

    /// Uses `budget` alone, shared with every policy holding the same `Arc`.
    pub fn budget(self, budget: Option<Arc<RetryBudget>>) -> Self {
        self.budgets(budget)
    }

    /// Uses every budget in `budgets` (replacing any set before): each
    /// window budget must allow a retry, each adaptive budget paces every
    /// attempt. Listing one budget twice is an error.
    ///
    /// ```
    /// use retrykit_core::{Policy, RetryBudget};
    /// use std::sync::Arc;
    /// let adaptive = Arc::new(RetryBudget::adaptive());
    /// let err = Policy::builder().budgets([adaptive.clone(), adaptive]).build().unwrap_err();
    /// assert_eq!(err.problems()[0].field, "budget");
    /// ```
    pub fn budgets(mut self, budgets: impl IntoIterator<Item = Arc<RetryBudget>>) -> Self {
        self.draft.budgets = Budgets::new(budgets.into_iter().collect());
        self
    }

    /// Sets or clears hedging (see [`crate::hedge`]), with a fresh latency
    /// estimate and cap. It needs a finite `max_attempts` of at least 2.
    ///
    /// ```
    /// use retrykit_core::{Policy, hedge::{HedgeAfter, HedgeSettings, Percentile}};
    /// let p95 = HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse("p95").unwrap()));
    /// let p = Policy::builder().hedge(Some(p95)).build().unwrap();
    /// assert_eq!(p.hedge_settings(), Some(p95));
    /// let err = Policy::builder().hedge(Some(p95)).max_attempts(1).build().unwrap_err();
    /// assert_eq!(err.problems()[0].field, "max_attempts");
    /// ```
    pub fn hedge(mut self, settings: Option<HedgeSettings>) -> Self {
        self.draft.hedge = settings.map(Hedging::new);
        self
    }

    /// Sets or clears the circuit breaker every attempt asks before it is
    /// sent, shared by the policies holding the same `Arc`.
    pub fn breaker(mut self, breaker: Option<Arc<CircuitBreaker>>) -> Self {
        self.draft.breaker = breaker;
        self
    }

    /// Sets or clears the concurrency limit every attempt holds a permit
    /// of while in flight (docs/limits.md).
    pub fn limit(mut self, limit: Option<Arc<crate::limit::ConcurrencyLimit>>) -> Self {
        self.draft.limit = limit;
        self
    }

    /// Sets or clears the faults and latency injected into the policy's
    /// attempts (docs/chaos.md); chaos that injects nothing is cleared.
    pub fn chaos(mut self, chaos: Option<Arc<crate::chaos::Chaos>>) -> Self {
        self.draft.chaos = chaos.filter(|c| c.active());
        self
    }

    /// Checks every rule and returns the policy, or every problem found.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] listing every field that breaks a rule (a `cap`
    /// below `base`, a duration over [`Policy::MAX_DURATION`], ...), each
    /// with the rule and the fix.
    ///
    /// ```
    /// let err = retrykit_core::Policy::builder().max_attempts(0).build().unwrap_err();
    /// assert_eq!(err.problems()[0].field, "max_attempts");
    /// ```
    pub fn build(self) -> Result<Policy, PolicyError> {
        let p = &self.draft;
        let mut problems = Problems::default();
        problems.durations([
            (Key::Base.name(), Some(p.base)),
            (Key::Cap.name(), Some(p.cap)),
            (Key::MinDelay.name(), Some(p.min_delay)),
            (Key::Deadline.name(), p.deadline),
            (Key::AttemptTimeout.name(), p.attempt_timeout),
            (Key::MaxRetryAfter.name(), p.max_retry_after),
        ]);
        let mut check = |ok, field, rule, fix| problems.require(ok, field, rule, fix);
        if let Backoff::Exponential { factor } = p.backoff {
            check(
                factor.is_finite() && (1.0..=Policy::MAX_FACTOR).contains(&factor),
                Key::Factor.name(),
                "must be a finite number from 1 to 1e6",
                format!("set factor to a value such as 2.0 (got {factor:?})"),
            );
        }
        check(
            p.cap >= p.base,
            Key::Cap.name(),
            "must not be less than base",
            format!(
                "raise cap to at least {:?} or lower base (cap is {:?})",
                p.base, p.cap
            ),
        );
        check(
            p.min_delay <= p.cap,
            Key::MinDelay.name(),
            "must not be greater than cap",
            format!(
                "lower min_delay to at most {:?} (got {:?})",
                p.cap, p.min_delay
            ),
        );
        if let Jitter::Proportional(r) = p.jitter {
            check(
                (0.0..=1.0).contains(&r),
                Key::Jitter.name(),
                "proportional ratio must be between 0 and 1",
                format!("use a ratio such as 0.25 (got {r:?})"),
            );
        }
        check(
            p.max_attempts != 0 || p.deadline.is_some(),
            Key::MaxAttempts.name(),
            "0 (unlimited) is allowed only with a deadline",
            "set a deadline, or a finite max_attempts such as 5".to_string(),
        );
        for (field, value) in [
            (Key::Deadline.name(), p.deadline),
            (Key::AttemptTimeout.name(), p.attempt_timeout),
        ] {
            check(
                value != Some(Duration::ZERO),
                field,
                "must be greater than zero when set",
                format!("remove {field} or give it a positive duration"),
            );
        }
        if let Some(classes) = &p.retry_on {
            check(
                classes.iter().all(|c| !c.trim().is_empty()),
                Key::RetryOn.name(),
                "class names must not be empty",
                "remove the empty name from retry_on".to_string(),
            );
        }
        let budgets = p.budgets.as_slice();
        let repeated = budgets
            .iter()
            .enumerate()
            .any(|(i, b)| budgets[..i].iter().any(|a| Arc::ptr_eq(a, b)));
        problems.require(
            !repeated,
            Key::Budget.name(),
            "lists each budget once",
            "list each budget once (twice, it would count each retry twice)".to_string(),
        );
        p.requests.check(&mut problems);
        if let Some(hedging) = &p.hedge {
            hedging.settings().check(p.max_attempts, &mut problems);
        }
        // A hedged round does not draw chaos: refused rather than ignored.
        problems.require(
            p.hedge.is_none() || p.chaos.is_none(),
            Key::HedgeAfter.name(),
            "cannot be combined with chaos yet (a hedged round injects nothing)",
            "set hedge_after = \"none\" where the chaos table applies, or drop the chaos table"
                .to_string(),
        );
        let name = p.name.as_deref();
        PolicyError::check(PolicyErrorKind::Policy, name, problems.into_vec())?;
        Ok(self.draft)
    }
}
