//! `simulate`'s tests: flags parsed as the binary parses them, run against a
//! small policy file.

use super::*;
use crate::Global;
use clap::Parser;

#[derive(Parser)]
struct Cmd {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    args: Args,
}

const CONFIG: &str = r#"
[defaults]
max_attempts = 6
base = "50ms"
cap = "2s"

[policies.checkout]
jitter = "full"

[policies.lockstep]
jitter = "none"

[profiles.test.policies.checkout]
jitter = "none"
"#;

/// Renders `simulate ARGS...` against CONFIG (no environment overrides).
fn simulate(argv: &[&str], profile: Option<&str>) -> Result<Output, CliError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, CONFIG).unwrap();
    let path = path.to_str().unwrap();
    let mut full = vec!["simulate", "--no-env", "--config", path];
    if let Some(p) = profile {
        full.extend(["--profile", p]);
    }
    full.extend(argv);
    let cmd = Cmd::try_parse_from(full).unwrap_or_else(|e| panic!("{e}"));
    let cx = Context { global: cmd.global };
    render(&cmd.args, &cx)
}

#[test]
fn compares_named_policies_from_the_config_in_one_table() {
    let out = simulate(
        &["checkout", "--compare", "lockstep", "--clients", "500"],
        None,
    )
    .unwrap();
    let row = |name: &str| {
        out.text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{}", out.text))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("lockstep ")[2],
        "500",
        "lockstep: the whole fleet in one tick"
    );
    assert!(row("checkout ")[2].parse::<u64>().unwrap() < 100);
    assert!(out.text.contains("checkout: retry arrivals per tick"));
    assert!(out.plot.is_none());
}

#[test]
fn the_profile_applies_to_the_simulated_policy() {
    let out = simulate(
        &["checkout", "--clients", "300", "--format", "json"],
        Some("test"),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["policies"][0]["jitter"], "none");
    assert_eq!(v["policies"][0]["peak_retries_per_tick"], 300);
}

#[test]
fn the_same_seed_gives_the_same_output_and_another_seed_does_not() {
    let a = simulate(&["checkout", "--seed", "7", "--format", "json"], None).unwrap();
    let b = simulate(&["checkout", "--seed", "7", "--format", "json"], None).unwrap();
    let c = simulate(&["checkout", "--seed", "8", "--format", "json"], None).unwrap();
    assert_eq!(a.text, b.text);
    assert_ne!(a.text, c.text);
}

#[test]
fn scenario_flags_reach_the_simulation() {
    let out = simulate(
        &[
            "lockstep",
            "--clients",
            "100",
            "--outage",
            "10m",
            "--tick",
            "10ms",
            "--capacity",
            "5",
            "--format",
            "json",
        ],
        None,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["clients"], 100);
    assert_eq!(v["tick_ms"], 10.0);
    assert_eq!(v["capacity_per_tick"], 5);
    assert_eq!(v["outage_ms"], 600_000.0);
    // Nobody gets through a ten-minute outage: six calls each.
    assert_eq!(v["policies"][0]["calls"], 600);
    assert_eq!(v["policies"][0]["give_ups"], 100);
}

#[test]
fn the_timer_model_flags_reach_the_simulation() {
    let busy = |extra: &[&str]| {
        let mut argv = vec![
            "checkout",
            "--clients",
            "2000",
            "--outage",
            "1h",
            "--format",
            "json",
        ];
        argv.extend(extra);
        let v: serde_json::Value =
            serde_json::from_str(&simulate(&argv, None).unwrap().text).unwrap();
        v["policies"][0]["busy_ticks"].as_u64().unwrap()
    };
    let plain = busy(&[]);
    assert_eq!(busy(&["--timer-resolution", "1ms"]), plain);
    let merged = busy(&["--timer-resolution", "1ms", "--timer-skipped", "0.5"]);
    assert!(merged * 10 < plain * 8, "{merged} vs {plain}");
    let err = simulate(
        &[
            "checkout",
            "--timer-resolution",
            "1ms",
            "--timer-skipped",
            "2",
        ],
        None,
    )
    .err()
    .unwrap();
    assert!(
        err.message.contains("--timer-skipped must be a share"),
        "{}",
        err.message
    );
    assert!(Cmd::try_parse_from(["simulate", "x", "--timer-skipped", "0.2"]).is_err());
}

