//! Retry budgets: a cap on retries shared by every call that uses the
//! budget. A policy may use several (`set`).

mod adaptive;
mod builder;
mod kind;
mod set;
mod throttling;
pub use builder::RetryBudgetBuilder;
pub use kind::{BudgetMode, BudgetScope};
pub use throttling::GrpcThrottling;

pub(crate) use adaptive::{Pacing, retry_cost};
pub(crate) use set::Budgets;

use crate::adaptive::AdaptiveLimiter;
use crate::window::Window;
#[cfg(feature = "redis")]
use retrykit_schema::keys::Key;
use std::fmt;
use std::time::{Duration, Instant};

/// The window's counters.
const CALLS: usize = 0;
const RETRIES: usize = 1;

/// A cap on retries shared by the calls that use it. Its mode is
/// `"window"` (the default: retries are at most `ratio` of the calls in a
/// sliding window, plus `min_per_sec`, as Finagle's `RetryBudget`),
/// `"adaptive"` (an [`AdaptiveLimiter`] pacing every attempt) or
/// `"grpc_throttling"` (gRFC A6's bucket, [`GrpcThrottling`]). A window
/// budget takes no lock.
///
/// # Examples
///
/// ```
/// use retrykit_core::RetryBudget;
/// use std::time::{Duration, Instant};
/// let budget = RetryBudget::builder().ratio(0.1).min_per_sec(0.0).build().unwrap();
/// let now = Instant::now();
/// for _ in 0..20 { budget.deposit(now); }
/// assert!(budget.try_withdraw(now));
/// assert!(budget.try_withdraw(now));
/// assert!(!budget.try_withdraw(now)); // 10% of 20 calls is 2 retries
/// ```
pub struct RetryBudget {
    ratio: f64,
    min_per_sec: f64,
    window: Duration,
    counts: Window,
    /// The fleet, when the scope is the fleet: it decides while Redis answers.
    #[cfg(feature = "redis")]
    fleet: Option<crate::fleet::FleetLink>,
    /// Set in mode `"adaptive"`; the window then never refuses a retry.
    limiter: Option<AdaptiveLimiter>,
    /// Set in mode `"grpc_throttling"`; the bucket alone decides.
    throttling: Option<GrpcThrottling>,
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryBudget")
            .field("mode", &self.mode())
            .field("ratio", &self.ratio)
            .field("min_per_sec", &self.min_per_sec)
            .field("window", &self.window)
            .field("scope", &self.scope())
            .finish_non_exhaustive()
    }
}

impl RetryBudget {
    /// An adaptive budget (`mode = "adaptive"`): it paces every attempt of
    /// the calls sharing it once the service has throttled (an error of
    /// class `throttled`). It never refuses a retry; a wait that would reach
    /// a call's deadline ends the call ([`Ending::RateLimited`](crate::Ending::RateLimited)).
    ///
    /// ```
    /// let b = retrykit_core::RetryBudget::adaptive();
    /// assert_eq!(b.mode(), retrykit_core::BudgetMode::Adaptive);
    /// assert!(b.limiter().is_some_and(|l| !l.is_limiting()));
    /// assert!(b.try_withdraw(std::time::Instant::now())); // pacing, not refusing
    /// ```
    pub fn adaptive() -> RetryBudget {
        RetryBudget {
            limiter: Some(AdaptiveLimiter::new()),
            ..Self::default_window()
        }
    }

    /// A budget under gRFC A6's retry throttling (`mode =
    /// "grpc_throttling"`): see [`GrpcThrottling`]. A success fills it, a
    /// failure the policy would retry drains it.
    ///
    /// # Errors
    ///
    /// [`GrpcThrottling::new`]'s, naming a bad `max_tokens` or `token_ratio`.
    ///
    /// ```
    /// let b = retrykit_core::RetryBudget::grpc_throttling(2.0, 0.5).unwrap();
    /// assert_eq!(b.mode().as_str(), "grpc_throttling");
    /// let now = std::time::Instant::now();
    /// assert!(b.try_withdraw(now));
    /// b.throttling().unwrap().record(true); // a failed attempt: 1 of 2 tokens left
    /// assert!(!b.try_withdraw(now));
    /// ```
    pub fn grpc_throttling(
        max_tokens: f64,
        token_ratio: f64,
    ) -> Result<RetryBudget, crate::PolicyError> {
        Ok(RetryBudget {
            throttling: Some(GrpcThrottling::new(max_tokens, token_ratio)?),
            ..Self::default_window()
        })
    }

    fn default_window() -> RetryBudget {
        Self::builder()
            .build()
            .expect("the builder's defaults are valid")
    }

    /// The token bucket of a `"grpc_throttling"` budget.
    pub fn throttling(&self) -> Option<&GrpcThrottling> {
        self.throttling.as_ref()
    }

    /// The budget's mode.
    pub fn mode(&self) -> BudgetMode {
        if self.limiter.is_some() {
            BudgetMode::Adaptive
        } else if self.throttling.is_some() {
            BudgetMode::GrpcThrottling
        } else {
            BudgetMode::Window
        }
    }

    /// The adaptive budget's limiter; `None` for a window budget.
    pub fn limiter(&self) -> Option<&AdaptiveLimiter> {
        self.limiter.as_ref()
    }

    /// The fraction of calls that may be retried.
    pub const fn ratio(&self) -> f64 {
        self.ratio
    }

    /// The retries per second allowed whatever the call volume.
    pub const fn min_per_sec(&self) -> f64 {
        self.min_per_sec
    }

