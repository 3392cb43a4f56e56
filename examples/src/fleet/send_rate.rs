//! How fast this machine delivers calls, measured from the run itself, and
//! the send-rate model it gives retrykit-sim.
//!
//! Every client makes its first call at the common start, so during the
//! first wave the machine has more calls to send than it can: the most
//! first calls that reached the server in one tick, over the tick, is how
//! fast it delivers calls when it runs. (Averaged over the whole first
//! wave instead, the rate takes in the milliseconds in which the machine
//! delivered nothing at all, descheduled, and then predicts every later
//! tick as slow as that average: see docs/fleet.md.) Only the first wave is
//! read, so the rate is measured before the retries whose peak the
//! prediction is then compared with, and nothing is fitted to that peak.

use super::server::ServerCounts;
use retrykit_sim::SendRate;
use std::time::Duration;

/// The machine's delivery rate, as the first wave showed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MeasuredRate {
    /// First calls the server counted.
    pub(crate) first_calls: u64,
    /// From the start to the last first call's arrival.
    pub(crate) took: Duration,
    /// First calls in the first wave's busiest tick...
    pub(crate) busiest: u64,
    /// ...and the tick.
    pub(crate) tick: Duration,
    /// Client processes the calls came from.
    pub(crate) processes: u32,
}

impl MeasuredRate {
    /// The rate the first wave of `server` shows in ticks of `tick`, from
    /// `processes` client processes; `None` when no first call arrived.
    pub(crate) fn of(server: &ServerCounts, tick: Duration, processes: u32) -> Option<Self> {
        let busiest = server
            .first_calls
            .iter()
            .copied()
            .max()
            .filter(|&n| n > 0)?;
        let first_calls = server.first_calls.iter().map(|&n| u64::from(n)).sum();
        Some(MeasuredRate {
            first_calls,
            took: Duration::from_nanos(server.first_arrivals_ns.last().copied().unwrap_or(0)),
            busiest: u64::from(busiest),
            tick: tick.max(Duration::from_micros(1)),
            processes: processes.max(1),
        })
    }

    /// Calls per millisecond from the whole machine.
    pub(crate) fn per_ms(&self) -> f64 {
        self.busiest as f64 / (self.tick.as_secs_f64() * 1e3)
    }

    /// The send-rate model: one queue for a fleet in one process; with
    /// several, each process its own queue at its share of the machine's
    /// rate (they share its cores).
    pub(crate) fn model(&self) -> SendRate {
        let per_ms = self.per_ms() / f64::from(self.processes);
        SendRate {
            per_ms: per_ms.clamp(SendRate::MIN_PER_MS, SendRate::MAX_PER_MS),
            processes: self.processes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn counts(first_calls: Vec<u32>, last_ns: u64) -> ServerCounts {
        ServerCounts {
            first_calls,
            first_arrivals_ns: vec![0, last_ns],
            ..Default::default()
        }
    }

    #[test]
    fn the_rate_is_the_first_wave_s_busiest_tick_over_the_tick() {
        // A first wave over 5 ticks of 10 ms, the machine descheduled in
        // the third: its busiest tick shows how fast it sends when it runs.
        let server = counts(vec![500, 2500, 0, 2000, 1000], 48_000_000);
        let rate = MeasuredRate::of(&server, 10 * MS, 1).unwrap();
        assert_eq!((rate.first_calls, rate.busiest), (6000, 2500));
        assert_eq!(rate.took, 48 * MS);
        assert_eq!(rate.per_ms(), 250.0);
        assert_eq!(
            rate.model(),
            SendRate {
                per_ms: 250.0,
                processes: 1
            }
        );
        let shared = MeasuredRate::of(&server, 10 * MS, 5).unwrap().model();
        assert_eq!((shared.per_ms, shared.processes), (50.0, 5));
    }

    #[test]
    fn no_first_call_measures_nothing_and_the_rate_stays_in_bounds() {
        assert_eq!(MeasuredRate::of(&counts(vec![], 0), MS, 1), None);
        assert_eq!(MeasuredRate::of(&counts(vec![0, 0], 0), MS, 1), None);
        let one = MeasuredRate::of(&counts(vec![u32::MAX], 1), Duration::ZERO, 1).unwrap();
        assert!(one.per_ms().is_finite());
        assert!(SendRate::accepts(one.model().per_ms));
    }
}
