//! The comparison, printed: both predictions (the plain model, and the
//! send-rate model with this machine's measured rate) beside the
//! measurement in a table, or as JSON whose `predicted*` and `measured`
//! objects have the same keys; which prediction the verdict uses, and
//! whether the machine kept up with the fleet.

use super::differ::Differences;
use super::keeping_up::KeepingUp;
use super::outcome::Outcome;
use super::send_rate::MeasuredRate;
use retrykit_config::show_duration;
use retrykit_core::Policy;
use serde_json::{Value, json};
use std::fmt::Write;
use std::time::Duration;

/// Everything the report shows.
pub(crate) struct Comparison<'a> {
    /// The flags, as run.
    pub(crate) args: &'a super::FleetArgs,
    /// The policy, as loaded.
    pub(crate) policy: &'a Policy,
    /// Client processes and connections.
    pub(crate) plan: super::Plan,
    /// The simulator's prediction with the plain model: every call made
    /// in the tick it falls due.
    pub(crate) plain: Outcome,
    /// With the send-rate model at this machine's measured rate, when the
    /// run measured one (some first call arrived).
    pub(crate) send_rate: Option<(MeasuredRate, Outcome)>,
    /// The real fleet.
    pub(crate) measured: Outcome,
    /// Where the send-rate model and this run's machine differ.
    pub(crate) differences: Differences,
    /// Whether the machine kept up.
    pub(crate) keeping_up: KeepingUp,
    /// Everything that did not behave as configured.
    pub(crate) warnings: Vec<String>,
}

/// How far measured may lie from the verdict's prediction, as a share of it.
pub(crate) const WITHIN: f64 = 0.2;

/// The measured value's distance from the predicted, as a share of the
/// predicted (`None` when nothing was predicted).
pub(crate) fn diff_share(predicted: f64, measured: f64) -> Option<f64> {
    (predicted != 0.0).then(|| (measured - predicted) / predicted)
}

