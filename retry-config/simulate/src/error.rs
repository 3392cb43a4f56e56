//! Why a scenario cannot be simulated.

use retrykit_core::Problem;
use std::fmt;

/// Every problem found in a scenario's settings, each naming the field, the
/// rule and the fix, like [`PolicyError`](retrykit_core::PolicyError).
///
/// ```
/// use retrykit_sim::Herd;
/// use std::time::Duration;
/// let herd = Herd { tick: Duration::ZERO, ..Herd::default() };
/// let err = herd.run(&retrykit_core::Policy::default()).unwrap_err();
/// assert_eq!(err.problems()[0].field, "tick");
/// assert!(err.to_string().contains("greater than zero"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulateError {
    scenario: &'static str,
    problems: Vec<Problem>,
}

impl SimulateError {
    /// `Ok(())` when `problems` is empty, the error otherwise.
    pub(crate) fn check(scenario: &'static str, problems: Vec<Problem>) -> Result<(), Self> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(SimulateError { scenario, problems })
        }
    }

    /// The error of `scenario` for `problems`.
    pub(crate) fn new(scenario: &'static str, problems: Vec<Problem>) -> Self {
        SimulateError { scenario, problems }
    }

    /// The problems, in the order the fields were checked.
    ///
    /// ```
    /// use retrykit_sim::Herd;
    /// let herd = Herd { capacity: 0, ..Herd::default() };
    /// let err = herd.run(&retrykit_core::Policy::default()).unwrap_err();
    /// assert_eq!(err.problems().len(), 1);
    /// ```
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for SimulateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {} scenario", self.scenario)?;
        for (i, p) in self.problems.iter().enumerate() {
            write!(f, "{}{p}", if i == 0 { ": " } else { "; " })?;
        }
        Ok(())
    }
}

impl std::error::Error for SimulateError {}
