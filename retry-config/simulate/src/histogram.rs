//! Calls per tick, kept in a bounded number of bins.
//!
//! A run over a long outage with a 1 ms tick can cover millions of ticks;
//! keeping one counter per tick would make memory grow with time rather than
//! with clients. So the histogram starts at one tick per bin and, whenever a
//! tick falls past the last bin, merges neighbouring bins pairwise and doubles
//! the bin width. Each bin keeps both the sum and the busiest single tick, so
//! the peak survives any amount of merging.

/// Calls per tick over a whole run, in at most [`max_bins`](Self::max_bins) bins.
///
/// ```
/// use retrykit_sim::ArrivalHistogram;
/// let mut h = ArrivalHistogram::new(4);
/// for tick in 0..10 {
///     h.record(tick, tick);
/// }
/// assert!(h.bins().count() <= 4);
/// assert_eq!(h.bin_ticks(), 4);
/// assert_eq!(h.total(), 45);
/// assert_eq!(h.peak(), 9);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrivalHistogram {
    bin_ticks: u64,
    max_bins: usize,
    ticks: u64,
    sums: Vec<u64>,
    peaks: Vec<u64>,
}

/// One bin of an [`ArrivalHistogram`].
///
/// ```
/// use retrykit_sim::ArrivalHistogram;
/// let mut h = ArrivalHistogram::new(8);
/// h.record(2, 5);
/// let bin = h.bins().nth(2).unwrap();
/// assert_eq!((bin.first_tick, bin.ticks, bin.calls, bin.peak), (2, 1, 5, 5));
/// assert_eq!(bin.mean(), 5.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    /// The first tick the bin covers.
    pub first_tick: u64,
    /// How many ticks it covers (the last bin may be shorter than the others).
    pub ticks: u64,
    /// Calls that arrived in those ticks.
    pub calls: u64,
    /// Calls in the busiest single tick among them.
    pub peak: u64,
}

impl Bin {
    /// Mean calls per tick over the bin.
    ///
    /// ```
    /// let bin = retrykit_sim::Bin { first_tick: 0, ticks: 4, calls: 10, peak: 7 };
    /// assert_eq!(bin.mean(), 2.5);
    /// ```
    pub fn mean(&self) -> f64 {
        self.calls as f64 / self.ticks.max(1) as f64
    }
}

impl ArrivalHistogram {
    /// The bin limit used by the simulator: fine enough for a plot, small
    /// enough to be a few kilobytes whatever the run's length.
    pub const DEFAULT_MAX_BINS: usize = 2048;

    /// An empty histogram of at most `max_bins` bins (at least 2).
    ///
    /// ```
    /// let h = retrykit_sim::ArrivalHistogram::new(0);
    /// assert_eq!(h.max_bins(), 2);
    /// ```
    pub fn new(max_bins: usize) -> Self {
        ArrivalHistogram {
            bin_ticks: 1,
            max_bins: max_bins.max(2),
            ticks: 0,
            sums: Vec::new(),
            peaks: Vec::new(),
        }
    }

    /// Adds `calls` arrivals at `tick`. Each tick should be recorded once;
    /// recording it again adds to its bin's sum but counts as a separate tick
    /// for the peak.
    ///
    /// ```
    /// let mut h = retrykit_sim::ArrivalHistogram::new(16);
    /// h.record(3, 2);
    /// assert_eq!(h.ticks(), 4);
    /// ```
    pub fn record(&mut self, tick: u64, calls: u64) {
        while tick / self.bin_ticks >= self.max_bins as u64 {
            self.halve();
        }
        let index = (tick / self.bin_ticks) as usize; // < max_bins, so it fits
        if index >= self.sums.len() {
            self.sums.resize(index + 1, 0);
            self.peaks.resize(index + 1, 0);
        }
        self.sums[index] = self.sums[index].saturating_add(calls);
        self.peaks[index] = self.peaks[index].max(calls);
        self.ticks = self.ticks.max(tick.saturating_add(1));
    }

    /// Merges neighbouring bins pairwise and doubles the bin width.
    fn halve(&mut self) {
        let merge = |v: &mut Vec<u64>, f: fn(u64, u64) -> u64| {
            *v = v.chunks(2).map(|c| c.iter().copied().fold(0, f)).collect();
        };
        merge(&mut self.sums, u64::saturating_add);
        merge(&mut self.peaks, u64::max);
        self.bin_ticks = self.bin_ticks.saturating_mul(2);
    }

