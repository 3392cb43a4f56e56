//! `retry-policy` on hedging policies: `simulate --scenario tail`, and the
//! hedging line of `show` and `explain`.

use std::process::{Command, Output};

const FILE: &str = r#"
[budgets.api]
ratio = 0.1

[policies.lookup]
hedge_after = "p95"
max_attempts = 3
budget = "api"

[policies.plain]
max_attempts = 3

[budgets.server]
mode = "grpc_throttling"
max_tokens = 10
token_ratio = 0.1

[policies.grpc-lookup]
hedge_after = "p95"
max_attempts = 3
budget = "server"
"#;

/// Runs the binary on FILE (in a fresh directory) with a clean retry environment.
fn run(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, FILE).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.arg("--config").arg(&path).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.output().unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn simulate_tail_prints_both_runs_in_a_table_and_in_json() {
    let args = [
        "simulate",
        "lookup",
        "--scenario",
        "tail",
        "--slow-share",
        "0.01",
        "--slow",
        "1s",
        "--fast",
        "5ms",
        "--calls",
        "2000",
    ];
    let out = run(&args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("2000 calls by 20 clients; 1% of requests take 1s, the rest 5ms"),
        "{t}"
    );
    assert!(
        t.contains("unhedged") && t.contains("at p95 (floor 100ms)"),
        "{t}"
    );

    let out = run(&[&args[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["policies"][0];
    assert_eq!(p["hedge_after"], "p95");
    let (hedged, unhedged) = (&p["hedged"], &p["unhedged"]);
    assert!(
        hedged["p99.9_ms"].as_f64().unwrap() * 10.0 <= unhedged["p99.9_ms"].as_f64().unwrap(),
        "{v}"
    );
    assert!(hedged["extra_share"].as_f64().unwrap() < 0.1, "{v}");
    for key in ["p50_ms", "p99_ms", "p99.9_ms", "extra_share", "hedges_won"] {
        assert!(unhedged.get(key).is_some(), "{key}");
    }
}

#[test]
fn simulate_tail_refuses_bad_values_and_other_scenarios_flags() {
    let out = run(&[
        "simulate",
        "lookup",
        "--scenario",
        "tail",
        "--slow-share",
        "2",
        "--fast",
        "0ms",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("--slow-share must be a share from 0 to 1"),
        "{t}"
    );
    assert!(t.contains("--fast must be more than 0"), "{t}");
    let out = run(&["simulate", "lookup", "--scenario", "tail", "--outage", "1s"]);
    assert!(
        text(&out).contains("--outage applies to the herd scenario only, not to --scenario tail"),
        "{}",
        text(&out)
    );
    let out = run(&["simulate", "lookup", "--slow", "1s"]);
    assert!(
        text(&out).contains("--slow applies to the tail scenario only"),
        "{}",
        text(&out)
    );
    let out = run(&[
        "simulate",
        "lookup",
        "--scenario",
        "tail",
        "--calls",
        "99999999999",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn show_and_explain_print_the_hedging_line_with_the_floor() {
    let out = run(&["show", "lookup", "--seed", "1"]);
    let t = text(&out);
    assert!(t.contains("hedging: hedge_after p95 of the latency observed (hedge_floor 100ms until 100 calls are seen)"), "{t}");
    let out = run(&["explain", "lookup"]);
    let t = text(&out);
    assert!(
        t.contains("hedge_floor      100ms") && t.contains("built-in default"),
        "{t}"
    );
    assert!(t.contains("hedging: hedge_after p95"), "{t}");
    assert!(!text(&run(&["show", "plain"])).contains("hedging"));
    let out = run(&["show", "lookup", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hedge"]["after"], "p95");
    assert_eq!(v["hedge"]["floor_ms"], 100.0);
}

/// The tail scenario runs a policy's gRFC A6 bucket, but its server fails
/// nothing, so the bucket never refuses: the table says so.
#[test]
fn simulate_tail_says_a_grpc_throttling_budget_never_refuses_there() {
    let tail = ["--scenario", "tail", "--calls", "500"];
    let out = run(&[&["simulate", "grpc-lookup"][..], &tail].concat());
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("note: `grpc-lookup`'s grpc_throttling budget never refuses here: the tail server fails no request"),
        "{t}"
    );
    let out = run(&[&["simulate", "lookup"][..], &tail].concat());
    assert!(!text(&out).contains("grpc_throttling"), "{}", text(&out));
}
