//! Policies as validated values: a [`Policy`] is made only by
//! [`PolicyBuilder::build`], which checks every rule.

use crate::backoff::{Backoff, clamp_to_nanos, nanos, round_nanos};
use crate::breaker::CircuitBreaker;
use crate::budget::{Budgets, RetryBudget};
use crate::hedge::{HedgeSettings, Hedging};
use crate::jitter::Jitter;
use crate::rng::Sample;
pub use builder::PolicyBuilder;
pub(crate) use request_rules::RequestRules;
use std::sync::Arc;
use std::time::Duration;

mod builder;
mod request_rules;

/// A validated retry policy. Build one with [`Policy::builder`].
///
/// # Examples
///
/// ```
/// use retrykit_core::{Backoff, Jitter, Policy};
/// use std::time::Duration;
/// let policy = Policy::builder()
///     .backoff(Backoff::Exponential { factor: 2.0 })
///     .base(Duration::from_millis(100))
///     .cap(Duration::from_secs(30))
///     .jitter(Jitter::Full)
///     .max_attempts(8)
///     .build()
///     .unwrap();
/// assert_eq!(policy.envelope(3), Duration::from_millis(800));
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
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
    pub(crate) budgets: Budgets,
    pub(crate) requests: RequestRules,
    /// Shared by the policy's clones.
    pub(crate) hedge: Option<Arc<Hedging>>,
    pub(crate) breaker: Option<Arc<CircuitBreaker>>,
    pub(crate) limit: Option<Arc<crate::limit::ConcurrencyLimit>>,
    /// Faults and latency injected into the policy's attempts (none: no
    /// chaos code runs).
    pub(crate) chaos: Option<Arc<crate::chaos::Chaos>>,
}

impl Default for Policy {
    /// Exponential ×2 from 100 ms to 10 s, full jitter, 3 calls, hints capped at 60 s.
    fn default() -> Self {
        // The defaults pass every rule (`Policy::builder`'s example builds them).
        PolicyBuilder::new().draft
    }
}

impl Policy {
    /// The longest duration any field accepts: 100 years, so that the engine
    /// adds durations without overflow.
    pub const MAX_DURATION: Duration = retrykit_schema::duration::MAX;

    /// The largest growth factor accepted.
    pub const MAX_FACTOR: f64 = 1e6;

    /// A builder with the defaults: exponential ×2, base 100 ms, cap 10 s,
    /// full jitter, 3 calls, no deadline, hints capped at 60 s.
    ///
    /// ```
    /// use retrykit_core::{Jitter, Policy};
    /// use std::time::Duration;
    /// let p = Policy::builder().build().unwrap(); // the defaults pass every rule
    /// assert_eq!((p.backoff().name(), p.base(), p.cap(), p.min_delay()),
    ///     ("exponential", Duration::from_millis(100), Duration::from_secs(10), Duration::ZERO));
    /// assert_eq!((p.jitter(), p.max_attempts(), p.max_retry_after()), (Jitter::Full, Some(3), Some(Duration::from_secs(60))));
    /// assert!(p.name().is_none() && p.deadline().is_none() && p.attempt_timeout().is_none() && p.retry_on().is_none());
    /// assert!(p.budget().is_none() && p.hedge_settings().is_none() && p.breaker().is_none());
    /// assert!(p.limit().is_none() && p.chaos().is_none());
    /// assert!(p.max_replay_body() == 64 * 1024 && p.grpc_retry_on().is_none() && p.retry_methods().is_empty());
    /// ```
    pub const fn builder() -> PolicyBuilder {
        PolicyBuilder::new()
    }

