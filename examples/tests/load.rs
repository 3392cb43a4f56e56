//! The `load` harness end to end, short: a server that serves 4 requests at
//! once, 12 clients. The figures move with the machine; the rules do not:
//! a fixed limit keeps the server's peak at or below its size, and without
//! one every client reaches the server at once.

use std::process::{Command, Output};

fn load(extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_load"))
        .args(["--clients", "12", "--capacity", "4", "--service", "2ms"])
        .args(["--duration", "300ms"])
        .args(extra)
        .env_remove("RETRY_PROFILE")
        .output()
        .unwrap()
}

fn file(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

#[test]
fn a_fixed_limit_holds_the_server_at_its_size_and_none_lets_every_client_in() {
    let config = file(
        "[policies.unlimited]\n\
         [policies.fixed]\nlimit = \"four\"\n\
         [limits.four]\nkind = \"fixed\"\nmax_in_flight = 3\n",
    );
    let out = load(&[
        "--config",
        config.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == name)
            .unwrap_or_else(|| panic!("{name}: {rows}"))
            .clone()
    };
    let (none, fixed) = (row("unlimited"), row("fixed"));
    assert_eq!(none["server_peak"], 12, "{none}");
    assert_eq!(none["limit_peak"], serde_json::Value::Null);
    assert!(fixed["server_peak"].as_u64().unwrap() <= 3, "{fixed}");
    assert!(fixed["limit_peak"].as_u64().unwrap() <= 3, "{fixed}");
    assert_eq!(fixed["limit_end"], 3);
    for r in [&none, &fixed] {
        assert_eq!((&r["refused"], &r["failed"]), (&0.into(), &0.into()), "{r}");
        assert!(r["goodput_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }
}

#[test]
fn the_table_has_a_row_per_policy_of_the_shipped_file() {
    let out = load(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("server: 4 at once, 2.0 ms each (at most 2000/s; OF CAPACITY is against the service time measured); 12 clients for 300ms"),
        "{text}"
    );
    for policy in [
        "| unlimited | none |",
        "| fixed | fixed16 (fixed 16) |",
        "| aimd | aimd (aimd) |",
        "| gradient | gradient (gradient) |",
    ] {
        assert!(text.contains(policy), "{policy}\n{text}");
    }
}

#[test]
fn bad_flags_name_the_flag_and_the_rule() {
    let out = Command::new(env!("CARGO_BIN_EXE_load"))
        .args(["--service", "0ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--service") && err.contains("outside 1ms to 1s"),
        "{err}"
    );
    let out = load(&["--policy", "fixd"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--policy fixd") && err.contains("unlimited, fixed, aimd, gradient"),
        "{err}"
    );
}
