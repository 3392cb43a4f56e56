//! The fleet binary, small: 500 real clients on loopback beside the
//! simulator's prediction. Real time by design (it measures a real fleet),
//! a few seconds of it.

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn fleet(args: &[&str]) -> std::process::Output {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
    Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["--config", config])
        .args(args)
        .env_remove("RETRY_PROFILE")
        .output()
        .expect("run the fleet binary")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

/// One run of the small fleet, as JSON.
fn small_fleet() -> Value {
    small_fleet_with(&[])
}

/// The small fleet with `extra` flags, as JSON.
fn small_fleet_with(extra: &[&str]) -> Value {
    let small = [
        "--policy",
        "outbox",
        "--clients",
        "500",
        "--outage",
        "300ms",
        "--capacity",
        "10",
        "--tick",
        "10ms",
        "--seed",
        "3",
        "--format",
        "json",
    ];
    let out = fleet(&[&small[..], extra].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Issue 34: `--repeat 3` runs the fleet three times, each run measured and
/// predicted from its own send rate, and sums them up in medians, spreads
/// and a verdict on the medians, each figure as the runs gave it.
#[test]
fn repeats_report_each_run_with_medians_spreads_and_a_verdict_on_the_medians() {
    let v = small_fleet_with(&["--repeat", "3"]);
    assert_eq!(v["fleet"]["repeat"], 3);
    let runs = v["runs"].as_array().expect("every run's own report");
    assert_eq!(runs.len(), 3);
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[1]
    };
    for key in ["peak_retries_per_tick", "calls", "give_ups"] {
        let figure = &v["repeats"]["figures"][key];
        for side in ["predicted", "measured"] {
            let from_runs: Vec<f64> = runs
                .iter()
                .map(|r| r[side][key].as_f64().expect("a figure per run"))
                .collect();
            let said: Vec<f64> = figure[side]["runs"]
                .as_array()
                .expect("each run's value")
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(said, from_runs, "{key} {side}");
            assert_eq!(
                figure[side]["median"].as_f64(),
                Some(median(from_runs.clone()))
            );
            let min = from_runs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = from_runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(
                (figure[side]["min"].as_f64(), figure[side]["max"].as_f64()),
                (Some(min), Some(max))
            );
        }
        let (lo, hi) = (
            figure["measured"]["min"].as_f64().unwrap(),
            figure["measured"]["max"].as_f64().unwrap(),
        );
        for (i, run) in runs.iter().enumerate() {
            let p = run["predicted"][key].as_f64().unwrap();
            assert_eq!(
                figure["inside_measured_spread"][i],
                Value::Bool(lo <= p && p <= hi),
                "{key} run {i}"
            );
        }
    }
    // Each run's send rate is its own, measured from its own first wave,
    // and its send-rate prediction is made from it.
    for run in runs {
        assert!(
            run["send_rate"]["per_ms"].as_f64().is_some_and(|r| r > 0.0),
            "{run}"
        );
        assert_eq!(run["predicted"], run["predicted_send_rate"]);
        // Each run sets the modelled quantities against its own counts
        // (`retries` always; those of waiting ticks only when a tick had
        // calls waiting, which a quiet machine may not have).
        assert!(
            run["differences"]["retries"]["modelled"].as_f64().is_some(),
            "{run}"
        );
    }
    let peak = &v["repeats"]["figures"]["peak_retries_per_tick"];
    let verdict = &v["repeats"]["verdict"];
    assert_eq!(verdict["peak_median_diff"], peak["median_diff"]);
    let diff = peak["median_diff"].as_f64().expect("a median difference");
    assert_eq!(verdict["peak_within"], Value::Bool(diff.abs() <= 0.2));
}

#[test]
fn repeats_are_bounded() {
    let out = fleet(&["--policy", "outbox", "--repeat", "21"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted");
    assert!(
        stderr.contains("--repeat") && stderr.contains("1..=20"),
        "{stderr}"
    );
}

#[test]
fn a_small_fleet_measures_what_the_simulator_predicts() {
    // A run the machine could not keep up with (it says so: calls reached
    // the server ticks after their timers, as on a loaded CI host) measured
    // the machine, not the fleet: it is run again, up to three times, and
    // the last run is checked whatever it says.
    let mut v = small_fleet();
    for _ in 0..2 {
        if v["keeping_up"]["kept_up"] != Value::Bool(false) {
            break;
        }
        v = small_fleet();
    }
    let (p, m) = (&v["predicted"], &v["measured"]);
    assert_eq!(
        keys(p),
        keys(m),
        "predicted and measured have the same keys"
    );
    for key in [
        "peak_retries_per_tick",
        "calls",
        "give_ups",
        "p50_ms",
        "p99_ms",
        "first_calls",
        "retries",
        "successes",
        "quiet_ticks",
    ] {
        assert!(p.get(key).is_some(), "no `{key}`");
    }
    let n = |o: &Value, k: &str| o[k].as_f64().unwrap_or_else(|| panic!("{k}: {o}"));
    assert_eq!(n(p, "first_calls"), 500.0);
    assert_eq!(
        n(m, "first_calls"),
        500.0,
        "every client called once at the start"
    );
    for o in [p, m] {
        let ended = n(o, "successes") + n(o, "give_ups") + n(o, "unfinished");
        assert_eq!(ended, 500.0, "every client accounted for: {o}");
        assert_eq!(n(o, "calls"), n(o, "first_calls") + n(o, "retries"));
    }
    let within = |k: &str, tolerance: f64| {
        let (a, b) = (n(p, k), n(m, k));
        assert!(
            (b - a).abs() <= tolerance * a,
            "{k}: predicted {a}, measured {b} (tolerance {tolerance}); {v}"
        );
    };
    within("calls", 0.1);
    within("p50_ms", 0.2);
    within("peak_retries_per_tick", 0.5);
    assert_eq!(v["fleet"]["clients"], 500);
    assert!(v["keeping_up"]["kept_up"].is_boolean());
    assert!(v["keeping_up"]["late_calls"].as_u64().is_some());
}

/// Issue 24: a fleet whose own machine is the bottleneck. The 500 clients
/// are throttled to 25 calls per ms over two connections, and without
/// jitter every client's retry falls due in the same millisecond: the plain
/// model predicts the whole fleet in one tick, the machine delivers it over
/// twenty. The send-rate model, at the rate this run's first wave showed,
/// predicts the peak closer to what the server measured.
#[test]
fn the_send_rate_model_predicts_a_throttled_machine_better_than_the_plain_one() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args(["--config", config, "--policy", "outbox"])
        .args(["--clients", "500", "--connections", "2", "--throttle", "25"])
        .args(["--outage", "300ms", "--tick", "1ms", "--seed", "5"])
        .args(["--format", "json"])
        .env_remove("RETRY_PROFILE")
        // Lockstep retries 5, 10 and 20 ms apart, all inside the outage.
        .env("RETRY_POLICY__OUTBOX__JITTER", "none")
        .env("RETRY_POLICY__OUTBOX__BASE", "5ms")
        .env("RETRY_POLICY__OUTBOX__MAX_ATTEMPTS", "4")
        .output()
        .expect("run the fleet binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let peak = |o: &str| {
        v[o]["peak_retries_per_tick"]
            .as_f64()
            .unwrap_or_else(|| panic!("{o}: {v}"))
    };
    let (plain, sending, measured) = (
        peak("predicted_plain"),
        peak("predicted_send_rate"),
        peak("measured"),
    );
    assert_eq!(plain, 500.0, "the plain model: the whole fleet in one tick");
    assert!(
        (sending - measured).abs() < (plain - measured).abs(),
        "send-rate {sending}, plain {plain}, measured {measured}: {v}"
    );
    assert_eq!(v["verdict"]["model"], "send_rate");
    assert_eq!(v["predicted"], v["predicted_send_rate"]);
    let rate = v["send_rate"]["per_ms"].as_f64().expect("a measured rate");
    assert!(rate > 0.0 && rate.is_finite(), "{rate}");
    // Nobody gets through the outage: four calls each, on both sides.
    for o in ["predicted_send_rate", "measured"] {
        assert_eq!(v[o]["calls"], 2000, "{o}: {v}");
    }
}

#[test]
fn bad_flags_are_refused_naming_the_flag_and_the_fix() {
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--policy", "outbox", "--throttle", "0"],
            &["--throttle", "above zero", "e.g. 25"],
        ),
        (
            &["--policy", "outbox", "--throttle", "NaN"],
            &["--throttle", "e.g. 25"],
        ),
        (
            &["--policy", "outbox", "--tick", "500us"],
            &["--tick", "at least 1ms"],
        ),
        (
            &["--policy", "outbx"],
            &["--policy outbx", "did you mean `outbox`"],
        ),
        (
            &["--policy", "outbox", "--clients", "5", "--connections", "6"],
            &["--connections 6", "at most 5"],
        ),
        (
            &["--policy", "outbox", "--outage", "2m", "--horizon", "1m"],
            &["--outage 2m", "--horizon"],
        ),
    ];
    for (args, expected) in cases {
        let out = fleet(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        for e in expected {
            assert!(stderr.contains(e), "{args:?}: no `{e}` in {stderr}");
        }
    }
}

/// Issue 22: `--processes 64 --clients 10` was told to raise `--connections`,
/// which cannot go past the 10 clients.
#[test]
fn too_many_processes_get_advice_within_the_limits() {
    let out = fleet(&["--policy", "outbox", "--clients", "10", "--processes", "64"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted");
    assert!(stderr.contains("--processes 64"), "{stderr}");
    assert!(stderr.contains("use at most 10"), "{stderr}");
    assert!(!stderr.contains("raise --connections"), "{stderr}");
    // Below the client count, raising --connections is a real way out, and
    // the advice names how far.
    let out = fleet(&[
        "--policy",
        "outbox",
        "--clients",
        "40",
        "--connections",
        "4",
        "--processes",
        "8",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("use at most 4"), "{stderr}");
    assert!(
        stderr.contains("raise --connections to 8 or more"),
        "{stderr}"
    );
    assert!(stderr.contains("at most --clients 40"), "{stderr}");
}

/// Issue 22: `fleet --help` opened with the doc test of the flags' struct.
#[test]
fn help_opens_with_what_fleet_does() {
    let out = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .arg("--help")
        .output()
        .expect("run the fleet binary");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.starts_with("Runs a real fleet of tokio clients"),
        "{help}"
    );
    for leaked in ["```", "try_parse_from", "use clap", "The flags of"] {
        assert!(!help.contains(leaked), "`{leaked}` in:\n{help}");
    }
}

/// Issue 29: `--breaker compare` runs the outage three times, without the
/// policy's breaker, with one per client process and with one shared
/// through a private redis-server, each beside the simulator's prediction
/// for the same division. Real time (about three short fleets); the
/// assertions are on structure and on what a breaker must change, with
/// bounds wide enough for a loaded machine.
#[test]
fn breaker_compare_runs_none_local_and_fleet_beside_their_predictions() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/fleet-breaker.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .args([
            "--config",
            config,
            "--policy",
            "broker",
            "--breaker",
            "compare",
        ])
        .args(["--clients", "400", "--processes", "2", "--seed", "3"])
        .args(["--outage", "1s", "--capacity", "10", "--tick", "10ms"])
        .args(["--horizon", "20s", "--format", "json"])
        .env_remove("RETRY_PROFILE")
        .output()
        .expect("run the fleet binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["fleet"]["processes"], 2, "{v}");
    assert_eq!(v["fleet"]["breaker"], "compare");
    let runs = v["runs"].as_array().expect("one run per scope");
    let scopes: Vec<&str> = runs
        .iter()
        .map(|r| r["breaker"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["none", "local", "fleet"]);
    let n = |o: &Value, k: &str| o[k].as_f64().unwrap_or_else(|| panic!("{k}: {o}"));
    for r in runs {
        let (p, m) = (&r["predicted"], &r["measured"]);
        assert_eq!(keys(p), keys(m), "{r}");
        // The whole first wave reaches the simulated server during the
        // outage; a real fleet breaker may already refuse the last first
        // calls a loaded machine delivers late.
        assert!(n(p, "outage_calls") >= 400.0, "{r}");
        assert!(n(m, "outage_calls") >= 200.0, "{r}");
        for o in [p, m] {
            assert!(n(o, "calls") >= n(o, "outage_calls"), "{r}");
            if o["drain_ms"].is_number() {
                assert_eq!(n(o, "successes") + n(o, "give_ups"), 400.0, "{r}");
            }
        }
        assert_eq!(n(p, "first_calls"), 400.0, "{r}");
        let first = n(m, "first_calls");
        let said = |start: &str| {
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().starts_with(start))
        };
        let scope = r["breaker"].as_str().unwrap();
        // A first call the breaker refused is never hidden.
        assert_eq!(
            said(&format!("{scope}: {first} of 400 first calls")),
            first < 400.0,
            "{v}"
        );
        let diff = (n(m, "outage_calls") - n(p, "outage_calls")) / n(p, "outage_calls");
        assert!((n(r, "outage_calls_diff") - diff).abs() < 1e-9, "{r}");
        assert_eq!(r["outage_calls_within"], Value::Bool(diff.abs() <= 0.2));
    }
    // Only the fleet run has a store, and says how often its processes
    // fell back to their local breakers (Redis later than its timeout).
    assert!(runs[0]["store_fallbacks"].is_null() && runs[1]["store_fallbacks"].is_null());
    let fallbacks = runs[2]["store_fallbacks"]
        .as_u64()
        .expect("the fleet run's");
    let warned = v["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .starts_with("fleet: the processes fell back")
    });
    assert_eq!(warned, fallbacks > 0, "{v}");
    let outage = |i: usize, side: &str| n(&runs[i][side], "outage_calls");
    // Without a breaker each client retries through the whole outage; a
    // breaker opens on the first wave and holds the retries back, on the
    // simulator's side and the server's.
    for side in ["predicted", "measured"] {
        for with in [1, 2] {
            assert!(
                outage(with, side) < 0.6 * outage(0, side),
                "{side}: {} vs none {}; {v}",
                outage(with, side),
                outage(0, side)
            );
        }
    }
    assert!(outage(2, "predicted") <= outage(1, "predicted"), "{v}");
    assert_eq!(
        v["verdict"]["outage_calls_within"],
        Value::Bool(runs.iter().all(|r| r["outage_calls_within"] == true))
    );
}

#[test]
fn breaker_flags_are_refused_naming_the_fix() {
    let out = fleet(&["--policy", "outbox", "--breaker", "local"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted");
    for e in [
        "--breaker local",
        "`outbox` names no circuit breaker",
        "RETRY_POLICY__OUTBOX__BREAKER=NAME",
        "--breaker none",
    ] {
        assert!(stderr.contains(e), "no `{e}` in {stderr}");
    }
    let out = fleet(&["--policy", "outbox", "--breaker", "global"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted");
    assert!(stderr.contains("none, local, fleet, compare"), "{stderr}");
}
