//! `--breaker`'s report: each scope's run, measured beside predicted, as a
//! table or as JSON whose `predicted` and `measured` objects have the same
//! keys, and a verdict on the calls during the outage (issue 29's target:
//! within 20%).

use super::breakers::{Figures, ScopeRun};
use super::options::{FleetArgs, Plan};
use super::report::{WITHIN, diff_share, ms};
use retrykit_config::show_duration;
use retrykit_core::Policy;
use serde_json::{Value, json};
use std::fmt::Write;

/// Everything `--breaker` shows.
pub(crate) struct BreakerComparison<'a> {
    pub(crate) args: &'a FleetArgs,
    pub(crate) policy: &'a Policy,
    pub(crate) plan: Plan,
    pub(crate) runs: Vec<ScopeRun>,
    pub(crate) warnings: Vec<String>,
}

fn figures_json(f: &Figures) -> Value {
    json!({
        "outage_calls": f.outage_calls,
        "peak_after_outage": f.peak_after,
        "drain_ms": f.drain.map(ms),
        "first_calls": f.first_calls,
        "calls": f.calls,
        "successes": f.successes,
        "give_ups": f.give_ups,
    })
}

fn show_diff(d: Option<f64>) -> String {
    d.map_or("-".to_owned(), |d| format!("{:+.1}%", 100.0 * d))
}

impl ScopeRun {
    fn outage_diff(&self) -> Option<f64> {
        diff_share(
            self.predicted.outage_calls as f64,
            self.measured.outage_calls as f64,
        )
    }

    fn drain_diff(&self) -> Option<f64> {
        let (p, m) = (self.predicted.drain?, self.measured.drain?);
        diff_share(p.as_secs_f64(), m.as_secs_f64())
    }

    fn within(&self) -> bool {
        self.outage_diff().is_some_and(|d| d.abs() <= WITHIN)
    }
}

impl BreakerComparison<'_> {
    fn header(&self) -> String {
        let a = self.args;
        let p = self.plan.processes;
        let breaker = self.policy.breaker().map_or_else(
            || "no circuit breaker".to_owned(),
            |b| {
                format!(
                    "breaker `{}`: opens at {}% of at least {} attempts in {}, for {} (up to {}, less up to {:.0}% at random), {} probe(s)",
                    b.name().unwrap_or("-"),
                    100.0 * b.failure_ratio(),
                    b.min_calls(),
                    show_duration(b.window()),
                    show_duration(b.open_for()),
                    show_duration(b.max_open_for()),
                    100.0 * b.open_jitter(),
                    b.probes()
                )
            },
        );
        format!(
            "fleet --breaker {}: {} clients in {p} process{}; the server is down for {}, then serves {} calls per {} tick (seed {})\n\
             policy `{}`, {breaker}\n\
             prediction: retrykit-sim, local as {p} breaker(s) (one per process, --breaker-processes {p}), fleet as one\n{}",
            a.breaker.map_or("none", |m| m.name()),
            a.clients,
            if p == 1 { "" } else { "es" },
            show_duration(a.outage),
            a.capacity,
            show_duration(a.tick),
            a.seed,
            a.policy,
            if a.repeat > 1 {
                format!(
                    "measured: the median of {} runs per row, figure by figure (each run's figures in the JSON)\n",
                    a.repeat
                )
            } else {
                String::new()
            },
        )
    }

    /// The scopes' runs side by side, measured then predicted.
    pub(crate) fn table(&self) -> String {
        let mut out = self.header();
        let _ = writeln!(
            out,
            "{:<8} {:>13} {:>9} {:>7}  {:>10} {:>9}  {:>8} {:>9} {:>7}  {:>7} {:>9}  KEPT UP",
            "BREAKER",
            "OUTAGE CALLS",
            "PREDICTED",
            "DIFF",
            "PEAK AFTER",
            "PREDICTED",
            "DRAIN",
            "PREDICTED",
            "DIFF",
            "GAVE UP",
            "PREDICTED"
        );
        let drain = |f: &Figures| {
            f.drain
                .map_or("-".to_owned(), |d| format!("{:.2}s", d.as_secs_f64()))
        };
        for r in &self.runs {
            let (p, m) = (&r.predicted, &r.measured);
            let _ = writeln!(
                out,
                "{:<8} {:>13} {:>9} {:>7}  {:>10} {:>9}  {:>8} {:>9} {:>7}  {:>7} {:>9}  {}",
                r.scope.name(),
                m.outage_calls,
                p.outage_calls,
                show_diff(r.outage_diff()),
                m.peak_after,
                p.peak_after,
                drain(m),
                drain(p),
                show_diff(r.drain_diff()),
                m.give_ups,
                p.give_ups,
                if r.kept_up { "yes" } else { "no" }
            );
        }
        let _ = writeln!(out, "verdict: {}", self.verdict());
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }

    fn verdict(&self) -> String {
        let (within, not): (Vec<&ScopeRun>, Vec<&ScopeRun>) =
            self.runs.iter().partition(|r| r.within());
        let names = |rs: &[&ScopeRun]| {
            rs.iter()
                .map(|r| r.scope.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (within.is_empty(), not.is_empty()) {
            (_, true) => "calls during the outage within 20% of the prediction".to_owned(),
            (true, false) => format!(
                "calls during the outage not within 20% of the prediction ({})",
                names(&not)
            ),
            (false, false) => format!(
                "calls during the outage within 20% for {}; not for {}",
                names(&within),
                names(&not)
            ),
        }
    }

    /// The same as one JSON object.
    pub(crate) fn json(&self) -> String {
        let a = self.args;
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                json!({
                    "breaker": r.scope.name(),
                    "predicted": figures_json(&r.predicted),
                    "measured": figures_json(&r.measured),
                    "measured_runs": r.runs.iter().map(figures_json).collect::<Vec<_>>(),
                    "outage_calls_diff": r.outage_diff(),
                    "drain_diff": r.drain_diff(),
                    "outage_calls_within": r.within(),
                    "kept_up": r.kept_up,
                    "store_fallbacks": r.fallbacks,
                })
            })
            .collect();
        let v = json!({
            "fleet": {
                "clients": a.clients,
                "processes": self.plan.processes,
                "connections": self.plan.connections,
                "outage_ms": ms(a.outage),
                "capacity": a.capacity,
                "tick_ms": ms(a.tick),
                "seed": a.seed,
                "policy": a.policy,
                "breaker": a.breaker.map(|m| m.name()),
                "repeat": a.repeat,
            },
            "runs": runs,
            "verdict": {
                "within": WITHIN,
                "outage_calls_within": self.runs.iter().all(ScopeRun::within),
            },
            "warnings": self.warnings,
        });
        let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
        text.push('\n');
        text
    }
}
