//! The per-policy latency estimate behind a percentile `hedge_after`: two
//! DDSketches (1% relative error, at most 2048 bins each) behind one mutex.
//! Every [`WINDOW`] records the current sketch becomes the previous one, so
//! the estimate covers the last `WINDOW` to `2 × WINDOW` records. A
//! percentile is read from both merged, and cached for [`REFRESH`] records.

use super::{HedgeAfter, HedgeSettings};
use sketches_ddsketch::{Config, DDSketch};
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Records per sketch before the rotation.
pub(crate) const WINDOW: u64 = 1000;
/// Records after which a cached percentile is read again.
pub(crate) const REFRESH: u64 = 32;

/// A sketch of nanoseconds (at least 1).
fn sketch() -> DDSketch {
    DDSketch::new(Config::new(0.01, 2048, 1.0))
}

/// A streaming, recent-weighted latency quantile estimate, shared by every
/// task using the policy (`Send + Sync`).
///
/// ```
/// use retrykit_core::hedge::{HedgeAfter, HedgeSettings, LatencyEstimate, Percentile};
/// use std::time::Duration;
/// let estimate = LatencyEstimate::new();
/// let p90 = HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse("p90").unwrap()));
/// assert_eq!(estimate.delay(&p90), p90.floor); // nothing seen yet
/// for ms in 1..=100 { estimate.record(Duration::from_millis(ms)); }
/// let d = estimate.delay(&p90).as_secs_f64();
/// assert!((0.089..0.092).contains(&d), "{d}"); // 90 ms, within 1%
/// ```
pub struct LatencyEstimate {
    inner: Mutex<Inner>,
}

struct Inner {
    current: DDSketch,
    previous: Option<DDSketch>,
    /// Records since the start, saturating.
    seen: u64,
    /// The last percentile read: its tenths, its value, and `seen` then.
    cached: Option<(u16, Duration, u64)>,
}

impl fmt::Debug for LatencyEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyEstimate")
            .field("seen", &self.seen())
            .finish()
    }
}

