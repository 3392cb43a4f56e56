//! `retry-policy simulate --scenario slow` (issue 43): every flag checked,
//! each error naming the flag, the rule and the fix; the table's rows.

mod common;

use common::*;

/// examples/slow.toml's limit and policies, in a file of the test's own.
const FILE: &str = r#"
[limits.fixed]
kind = "fixed"
max_in_flight = 2
max_wait = "20ms"

[policies.unlimited]
base = "50ms"
max_attempts = 3
attempt_timeout = "200ms"

[policies.fixed]
extends = "unlimited"
limit = "fixed"

[breakers.dep]

[policies.braked]
extends = "fixed"
breaker = "dep"
"#;

/// Runs `simulate ARGS --scenario slow` against FILE: exit code, stdout, stderr.
fn slow(args: &[&str]) -> (Option<i32>, String, String) {
    let out = run_file(
        FILE,
        &[&["simulate"], args, &["--scenario", "slow"]].concat(),
        &[],
    );
    let (o, e) = text(&out);
    (out.status.code(), o, e)
}

#[test]
fn every_bad_slow_flag_is_refused_naming_it() {
    for (args, flag, says) in [
        (&["--load", "0"][..], "--load", "above 0 and at most 10000"),
        (&["--load", "NaN"], "--load", "above 0 and at most 10000"),
        (&["--load", "-3"], "--load", "above 0 and at most 10000"),
        (&["--load", "lots"], "--load", "not a number"),
        (&["--load", "10001"], "--load", "at most 10000"),
        (&["--slots", "0"], "--slots", "0"),
        (&["--limit-processes", "1025"], "--limit-processes", "1025"),
        (&["--service", "0ms"], "--service", "from 1ms to 1m"),
        (&["--service", "2m"], "--service", "from 1ms to 1m"),
        (&["--duration", "2h"], "--duration", "from 1ms to 1h"),
        (
            &["--load", "1000", "--duration", "1h"],
            "--load",
            "at most 1000000 calls",
        ),
        (&["--adaptive", "vegas"], "--adaptive", "vegas"),
        (
            &["--clients", "10"],
            "--clients",
            "use --load and --duration",
        ),
        (&["--horizon", "1h"], "--horizon", "drop it"),
        (&["--outage", "2s"], "--outage", "--scenario slow"),
        (&["--calls", "10"], "--calls", "--scenario slow"),
    ] {
        let (code, out, err) = slow(&[&["unlimited", "--compare", "fixed"][..], args].concat());
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: nothing on stdout: {out}");
        assert!(err.contains(flag) && err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn the_slow_flags_are_refused_by_the_other_scenarios() {
    let out = run_file(
        FILE,
        &["simulate", "unlimited", "--load", "3", "--adaptive", "aimd"],
        &[],
    );
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--load applies to the slow scenario only, not to --scenario herd"),
        "{err}"
    );
    assert!(
        err.contains("--adaptive applies to the slow scenario only"),
        "{err}"
    );
}

#[test]
fn adaptive_needs_a_policy_with_a_limit() {
    let (code, _, err) = slow(&["unlimited", "--adaptive", "gradient"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("none of these names one"), "{err}");
}

#[test]
fn the_table_has_a_row_per_policy_and_per_adaptive_kind_of_a_limited_one() {
    let (code, out, err) = slow(&[
        "unlimited",
        "--compare",
        "fixed",
        "--adaptive",
        "aimd,gradient",
        "--duration",
        "1s",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<(String, String)> = out
        .lines()
        .filter(|l| l.starts_with("unlimited ") || l.starts_with("fixed "))
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[0].to_owned(), cells[1].to_owned())
        })
        .collect();
    let want = [
        ("unlimited", "none"),
        ("fixed", "fixed"),
        ("fixed", "aimd"),
        ("fixed", "gradient"),
    ]
    .map(|(a, b)| (a.to_owned(), b.to_owned()));
    assert_eq!(rows, want, "{out}");
    // And the JSON has the same runs.
    let (code, json, err) = slow(&[
        "fixed",
        "--adaptive",
        "gradient",
        "--duration",
        "1s",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["scenario"], "slow");
    assert_eq!(v["policies"][0]["limit"], "fixed 2");
    // The fixed run's peak at the dependency is its 10 processes' 2 each.
    assert_eq!(v["policies"][0]["limit_at_end"], 20);
    assert_eq!(v["policies"][0]["peak_in_flight"], 20);
    assert_eq!(v["policies"][1]["limit"], "gradient");
}

#[test]
fn a_policy_s_breaker_is_said_not_to_be_simulated_and_a_kind_named_twice_runs_once() {
    let (code, out, err) = slow(&["braked", "--adaptive", "aimd,aimd", "--duration", "100ms"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(
            "note: `braked` runs here without its breaker: the slow scenario models the limit only"
        ),
        "{out}"
    );
    let rows = out.lines().filter(|l| l.starts_with("braked ")).count();
    assert_eq!(rows, 2, "its own limit and aimd once: {out}");
}
