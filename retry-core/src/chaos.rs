//! Chaos: faults and latency a policy injects into its own attempts, so a
//! team can see its retries, budgets and breaker at work in staging. What
//! a fault and a delay do, and the error each entry point gives, are in
//! docs/chaos.md; a policy without chaos runs none of this.
//!
//! The `n`-th attempt of a policy gets the `n`-th draws of a SplitMix64
//! stream started at the seed, so a seeded policy repeats its injections
//! for the same sequence of attempts (without a seed, the stream starts
//! from the OS's randomness, once per policy).

use crate::class::Class;
use crate::rng::{Sample, split_mix};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The longest injected delay or Retry-After hint accepted: 10 minutes.
pub const MAX_DELAY: Duration = Duration::from_secs(600);

/// The fault classes chaos can inject, as files write them.
pub const FAULT_CLASSES: &[&str] = retrykit_schema::keys::CHAOS_FAULTS;

/// A policy's chaos: how often its attempts fail on purpose, and with what
/// class; how often they are delayed, and by how much. Shared by a policy's
/// clones (one stream of draws).
///
/// ```
/// use retrykit_core::{Class, chaos::Chaos};
/// use std::time::Duration;
/// let chaos = Chaos::new(Some(7))
///     .fault(0.2, Class::TRANSIENT, None).unwrap()
///     .latency(0.1, Duration::from_millis(300), Duration::from_millis(300)).unwrap();
/// assert_eq!(chaos.fault_rate(), 0.2);
/// assert_eq!(chaos.to_string(), "faults 20% transient, latency 10% 300ms, seed 7");
/// ```
#[derive(Debug)]
pub struct Chaos {
    fault: Option<FaultSpec>,
    latency: Option<LatencySpec>,
    seed: Option<u64>,
    /// Where the draws start: the seed, or the OS's randomness.
    start: u64,
    /// Attempts drawn for so far.
    drawn: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct FaultSpec {
    rate: f64,
    class: Class,
    retry_after: Option<Duration>,
}

#[derive(Debug, Clone, Copy)]
struct LatencySpec {
    rate: f64,
    min: Duration,
    max: Duration,
}

/// A chaos setting out of its bounds: the field and the rule.
///
/// ```
/// let e = retrykit_core::chaos::Chaos::new(None).fault(1.5, retrykit_core::Class::TRANSIENT, None).unwrap_err();
/// assert_eq!(e.to_string(), "chaos.fault_rate: must be between 0 and 1 (got 1.5)");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ChaosError {
    /// The key, as files write it (`chaos.fault_rate`).
    pub field: &'static str,
    /// The rule it broke.
    pub rule: String,
}

impl fmt::Display for ChaosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl std::error::Error for ChaosError {}

/// `Ok` when `ok`, else the error that `field` breaks `rule`.
fn ensure(ok: bool, field: &'static str, rule: impl FnOnce() -> String) -> Result<(), ChaosError> {
    match ok {
        true => Ok(()),
        false => Err(ChaosError {
            field,
            rule: rule(),
        }),
    }
}

fn rate(field: &'static str, rate: f64) -> Result<f64, ChaosError> {
    let rule = || format!("must be between 0 and 1 (got {rate})");
    ensure((0.0..=1.0).contains(&rate), field, rule).map(|()| rate)
}

fn bounded(field: &'static str, d: Duration) -> Result<Duration, ChaosError> {
    ensure(d <= MAX_DELAY, field, || {
        format!("must be at most 10m (got {d:?})")
    })
    .map(|()| d)
}

impl Chaos {
    /// Chaos that injects nothing yet, drawing from `seed` (from the OS's
    /// randomness without one).
    pub fn new(seed: Option<u64>) -> Self {
        let start = seed.unwrap_or_else(crate::rng::os_seed);
        Chaos {
            fault: None,
            latency: None,
            seed,
            start,
            drawn: AtomicU64::new(0),
        }
    }

    /// Fails a share `rate` (0 to 1) of attempts with `class`; a throttled
    /// fault may carry a `retry_after` hint (at most [`MAX_DELAY`]).
    pub fn fault(
        mut self,
        rate: f64,
        class: Class,
        retry_after: Option<Duration>,
    ) -> Result<Self, ChaosError> {
        let rate = self::rate("chaos.fault_rate", rate)?;
        let retry_after = retry_after
            .map(|d| bounded("chaos.retry_after", d))
            .transpose()?;
        ensure(
            retry_after.is_none() || class == Class::THROTTLED,
            "chaos.retry_after",
            || {
                format!(
                    "only a throttled fault carries a Retry-After (the fault is {})",
                    class.name()
                )
            },
        )?;
        self.fault = Some(FaultSpec {
            rate,
            class,
            retry_after,
        });
        Ok(self)
    }