impl Default for LatencyEstimate {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyEstimate {
    /// An estimate that has seen nothing.
    pub fn new() -> Self {
        LatencyEstimate {
            inner: Mutex::new(Inner {
                current: sketch(),
                previous: None,
                seen: 0,
                cached: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while locked leaves at worst one record half made.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one latency (rounded to whole nanoseconds, at least 1).
    pub fn record(&self, latency: Duration) {
        let ns = latency.as_nanos().max(1) as f64;
        let mut inner = self.lock();
        inner.current.add(ns);
        inner.seen = inner.seen.saturating_add(1);
        if inner.current.count() as u64 >= WINDOW {
            let full = std::mem::replace(&mut inner.current, sketch());
            inner.previous = Some(full);
        }
    }

    /// Latencies recorded so far (saturating).
    pub fn seen(&self) -> u64 {
        self.lock().seen
    }

    /// The hedge delay for `settings`: a fixed `after` as it is; a
    /// percentile of the recent latencies once [`HedgeSettings::MIN_SAMPLES`]
    /// have been seen, the floor before.
    pub fn delay(&self, settings: &HedgeSettings) -> Duration {
        let percentile = match settings.after {
            HedgeAfter::Fixed(d) => return d,
            HedgeAfter::Percentile(p) => p,
        };
        let mut inner = self.lock();
        if inner.seen < HedgeSettings::MIN_SAMPLES {
            return settings.floor;
        }
        let tenths = percentile.tenths();
        if let Some((t, value, at)) = inner.cached
            && t == tenths
            && inner.seen.saturating_sub(at) < REFRESH
        {
            return value;
        }
        let value = inner.read(percentile.quantile()).unwrap_or(settings.floor);
        inner.cached = Some((tenths, value, inner.seen));
        value
    }

    /// The `percentile` of the recent latencies, once
    /// [`HedgeSettings::MIN_SAMPLES`] have been seen (read afresh, not cached).
    pub fn quantile(&self, percentile: super::Percentile) -> Option<Duration> {
        let inner = self.lock();
        if inner.seen < HedgeSettings::MIN_SAMPLES {
            return None;
        }
        inner.read(percentile.quantile())
    }
}

impl Inner {
    /// The quantile `q` of the recent latencies, when any is recorded.
    fn read(&self, q: f64) -> Option<Duration> {
        let value = match &self.previous {
            Some(previous) => {
                let mut both = previous.clone();
                both.merge(&self.current).ok()?;
                both.quantile(q).ok()??
            }
            None => self.current.quantile(q).ok()??,
        };
        // A recorded value within 1%; the clamp keeps nonsense in `Duration`.
        let ns = if value.is_finite() {
            value.clamp(1.0, 1e18)
        } else {
            1.0
        };
        Some(Duration::from_nanos(ns as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hedge::Percentile;

    fn percentile(text: &str) -> HedgeSettings {
        HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse(text).unwrap()))
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    #[test]
    fn the_floor_holds_until_min_samples_are_seen() {
        let e = LatencyEstimate::new();
        let p95 = percentile("p95");
        for _ in 0..HedgeSettings::MIN_SAMPLES - 1 {
            e.record(Duration::from_millis(5));
        }
        assert_eq!(e.delay(&p95), p95.floor);
        assert_eq!(e.quantile(Percentile::new(950).unwrap()), None);
        e.record(Duration::from_millis(5));
        assert!((ms(e.delay(&p95)) - 5.0).abs() < 0.1);
        let quantile = e.quantile(Percentile::new(950).unwrap()).unwrap();
        assert!((ms(quantile) - 5.0).abs() < 0.1);
        let fixed = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(7)));
        assert_eq!(
            e.delay(&fixed),
            Duration::from_millis(7),
            "a fixed delay is as set"
        );
    }

    #[test]
    fn p95_of_a_one_percent_tail_is_the_fast_latency() {
        let e = LatencyEstimate::new();
        // 1 slow call in 100, 3 to 7 ms otherwise, in a fixed order.
        for i in 0..2000u64 {
            let latency = if i % 100 == 7 { 1000 } else { 3 + i % 5 };
            e.record(Duration::from_millis(latency));
        }
        let d = ms(e.delay(&percentile("p95")));
        assert!((6.9..7.1).contains(&d), "{d}");
        let d = ms(e.delay(&percentile("p99.9")));
        assert!((990.0..1010.0).contains(&d), "{d}");
    }

    #[test]
    fn a_brown_out_moves_the_delay_within_two_windows() {
        let e = LatencyEstimate::new();
        let p95 = percentile("p95");
        for _ in 0..3 * WINDOW {
            e.record(Duration::from_millis(5));
        }
        assert!((ms(e.delay(&p95)) - 5.0).abs() < 0.1);
        for _ in 0..2 * WINDOW {
            e.record(Duration::from_secs(1));
        }
        assert!((ms(e.delay(&p95)) - 1000.0).abs() < 10.0);
    }

    #[test]
    fn a_cached_value_is_read_again_after_refresh_records() {
        let e = LatencyEstimate::new();
        let p50 = percentile("p50");
        for _ in 0..WINDOW {
            e.record(Duration::from_millis(5));
        }
        let before = e.delay(&p50);
        for _ in 0..WINDOW + REFRESH {
            e.record(Duration::from_millis(50));
        }
        assert!(e.delay(&p50) > before * 5);
    }

    #[test]
    fn extreme_values_stay_bounded() {
        let e = LatencyEstimate::new();
        for _ in 0..200 {
            e.record(Duration::ZERO);
            e.record(Duration::MAX);
        }
        let d = e.delay(&percentile("p99.9"));
        assert!(d <= Duration::from_secs(1_000_000_000));
    }

    #[test]
    fn the_estimate_is_shared_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<LatencyEstimate>();
        let e = std::sync::Arc::new(LatencyEstimate::new());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let e = e.clone();
                std::thread::spawn(move || {
                    (0..500).for_each(|_| e.record(Duration::from_millis(2)))
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(e.seen(), 2000);
    }
}
