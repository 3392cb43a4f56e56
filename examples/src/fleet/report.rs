//! The comparison, printed: predicted and measured side by side in a table,
//! or as JSON whose `predicted` and `measured` objects have the same keys;
//! and whether the machine kept up with the fleet, measured.

use super::clients::ClientOutcome;
use super::outcome::Outcome;
use super::server::ServerCounts;
use retrykit_config::show_duration;
use retrykit_core::Policy;
use serde_json::{Value, json};
use std::fmt::Write;
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
        let first_wave_ticks = server
            .first_calls
            .iter()
            .rposition(|&n| n > 0)
            .map_or(0, |i| i as u64 + 1);
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

/// Everything the report shows.
pub(crate) struct Comparison<'a> {
    /// The flags, as run.
    pub(crate) args: &'a super::FleetArgs,
    /// The policy, as loaded.
    pub(crate) policy: &'a Policy,
    /// Client processes and connections.
    pub(crate) plan: super::Plan,
    /// The simulator's prediction.
    pub(crate) predicted: Outcome,
    /// The real fleet.
    pub(crate) measured: Outcome,
    /// Whether the machine kept up.
    pub(crate) keeping_up: KeepingUp,
    /// Everything that did not behave as configured.
    pub(crate) warnings: Vec<String>,
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn describe(policy: &Policy) -> String {
    let attempts = policy
        .max_attempts()
        .map_or("unlimited attempts".to_owned(), |n| format!("{n} attempts"));
    let deadline = policy
        .deadline()
        .map(|d| format!(", deadline {}", show_duration(d)))
        .unwrap_or_default();
    format!(
        "{} backoff from {} up to {}, {} jitter, {attempts}{deadline}",
        policy.backoff().name(),
        show_duration(policy.base()),
        show_duration(policy.cap()),
        policy.jitter().name()
    )
}

fn outcome_json(o: &Outcome, tick: Duration) -> Value {
    let (calls, peaks): (Vec<u64>, Vec<u64>) = o.arrivals.bins().map(|b| (b.calls, b.peak)).unzip();
    json!({
        "peak_retries_per_tick": o.peak_retries_per_tick,
        "peak_at_ms": ms(tick) * o.peak_tick as f64,
        "calls": o.calls,
        "first_calls": o.first_calls,
        "retries": o.retries,
        "successes": o.successes,
        "give_ups": o.give_ups,
        "unfinished": o.unfinished,
        "p50_ms": o.p50.map(ms),
        "p99_ms": o.p99.map(ms),
        "busy_span_ticks": o.shape.busy_span,
        "quiet_ticks": o.shape.quiet_ticks,
        "p50_retries_per_tick": o.shape.p50_per_tick,
        "p99_retries_per_tick": o.shape.p99_per_tick,
        "arrivals": { "bin_ticks": o.arrivals.bin_ticks(), "calls": calls, "peak": peaks },
    })
}

