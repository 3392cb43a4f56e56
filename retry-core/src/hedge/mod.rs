//! Hedged requests: after a while without an answer, send another copy of
//! the attempt and take whichever answers first ("The Tail at Scale"). The
//! rules, gRFC A6's `hedgingPolicy` unless said otherwise, are in
//! docs/policy-file.md (Hedged requests): [`next_hedge`](crate::kernel::next_hedge)
//! applies them, [`is_fatal`](crate::kernel::is_fatal) says which failure
//! ends the call, the [`share`](HedgeSettings::share) caps hedges per call,
//! and a percentile delay follows [`LatencyEstimate`] (the
//! [`floor`](HedgeSettings::floor) until [`HedgeSettings::MIN_SAMPLES`] calls).

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
/// Start from [`HedgeSettings::new`] (settings may be added in minor releases).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct HedgeSettings {
    /// When a hedge follows the attempt before it.
    pub after: HedgeAfter,
    /// The delay of a percentile `after` while the estimate has seen fewer
    /// than [`MIN_SAMPLES`](Self::MIN_SAMPLES) calls (`hedge_floor`).
    pub floor: Duration,
    /// The most hedges per call over a 10 s window (`hedge_share`, above 0
    /// and at most `max_attempts - 1`, which leaves every call its hedges).
    pub share: f64,
}

impl HedgeSettings {
    /// `hedge_floor`'s default: 100 ms.
    pub const DEFAULT_FLOOR: Duration = Duration::from_millis(100);
    /// `hedge_share`'s default: one hedge for ten calls.
    pub const DEFAULT_SHARE: f64 = 0.1;
    /// Calls the estimate must have seen before a percentile replaces the floor.
    pub const MIN_SAMPLES: u64 = 100;
    /// The window the share is counted over.
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

/// A hedging policy's settings, cap on hedges and latency estimate, shared
/// by every clone of the policy.
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
    /// Whether [`fixed_below_median`](Self::fixed_below_median) was warned of.
    said_below_median: std::sync::atomic::AtomicBool,
}

impl Hedging {
    /// The state for `settings`, which the builder checks after.
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
            .expect("a ratio from 0 to 1000 is valid");
        Arc::new(Hedging {
            settings,
            cap,
            estimate: LatencyEstimate::new(),
            said_below_median: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Records a call's latency (its first attempt's start to its end) and,
    /// once, warns of a fixed `hedge_after` below the median seen.
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

    /// The latency estimate a percentile delay follows.
    pub const fn estimate(&self) -> &LatencyEstimate {
        &self.estimate
    }

    /// The delay between hedges now: the fixed one, or the percentile of the
    /// estimate (the floor until it has seen enough calls).
    pub fn delay(&self) -> Duration {
        self.estimate.delay(&self.settings)
    }

    /// A fixed `hedge_after` below the policy's observed median, as
    /// `(hedge_after, median)`: most calls would then send a hedge. `None`
    /// for a percentile, or before the estimate has seen enough calls.
    pub fn fixed_below_median(&self) -> Option<(Duration, Duration)> {
        let HedgeAfter::Fixed(after) = self.settings.after else {
            return None;
        };
        let median = self.estimate.quantile(Percentile::new(500)?)?;
        (after < median).then_some((after, median))
    }

    /// Counts a call in the cap on hedges (the loop does, at its first attempt).
    pub fn count_call(&self, now: Instant) {
        self.cap.deposit(now);
    }

    /// Calls and hedges counted by the cap in the window ending at `now`.
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
