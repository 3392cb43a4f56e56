//! What a failed validation says: every broken rule, each with the field,
//! the rule and the fix.

use std::fmt;
use std::time::Duration;

/// `Display` for a type whose `as_str` names each value.
macro_rules! display_as_str {
    ($($ty:ty),+) => {$(
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )+};
}
pub(crate) use display_as_str;

/// One broken rule: the field, the rule it breaks, and how to fix it.
/// Fields may be added in minor releases (`#[non_exhaustive]`): build one
/// with [`Problem::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The field, as named in configuration files.
    pub field: &'static str,
    /// The rule that was broken.
    pub rule: &'static str,
    /// What to change.
    pub fix: String,
}

impl Problem {
    /// The problem that `field` breaks `rule`, fixed by `fix`.
    ///
    /// ```
    /// let p = retrykit_core::Problem::new("tick", "must be greater than zero", "use 1ms".into());
    /// assert_eq!(p.to_string(), "`tick` must be greater than zero; use 1ms");
    /// ```
    pub const fn new(field: &'static str, rule: &'static str, fix: String) -> Self {
        Problem { field, rule, fix }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}; {}", self.field, self.rule, self.fix)
    }
}

/// Every problem found while validating a policy, a budget or a circuit
/// breaker.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Policy, PolicyErrorKind};
/// let err = Policy::builder().max_attempts(0).build().unwrap_err();
/// assert_eq!(err.kind(), PolicyErrorKind::Policy);
/// assert_eq!(err.problems()[0].field, "max_attempts");
/// assert!(err.to_string().contains("unlimited"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    kind: PolicyErrorKind,
    subject: String,
    problems: Vec<Problem>,
}

/// What a [`PolicyError`] is about: the kind of value whose build failed.
///
/// ```
/// use retrykit_core::{PolicyErrorKind, RetryBudget};
/// let err = RetryBudget::builder().ratio(-1.0).build().unwrap_err();
/// assert_eq!(err.kind(), PolicyErrorKind::Budget);
/// assert_eq!(PolicyErrorKind::Budget.as_str(), "budget");
/// let err = retrykit_core::CircuitBreaker::builder().failure_ratio(2.0).build().unwrap_err();
/// assert_eq!(err.kind(), PolicyErrorKind::Breaker);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyErrorKind {
    /// A retry policy ([`PolicyBuilder::build`](crate::PolicyBuilder::build)).
    Policy,
    /// A retry budget ([`RetryBudgetBuilder::build`](crate::RetryBudgetBuilder::build)).
    Budget,
    /// A circuit breaker ([`BreakerBuilder::build`](crate::breaker::BreakerBuilder::build)).
    Breaker,
    /// A concurrency limit ([`ConcurrencyLimit::fixed`](crate::limit::ConcurrencyLimit::fixed)).
    Limit,
}

impl PolicyErrorKind {
    /// The kind as one word, as configuration files name the tables.
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyErrorKind::Policy => "policy",
            PolicyErrorKind::Budget => "budget",
            PolicyErrorKind::Breaker => "breaker",
            PolicyErrorKind::Limit => "limit",
        }
    }
}

display_as_str!(PolicyErrorKind);

impl PolicyError {
    /// `Ok` when `problems` is empty, else the error of a `kind` named `name`.
    pub(crate) fn check(
        kind: PolicyErrorKind,
        name: Option<&str>,
        problems: Vec<Problem>,
    ) -> Result<(), Self> {
        if problems.is_empty() {
            return Ok(());
        }
        Err(Self::new(kind, name, problems))
    }

    pub(crate) fn new(kind: PolicyErrorKind, name: Option<&str>, problems: Vec<Problem>) -> Self {
        let what = match kind {
            PolicyErrorKind::Policy => "retry policy",
            PolicyErrorKind::Budget => "retry budget",
            PolicyErrorKind::Breaker => "circuit breaker",
            PolicyErrorKind::Limit => "concurrency limit",
        };
        let subject = match name {
            Some(name) => format!("invalid {what} `{name}`"),
            None => format!("invalid {what}"),
        };
        PolicyError {
            kind,
            subject,
            problems,
        }
    }

    /// What was being built: a policy, a budget, a breaker or a limit.
    pub const fn kind(&self) -> PolicyErrorKind {
        self.kind
    }

    /// The problems, in the order the fields were checked.
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

/// Collects broken rules while a value is checked, so every problem is
/// reported at once; shared by policies, budgets and simulator scenarios.
///
/// ```
/// use retrykit_core::Problems;
/// use std::time::Duration;
/// let mut found = Problems::default();
/// found.require(false, "tick", "must be greater than zero", "use 1ms".into());
/// found.durations([("horizon", Some(Duration::MAX)), ("outage", None)]);
/// let fields: Vec<_> = found.into_vec().iter().map(|p| p.field).collect();
/// assert_eq!(fields, ["tick", "horizon"]);
/// ```
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    /// Records a problem unless `ok`.
    pub fn require(&mut self, ok: bool, field: &'static str, rule: &'static str, fix: String) {
        if !ok {
            self.0.push(Problem { field, rule, fix });
        }
    }

    /// The rule every duration shares: at most
    /// [`Policy::MAX_DURATION`](crate::Policy::MAX_DURATION).
    pub fn durations<const N: usize>(&mut self, fields: [(&'static str, Option<Duration>); N]) {
        for (field, value) in fields {
            if let Some(v) = value {
                self.require(
                    v <= retrykit_schema::duration::MAX,
                    field,
                    "must be at most 100 years",
                    format!("use a shorter {field} (got {v:?})"),
                );
            }
        }
    }

    /// The problems found, in the order they were checked.
    pub fn into_vec(self) -> Vec<Problem> {
        self.0
    }
}
