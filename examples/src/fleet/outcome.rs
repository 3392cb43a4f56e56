//! What a fleet did to the service, in one shape for the simulator's
//! prediction and for the real fleet's measurement, so that the two are
//! compared key by key.

use super::clients::{ClientOutcome, Finish};
use super::server::ServerCounts;
use retrykit_sim::{ArrivalHistogram, HerdReport};
use std::time::Duration;

/// One fleet's results: predicted or measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// Retry arrivals in the busiest tick.
    pub(crate) peak_retries_per_tick: u64,
    /// That tick.
    pub(crate) peak_tick: u64,
    /// Every call, first calls included.
    pub(crate) calls: u64,
    /// First calls.
    pub(crate) first_calls: u64,
    /// Ticks from tick 0 to the last with a first call.
    pub(crate) first_wave_ticks: u64,
    /// Calls after the first.
    pub(crate) retries: u64,
    /// Clients whose call succeeded.
    pub(crate) successes: u64,
    /// Clients whose policy gave up.
    pub(crate) give_ups: u64,
    /// Clients still retrying at the horizon.
    pub(crate) unfinished: u64,
    /// Median time from the start to success.
    pub(crate) p50: Option<Duration>,
    /// 99th-percentile time from the start to success.
    pub(crate) p99: Option<Duration>,
    /// How retries spread over the ticks, tick by tick.
    pub(crate) shape: TickShape,
    /// Retry arrivals per tick.
    pub(crate) arrivals: ArrivalHistogram,
}

/// How the retries of a run spread over its ticks: what a timer that merges
/// wake-ups changes while leaving totals alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TickShape {
    /// Ticks from the first with a retry to the last, both included.
    pub(crate) busy_span: u64,
    /// Ticks in that span without a retry.
    pub(crate) quiet_ticks: u64,
    /// Median retries per tick over the span.
    pub(crate) p50_per_tick: u64,
    /// 99th-percentile retries per tick over the span.
    pub(crate) p99_per_tick: u64,
}

impl TickShape {
    /// The shape of retries per tick, in tick order.
    pub(crate) fn of(per_tick: impl Iterator<Item = u64>) -> Self {
        let series: Vec<u64> = per_tick.collect();
        let Some(first) = series.iter().position(|&n| n > 0) else {
            return TickShape::default();
        };
        let last = series.iter().rposition(|&n| n > 0).unwrap_or(first);
        let mut span = series[first..=last].to_vec();
        let quiet = span.iter().filter(|&&n| n == 0).count() as u64;
        span.sort_unstable();
        let rank = |q: f64| ((q * span.len() as f64).ceil() as usize).clamp(1, span.len()) - 1;
        TickShape {
            busy_span: span.len() as u64,
            quiet_ticks: quiet,
            p50_per_tick: span[rank(0.5)],
            p99_per_tick: span[rank(0.99)],
        }
    }
}

/// The nearest-rank `q`-quantile (as the simulator computes its percentiles).
fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, last + 1) - 1;
    Some(sorted[rank])
}

impl Outcome {
    /// The outcome of a retry series alone (tick 0 first): calls and
    /// clients are left to the caller. The peak is the busiest tick after
    /// tick 0, as retrykit-sim's `peak_retries` is, so that predicted and
    /// measured peaks count the same ticks.
    pub(crate) fn from_series(retries: &[u64], bins: usize) -> Self {
        let mut arrivals = ArrivalHistogram::new(bins);
        let mut peak = (0, 0);
        for (t, &n) in retries.iter().enumerate() {
            arrivals.record(t as u64, n);
            if t > 0 && n > peak.0 {
                peak = (n, t as u64);
            }
        }
        Outcome {
            peak_retries_per_tick: peak.0,
            peak_tick: peak.1,
            calls: 0,
            first_calls: 0,
            first_wave_ticks: 0,
            retries: retries.iter().sum(),
            successes: 0,
            give_ups: 0,
            unfinished: 0,
            p50: None,
            p99: None,
            shape: TickShape::of(retries.iter().copied()),
            arrivals,
        }
    }

