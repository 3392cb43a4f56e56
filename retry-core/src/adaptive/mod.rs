//! Adaptive client-side rate limiting, the AWS SDKs' "adaptive" retry mode.

mod cubic;

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The smoothing weight of the newest measured sending rate.
const SMOOTHING: f64 = 0.8;
/// The slowest fill rate, in tokens per second.
const MIN_FILL_RATE: f64 = 0.5;
const MIN_CAPACITY: f64 = 1.0;
/// Tokens a first attempt takes.
pub(crate) const FIRST_ATTEMPT_COST: f64 = 1.0;
/// Tokens a retry takes.
pub(crate) const RETRY_COST: f64 = 5.0;
/// Tokens a retry after a throttle takes.
pub(crate) const RETRY_AFTER_THROTTLE_COST: f64 = 2.0 * RETRY_COST;

/// A token bucket shared by the calls of one client, whose fill rate
/// follows the CUBIC curve driven by throttling errors. Until the first
/// throttle it lets everything through; after one, each attempt takes tokens
/// (as smithy-rs charges them: a first attempt 1, a retry 5, a retry after a
/// throttle 10) and an empty bucket says how long to wait for them.
///
/// The measured sending rate is smoothed over half-second buckets (weight
/// 0.8 on the newest); the fill rate stays between 0.5 per second and twice
/// the measured rate. Times count from the limiter's first use. A policy
/// uses one through an adaptive [`RetryBudget`](crate::RetryBudget), which
/// paces every attempt of every call that shares it.
///
/// # Examples
///
/// ```
/// use retrykit_core::AdaptiveLimiter;
/// use std::time::{Duration, Instant};
/// let limiter = AdaptiveLimiter::new();
/// let t0 = Instant::now();
/// assert!(limiter.try_acquire(t0, true).is_ok()); // no throttle yet: no limit
/// limiter.record(t0, true); // throttled: the bucket starts limiting
/// assert!(limiter.is_limiting());
/// let wait = limiter.try_acquire(t0 + Duration::from_millis(10), true).unwrap_err();
/// assert!(wait > Duration::ZERO);
/// assert!(limiter.try_acquire(t0 + Duration::from_secs(1), false).is_err());
/// ```
pub struct AdaptiveLimiter {
    state: Mutex<Bucket>,
    /// Whether a warning about this limiter has been given.
    warned: AtomicBool,
}

impl fmt::Debug for AdaptiveLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.state();
        f.debug_struct("AdaptiveLimiter")
            .field("enabled", &b.enabled)
            .field("fill_rate", &b.fill_rate)
            .field("measured_rate", &b.measured_rate)
            .finish_non_exhaustive()
    }
}

impl Default for AdaptiveLimiter {
    fn default() -> Self {
        AdaptiveLimiter::new()
    }
}

impl AdaptiveLimiter {
    /// A limiter that has seen no throttle (and so limits nothing yet).
    pub fn new() -> AdaptiveLimiter {
        AdaptiveLimiter {
            state: Mutex::new(Bucket::new()),
            warned: AtomicBool::new(false),
        }
    }

    /// Whether a throttle has switched the bucket on.
    pub fn is_limiting(&self) -> bool {
        self.state().enabled
    }

    /// The bucket's fill rate, in tokens per second.
    ///
    /// ```
    /// assert_eq!(retrykit_core::AdaptiveLimiter::new().fill_rate(), 0.5);
    /// ```
    pub fn fill_rate(&self) -> f64 {
        self.state().fill_rate
    }

    /// Takes the tokens for one attempt at `now` (`retry`: a retry, else a
    /// first attempt).
    ///
    /// # Errors
    ///
    /// `Err(wait)`: the bucket lacked the tokens, which are taken anyway (a
    /// debt); the attempt should wait `wait` before it is sent.
    pub fn try_acquire(&self, now: Instant, retry: bool) -> Result<(), Duration> {
        let cost = if retry {
            RETRY_COST
        } else {
            FIRST_ATTEMPT_COST
        };
        match self.acquire_within(now, cost, None) {
            Ok(Duration::ZERO) => Ok(()),
            Ok(wait) | Err(wait) => Err(wait),
        }
    }

