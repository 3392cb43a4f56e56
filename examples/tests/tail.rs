//! The `tail` harness end to end, short: a few hundred calls against the
//! real server on 127.0.0.1 with latencies of a few milliseconds, printing
//! `predicted` and `measured` with the same keys.

use std::process::Command;

fn tail(extra: &[&str]) -> std::process::Output {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
    Command::new(env!("CARGO_BIN_EXE_tail"))
        .args([
            "--config",
            config,
            "--policy",
            "lookup",
            "--calls",
            "300",
            "--concurrency",
            "10",
        ])
        .args([
            "--slow-share",
            "0.05",
            "--slow",
            "20ms",
            "--fast",
            "2ms",
            "--seed",
            "7",
        ])
        .args(extra)
        .env_remove("RETRY_PROFILE")
        .output()
        .unwrap()
}

#[test]
fn a_short_run_prints_predicted_and_measured_with_the_same_keys() {
    let out = tail(&["--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = |name: &str| {
        let mut keys: Vec<String> = v[name]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: {v}"))
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(keys("predicted"), keys("measured"));
    assert_eq!(
        keys("predicted"),
        ["extra_share", "hedges_won", "p50_ms", "p99.9_ms", "p99_ms"]
    );
    // Every call answered; the server counted at least one request per call.
    let measured = &v["measured"];
    assert!(measured["p50_ms"].as_f64().unwrap() >= 1.0, "{v}");
    assert!(measured["extra_share"].as_f64().unwrap() >= 0.0, "{v}");
    assert_eq!(v["hedge_after"], "p95");
}

#[test]
fn the_table_names_both_rows_and_bad_flags_are_refused() {
    let out = tail(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("predicted") && text.contains("measured"),
        "{text}"
    );
    let out = tail(&["--load-slowdown", "20"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("load_slowdown"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn over_grpc_a_short_run_prints_the_same_keys_and_names_its_transport() {
    let out = tail(&["--transport", "grpc", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["transport"], "grpc");
    let measured = v["measured"].as_object().unwrap();
    assert_eq!(measured.len(), 5, "{v}");
    assert!(v["measured"]["p50_ms"].as_f64().unwrap() >= 1.0, "{v}");
}