#[test]
fn the_table_says_which_timer_model_ran() {
    let table = |extra: &[&str]| {
        let mut argv = vec!["checkout", "--clients", "100"];
        argv.extend(extra);
        simulate(&argv, None).unwrap().text
    };
    assert!(!table(&[]).contains("client timers"));
    let modelled = table(&["--timer-resolution", "1ms", "--timer-skipped", "0.25"]);
    assert!(
        modelled.contains(
            "client timers: wake-ups rounded up to 1ms, 25% of timer steps merged into the next"
        ),
        "{modelled}"
    );
}

#[test]
fn each_jitter_runs_every_mode_of_the_policy() {
    let out = simulate(&["checkout", "--each-jitter", "--clients", "400"], None).unwrap();
    for mode in ["none", "full", "equal", "decorrelated"] {
        assert!(
            out.text
                .lines()
                .any(|l| l.starts_with(&format!("checkout/{mode} "))),
            "{mode}: {}",
            out.text
        );
    }
    let lockstep = out
        .text
        .lines()
        .find(|l| l.starts_with("checkout/none "))
        .unwrap();
    assert_eq!(lockstep.split_whitespace().nth(2), Some("400"));
}

#[test]
fn svg_is_rendered_when_asked_for() {
    let out = simulate(&["checkout", "--clients", "200", "--svg", "plot.svg"], None).unwrap();
    assert!(out.plot.unwrap().contains("<polyline"));
}

#[test]
fn an_unknown_policy_is_a_usage_error_with_a_suggestion() {
    let err = simulate(&["checkuot"], None).err().unwrap();
    assert_eq!(err.code, 2);
    assert!(
        err.message.contains("did you mean `checkout`"),
        "{}",
        err.message
    );
}

#[test]
fn herd_needs_a_policy_but_contention_has_the_study() {
    let err = simulate(&[], None).err().unwrap();
    assert_eq!(err.code, 2);
    assert!(err.message.contains("name a POLICY"));
    let err = simulate(&["--scenario", "contention", "--clients", "5001"], None)
        .err()
        .unwrap();
    assert!(err.message.contains("at most 5000"), "{}", err.message);
    let out = simulate(&["--scenario", "contention", "--clients", "1"], None).unwrap();
    let header = out.text.lines().find(|l| l.starts_with("CLIENTS")).unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["CLIENTS", "none", "full", "equal", "decorrelated"]
    );
    let calls = out.text.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert_eq!(
        calls.split_whitespace().collect::<Vec<_>>(),
        ["1", "2", "2", "2", "2"],
        "one read and one write each"
    );
}

#[test]
fn a_duration_without_a_unit_is_refused_with_the_fix() {
    let err = Cmd::try_parse_from(["simulate", "x", "--outage", "5"])
        .err()
        .unwrap();
    let message = err.to_string();
    assert!(message.contains("--outage"), "{message}");
    assert!(message.contains("write it as 5ms or 5s"), "{message}");
    assert!(Cmd::try_parse_from(["simulate", "x", "--capacity", "0"]).is_err());
    assert!(Cmd::try_parse_from(["simulate", "x", "--clients", "0"]).is_err());
}

#[test]
fn the_send_rate_flags_reach_the_simulation_and_the_output_says_which_model_ran() {
    let run = |extra: &[&str], format: &str| {
        let mut argv = vec!["lockstep", "--clients", "1000", "--format", format];
        argv.extend(extra);
        simulate(&argv, None).unwrap().text
    };
    let plain: serde_json::Value = serde_json::from_str(&run(&[], "json")).unwrap();
    assert_eq!(plain["policies"][0]["peak_retries_per_tick"], 1000);
    assert!(
        plain.get("model").is_none(),
        "the plain model's JSON is as before"
    );
    let sent: serde_json::Value =
        serde_json::from_str(&run(&["--send-rate", "100"], "json")).unwrap();
    assert_eq!(sent["model"], "send_rate");
    assert_eq!(sent["send_rate_per_ms"], 100.0);
    assert_eq!(sent["send_processes"], 1);
    assert_eq!(sent["first_wave_ticks"], 10);
    assert_eq!(sent["first_wave"], 1000);
    assert_eq!(sent["policies"][0]["peak_retries_per_tick"], 100);
    let two: serde_json::Value = serde_json::from_str(&run(
        &["--send-rate", "25", "--send-processes", "2"],
        "json",
    ))
    .unwrap();
    assert_eq!(two["first_wave_ticks"], 20);
    let table = run(&["--send-rate", "2.5"], "table");
    assert!(
        table.contains(
            "send-rate model: the clients' machine sends at most 2.5 calls per ms (2.5 per 1ms tick)"
        ),
        "{table}"
    );
    assert!(
        table.contains("first wave: 1000 calls sent over 400ms (400 ticks)"),
        "{table}"
    );
    assert!(!run(&[], "table").contains("send-rate model"));
}

