//! What a failed validation says: every broken rule, each with the field,
//! the rule and the fix.

use std::fmt;
use std::time::Duration;

/// One broken rule: the field, the rule it breaks, and how to fix it.
///
/// ```
/// let err = retrykit_core::Policy::builder().max_attempts(0).build().unwrap_err();
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
/// let err = retrykit_core::Policy::builder().max_attempts(0).build().unwrap_err();
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

    pub(crate) fn breaker(name: Option<&str>, problems: Vec<Problem>) -> Self {
        let subject = match name {
            Some(name) => format!("invalid circuit breaker `{name}`"),
            None => "invalid circuit breaker".to_owned(),
        };
        PolicyError { subject, problems }
    }

    pub(crate) fn policy(name: Option<&str>, problems: Vec<Problem>) -> Self {
        let subject = match name {
            Some(name) => format!("invalid retry policy `{name}`"),
            None => "invalid retry policy".to_owned(),
        };
        PolicyError { subject, problems }
    }

    /// The problems, in the order the fields were checked.
    ///
    /// ```
    /// let err = retrykit_core::Policy::builder().max_attempts(0).build().unwrap_err();
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

    /// The one rule every duration shares: at most
    /// [`Policy::MAX_DURATION`](crate::Policy::MAX_DURATION), which is what
    /// lets the engine add durations without overflow.
    pub fn durations<const N: usize>(&mut self, fields: [(&'static str, Option<Duration>); N]) {
        for (field, value) in fields {
            if let Some(v) = value {
                self.require(
                    v <= crate::Policy::MAX_DURATION,
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