    /// Delays a share `rate` (0 to 1) of attempts by a delay drawn evenly
    /// from `min` to `max` (equal for a fixed delay; at most [`MAX_DELAY`]).
    pub fn latency(mut self, rate: f64, min: Duration, max: Duration) -> Result<Self, ChaosError> {
        let rate = self::rate("chaos.latency_rate", rate)?;
        let min = bounded("chaos.latency", min)?;
        let max = bounded("chaos.latency_max", max)?;
        ensure(max >= min, "chaos.latency_max", || {
            format!("must be at least `latency` ({min:?}), got {max:?}")
        })?;
        self.latency = Some(LatencySpec { rate, min, max });
        Ok(self)
    }

    /// Whether any attempt can be faulted or delayed.
    pub fn active(&self) -> bool {
        self.fault_rate() > 0.0 || self.latency_rate() > 0.0
    }

    /// The share of attempts faulted.
    pub fn fault_rate(&self) -> f64 {
        self.fault.map_or(0.0, |f| f.rate)
    }

    /// The share of attempts delayed.
    pub fn latency_rate(&self) -> f64 {
        self.latency.map_or(0.0, |l| l.rate)
    }

    /// The class of the faults injected (transient unless set).
    pub fn fault_class(&self) -> Class {
        self.fault.map_or(Class::TRANSIENT, |f| f.class)
    }

    /// The seed, if set.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The Retry-After an injected throttled fault carries, if set.
    pub fn retry_after(&self) -> Option<Duration> {
        self.fault.and_then(|f| f.retry_after)
    }

    /// The shortest and longest injected delay (equal for a fixed delay);
    /// zero without latency.
    pub fn latency_range(&self) -> (Duration, Duration) {
        self.latency
            .map_or((Duration::ZERO, Duration::ZERO), |l| (l.min, l.max))
    }

    /// What the next attempt gets: a fault, a delay, both or neither.
    pub(crate) fn draw(&self, attempt: u32) -> Injection {
        let n = self.drawn.fetch_add(1, Ordering::Relaxed);
        let at =
            |k: u64| Sample::from_bits(split_mix(self.start, n.wrapping_mul(3).wrapping_add(k)));
        let fault = self.fault.and_then(|f| {
            (at(0).as_f64() < f.rate).then_some(InjectedFault {
                class: f.class,
                retry_after: f.retry_after,
                attempt,
            })
        });
        let delay = self.latency.and_then(|l| {
            (at(1).as_f64() < l.rate).then(|| {
                let spread = l.max.saturating_sub(l.min);
                let extra = at(2).of_ns(u64::try_from(spread.as_nanos()).unwrap_or(u64::MAX));
                l.min + Duration::from_nanos(extra)
            })
        });
        Injection { fault, delay }
    }
}