#[test]
fn a_bad_send_rate_is_refused_naming_the_flag_the_rule_and_the_fix() {
    for bad in ["0", "-3", "NaN", "inf", "fast", "1e10"] {
        let err = Cmd::try_parse_from(["simulate", "x", "--send-rate", bad])
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"))
            .to_string();
        assert!(err.contains("--send-rate"), "{bad}: {err}");
        assert!(err.contains("e.g. 90"), "{bad}: {err}");
    }
    // Processes need a rate, and no more processes than clients.
    assert!(Cmd::try_parse_from(["simulate", "x", "--send-processes", "2"]).is_err());
    assert!(
        Cmd::try_parse_from(["simulate", "x", "--send-rate", "1", "--send-processes", "0"])
            .is_err()
    );
    let err = simulate(
        &[
            "checkout",
            "--clients",
            "3",
            "--send-rate",
            "1",
            "--send-processes",
            "4",
        ],
        None,
    )
    .err()
    .unwrap();
    assert!(
        err.message
            .contains("--send-processes must be from 1 to 1024, and at most the clients"),
        "{}",
        err.message
    );
    assert!(err.message.contains("at most 3"), "{}", err.message);
    let err = simulate(&["--scenario", "contention", "--send-rate", "5"], None)
        .err()
        .unwrap();
    assert!(
        err.message
            .contains("--send-rate applies to the herd scenario only"),
        "{}",
        err.message
    );
}

#[test]
fn breaker_processes_default_to_the_send_models_and_must_agree_with_them() {
    let scope = |argv: &[&str]| {
        let mut full = vec!["simulate", "checkout"];
        full.extend(argv);
        let cmd = Cmd::try_parse_from(full).unwrap_or_else(|e| panic!("{e}"));
        let herd = Herd {
            clients: 500,
            send: cmd.args.send_rate.map(|per_ms| SendRate {
                per_ms,
                processes: cmd.args.send_processes.unwrap_or(1),
            }),
            ..Herd::default()
        };
        breaker::scope(&cmd.args, &herd)
    };
    let local = |processes| retrykit_sim::BreakerScope::Local { processes };
    assert_eq!(scope(&[]).unwrap(), local(10));
    assert_eq!(scope(&["--breaker-processes", "7"]).unwrap(), local(7));
    let sent = ["--send-rate", "5", "--send-processes", "3"];
    assert_eq!(scope(&sent).unwrap(), local(3));
    let both = [&sent[..], &["--breaker-processes", "3"]].concat();
    assert_eq!(scope(&both).unwrap(), local(3));
    let differ = [&sent[..], &["--breaker-processes", "4"]].concat();
    let err = scope(&differ).unwrap_err().message;
    assert!(
        err.contains("--breaker-processes 4 and --send-processes 3 differ"),
        "{err}"
    );
    for bad in ["0", "1025", "-1", "99999999999"] {
        assert!(
            Cmd::try_parse_from(["simulate", "checkout", "--breaker-processes", bad]).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn more_breaker_processes_than_clients_is_an_error_naming_the_flag() {
    let err = simulate(
        &["checkout", "--clients", "5", "--breaker-processes", "6"],
        None,
    )
    .err()
    .unwrap()
    .message;
    assert!(
        err.contains("--breaker-processes must be from 1 to 1024, and at most the clients"),
        "{err}"
    );
    // Fewer clients than the default's ten processes: one process each.
    assert!(simulate(&["checkout", "--clients", "5"], None).is_ok());
    let err = simulate(
        &["--scenario", "contention", "--breaker-processes", "2"],
        None,
    )
    .err()
    .unwrap()
    .message;
    assert!(
        err.contains("--breaker-processes applies to the herd scenario only"),
        "{err}"
    );
}