    /// The policy's name, when it came from a registry or config file.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The backoff shape.
    pub const fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The first wait's envelope.
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The longest computed wait (hints are bounded by
    /// [`max_retry_after`](Self::max_retry_after)).
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// The shortest computed wait, applied after jitter.
    pub const fn min_delay(&self) -> Duration {
        self.min_delay
    }

    /// The jitter mode.
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// How many calls are allowed, the first included; `None` is unlimited.
    pub const fn max_attempts(&self) -> Option<u32> {
        if self.max_attempts == 0 {
            None
        } else {
            Some(self.max_attempts)
        }
    }

    /// The budget on the whole call, measured from the start of the first attempt.
    pub const fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// The longest one attempt may run before it is cancelled.
    pub const fn attempt_timeout(&self) -> Option<Duration> {
        self.attempt_timeout
    }

    /// The error classes that may be retried; `None` means every non-permanent error.
    pub fn retry_on(&self) -> Option<&[Box<str>]> {
        self.retry_on.as_deref()
    }

    /// Whether an error of class `class` may be retried under `retry_on`.
    ///
    /// ```
    /// let p = retrykit_core::Policy::builder().retry_on(["throttled"]).build().unwrap();
    /// assert!(p.retries_class("throttled"));
    /// assert!(!p.retries_class("transient"));
    /// ```
    pub fn retries_class(&self, class: &str) -> bool {
        self.retry_on
            .as_deref()
            .is_none_or(|set| set.iter().any(|c| &**c == class))
    }

    /// The ceiling on a server's Retry-After hint; `None` means unbounded.
    pub const fn max_retry_after(&self) -> Option<Duration> {
        self.max_retry_after
    }

    /// The shared retry budget, if any: the first of [`budgets`](Self::budgets).
    pub fn budget(&self) -> Option<&Arc<RetryBudget>> {
        self.budgets.as_slice().first()
    }

    /// Every budget the policy uses, in the order given.
    pub fn budgets(&self) -> &[Arc<RetryBudget>] {
        self.budgets.as_slice()
    }

    /// The hedging settings, when the policy sends hedges (`hedge_after`).
    pub fn hedge_settings(&self) -> Option<HedgeSettings> {
        self.hedge.as_deref().map(|h| *h.settings())
    }

    /// The hedging state, when the policy sends hedges.
    pub fn hedging(&self) -> Option<&Hedging> {
        self.hedge.as_deref()
    }

    /// The circuit breaker every attempt asks before it is sent, if any.
    pub fn breaker(&self) -> Option<&Arc<CircuitBreaker>> {
        self.breaker.as_ref()
    }

    /// The concurrency limit every attempt holds a permit of, if any.
    pub fn limit(&self) -> Option<&Arc<crate::limit::ConcurrencyLimit>> {
        self.limit.as_ref()
    }

    /// The faults and latency injected into the policy's attempts, if any
    /// (docs/chaos.md).
    pub fn chaos(&self) -> Option<&Arc<crate::chaos::Chaos>> {
        self.chaos.as_ref()
    }

    /// The upper end of the wait before retry `n` (0-based): `min(cap,
    /// base·factor^n)` for exponential, never below `min_delay`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let p = retrykit_core::Policy::default();
    /// assert_eq!(p.envelope(u32::MAX), p.cap());
    /// ```
    pub fn envelope(&self, n: u32) -> Duration {
        Duration::from_nanos(self.envelope_ns(n))
    }

    /// [`envelope`](Self::envelope) in nanoseconds.
    fn envelope_ns(&self, n: u32) -> u64 {
        let raw = self.backoff.raw_nanos_at(nanos(self.base) as f64, n);
        clamp_to_nanos(raw, nanos(self.cap)).max(nanos(self.min_delay))
    }

    /// The envelope for a real `n`, for plotting a schedule; a negative or
    /// NaN `n` is read as 0.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let p = retrykit_core::Policy::default();
    /// assert!(p.envelope_at(0.5) > p.envelope(0) && p.envelope_at(0.5) < p.envelope(1));
    /// ```
    pub fn envelope_at(&self, n: f64) -> Duration {
        let n = if n.is_nan() { 0.0 } else { n.max(0.0) };
        let raw = self.backoff.raw_nanos(nanos(self.base) as f64, n);
        Duration::from_nanos(clamp_to_nanos(raw, nanos(self.cap))).max(self.min_delay)
    }

    /// The jittered wait before retry `n` (0 after the first failure), given
    /// the previous wait (decorrelated jitter grows from it) and a uniform
    /// sample `unit` in `[0, 1)`. Always in `[min_delay, cap]`.
    ///
    /// ```
    /// use retrykit_core::{Jitter, Policy};
    /// let p = Policy::builder().jitter(Jitter::Full).build().unwrap();
    /// assert_eq!(p.delay(0, p.base(), 0.0), p.min_delay());
    /// let d = p.delay(4, p.base(), 0.5);
    /// assert!(d >= p.min_delay() && d <= p.cap());
    /// ```
    pub fn delay(&self, n: u32, prev: Duration, unit: f64) -> Duration {
        Duration::from_nanos(self.delay_ns(n, nanos(prev), || Sample::from_unit(unit)))
    }

    /// [`delay`](Self::delay) in nanoseconds, drawing the sample only for a
    /// jitter mode that uses one.
    pub(crate) fn delay_ns(&self, n: u32, prev_ns: u64, sample: impl FnOnce() -> Sample) -> u64 {
        let (base_ns, cap_ns, min_ns) = (nanos(self.base), nanos(self.cap), nanos(self.min_delay));
        // Every wait is under 100 years, so the conversion through `i64` is exact.
        let float = |ns: u64| ns as i64 as f64;
        let jittered = match self.jitter {
            Jitter::None => return self.envelope_ns(n),
            Jitter::Full => return sample().of_ns(self.envelope_ns(n)).max(min_ns),
            Jitter::Decorrelated => {
                let prev = float(prev_ns.max(base_ns));
                Jitter::decorrelated_ns(float(base_ns), float(cap_ns), prev, sample().as_f64())
            }
            mode => mode.spread(float(self.envelope_ns(n)), sample().as_f64()),
        };
        round_nanos(jittered).clamp(min_ns, cap_ns)
    }

    /// A builder holding this policy's settings, to derive a variant.
    pub fn to_builder(&self) -> PolicyBuilder {
        PolicyBuilder::from(self.clone())
    }
}
