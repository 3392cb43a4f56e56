//! How fast this machine delivers calls, measured from the run itself, and
//! the send-rate model it gives retrykit-sim.
//!
//! Every client makes its first call at the common start, so the first
//! wave is as many calls as the machine can deliver back to back: N first
//! calls that reached the server within T of the start make N/T calls per
//! millisecond. Only the first wave is read, so the rate is measured before
//! the retries whose peak the prediction is then compared with, and nothing
//! is fitted to that peak.

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
    /// Client processes the calls came from.
    pub(crate) processes: u32,
}

/// The shortest first wave the rate is taken over: a first wave measured
/// shorter than this (a handful of clients) is taken as this long, which
/// keeps the rate finite.
const SHORTEST: Duration = Duration::from_micros(1);

impl MeasuredRate {
    /// The rate the first wave of `server` shows, from `processes` client
    /// processes; `None` when no first call arrived.
    pub(crate) fn of(server: &ServerCounts, processes: u32) -> Option<Self> {
        let first_calls: u64 = server.first_calls.iter().map(|&n| u64::from(n)).sum();
        let took = server.first_wave_took?;
        (first_calls > 0).then_some(MeasuredRate {
            first_calls,
            took: took.max(SHORTEST),
            processes: processes.max(1),
        })
    }

    /// Calls per millisecond from the whole machine.
    pub(crate) fn per_ms(&self) -> f64 {
        self.first_calls as f64 / (self.took.as_secs_f64() * 1e3)
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

    fn counts(first_calls: Vec<u32>, took: Option<Duration>) -> ServerCounts {
        ServerCounts {
            first_calls,
            first_wave_took: took,
            ..Default::default()
        }
    }

    #[test]
    fn the_rate_is_the_first_wave_over_the_time_it_took() {
        let server = counts(vec![4000, 6000], Some(Duration::from_millis(50)));
        let rate = MeasuredRate::of(&server, 1).unwrap();
        assert_eq!(rate.per_ms(), 200.0);
        assert_eq!(
            rate.model(),
            SendRate {
                per_ms: 200.0,
                processes: 1
            }
        );
        let shared = MeasuredRate::of(&server, 4).unwrap().model();
        assert_eq!((shared.per_ms, shared.processes), (50.0, 4));
    }

    #[test]
    fn no_first_call_measures_nothing_and_an_instant_wave_stays_finite() {
        assert_eq!(MeasuredRate::of(&counts(vec![], None), 1), None);
        assert_eq!(
            MeasuredRate::of(&counts(vec![0], Some(Duration::ZERO)), 1),
            None
        );
        let instant = MeasuredRate::of(&counts(vec![3], Some(Duration::from_nanos(1))), 1).unwrap();
        assert!(instant.per_ms().is_finite());
        assert!(SendRate::accepts(instant.model().per_ms));
    }
}