    /// The simulator's prediction.
    pub(crate) fn predicted(report: &HerdReport) -> Self {
        let per_tick = |b: retrykit_sim::Bin| b.calls;
        let exact = report.arrivals.bin_ticks() == 1;
        Outcome {
            peak_retries_per_tick: report.peak_retries,
            peak_tick: report.peak_tick,
            calls: report.calls,
            first_calls: report.first_wave,
            first_wave_ticks: report.first_wave_ticks,
            retries: report.calls - report.first_wave,
            successes: report.successes,
            give_ups: report.give_ups,
            unfinished: report.unfinished,
            p50: report.p50,
            p99: report.p99,
            // Tick by tick when the histogram kept every tick (the fleet
            // asks for enough bins), else the bins' own shape.
            shape: if exact {
                TickShape::of(report.arrivals.bins().map(per_tick))
            } else {
                TickShape::of(report.arrivals.bins().map(|b| b.peak))
            },
            arrivals: report.arrivals.clone(),
        }
    }

    /// The real fleet's measurement: calls as the server counted them,
    /// endings and completion times as the clients saw them.
    pub(crate) fn measured(server: &ServerCounts, clients: &[ClientOutcome], bins: usize) -> Self {
        let retries: Vec<u64> = server.retries.iter().map(|&n| u64::from(n)).collect();
        let mut o = Outcome::from_series(&retries, bins);
        o.first_calls = server.first_calls.iter().map(|&n| u64::from(n)).sum();
        o.first_wave_ticks = server.first_wave_ticks() as u64;
        o.calls = o.first_calls + o.retries;
        let count = |f: Finish| clients.iter().filter(|c| c.finish == f).count() as u64;
        o.successes = count(Finish::Succeeded);
        o.give_ups = count(Finish::GaveUp);
        o.unfinished = count(Finish::Unfinished);
        let mut done: Vec<u64> = clients
            .iter()
            .filter(|c| c.finish == Finish::Succeeded)
            .map(|c| c.after_us)
            .collect();
        done.sort_unstable();
        o.p50 = quantile(&done, 0.5).map(Duration::from_micros);
        o.p99 = quantile(&done, 0.99).map(Duration::from_micros);
        o
    }

    /// Ticks after the first wave that held at least `per_tick` retries
    /// (less one, for a rate's fraction): with a send rate of `per_tick`
    /// calls a tick, the ticks the model's queue kept the machine busy.
    /// Counted only when the histogram keeps every tick.
    pub(crate) fn full_ticks_after_wave(&self, per_tick: f64) -> u64 {
        if self.arrivals.bin_ticks() != 1 {
            return 0;
        }
        let full = (per_tick.floor() - 1.0).max(1.0);
        self.arrivals
            .bins()
            .skip(usize::try_from(self.first_wave_ticks).unwrap_or(usize::MAX))
            .filter(|b| b.calls as f64 >= full)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_gives_its_peak_total_and_quiet_ticks() {
        let o = Outcome::from_series(&[0, 0, 4, 0, 0, 7], 8);
        assert_eq!((o.peak_retries_per_tick, o.peak_tick), (7, 5));
        assert_eq!(o.retries, 11);
        assert_eq!(o.shape.quiet_ticks, 2); // ticks 3 and 4, inside the busy span 2..=5
    }

    #[test]
    fn the_peak_is_after_tick_0_as_the_simulator_counts_it() {
        // Retries in tick 0 (a wait shorter than the tick) count in the
        // total, but the peak, like retrykit-sim's, is the busiest later tick.
        let o = Outcome::from_series(&[9, 4, 2], 8);
        assert_eq!((o.peak_retries_per_tick, o.peak_tick), (4, 1));
        assert_eq!(o.retries, 15);
    }

    #[test]
    fn the_shape_counts_only_the_busy_span() {
        let s = TickShape::of([0, 3, 0, 1, 6, 0].into_iter());
        assert_eq!(
            (s.busy_span, s.quiet_ticks, s.p50_per_tick, s.p99_per_tick),
            (4, 1, 1, 6)
        );
        assert_eq!(TickShape::of([0, 0].into_iter()), TickShape::default());
    }
}
