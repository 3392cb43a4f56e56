//! Latencies in 100 µs buckets up to 10 s (longer ones in the last), so a
//! run of any length keeps a fixed amount of memory.

use std::time::Duration;

/// One bucket's width.
const BUCKET: Duration = Duration::from_micros(100);
/// Buckets: 0 to 10 s, and one for everything longer.
const BUCKETS: usize = 100_001;

/// A latency histogram.
#[derive(Debug, Clone)]
pub(crate) struct Latencies {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

impl Latencies {
    /// Counts one latency.
    pub(crate) fn record(&mut self, latency: Duration) {
        let i = (latency.as_micros() / BUCKET.as_micros()).min(BUCKETS as u128 - 1) as usize;
        self.counts[i] += 1;
        self.total += 1;
    }

    /// How many were counted.
    pub(crate) fn count(&self) -> u64 {
        self.total
    }

    /// The latency that `share` (0 to 1) of those counted do not exceed,
    /// to the bucket's upper edge; zero when none were counted.
    pub(crate) fn quantile(&self, share: f64) -> Duration {
        let want = ((self.total as f64) * share.clamp(0.0, 1.0)).ceil() as u64;
        let mut seen = 0;
        for (i, n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= want.max(1) {
                return BUCKET * (i as u32 + 1);
            }
        }
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_upper_edges() {
        let mut l = Latencies::default();
        assert_eq!(l.quantile(0.99), Duration::ZERO);
        for ms in 1..=100 {
            l.record(Duration::from_millis(ms));
        }
        assert_eq!(l.count(), 100);
        assert_eq!(l.quantile(0.5), Duration::from_micros(50_100));
        assert_eq!(l.quantile(0.99), Duration::from_micros(99_100));
        l.record(Duration::from_secs(3600));
        assert_eq!(l.quantile(1.0), Duration::from_micros(10_000_100));
    }
}
