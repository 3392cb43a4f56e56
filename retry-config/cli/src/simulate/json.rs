//! The results as JSON, for scripts: durations in milliseconds (`_ms`),
//! counts as integers, and the arrivals histogram as parallel arrays.

use super::{ContentionRun, HerdRun, ms};
use retrykit_sim::StoppedBy;
use serde_json::{Value, json};

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// One object for the scenario, with a `policies` array in the order given.
pub(super) fn herd(run: &HerdRun<'_>) -> String {
    let h = &run.herd;
    let policies: Vec<Value> = run
        .results
        .iter()
        .map(|(named, r)| {
            let (calls, peaks): (Vec<u64>, Vec<u64>) =
                r.arrivals.bins().map(|b| (b.calls, b.peak)).unzip();
            json!({
                "policy": named.name,
                "backoff": named.policy.backoff().name(),
                "jitter": named.policy.jitter().name(),
                "peak_retries_per_tick": r.peak_retries,
                "peak_at_ms": ms(h.tick) * r.peak_tick as f64,
                "calls": r.calls,
                "busy_ticks": r.busy_ticks,
                "ticks": r.ticks,
                "all_done_ms": ms(r.finished_after()),
                "successes": r.successes,
                "give_ups": r.give_ups,
                "unfinished": r.unfinished,
                "stopped_by": r.stopped_by.map(|s| match s {
                    StoppedBy::Horizon => "horizon",
                    StoppedBy::CallLimit => "call_limit",
                }),
                "p50_ms": r.p50.map(ms),
                "p99_ms": r.p99.map(ms),
                "ignored_budget": r.ignored_budget,
                "arrivals": {
                    "bin_ticks": r.arrivals.bin_ticks(),
                    "calls": calls,
                    "peak": peaks,
                },
            })
        })
        .collect();
    let mut value = json!({
        "scenario": "herd",
        "clients": h.clients,
        "outage_ms": ms(h.outage),
        "capacity_per_tick": h.capacity,
        "tick_ms": ms(h.tick),
        "horizon_ms": ms(h.horizon),
        "max_calls": h.max_calls,
        "seed": h.seed,
        // The keys of the fleet's JSON; null when the plain tick model ran.
        "timer_resolution_ms": h.timer.map(|t| ms(t.resolution)),
        "timer_skipped": h.timer.map(|t| t.skipped),
        "first_wave": run.results.first().map_or(0, |(_, r)| r.first_wave),
        "policies": policies,
    });
    // The send-rate model's keys appear only when it ran, so that the plain
    // model's output is exactly what it was before the model existed.
    if let (Some(send), Some(object)) = (h.send, value.as_object_mut()) {
        object.insert("model".into(), json!("send_rate"));
        object.insert("send_rate_per_ms".into(), json!(send.per_ms));
        object.insert("send_processes".into(), json!(send.processes));
        object.insert(
            "first_wave_ticks".into(),
            json!(run.results.first().map_or(0, |(_, r)| r.first_wave_ticks)),
        );
    }
    // Likewise the breakers' comparison, only when a policy has one.
    if let (false, Some(object)) = (run.breakers.is_empty(), value.as_object_mut()) {
        object.insert(
            "breakers".into(),
            super::breaker::json(&run.breakers).into(),
        );
    }
    pretty(&value)
}

/// One object for the scenario; each policy has a run per fleet size.
pub(super) fn contention(run: &ContentionRun<'_>) -> String {
    let s = &run.scenario;
    let policies: Vec<Value> = run
        .results
        .iter()
        .map(|(named, reports)| {
            let runs: Vec<Value> = reports
                .iter()
                .map(|r| {
                    json!({
                        "clients": r.clients,
                        "calls": r.calls(),
                        "reads": r.reads,
                        "writes": r.writes,
                        "conflicts": r.conflicts,
                        "successes": r.successes,
                        "give_ups": r.give_ups,
                        "unfinished": r.unfinished,
                        "all_done_ms": ms(r.finished_after),
                    })
                })
                .collect();
            json!({
                "policy": named.name,
                "backoff": named.policy.backoff().name(),
                "jitter": named.policy.jitter().name(),
                "base_ms": ms(named.policy.base()),
                "cap_ms": ms(named.policy.cap()),
                "runs": runs,
            })
        })
        .collect();
    pretty(&json!({
        "scenario": "contention",
        "latency_ms": ms(s.latency),
        "latency_sd_ms": ms(s.latency_sd),
        "seed": s.seed,
        "policies": policies,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn herd_json_carries_every_figure_and_the_histogram() {
        let policies = fixtures::policies();
        let run = fixtures::herd(&policies);
        let v: Value = serde_json::from_str(&herd(&run)).unwrap();
        assert_eq!(v["scenario"], "herd");
        assert_eq!(v["first_wave"], 2000);
        let full = &v["policies"][1];
        let r = &run.results[1].1;
        assert_eq!(full["policy"], "full");
        assert_eq!(full["calls"], r.calls);
        assert_eq!(full["peak_retries_per_tick"], r.peak_retries);
        let sum: u64 = full["arrivals"]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(sum + r.first_wave, r.calls);
        assert_eq!(v["policies"][0]["peak_retries_per_tick"], 2000);
    }

    #[test]
    fn contention_json_has_a_run_per_fleet_size() {
        let policies = fixtures::policies();
        let run = fixtures::contention(&policies);
        let v: Value = serde_json::from_str(&contention(&run)).unwrap();
        let runs = v["policies"][0]["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1]["clients"], 40);
        assert_eq!(runs[1]["calls"], run.results[0].1[1].calls());
        assert_eq!(v["latency_ms"], 10.0);
    }
}
