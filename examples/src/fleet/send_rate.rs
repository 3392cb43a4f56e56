//! How fast this machine delivers calls, measured from the run itself, and
//! the send-rate model it gives retrykit-sim.
//!
//! Every client makes its first call at the common start, so during the
//! first wave the machine has more calls to send than it can: the most
//! calls that reached the server in one tick of the first wave, over the
//! tick, is how fast it delivers calls when it runs. Every call in that
//! tick counts, first calls and the retries that came due while the wave
//! was still going out, since the machine sent both (with full jitter at
//! 10 ms, 80 to 650 of a tick's 1,600 calls were retries). (Averaged over
//! the whole first wave instead, the rate takes in the milliseconds in
//! which the machine delivered nothing at all, descheduled, and then
//! predicts every later tick as slow as that average: see docs/fleet.md.)
//! Only the first wave's ticks are read, before the retry peak the
//! prediction is then compared with, so nothing is fitted to that peak.

use super::server::ServerCounts;
use retrykit_sim::SendRate;
use std::time::Duration;

/// The machine's delivery rate, as the first wave showed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MeasuredRate {
    /// First calls the server counted.
    pub(crate) first_calls: u64,
    /// From the start to the last first call's arrival.
    pub(crate) took: Duration,
    /// Calls (first calls and retries) in the first wave's busiest tick...
    pub(crate) busiest: u64,
    /// ...and the tick.
    pub(crate) tick: Duration,
    /// Client processes the calls came from.
    pub(crate) processes: u32,
    /// Calls per tick of the first wave, at most [`SHOWN_TICKS`] of them.
    pub(crate) per_tick: Vec<u64>,
}

/// The most first-wave ticks a report lists.
pub(crate) const SHOWN_TICKS: usize = 1000;

impl MeasuredRate {
    /// The rate the first wave of `server` shows in ticks of `tick`, from
    /// `processes` client processes; `None` when no first call arrived.
    pub(crate) fn of(server: &ServerCounts, tick: Duration, processes: u32) -> Option<Self> {
        // The first wave: up to the last tick a first call reached.
        let wave = Some(server.first_wave_ticks()).filter(|&w| w > 0)?;
        let retries = server.retries.iter().copied().chain(std::iter::repeat(0));
        let per_tick: Vec<u64> = server.first_calls[..wave]
            .iter()
            .zip(retries)
            .map(|(&first, retries)| u64::from(first) + u64::from(retries))
            .collect();
        Some(MeasuredRate {
            first_calls: server.first_calls.iter().map(|&n| u64::from(n)).sum(),
            took: Duration::from_nanos(server.first_arrivals_ns.last().copied().unwrap_or(0)),
            busiest: per_tick.iter().copied().max().unwrap_or(0),
            tick: tick.max(Duration::from_micros(1)),
            processes: processes.max(1),
            per_tick: per_tick.into_iter().take(SHOWN_TICKS).collect(),
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
        assert_eq!(rate.per_tick, [500, 2500, 0, 2000, 1000]);
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
    fn retries_sent_during_the_first_wave_count_and_later_ones_do_not() {
        // Retries fell due while the wave was going out: the machine sent
        // 1500 + 400 in the second tick. The retry wave after it (5000 in
        // the sixth tick) is what the prediction is compared with, unread.
        let server = ServerCounts {
            retries: vec![0, 400, 300, 0, 0, 5000],
            ..counts(vec![1000, 1500, 600], 25_000_000)
        };
        let rate = MeasuredRate::of(&server, 10 * MS, 1).unwrap();
        assert_eq!(rate.per_tick, [1000, 1900, 900]);
        assert_eq!((rate.first_calls, rate.busiest), (3100, 1900));
        assert_eq!(rate.per_ms(), 190.0);
    }

    #[test]
    fn a_first_wave_longer_than_a_report_lists_still_measures_all_of_it() {
        let mut first = vec![1; SHOWN_TICKS + 10];
        first[SHOWN_TICKS + 5] = 7;
        let rate = MeasuredRate::of(&counts(first, 1), MS, 1).unwrap();
        assert_eq!(rate.per_tick.len(), SHOWN_TICKS);
        assert_eq!(rate.busiest, 7);
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