impl fmt::Display for Chaos {
    /// `faults 20% transient, latency 10% 300ms, seed 7`; `off` when inactive.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(fault) = self.fault.filter(|f| f.rate > 0.0) {
            let mut part = format!("faults {} {}", percent(fault.rate), fault.class.name());
            if let Some(after) = fault.retry_after {
                part.push_str(&format!(" (Retry-After {after:?})"));
            }
            parts.push(part);
        }
        if let Some(l) = self.latency.filter(|l| l.rate > 0.0) {
            let delay = match l.min == l.max {
                true => format!("{:?}", l.min),
                false => format!("{:?}..{:?}", l.min, l.max),
            };
            parts.push(format!("latency {} {delay}", percent(l.rate)));
        }
        if parts.is_empty() {
            return f.write_str("off");
        }
        if let Some(seed) = self.seed {
            parts.push(format!("seed {seed}"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// A rate as a percentage, without trailing zeros: `20%`, `2.5%`.
fn percent(rate: f64) -> String {
    let p = (rate * 1000.0).round() / 10.0;
    format!("{p}%")
}

/// What one attempt drew.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Injection {
    pub(crate) fault: Option<InjectedFault>,
    pub(crate) delay: Option<Duration>,
}

/// A fault chaos injected in place of an attempt (its closure was not
/// called): what [`Classify::from_chaos`](crate::Classify::from_chaos)
/// turns into the caller's error.
///
/// ```
/// use retrykit_core::{Class, chaos::InjectedFault};
/// let f = InjectedFault::new(Class::THROTTLED, None, 2);
/// assert_eq!(f.to_string(), "chaos: injected throttled fault on attempt 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct InjectedFault {
    /// The class the fault takes.
    pub class: Class,
    /// The hint a throttled fault carries, if its chaos sets one.
    pub retry_after: Option<Duration>,
    /// The attempt it stood for (1 is the first).
    pub attempt: u32,
}

impl InjectedFault {
    /// A fault of `class` on attempt `attempt`, with an optional hint (for
    /// a test of a [`Classify::from_chaos`](crate::Classify::from_chaos)).
    pub const fn new(class: Class, retry_after: Option<Duration>, attempt: u32) -> Self {
        InjectedFault {
            class,
            retry_after,
            attempt,
        }
    }
}

impl fmt::Display for InjectedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "chaos: injected {} fault on attempt {}",
            self.class.name(),
            self.attempt
        )
    }
}

impl std::error::Error for InjectedFault {}

/// The class a fault class's name stands for (one of [`FAULT_CLASSES`]).
///
/// ```
/// use retrykit_core::{Class, chaos::fault_class};
/// assert_eq!(fault_class("throttled"), Some(Class::THROTTLED));
/// assert_eq!(fault_class("flaky"), None);
/// ```
pub fn fault_class(name: &str) -> Option<Class> {
    match name {
        "transient" => Some(Class::TRANSIENT),
        "timeout" => Some(Class::TIMEOUT),
        "throttled" => Some(Class::THROTTLED),
        "permanent" => Some(Class::Permanent),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_draws_and_rates_hold() {
        let make = || {
            Chaos::new(Some(42))
                .fault(0.2, Class::TRANSIENT, None)
                .unwrap()
                .latency(0.5, Duration::from_millis(10), Duration::from_millis(20))
                .unwrap()
        };
        let (a, b) = (make(), make());
        let draws = |c: &Chaos| (0..2000).map(|i| c.draw(i)).collect::<Vec<_>>();
        let (da, db) = (draws(&a), draws(&b));
        assert_eq!(da, db);
        let faults = da.iter().filter(|d| d.fault.is_some()).count();
        let delays: Vec<Duration> = da.iter().filter_map(|d| d.delay).collect();
        assert!((340..460).contains(&faults), "{faults}");
        assert!((900..1100).contains(&delays.len()), "{}", delays.len());
        assert!(delays.iter().all(|d| (10..=20).contains(&d.as_millis())));
        let other = Chaos::new(Some(43))
            .fault(0.2, Class::TRANSIENT, None)
            .unwrap();
        assert_ne!(
            draws(&other),
            draws(
                &Chaos::new(Some(42))
                    .fault(0.2, Class::TRANSIENT, None)
                    .unwrap()
            )
        );
    }

    #[test]
    fn bounds_are_checked() {
        let none = || Chaos::new(None);
        assert!(none().fault(f64::NAN, Class::TRANSIENT, None).is_err());
        let e = none()
            .fault(0.1, Class::TRANSIENT, Some(Duration::from_secs(1)))
            .unwrap_err();
        assert_eq!(e.field, "chaos.retry_after");
        let e = none()
            .latency(0.1, Duration::from_secs(601), Duration::from_secs(601))
            .unwrap_err();
        assert_eq!(e.field, "chaos.latency");
        assert!(none().fault(-0.1, Class::TRANSIENT, None).is_err());
        let ms = Duration::from_millis;
        assert_eq!(
            none().latency(0.5, ms(300), ms(100)).unwrap_err().field,
            "chaos.latency_max"
        );
        let ranged = none().latency(0.5, ms(1), ms(9)).unwrap();
        assert!(ranged.active() && ranged.latency_range() == (ms(1), ms(9)));
        assert!(none().fault(1.0, Class::Permanent, None).unwrap().active());
        assert!(!none().fault(0.0, Class::TRANSIENT, None).unwrap().active());
        assert_eq!(percent(0.025), "2.5%");
        assert_eq!(none().to_string(), "off");
    }
}
