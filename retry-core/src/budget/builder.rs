//! Building a window budget and validating its settings.

use super::RetryBudget;
use crate::problem::Problems;
use crate::window::Window;
use retrykit_schema::keys::Key;
use std::time::Duration;

impl RetryBudget {
    /// A builder with the defaults: ratio 0.1, 10 retries per second, a 10 s window.
    ///
    /// ```
    /// use retrykit_core::{BudgetMode, BudgetScope, RetryBudget};
    /// use std::time::Duration;
    /// let b = RetryBudget::builder().build().unwrap();
    /// assert_eq!((b.ratio(), b.min_per_sec(), b.window()), (0.1, 10.0, Duration::from_secs(10)));
    /// assert_eq!((b.mode(), b.scope(), b.failing_open()), (BudgetMode::Window, BudgetScope::Local, false));
    /// assert!(b.limiter().is_none() && b.throttling().is_none());
    /// let set = RetryBudget::builder().min_per_sec(5.0).window(Duration::from_secs(60)).build().unwrap();
    /// assert_eq!((set.min_per_sec(), set.window()), (5.0, Duration::from_secs(60)));
    /// assert!(b.same_settings(&RetryBudget::builder().build().unwrap()) && !b.same_settings(&set));
    /// ```
    pub const fn builder() -> RetryBudgetBuilder {
        RetryBudgetBuilder {
            ratio: 0.1,
            min_per_sec: 10.0,
            window: Duration::from_secs(10),
        }
    }
}

/// Builds a [`RetryBudget`], validating its settings.
///
/// # Examples
///
/// ```
/// let err = retrykit_core::RetryBudget::builder().ratio(-1.0).build().unwrap_err();
/// assert_eq!(err.problems()[0].field, "ratio");
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct RetryBudgetBuilder {
    ratio: f64,
    min_per_sec: f64,
    window: Duration,
}

impl RetryBudgetBuilder {
    /// The fraction of calls that may be retried (0 to 1000).
    ///
    /// ```
    /// let b = retrykit_core::RetryBudget::builder().ratio(0.5).min_per_sec(0.0).build().unwrap();
    /// let now = std::time::Instant::now();
    /// for _ in 0..4 { b.deposit(now); }
    /// assert!(b.try_withdraw(now) && b.try_withdraw(now)); // half of 4 calls
    /// assert!(!b.try_withdraw(now));
    /// ```
    pub const fn ratio(mut self, ratio: f64) -> Self {
        self.ratio = ratio;
        self
    }

    /// The retries per second allowed whatever the call volume.
    pub const fn min_per_sec(mut self, rate: f64) -> Self {
        self.min_per_sec = rate;
        self
    }

    /// The sliding window (1 ms to 1 day).
    pub const fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// Validates the settings and builds the budget.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`](crate::PolicyError) naming each setting out of
    /// range (`ratio` 0 to 1000, `min_per_sec` 0 to 1e9, `window` 1 ms to
    /// 1 day), with the fix.
    pub fn build(self) -> Result<RetryBudget, crate::PolicyError> {
        let mut problems = Problems::default();
        problems.require(
            self.ratio.is_finite() && (0.0..=1000.0).contains(&self.ratio),
            Key::Ratio.name(),
            "must be a finite number from 0 to 1000",
            format!("use a fraction such as 0.1 (got {:?})", self.ratio),
        );
        problems.require(
            self.min_per_sec.is_finite() && (0.0..=1e9).contains(&self.min_per_sec),
            Key::MinPerSec.name(),
            "must be a finite number from 0 to 1e9",
            format!("use a rate such as 10 (got {:?})", self.min_per_sec),
        );
        problems.require(
            self.window >= Duration::from_millis(1) && self.window <= Duration::from_secs(86_400),
            Key::Window.name(),
            "must be from 1ms to 1 day",
            format!("use a window such as \"10s\" (got {:?})", self.window),
        );
        crate::PolicyError::check(crate::PolicyErrorKind::Budget, None, problems.into_vec())?;
        Ok(RetryBudget {
            ratio: self.ratio,
            min_per_sec: self.min_per_sec,
            window: self.window,
            counts: Window::new(self.window),
            #[cfg(feature = "redis")]
            fleet: None,
            limiter: None,
            throttling: None,
        })
    }
}
