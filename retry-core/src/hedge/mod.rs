//! Hedged requests: after a while without an answer, send another copy of
//! the attempt and take whichever answers first ("The Tail at Scale", Dean
//! and Barroso, 2013). The rules are gRPC's (gRFC A6, `hedgingPolicy`)
//! unless said otherwise:
//!
//! - Hedges start [`hedge_after`](HedgeSettings::after) apart while no
//!   attempt has finished ([`next_hedge`](crate::kernel::next_hedge)).
//! - A success or a fatal error ends the call; the loop cancels every other
//!   attempt by dropping it. Fatal is what a retry would not follow: a
//!   permanent error, a class outside `retry_on`, a site's predicate saying
//!   no ([`is_fatal`](crate::kernel::is_fatal)); gRPC's `nonFatalStatusCodes` are this framework's
//!   retried classes.
//! - A non-fatal failure lets the other attempts run on, and the next hedge
//!   starts at once (A6: "the next hedged request in line is sent
//!   immediately").
//! - Hedges count against `max_attempts` (the first attempt included, as
//!   A6's `maxAttempts`), the deadline and the policy's retry budgets. A
//!   budget that refuses stops hedging, never the call: the attempts in
//!   flight run on.
//! - Server pushback (`Retry-After`, `grpc-retry-pushback-ms`) stops
//!   further hedges (A6 waits for a non-negative pushback; the issue asks
//!   for a stop, which is also A6's answer to a malformed one).
//! - The share of calls that send hedges is capped
//!   ([`share`](HedgeSettings::share), 10% by default): a window budget of
//!   its own, counting calls and hedges as a retry budget counts calls and
//!   retries. When most calls are slow a hedge only doubles the load on a
//!   struggling service, and the cap holds the extra load to that share.
//!   (A6 shares its retry throttle between retries and hedges; the cap is
//!   on top of it.)
//! - A percentile delay follows [`LatencyEstimate`], the policy's streaming
//!   estimate of its first attempts' latency; until it has seen
//!   [`HedgeSettings::MIN_SAMPLES`] calls, the delay is the stated
//!   [`floor`](HedgeSettings::floor).

mod estimate;

pub use estimate::LatencyEstimate;
pub use retrykit_schema::hedge::Percentile;

use crate::budget::RetryBudget;
use crate::problem::Problems;
use retrykit_schema::keys::Key;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When a hedge follows the attempt before it (`hedge_after`).
///
/// ```
/// use retrykit_core::hedge::{HedgeAfter, Percentile};
/// let after = HedgeAfter::Percentile(Percentile::parse("p95").unwrap());
/// assert_eq!(after.to_string(), "p95");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HedgeAfter {
    /// A fixed delay (gRPC's `hedgingDelay`).
    Fixed(Duration),
    /// A percentile of the policy's observed latency ([`LatencyEstimate`]).
    Percentile(Percentile),
}

impl fmt::Display for HedgeAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeAfter::Fixed(d) => f.write_str(&retrykit_schema::duration::show_duration(*d)),
            HedgeAfter::Percentile(p) => p.fmt(f),
        }
    }
}

/// A policy's hedging settings; the builder checks them
/// ([`PolicyBuilder::hedge`](crate::PolicyBuilder::hedge)).
///
/// # Examples
///
/// ```
/// use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
/// use std::time::Duration;
/// let s = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(20)));
/// assert_eq!((s.floor, s.share), (HedgeSettings::DEFAULT_FLOOR, 0.1));
/// ```
///
/// Settings may be added in minor releases (`#[non_exhaustive]`): start
/// from [`HedgeSettings::new`] and set the fields to change.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct HedgeSettings {
    /// When a hedge follows the attempt before it.
    pub after: HedgeAfter,
    /// The delay of a percentile `after` while the estimate has seen fewer
    /// than [`MIN_SAMPLES`](Self::MIN_SAMPLES) calls (`hedge_floor`).
    pub floor: Duration,
    /// The most hedges sent, per call, over a 10 s window (`hedge_share`,
    /// above 0 and at most `max_attempts - 1`): 0.1 is one hedge for ten
    /// calls; `max_attempts - 1` leaves every call all its hedges, as gRFC
    /// A6 does.
    pub share: f64,
}