impl Comparison<'_> {
    fn header(&self) -> String {
        let a = self.args;
        format!(
            "fleet: {} clients in {} process{}, sharing {} connections to 127.0.0.1; the server is down for {}, then serves {} calls per {} tick (seed {})\n\
             policy `{}`: {}\n\
             prediction: retrykit-sim, {}\n",
            a.clients,
            self.plan.processes,
            if self.plan.processes == 1 { "" } else { "es" },
            self.plan.connections,
            show_duration(a.outage),
            a.capacity,
            show_duration(a.tick),
            a.seed,
            a.policy,
            describe(self.policy),
            if a.timer_resolution.is_zero() {
                "plain tick model (--timer-resolution 0s)".to_owned()
            } else if !super::timer_modelled(a) {
                format!(
                    "plain tick model: the clients' {} timer is finer than the {} tick, so it changes nothing a tick shows",
                    show_duration(a.timer_resolution),
                    show_duration(a.tick)
                )
            } else {
                format!(
                    "modelling the clients' {} timer with {:.0}% of its steps merged into the next (--timer-resolution, --timer-skipped)",
                    show_duration(a.timer_resolution),
                    100.0 * a.timer_skipped
                )
            }
        )
    }

    /// The side-by-side table.
    pub(crate) fn table(&self) -> String {
        let (p, m) = (&self.predicted, &self.measured);
        let tick = self.args.tick;
        let mut out = self.header();
        let _ = writeln!(
            out,
            "\n{:<26}{:>12}{:>12}{:>9}",
            "", "PREDICTED", "MEASURED", "DIFF"
        );
        let diff = |a: f64, b: f64| {
            if a == 0.0 {
                String::new()
            } else {
                format!("{:+.1}%", 100.0 * (b - a) / a)
            }
        };
        let mut row = |name: &str, a: u64, b: u64| {
            let _ = writeln!(
                out,
                "{name:<26}{a:>12}{b:>12}{:>9}",
                diff(a as f64, b as f64)
            );
        };
        row(
            "peak retries per tick",
            p.peak_retries_per_tick,
            m.peak_retries_per_tick,
        );
        row("calls", p.calls, m.calls);
        row("  first calls", p.first_calls, m.first_calls);
        row("  retries", p.retries, m.retries);
        row("succeeded", p.successes, m.successes);
        row("gave up", p.give_ups, m.give_ups);
        row("unfinished", p.unfinished, m.unfinished);
        row("busy span (ticks)", p.shape.busy_span, m.shape.busy_span);
        row(
            "  ticks without a retry",
            p.shape.quiet_ticks,
            m.shape.quiet_ticks,
        );
        row(
            "  p50 retries per tick",
            p.shape.p50_per_tick,
            m.shape.p50_per_tick,
        );
        row(
            "  p99 retries per tick",
            p.shape.p99_per_tick,
            m.shape.p99_per_tick,
        );
        let show = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.1}ms", ms(d)));
        let mut time_row = |name: &str, a: Option<Duration>, b: Option<Duration>| {
            let d = match (a, b) {
                (Some(a), Some(b)) => diff(ms(a), ms(b)),
                _ => String::new(),
            };
            let _ = writeln!(out, "{name:<26}{:>12}{:>12}{d:>9}", show(a), show(b));
        };
        let at =
            |o: &Outcome| Some(tick.saturating_mul(o.peak_tick.min(u64::from(u32::MAX)) as u32));
        time_row("peak at", at(p), at(m));
        time_row("p50 time to success", p.p50, m.p50);
        time_row("p99 time to success", p.p99, m.p99);
        let k = &self.keeping_up;
        let us = |v: Option<u64>| {
            v.map_or("-".to_owned(), |v| {
                format!("≤{}", show_duration(Duration::from_micros(v)))
            })
        };
        let _ = writeln!(
            out,
            "\nkeeping up: the first calls reached the server over {} tick{}; {} of {} calls ({:.2}%) arrived in a later tick than \
             their timer allowed; lateness past due + timer resolution: p50 {}, p99 {}, max {:.1}ms",
            k.first_wave_ticks,
            if k.first_wave_ticks == 1 { "" } else { "s" },
            k.late_calls,
            k.calls,
            100.0 * k.late_calls as f64 / k.calls.max(1) as f64,
            us(k.lateness_p50_us),
            us(k.lateness_p99_us),
            k.lateness_max_us as f64 / 1e3,
        );
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }

    /// The JSON object.
    pub(crate) fn json(&self) -> String {
        let a = self.args;
        let k = &self.keeping_up;
        let value = json!({
            "fleet": {
                "clients": a.clients,
                "processes": self.plan.processes,
                "connections": self.plan.connections,
                "policy": a.policy,
                "outage_ms": ms(a.outage),
                "capacity_per_tick": a.capacity,
                "tick_ms": ms(a.tick),
                "horizon_ms": ms(a.horizon),
                "seed": a.seed,
                "timer_resolution_ms": ms(a.timer_resolution),
                "timer_skipped": a.timer_skipped,
            },
            "predicted": outcome_json(&self.predicted, a.tick),
            "measured": outcome_json(&self.measured, a.tick),
            "keeping_up": {
                "kept_up": k.kept_up(),
                "first_wave_ticks": k.first_wave_ticks,
                "late_calls": k.late_calls,
                "calls": k.calls,
                "lateness_p50_us": k.lateness_p50_us,
                "lateness_p99_us": k.lateness_p99_us,
                "lateness_max_us": k.lateness_max_us,
                "lost_calls": k.lost_calls,
                "uncounted_calls": k.uncounted,
            },
            "warnings": self.warnings,
        });
        serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::clients::Finish;
    use crate::fleet::{FleetArgs, Plan};
    use clap::Parser;

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

    fn comparison_of<'a>(args: &'a FleetArgs, policy: &'a Policy) -> Comparison<'a> {
        let mut predicted = Outcome::from_series(&[0, 4, 6], 8);
        predicted.calls = 20;
        predicted.first_calls = 10;
        let mut measured = Outcome::from_series(&[0, 5, 3], 8);
        measured.calls = 18;
        measured.first_calls = 10;
        let keeping_up = KeepingUp::of(&server(vec![10], vec![0, 5, 3], vec![0, 0, 0]), &[]);
        Comparison {
            args,
            policy,
            plan: Plan {
                processes: 1,
                connections: 4,
            },
            predicted,
            measured,
            keeping_up,
            warnings: vec!["something did not behave as configured".into()],
        }
    }

    fn fleet_args() -> FleetArgs {
        FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p", "--clients", "10"])
            .unwrap()
    }

    #[test]
    fn the_table_sets_prediction_beside_measurement_with_the_difference() {
        let (args, policy) = (fleet_args(), Policy::default());
        let table = comparison_of(&args, &policy).table();
        let row = |name: &str| {
            table
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no `{name}` row in {table}"))
                .split_whitespace()
                .skip(name.split_whitespace().count())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert!(table.starts_with("fleet: 10 clients in 1 process, sharing 4 connections"));
        assert_eq!(row("peak retries per tick"), "6 5 -16.7%");
        assert_eq!(row("calls"), "20 18 -10.0%");
        assert_eq!(row("  retries"), "10 8 -20.0%");
        assert!(table.contains("modelling the clients' 1ms timer with 25% of its steps merged"));
        assert!(
            table.ends_with("warning: something did not behave as configured\n"),
            "{table}"
        );
    }

    #[test]
    fn the_json_gives_prediction_and_measurement_the_same_keys() {
        let (args, policy) = (fleet_args(), Policy::default());
        let v: Value = serde_json::from_str(&comparison_of(&args, &policy).json()).unwrap();
        let keys = |o: &Value| o.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v["predicted"]), keys(&v["measured"]));
        assert_eq!(v["predicted"]["peak_retries_per_tick"], 6);
        assert_eq!(v["measured"]["retries"], 8);
        assert_eq!(v["fleet"]["clients"], 10);
        assert_eq!(v["fleet"]["timer_skipped"], 0.25);
        assert_eq!(v["keeping_up"]["kept_up"], true);
        assert_eq!(v["warnings"][0], "something did not behave as configured");
    }
}