    /// Ticks per bin (a power of two).
    ///
    /// ```
    /// assert_eq!(retrykit_sim::ArrivalHistogram::new(8).bin_ticks(), 1);
    /// ```
    pub const fn bin_ticks(&self) -> u64 {
        self.bin_ticks
    }

    /// The most bins this histogram will hold.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::ArrivalHistogram::new(8).max_bins(), 8);
    /// ```
    pub const fn max_bins(&self) -> usize {
        self.max_bins
    }

    /// Ticks covered: one past the last tick recorded.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::ArrivalHistogram::new(8).ticks(), 0);
    /// ```
    pub const fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Every call recorded.
    ///
    /// ```
    /// let mut h = retrykit_sim::ArrivalHistogram::new(8);
    /// h.record(0, 3);
    /// h.record(1, 4);
    /// assert_eq!(h.total(), 7);
    /// ```
    pub fn total(&self) -> u64 {
        self.sums.iter().fold(0, |a, &b| a.saturating_add(b))
    }

    /// Calls in the busiest single tick.
    ///
    /// ```
    /// let mut h = retrykit_sim::ArrivalHistogram::new(2);
    /// for tick in 0..100 { h.record(tick, tick % 7); }
    /// assert_eq!(h.peak(), 6);
    /// ```
    pub fn peak(&self) -> u64 {
        self.peaks.iter().copied().max().unwrap_or(0)
    }

    /// The bins from tick 0 to [`ticks`](Self::ticks), empty ones included.
    ///
    /// ```
    /// let mut h = retrykit_sim::ArrivalHistogram::new(8);
    /// h.record(5, 1);
    /// assert_eq!(h.bins().count(), 6);
    /// ```
    pub fn bins(&self) -> impl ExactSizeIterator<Item = Bin> + '_ {
        let width = self.bin_ticks;
        let end = self.ticks;
        self.sums
            .iter()
            .zip(&self.peaks)
            .enumerate()
            .map(move |(i, (&calls, &peak))| {
                let first_tick = (i as u64).saturating_mul(width);
                Bin {
                    first_tick,
                    ticks: width.min(end.saturating_sub(first_tick)).max(1),
                    calls,
                    peak,
                }
            })
    }

    /// The same data in at most `max_bins` bins, for a display narrower than
    /// the stored resolution. Bin width is multiplied by the smallest factor
    /// that fits, so it need not stay a power of two.
    ///
    /// ```
    /// let mut h = retrykit_sim::ArrivalHistogram::new(64);
    /// for tick in 0..60 { h.record(tick, 1); }
    /// let small = h.coarsened(10);
    /// assert_eq!(small.bins().count(), 10);
    /// assert_eq!(small.bin_ticks(), 6);
    /// assert_eq!(small.total(), 60);
    /// ```
    pub fn coarsened(&self, max_bins: usize) -> ArrivalHistogram {
        let max_bins = max_bins.max(2);
        let factor = self.sums.len().div_ceil(max_bins).max(1);
        let fold = |v: &[u64], f: fn(u64, u64) -> u64| -> Vec<u64> {
            v.chunks(factor)
                .map(|c| c.iter().copied().fold(0, f))
                .collect()
        };
        ArrivalHistogram {
            bin_ticks: self.bin_ticks.saturating_mul(factor as u64),
            max_bins,
            ticks: self.ticks,
            sums: fold(&self.sums, u64::saturating_add),
            peaks: fold(&self.peaks, u64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_totals_and_peaks() {
        let mut h = ArrivalHistogram::new(3);
        let mut expected_total = 0;
        for tick in 0..1000 {
            let calls = (tick * 37) % 101;
            expected_total += calls;
            h.record(tick, calls);
        }
        assert!(h.bins().count() <= 3);
        assert_eq!(h.total(), expected_total);
        assert_eq!(h.peak(), 100);
        assert_eq!(h.ticks(), 1000);
        let covered: u64 = h.bins().map(|b| b.ticks).sum();
        assert_eq!(covered, 1000);
    }

    #[test]
    fn a_huge_tick_does_not_loop_or_overflow() {
        let mut h = ArrivalHistogram::new(4);
        h.record(u64::MAX - 1, 1);
        assert_eq!(h.total(), 1);
        assert!(h.bins().count() <= 4);
    }
}