impl HedgeSettings {
    /// `hedge_floor`'s default: 100 ms, a delay that hedges only clearly
    /// slow calls while nothing is known of the service.
    pub const DEFAULT_FLOOR: Duration = Duration::from_millis(100);
    /// `hedge_share`'s default: at most one hedge for ten calls, the SRE
    /// book's retry ratio (the issue's example needs about 5% at p95).
    pub const DEFAULT_SHARE: f64 = 0.1;
    /// Calls the estimate must have seen before a percentile replaces the floor.
    pub const MIN_SAMPLES: u64 = 100;
    /// The window the share is counted over (the retry budget's default).
    pub const SHARE_WINDOW: Duration = Duration::from_secs(10);

    /// Hedging `after`, with the default floor and share.
    pub const fn new(after: HedgeAfter) -> Self {
        HedgeSettings {
            after,
            floor: Self::DEFAULT_FLOOR,
            share: Self::DEFAULT_SHARE,
        }
    }

    /// Adds the settings' broken rules to `problems`; `max_attempts` is the
    /// policy's (0 = unlimited).
    pub(crate) fn check(&self, max_attempts: u32, problems: &mut Problems) {
        let after = match self.after {
            HedgeAfter::Fixed(d) => Some(d),
            HedgeAfter::Percentile(_) => None,
        };
        problems.durations([
            (Key::HedgeAfter.name(), after),
            (Key::HedgeFloor.name(), Some(self.floor)),
        ]);
        problems.require(
            after != Some(Duration::ZERO),
            Key::HedgeAfter.name(),
            "must be greater than zero",
            "give hedge_after a positive duration such as \"20ms\", or a percentile such as \"p95\"".to_owned(),
        );
        problems.require(
            !self.floor.is_zero(),
            Key::HedgeFloor.name(),
            "must be greater than zero",
            format!(
                "set hedge_floor to a positive duration such as {}",
                Key::HedgeFloor.example()
            ),
        );
        let most = f64::from(max_attempts.saturating_sub(1).max(1));
        problems.require(
            self.share.is_finite() && self.share > 0.0 && self.share <= most,
            Key::HedgeShare.name(),
            "must be a number above 0 and at most max_attempts - 1 (hedges per call)",
            format!(
                "set hedge_share to hedges per call such as 0.1, or {most} to leave every call its hedges (got {:?})",
                self.share
            ),
        );
        problems.require(
            max_attempts >= 2,
            Key::MaxAttempts.name(),
            "must be at least 2 (and finite) with hedge_after: it counts the hedges, the first attempt included",
            format!("set max_attempts to 2 or more, such as 3 (got {max_attempts}), or remove hedge_after"),
        );
    }
}

/// A hedging policy's shared state: its settings, its cap on hedges and its
/// latency estimate, shared by every clone of the policy.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Policy, hedge::{HedgeAfter, HedgeSettings}};
/// use std::time::{Duration, Instant};
/// let settings = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(20)));
/// let p = Policy::builder().hedge(Some(settings)).build().unwrap();
/// let hedging = p.hedging().unwrap();
/// assert_eq!(hedging.delay(), Duration::from_millis(20));
/// ```
#[derive(Debug)]
pub struct Hedging {
    settings: HedgeSettings,
    cap: RetryBudget,
    estimate: LatencyEstimate,
    /// Whether the lint "fixed hedge_after below the observed median" was said.
    said_below_median: std::sync::atomic::AtomicBool,
}