    /// Takes `cost` tokens at `now` unless the wait for them would reach
    /// `limit`: `Ok(wait)` (zero when the bucket has them) with the tokens
    /// taken, `Err(wait)` with nothing taken.
    pub(crate) fn acquire_within(
        &self,
        now: Instant,
        cost: f64,
        limit: Option<Duration>,
    ) -> Result<Duration, Duration> {
        let mut bucket = self.state();
        let t = bucket.seconds(now);
        bucket.acquire(t, cost, limit)
    }

    /// Records an attempt's outcome at `now`: `throttled` when the service
    /// said to slow down.
    pub fn record(&self, now: Instant, throttled: bool) {
        let mut bucket = self.state();
        let t = bucket.seconds(now);
        bucket.record(t, throttled);
    }

    /// `true` the first time only: whether to give a warning now.
    pub(crate) fn first_warning(&self) -> bool {
        !self.warned.swap(true, Ordering::Relaxed)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Bucket> {
        // A panic elsewhere cannot leave these floats half-written.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The bucket and the rate measurement; times are seconds since `origin`,
/// the first use.
#[derive(Debug, Clone)]
struct Bucket {
    origin: Option<Instant>,
    enabled: bool,
    fill_rate: f64,
    capacity: f64,
    max_capacity: f64,
    last_refill: Option<f64>,
    measured_rate: f64,
    rate_bucket: f64,
    requests_in_bucket: u64,
    last_max_rate: f64,
    last_throttle: f64,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            origin: None,
            enabled: false,
            fill_rate: MIN_FILL_RATE,
            capacity: 0.0,
            max_capacity: MIN_CAPACITY,
            last_refill: None,
            measured_rate: 0.0,
            rate_bucket: 0.0,
            requests_in_bucket: 0,
            last_max_rate: 0.0,
            last_throttle: 0.0,
        }
    }

    fn seconds(&mut self, now: Instant) -> f64 {
        let origin = *self.origin.get_or_insert(now);
        now.saturating_duration_since(origin).as_secs_f64()
    }

    /// Takes `cost` tokens at `t` and says how long to wait for them,
    /// unless that wait would reach `limit` (then nothing is taken). A
    /// shortfall is a debt the next callers wait for too.
    fn acquire(
        &mut self,
        t: f64,
        cost: f64,
        limit: Option<Duration>,
    ) -> Result<Duration, Duration> {
        if !self.enabled {
            return Ok(Duration::ZERO);
        }
        self.refill(t);
        let short = cost - self.capacity;
        let wait = if short > 0.0 {
            // Finite: the fill rate is at least MIN_FILL_RATE.
            Duration::try_from_secs_f64(short / self.fill_rate).unwrap_or(Duration::MAX)
        } else {
            Duration::ZERO
        };
        if limit.is_some_and(|limit| wait > Duration::ZERO && wait >= limit) {
            return Err(wait);
        }
        self.capacity -= cost;
        Ok(wait)
    }

    fn record(&mut self, t: f64, throttled: bool) {
        self.measure(t);
        let rate = if throttled {
            let before = if self.enabled {
                self.measured_rate.min(self.fill_rate)
            } else {
                self.measured_rate
            };
            self.last_max_rate = before;
            self.last_throttle = t;
            self.enabled = true;
            cubic::after_throttle(before)
        } else {
            cubic::after_success(self.last_max_rate, t - self.last_throttle)
        };
        self.set_fill_rate(t, rate.min(2.0 * self.measured_rate));
    }

    fn refill(&mut self, t: f64) {
        if let Some(last) = self.last_refill {
            let added = (t - last).max(0.0) * self.fill_rate;
            self.capacity = (self.capacity + added).min(self.max_capacity);
        }
        self.last_refill = Some(t);
    }

    fn set_fill_rate(&mut self, t: f64, rate: f64) {
        self.refill(t);
        self.fill_rate = rate.max(MIN_FILL_RATE);
        self.max_capacity = rate.max(MIN_CAPACITY);
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// The smoothed sending rate, over half-second buckets.
    fn measure(&mut self, t: f64) {
        self.requests_in_bucket += 1;
        let bucket = (t * 2.0).floor() / 2.0;
        if bucket > self.rate_bucket {
            let rate = self.requests_in_bucket as f64 / (bucket - self.rate_bucket);
            self.measured_rate = SMOOTHING * rate + (1.0 - SMOOTHING) * self.measured_rate;
            self.requests_in_bucket = 0;
            self.rate_bucket = bucket;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal within float rounding (shared with the CUBIC curve's tests).
    pub(super) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// smithy-rs's `test_client_sending_rates`: one attempt every 200 ms from
    /// t = 0.2 s, throttled at 2.0 and 3.2 s; after each, the measured
    /// sending rate and the fill rate.
    #[test]
    fn sending_rates_follow_smithy_rs_vectors() {
        let mut b = Bucket::new();
        let steps: [(bool, f64, f64); 17] = [
            (false, 0.0, 0.5),
            (false, 0.0, 0.5),
            (false, 4.800000000000001, 0.5),
            (false, 4.800000000000001, 0.5),
            (false, 4.16, 0.5),
            (false, 4.16, 0.6912),
            (false, 4.16, 1.0975999999999997),
            (false, 5.632000000000001, 1.6384000000000005),
            (false, 5.632000000000001, 2.3328),
            (true, 4.3264, 3.0284799999999996),
            (false, 4.3264, 3.48663917347026),
            (false, 4.3264, 3.821874416040255),
            (false, 5.66528, 4.053385727709987),
            (false, 5.66528, 4.200373108479454),
            (false, 4.333056, 4.282036558348658),
            (true, 4.333056, 2.99742559084406),
            (false, 4.333056, 3.4522263943863463),
        ];
        for (i, (throttled, measured, fill)) in steps.into_iter().enumerate() {
            let t = 0.2 * (i + 1) as f64;
            b.record(t, throttled);
            assert!(
                close(b.measured_rate, measured),
                "t = {t}: measured {}",
                b.measured_rate
            );
            assert!(close(b.fill_rate, fill), "t = {t}: fill {}", b.fill_rate);
        }
    }

    #[test]
    fn an_empty_bucket_says_how_long_to_wait() {
        let mut b = Bucket::new();
        b.record(0.0, true); // fill rate 0.5/s, nothing in the bucket
        assert_eq!(
            b.acquire(0.0, RETRY_COST, None),
            Ok(Duration::from_secs(10))
        );
        // The debt stays: the next attempt waits for it too.
        assert_eq!(
            b.acquire(0.0, FIRST_ATTEMPT_COST, None),
            Ok(Duration::from_secs(12))
        );
    }

    #[test]
    fn a_wait_that_would_reach_the_limit_takes_nothing() {
        let mut b = Bucket::new();
        b.record(0.0, true);
        let limit = Some(Duration::from_secs(10));
        assert_eq!(
            b.acquire(0.0, RETRY_COST, limit),
            Err(Duration::from_secs(10))
        );
        assert_eq!(b.capacity, 0.0);
        assert_eq!(
            b.acquire(0.0, FIRST_ATTEMPT_COST, limit),
            Ok(Duration::from_secs(2))
        );
    }

    #[test]
    fn no_time_or_rate_makes_it_panic_or_wait_forever() {
        let mut b = Bucket::new();
        for t in [0.0, -1.0, f64::MAX, 1e300, 0.5] {
            b.record(t, true);
            let _ = b.acquire(t, RETRY_COST, None);
            assert!(b.fill_rate >= MIN_FILL_RATE);
        }
    }
}
