//! How fast this machine delivers calls, measured from the run itself, and
//! the send-rate model it gives retrykit-sim.
//!
//! Every client makes its first call at the common start, so the first
//! wave is as many calls as the machine can deliver back to back. The
//! server keeps each first call's arrival; the rate is the middle 80% of
//! them over the time they took to arrive, which leaves out how long the
//! machine took to get going (the first 10%) and the stragglers (the last
//! 10%), and needs no tick: N calls over the time they took. Only the first
//! wave is read, so the rate is measured before the retries whose peak the
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
    /// The calls the rate is taken over (the middle 80%, or all of a
    /// first wave of fewer than 10 calls)...
    pub(crate) counted: u64,
    /// ...and the time from the first of them to the last: `counted - 1`
    /// gaps between arrivals.
    pub(crate) over: Duration,
    /// Client processes the calls came from.
    pub(crate) processes: u32,
}

/// The shortest time a rate is taken over: calls that arrived closer
/// together than this are taken as this far apart, which keeps the rate
/// finite.
const SHORTEST: Duration = Duration::from_micros(1);

impl MeasuredRate {
    /// The rate the first wave of `server` shows (its arrivals sorted),
    /// from `processes` client processes; `None` when no first call arrived.
    pub(crate) fn of(server: &ServerCounts, processes: u32) -> Option<Self> {
        let t = &server.first_arrivals_ns;
        let n = t.len();
        let last = *t.last()?;
        let (from, to) = if n >= 10 {
            (n / 10, n - 1 - n / 10)
        } else {
            (0, n - 1)
        };
        Some(MeasuredRate {
            first_calls: n as u64,
            took: Duration::from_nanos(last),
            counted: (to - from + 1) as u64,
            over: Duration::from_nanos(t[to] - t[from]).max(SHORTEST),
            processes: processes.max(1),
        })
    }

    /// Calls per millisecond from the whole machine.
    pub(crate) fn per_ms(&self) -> f64 {
        // A lone call counts as one gap: a rate, if a crude one.
        let gaps = self.counted.saturating_sub(1).max(1);
        gaps as f64 / (self.over.as_secs_f64() * 1e3)
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

    fn counts(first_arrivals_ns: Vec<u64>) -> ServerCounts {
        ServerCounts {
            first_arrivals_ns,
            ..Default::default()
        }
    }

    #[test]
    fn the_rate_is_the_middle_of_the_first_wave_over_the_time_it_took() {
        // 100 calls: a slow start (10 calls in the first 20 ms), then one
        // every 10 µs, and a straggler at 900 ms.
        let mut t: Vec<u64> = (0..10).map(|i| 2_000_000 * i).collect();
        t.extend((0..89).map(|i| 20_000_000 + 10_000 * i));
        t.push(900_000_000);
        let rate = MeasuredRate::of(&counts(t), 1).unwrap();
        // Calls 10 to 89: 80 calls, 79 gaps of 10 µs.
        assert_eq!((rate.counted, rate.over), (80, Duration::from_micros(790)));
        assert_eq!(rate.per_ms(), 100.0);
        assert_eq!(rate.took, Duration::from_millis(900));
        assert_eq!(
            rate.model(),
            SendRate {
                per_ms: 100.0,
                processes: 1
            }
        );
        let t: Vec<u64> = (0..100).map(|i| 10_000 * i).collect();
        let shared = MeasuredRate::of(&counts(t), 4).unwrap().model();
        assert_eq!((shared.per_ms, shared.processes), (25.0, 4));
    }

    #[test]
    fn no_first_call_measures_nothing_and_an_instant_wave_stays_finite() {
        assert_eq!(MeasuredRate::of(&counts(vec![]), 1), None);
        let few = MeasuredRate::of(&counts(vec![0, 1_000_000]), 1).unwrap();
        assert_eq!(few.per_ms(), 1.0);
        let instant = MeasuredRate::of(&counts(vec![0; 50]), 1).unwrap();
        assert!(instant.per_ms().is_finite());
        assert!(SendRate::accepts(instant.model().per_ms));
    }
}