impl Hedging {
    /// The state for `settings` (valid ones: the builder checked them).
    pub(crate) fn new(settings: HedgeSettings) -> Arc<Hedging> {
        let share = if settings.share.is_finite() {
            settings.share.clamp(0.0, 1000.0)
        } else {
            0.0
        };
        let cap = RetryBudget::builder()
            .ratio(share)
            .min_per_sec(0.0)
            .window(HedgeSettings::SHARE_WINDOW)
            .build()
            .unwrap_or_else(|_| {
                RetryBudget::builder()
                    .min_per_sec(0.0)
                    .build()
                    .expect("defaults with no floor rate are valid")
            });
        Arc::new(Hedging {
            settings,
            cap,
            estimate: LatencyEstimate::new(),
            said_below_median: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Records a call's latency (its first attempt's start to its end) and,
    /// once per policy, warns when a fixed `hedge_after` falls below the
    /// median seen: then most calls send a hedge, doubling the load.
    pub(crate) fn record_call(&self, latency: Duration, policy: Option<&str>) {
        use std::sync::atomic::Ordering;
        self.estimate.record(latency);
        if self.said_below_median.load(Ordering::Relaxed) {
            return;
        }
        if let Some((after, median)) = self.fixed_below_median()
            && !self.said_below_median.swap(true, Ordering::Relaxed)
        {
            let name = policy.unwrap_or("<unnamed>");
            let message = format!(
                "warning: policy `{name}` hedges after a fixed {after:?}, below the median latency seen ({median:?}): most calls send a hedge, doubling the load\n  \
                 fix: set hedge_after to a percentile such as \"p95\", or to a delay above the median"
            );
            say_warning!(message, policy = name);
        }
    }

    /// The settings.
    pub const fn settings(&self) -> &HedgeSettings {
        &self.settings
    }

    /// The latency estimate a percentile delay follows: the loop records
    /// each call's first attempt in it ([`LatencyEstimate::record`]).
    pub const fn estimate(&self) -> &LatencyEstimate {
        &self.estimate
    }

    /// The delay between hedges now: the fixed one, or the percentile of the
    /// estimate (the floor until it has seen enough calls).
    pub fn delay(&self) -> Duration {
        self.estimate.delay(&self.settings)
    }

    /// A fixed `hedge_after` below the policy's observed median, as
    /// `(hedge_after, median)`: most calls would then send a hedge (the
    /// cap refusing most of them), which is almost never meant. `None`
    /// for a percentile, or before the estimate has seen enough calls. The
    /// issue's third lint, which only a running program can check.
    ///
    /// ```
    /// use retrykit_core::{Policy, hedge::{HedgeAfter, HedgeSettings}};
    /// use std::time::Duration;
    /// let after = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(2)));
    /// let p = Policy::builder().hedge(Some(after)).build().unwrap();
    /// let hedging = p.hedging().unwrap();
    /// assert_eq!(hedging.fixed_below_median(), None);
    /// for _ in 0..100 { hedging.estimate().record(Duration::from_millis(5)); }
    /// let (after, median) = hedging.fixed_below_median().unwrap();
    /// assert!(after < median);
    /// ```
    pub fn fixed_below_median(&self) -> Option<(Duration, Duration)> {
        let HedgeAfter::Fixed(after) = self.settings.after else {
            return None;
        };
        let median = self.estimate.quantile(Percentile::new(500)?)?;
        (after < median).then_some((after, median))
    }

    /// Counts a call in the cap on hedges; [`Decider::begin_attempt`](crate::kernel::Decider::begin_attempt)
    /// does it for the call's first attempt.
    pub fn count_call(&self, now: Instant) {
        self.cap.deposit(now);
    }

    /// Calls and hedges counted by the cap in the window ending at `now`.
    ///
    /// ```
    /// use retrykit_core::{Policy, hedge::{HedgeAfter, HedgeSettings}};
    /// use std::time::{Duration, Instant};
    /// let p = Policy::builder().hedge(Some(HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(5))))).build().unwrap();
    /// let now = Instant::now();
    /// for _ in 0..10 { p.hedging().unwrap().count_call(now); }
    /// assert_eq!(p.hedging().unwrap().totals(now), (10, 0));
    /// ```
    pub fn totals(&self, now: Instant) -> (u64, u64) {
        self.cap.totals(now)
    }

    /// Takes one hedge from the cap; `false` when the share is spent.
    pub(crate) fn take(&self, now: Instant) -> bool {
        self.cap.try_withdraw(now)
    }
}

#[cfg(test)]
mod tests;