pub(crate) fn ms(d: Duration) -> f64 {
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
        "first_wave_ticks": o.first_wave_ticks,
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
    /// The prediction the verdict uses: the send-rate model's when the run
    /// measured a rate, else the plain model's; and the model's name.
    pub(crate) fn verdict_model(&self) -> (&Outcome, &'static str) {
        match &self.send_rate {
            Some((_, o)) => (o, "send_rate"),
            None => (&self.plain, "plain"),
        }
    }

    /// The verdict's figures: peak and calls, measured against its model.
    fn verdict(&self) -> (Option<f64>, Option<f64>) {
        let (p, m) = (self.verdict_model().0, &self.measured);
        (
            diff_share(
                p.peak_retries_per_tick as f64,
                m.peak_retries_per_tick as f64,
            ),
            diff_share(p.calls as f64, m.calls as f64),
        )
    }

    /// What the run measured of the machine, and what the verdict uses.
    fn models(&self) -> String {
        let share = |d: Option<f64>| d.map_or("-".to_owned(), |d| format!("{:+.1}%", 100.0 * d));
        let fits = |d: Option<f64>| d.is_some_and(|d| d.abs() <= WITHIN);
        let (peak, calls) = self.verdict();
        let held = if fits(peak) && fits(calls) {
            "both within 20%".to_owned()
        } else {
            let missed: Vec<&str> = [("peak", peak), ("calls", calls)]
                .into_iter()
                .filter(|&(_, d)| !fits(d))
                .map(|(name, _)| name)
                .collect();
            format!("{} not within 20%", missed.join(" and "))
        };
        let rate = match &self.send_rate {
            Some((r, _)) => {
                let model = r.model();
                let queues = if model.processes == 1 {
                    "one queue for the fleet".to_owned()
                } else {
                    format!(
                        "a queue per client process, {:.1} calls per ms each",
                        model.per_ms
                    )
                };
                format!(
                    "send rate: the first {} calls reached the server within {:.1}ms of the start; its busiest {} tick held {} calls, \
                     retries included: this machine sends {:.1} calls per ms ({queues}), which the send-rate model takes\n",
                    r.first_calls,
                    ms(r.took),
                    show_duration(r.tick),
                    r.busiest,
                    r.per_ms()
                )
            }
            None => "send rate: not measured (no first call reached the server), so only the plain model ran\n".to_owned(),
        };
        let which = match self.verdict_model().1 {
            "send_rate" => "the send-rate model",
            _ => "the plain model",
        };
        let mut out = format!(
            "{rate}verdict: {which} (DIFF is measured against it): peak {}, calls {}: {held}\n",
            share(peak),
            share(calls)
        );
        out.push_str(&self.differences.text(self.missed()));
        out
    }

    /// Whether peak or calls is not within 20% of the verdict's prediction.
    pub(crate) fn missed(&self) -> bool {
        let (peak, calls) = self.verdict();
        [peak, calls]
            .iter()
            .any(|d| !d.is_some_and(|d| d.abs() <= WITHIN))
    }

    /// The fleet, the policy and the prediction's model, as run.
    pub(crate) fn header(&self) -> String {
        let a = self.args;
        format!(
            "fleet: {} clients in {} process{}, sharing {} connections to 127.0.0.1{}; the server is down for {}, then serves {} calls per {} tick (seed {})\n\
             policy `{}`: {}\n\
             prediction: retrykit-sim, {}\n",
            a.clients,
            self.plan.processes,
            if self.plan.processes == 1 { "" } else { "es" },
            self.plan.connections,
            a.throttle
                .map(|t| format!(" (throttled to {t} calls per ms per process)"))
                .unwrap_or_default(),
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
        let (plain, m) = (&self.plain, &self.measured);
        let sent = self.send_rate.as_ref().map(|(_, o)| o);
        let verdict = self.verdict_model().0;
        let tick = self.args.tick;
        let mut out = self.header();
        out.push_str(&self.models());
        let _ = writeln!(
            out,
            "\n{:<26}{:>12}{:>12}{:>12}{:>9}",
            "", "PLAIN", "SEND-RATE", "MEASURED", "DIFF"
        );
        let diff = |a: f64, b: f64| {
            diff_share(a, b).map_or(String::new(), |d| format!("{:+.1}%", 100.0 * d))
        };
        // One figure of each outcome: plain, send-rate (or "-"), measured,
        // and DIFF against the verdict's model.
        let mut row = |name: &str, f: &dyn Fn(&Outcome) -> u64| {
            let s = sent.map_or("-".to_owned(), |o| f(o).to_string());
            let _ = writeln!(
                out,
                "{name:<26}{:>12}{s:>12}{:>12}{:>9}",
                f(plain),
                f(m),
                diff(f(verdict) as f64, f(m) as f64)
            );
        };
        row("peak retries per tick", &|o| o.peak_retries_per_tick);
        row("calls", &|o| o.calls);
        row("  first calls", &|o| o.first_calls);
        row("  retries", &|o| o.retries);
        row("succeeded", &|o| o.successes);
        row("gave up", &|o| o.give_ups);
        row("unfinished", &|o| o.unfinished);
        row("busy span (ticks)", &|o| o.shape.busy_span);
        row("  ticks without a retry", &|o| o.shape.quiet_ticks);
        row("  p50 retries per tick", &|o| o.shape.p50_per_tick);
        row("  p99 retries per tick", &|o| o.shape.p99_per_tick);
        let show = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.1}ms", ms(d)));
        let mut time_row = |name: &str, f: &dyn Fn(&Outcome) -> Option<Duration>| {
            let d = match (f(verdict), f(m)) {
                (Some(a), Some(b)) => diff(ms(a), ms(b)),
                _ => String::new(),
            };
            let s = sent.map_or("-".to_owned(), |o| show(f(o)));
            let _ = writeln!(
                out,
                "{name:<26}{:>12}{s:>12}{:>12}{d:>9}",
                show(f(plain)),
                show(f(m))
            );
        };
        let at =
            |o: &Outcome| Some(tick.saturating_mul(o.peak_tick.min(u64::from(u32::MAX)) as u32));
        time_row("peak at", &at);
        time_row("p50 time to success", &|o| o.p50);
        time_row("p99 time to success", &|o| o.p99);
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

    /// The JSON object, as text.
    pub(crate) fn json(&self) -> String {
        serde_json::to_string_pretty(&self.json_value()).unwrap_or_default() + "\n"
    }

    /// The JSON object.
    pub(crate) fn json_value(&self) -> Value {
        let a = self.args;
        let k = &self.keeping_up;
        let (peak, calls) = self.verdict();
        json!({
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
                "throttle_per_ms": a.throttle,
            },
            // The verdict's prediction, then each model's.
            "predicted": outcome_json(self.verdict_model().0, a.tick),
            "predicted_plain": outcome_json(&self.plain, a.tick),
            "predicted_send_rate": self.send_rate.as_ref().map(|(_, o)| outcome_json(o, a.tick)),
            "measured": outcome_json(&self.measured, a.tick),
            "send_rate": self.send_rate.as_ref().map(|(r, _)| json!({
                "first_calls": r.first_calls,
                "first_wave_ms": ms(r.took),
                "busiest_tick_calls": r.busiest,
                "first_wave_calls_per_tick": r.per_tick,
                "per_ms": r.per_ms(),
                "processes": r.model().processes,
                "per_process_per_ms": r.model().per_ms,
            })),
            "differences": self.differences.json(),
            "verdict": {
                "model": self.verdict_model().1,
                "peak_diff": peak,
                "calls_diff": calls,
                "within": WITHIN,
                "peak_within": peak.is_some_and(|d| d.abs() <= WITHIN),
                "calls_within": calls.is_some_and(|d| d.abs() <= WITHIN),
            },
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
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fleet::server::ServerCounts;
    use crate::fleet::{FleetArgs, Plan};
    use clap::Parser;

    pub(crate) fn outcome(retries: &[u64], calls: u64) -> Outcome {
        let mut o = Outcome::from_series(retries, 8);
        o.calls = calls;
        o.first_calls = 10;
        o
    }

    /// A comparison of a 10-client fleet: plain, send-rate (when
    /// `measured_rate`) and measured outcomes with peaks 6, 5 and 5.
    pub(crate) fn comparison_of<'a>(
        args: &'a FleetArgs,
        policy: &'a Policy,
        measured_rate: bool,
    ) -> Comparison<'a> {
        let server = ServerCounts {
            first_calls: vec![4, 6],
            retries: vec![0, 5, 3],
            late: vec![0, 0, 0],
            first_arrivals_ns: (0..10).map(|i| 500_000 * i).collect(),
            ..Default::default()
        };
        let rate = MeasuredRate::of(&server, Duration::from_millis(1), 1).unwrap();
        Comparison {
            args,
            policy,
            plan: Plan {
                processes: 1,
                connections: 4,
            },
            plain: outcome(&[0, 4, 6], 20),
            send_rate: measured_rate.then(|| (rate, outcome(&[0, 5, 4], 19))),
            measured: outcome(&[0, 5, 3], 18),
            differences: Differences::default(),
            keeping_up: KeepingUp::of(&server, &[]),
            warnings: vec!["something did not behave as configured".into()],
        }
    }

    pub(crate) fn fleet_args() -> FleetArgs {
        FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p", "--clients", "10"])
            .unwrap()
    }

    fn row(table: &str, name: &str) -> String {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` row in {table}"))
            .split_whitespace()
            .skip(name.split_whitespace().count())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_table_sets_both_predictions_beside_measurement_with_the_verdict_s_difference() {
        let (args, policy) = (fleet_args(), Policy::default());
        let table = comparison_of(&args, &policy, true).table();
        assert!(table.starts_with("fleet: 10 clients in 1 process, sharing 4 connections"));
        // PLAIN, SEND-RATE, MEASURED, DIFF against the send-rate model.
        assert_eq!(row(&table, "peak retries per tick"), "6 5 5 +0.0%");
        assert_eq!(row(&table, "calls"), "20 19 18 -5.3%");
        assert_eq!(row(&table, "  retries"), "10 9 8 -11.1%");
        assert!(table.contains("modelling the clients' 1ms timer with 25% of its steps merged"));
        assert!(
            table.contains("the first 10 calls reached the server within 4.5ms of the start; its busiest 1ms tick held 11 calls, retries included: this machine sends 11.0 calls per ms"),
            "{table}"
        );
        assert!(
            table.contains("verdict: the send-rate model (DIFF is measured against it): peak +0.0%, calls -5.3%: both within 20%"),
            "{table}"
        );
        assert!(
            table.ends_with("warning: something did not behave as configured\n"),
            "{table}"
        );
    }

    #[test]
    fn without_a_measured_rate_the_verdict_uses_the_plain_model() {
        let (args, policy) = (fleet_args(), Policy::default());
        let c = comparison_of(&args, &policy, false);
        let table = c.table();
        assert_eq!(row(&table, "peak retries per tick"), "6 - 5 -16.7%");
        assert!(table.contains("so only the plain model ran"), "{table}");
        assert!(
            table.contains("verdict: the plain model (DIFF is measured against it): peak -16.7%, calls -10.0%: both within 20%"),
            "{table}"
        );
        let v: Value = serde_json::from_str(&c.json()).unwrap();
        assert_eq!(v["verdict"]["model"], "plain");
        assert_eq!(v["predicted_send_rate"], Value::Null);
        assert_eq!(v["predicted"], v["predicted_plain"]);
    }

    #[test]
    fn the_json_gives_predictions_and_measurement_the_same_keys() {
        let (args, policy) = (fleet_args(), Policy::default());
        let v: Value = serde_json::from_str(&comparison_of(&args, &policy, true).json()).unwrap();
        let keys = |o: &Value| o.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v["predicted"]), keys(&v["measured"]));
        assert_eq!(keys(&v["predicted_plain"]), keys(&v["measured"]));
        assert_eq!(keys(&v["predicted_send_rate"]), keys(&v["measured"]));
        assert_eq!(v["predicted"], v["predicted_send_rate"]);
        assert_eq!(v["predicted_plain"]["peak_retries_per_tick"], 6);
        assert_eq!(v["measured"]["retries"], 8);
        assert_eq!(v["send_rate"]["busiest_tick_calls"], 11);
        assert_eq!(v["send_rate"]["first_wave_calls_per_tick"], json!([4, 11]));
        assert_eq!(v["verdict"]["model"], "send_rate");
        assert_eq!(v["verdict"]["peak_within"], true);
        assert_eq!(v["fleet"]["clients"], 10);
        assert_eq!(v["fleet"]["timer_skipped"], 0.25);
        assert_eq!(
            v["keeping_up"]["kept_up"], false,
            "a first wave over two ticks"
        );
        assert_eq!(v["warnings"][0], "something did not behave as configured");
    }
}