    /// The sliding window's length.
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// Whether `other` was built with the same settings (so a reload may
    /// keep this budget and its counts).
    pub fn same_settings(&self, other: &RetryBudget) -> bool {
        #[cfg(feature = "redis")]
        if self.fleet_options() != other.fleet_options() {
            return false;
        }
        let bucket = |b: &RetryBudget| b.throttling().map(|t| (t.max_tokens(), t.token_ratio()));
        self.mode() == other.mode()
            && self.ratio == other.ratio
            && self.min_per_sec == other.min_per_sec
            && self.window == other.window
            && bucket(self) == bucket(other)
    }

    /// Where the budget is kept.
    pub fn scope(&self) -> BudgetScope {
        #[cfg(feature = "redis")]
        if self.fleet.is_some() {
            return BudgetScope::Fleet;
        }
        BudgetScope::Local
    }

    /// Shares this budget with every host using the same name and store
    /// (see [`crate::fleet`]). A background thread keeps this host's lease
    /// of retries; the budget's own window keeps counting, and decides
    /// whenever Redis does not answer.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`](crate::PolicyError) naming each bad option (a
    /// missing or non-Redis `store`, a bad `timeout` or `refresh`, a mode
    /// other than `"window"`), or the thread that could not start.
    ///
    /// ```
    /// use retrykit_core::{RetryBudget, fleet::FleetOptions};
    /// let err = RetryBudget::builder().build().unwrap()
    ///     .with_fleet(FleetOptions::new("b", "http://cache:6379/")).unwrap_err();
    /// assert_eq!(err.problems()[0].field, "store");
    /// ```
    #[cfg(feature = "redis")]
    pub fn with_fleet(
        mut self,
        options: crate::fleet::FleetOptions,
    ) -> Result<Self, crate::PolicyError> {
        let mut problems = options.problems("budget");
        if self.limiter.is_some() || self.throttling.is_some() {
            problems.push(crate::Problem {
                field: Key::Scope.name(),
                rule: "\"fleet\" applies to window budgets only",
                fix: "remove scope = \"fleet\" (an adaptive budget paces this process's \
                      calls; gRFC A6's bucket is kept in each process), or use mode = \"window\""
                    .to_string(),
            });
        }
        let kind = crate::PolicyErrorKind::Budget;
        crate::PolicyError::check(kind, None, problems)?;
        let link =
            crate::fleet::FleetLink::start(options, self.ratio, self.min_per_sec, self.window)
                .map_err(|e| crate::fleet::unstarted(kind, None, Key::Store, &e))?;
        self.fleet = Some(link);
        Ok(self)
    }

    /// Whether this is a fleet budget whose store does not answer, so the
    /// local window decides.
    pub fn failing_open(&self) -> bool {
        #[cfg(feature = "redis")]
        if let Some(status) = self.fleet_status() {
            return status.state == crate::fleet::FleetState::FailingOpen;
        }
        false
    }

    /// The fleet budget's options; `None` for a local budget.
    #[cfg(feature = "redis")]
    pub fn fleet_options(&self) -> Option<&crate::fleet::FleetOptions> {
        self.fleet.as_ref().map(crate::fleet::FleetLink::options)
    }

    /// The fleet link's state and counters; `None` for a local budget.
    #[cfg(feature = "redis")]
    pub fn fleet_status(&self) -> Option<crate::fleet::FleetStatus> {
        self.fleet.as_ref().map(crate::fleet::FleetLink::status)
    }

    /// Records one call (a first attempt) at `now`.
    pub fn deposit(&self, now: Instant) {
        self.counts.add(now, CALLS, 1);
        #[cfg(feature = "redis")]
        if let Some(fleet) = &self.fleet {
            fleet.record_call();
        }
    }

    /// Takes one retry at `now`; `false` when the budget is empty. An
    /// adaptive budget always allows one.
    ///
    /// ```
    /// let b = retrykit_core::RetryBudget::builder().min_per_sec(1.0).ratio(0.0)
    ///     .window(std::time::Duration::from_secs(1)).build().unwrap();
    /// let now = std::time::Instant::now();
    /// assert!(b.try_withdraw(now));
    /// assert!(!b.try_withdraw(now));
    /// ```
    pub fn try_withdraw(&self, now: Instant) -> bool {
        if self.limiter.is_some() {
            return true;
        }
        if let Some(throttling) = &self.throttling {
            return throttling.allows();
        }
        #[cfg(feature = "redis")]
        if let Some(granted) = self
            .fleet
            .as_ref()
            .and_then(crate::fleet::FleetLink::try_take)
        {
            // Counted locally too, for when Redis stops answering.
            if granted {
                self.counts.add(now, RETRIES, 1);
            }
            return granted;
        }
        let floor = self.min_per_sec * self.window.as_secs_f64();
        self.counts.try_take(now, RETRIES, |(calls, retries)| {
            (retries as f64) + 1.0 <= self.ratio * calls as f64 + floor
        })
    }

    /// Calls and retries counted in the window ending at `now`.
    ///
    /// ```
    /// let b = retrykit_core::RetryBudget::builder().build().unwrap();
    /// let now = std::time::Instant::now();
    /// b.deposit(now);
    /// assert_eq!(b.totals(now), (1, 0));
    /// ```
    pub fn totals(&self, now: Instant) -> (u64, u64) {
        self.counts.totals(now)
    }
}

#[cfg(test)]
mod tests;
