//! Whether the machine kept up with the fleet, measured: how many ticks the
//! first wave took to arrive, and how many calls reached a later tick than
//! their timer allowed.

use super::clients::ClientOutcome;
use super::server::ServerCounts;
use retrykit_config::show_duration;
use std::time::Duration;

/// Late calls above this share of all calls mean the machine could not keep up.
const LATE_SHARE: f64 = 0.01;

/// Whether the machine delivered the calls when the clients' timers said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeepingUp {
    /// Ticks over which the first calls, all sent at the common start, arrived.
    pub(crate) first_wave_ticks: u64,
    /// Calls that arrived in a later tick than their timer allowed (due
    /// instant plus the timer's resolution).
    pub(crate) late_calls: u64,
    /// Calls the server counted.
    pub(crate) calls: u64,
    /// Lateness past due plus resolution, µs (power-of-two upper bounds).
    pub(crate) lateness_p50_us: Option<u64>,
    /// The same, 99th percentile.
    pub(crate) lateness_p99_us: Option<u64>,
    /// The largest lateness, µs.
    pub(crate) lateness_max_us: u64,
    /// Calls the clients made that the server never counted (broken connections).
    pub(crate) lost_calls: u64,
    /// Calls after the horizon, before the start or without an attempt number.
    pub(crate) uncounted: u64,
}

impl KeepingUp {
    /// Measures it from the server's counts and the clients' own call counts.
    pub(crate) fn of(server: &ServerCounts, clients: &[ClientOutcome]) -> Self {
        let first_wave_ticks = server.first_wave_ticks() as u64;
        let made: u64 = clients.iter().map(|c| u64::from(c.attempts)).sum();
        let calls = server.calls();
        KeepingUp {
            first_wave_ticks,
            late_calls: server.late.iter().map(|&n| u64::from(n)).sum(),
            calls,
            // The quantiles are power-of-two bucket bounds: never above the
            // largest lateness actually seen.
            lateness_p50_us: server
                .lateness_quantile_us(0.5)
                .map(|v| v.min(server.max_lateness_us)),
            lateness_p99_us: server
                .lateness_quantile_us(0.99)
                .map(|v| v.min(server.max_lateness_us)),
            lateness_max_us: server.max_lateness_us,
            lost_calls: made.saturating_sub(calls + server.outside + server.malformed),
            uncounted: server.outside + server.malformed,
        }
    }

    /// Whether calls arrived when their timers said (within 1% of calls)
    /// and the first wave landed in its tick.
    pub(crate) fn kept_up(&self) -> bool {
        self.first_wave_ticks <= 1 && (self.late_calls as f64) <= LATE_SHARE * self.calls as f64
    }

    /// What did not behave as configured, one sentence each.
    pub(crate) fn warnings(&self, tick: Duration) -> Vec<String> {
        let mut w = Vec::new();
        if self.first_wave_ticks > 1 {
            w.push(format!(
                "the machine could not keep up: the first calls, all sent at the start, reached the server over {} ticks ({}), not one",
                self.first_wave_ticks,
                show_duration(tick.saturating_mul(self.first_wave_ticks as u32))
            ));
        }
        if (self.late_calls as f64) > LATE_SHARE * self.calls as f64 {
            w.push(format!(
                "the machine could not keep up: {} of {} calls ({:.1}%) arrived in a later tick than their timer allowed",
                self.late_calls,
                self.calls,
                100.0 * self.late_calls as f64 / self.calls.max(1) as f64
            ));
        }
        if self.lost_calls > 0 {
            w.push(format!(
                "{} calls never reached the server (broken connections); the clients counted them as failed attempts",
                self.lost_calls
            ));
        }
        if self.uncounted > 0 {
            w.push(format!(
                "{} calls arrived outside the counted ticks (after the horizon) or without an attempt number",
                self.uncounted
            ));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::clients::Finish;

    fn server(first_calls: Vec<u32>, retries: Vec<u32>, late: Vec<u32>) -> ServerCounts {
        ServerCounts {
            first_calls,
            retries,
            late,
            ..Default::default()
        }
    }

    #[test]
    fn a_first_wave_over_two_ticks_or_late_calls_mean_the_machine_fell_behind() {
        let k = KeepingUp::of(&server(vec![90, 10], vec![0, 50], vec![0, 30]), &[]);
        assert_eq!((k.first_wave_ticks, k.late_calls, k.calls), (2, 30, 150));
        assert!(!k.kept_up());
        let warnings = k.warnings(Duration::from_millis(10)).join("\n");
        assert!(warnings.contains("over 2 ticks (20ms)"), "{warnings}");
        assert!(warnings.contains("30 of 150 calls (20.0%)"), "{warnings}");
        let on_time = KeepingUp::of(&server(vec![100], vec![50], vec![1]), &[]);
        assert!(on_time.kept_up(), "{on_time:?}");
        assert!(on_time.warnings(Duration::from_millis(10)).is_empty());
    }

    #[test]
    fn lateness_quantiles_never_exceed_the_largest_lateness_seen() {
        let mut counts = server(vec![10], vec![0], vec![3]);
        // Three late calls in the 2^15..2^16 µs bucket, the largest 36.3 ms.
        counts.lateness_buckets = vec![0; 17];
        counts.lateness_buckets[16] = 3;
        counts.max_lateness_us = 36_300;
        let k = KeepingUp::of(&counts, &[]);
        assert_eq!(
            (k.lateness_p50_us, k.lateness_p99_us),
            (Some(36_300), Some(36_300))
        );
    }

    #[test]
    fn calls_the_clients_made_that_the_server_never_saw_are_lost() {
        let client = |attempts| ClientOutcome {
            index: 0,
            finish: Finish::GaveUp,
            after_us: 0,
            attempts,
        };
        let k = KeepingUp::of(&server(vec![2], vec![3], vec![0]), &[client(4), client(3)]);
        assert_eq!(k.lost_calls, 2);
        let warnings = k.warnings(Duration::from_millis(1)).join("\n");
        assert!(
            warnings.contains("2 calls never reached the server"),
            "{warnings}"
        );
    }
}
