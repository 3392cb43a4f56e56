//! `retry-policy` on concurrency limits: `check` reports their problems at
//! the text, `list` shows them and which policies name them, `explain`
//! explains one key by key, and `show` says a policy's attempts hold one.

mod common;

use common::{run_file as run, text};

const FILE: &str = r#"
[policies.orders]
limit = "db"

[policies.plain]

[limits.db]
max_in_flight = 8
max_wait = "100ms"
"#;

#[test]
fn list_shows_each_limit_and_the_policies_that_name_it() {
    let out = run(FILE, &["list"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains(", limit db\n"), "{stdout}");
    assert!(
        stdout.contains("limits (1):\n  db  fixed, 8 in flight; waits at most 100ms, 1000 queued at most; used by orders\n"),
        "{stdout}"
    );
}

#[test]
fn explain_gives_every_limit_key_and_where_it_came_from() {
    let out = run(
        FILE,
        &["explain", "db"],
        &[("RETRY_LIMIT__DB__MAX_WAITING", "5")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = stdout.lines().map(words).collect();
    assert!(lines.iter().any(|l| l == "limit `db`"), "{stdout}");
    assert!(lines.iter().any(|l| l == "named by: orders"), "{stdout}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("kind fixed built-in default")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("max_in_flight 8 own table")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("max_waiting 5 environment RETRY_LIMIT__DB__MAX_WAITING")),
        "{stdout}"
    );
}

#[test]
fn show_says_the_attempts_hold_a_permit() {
    let out = run(FILE, &["show", "orders", "--seed", "1"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("limit `db` holds every attempt to 8 in flight"),
        "{stdout}"
    );
    let out = run(FILE, &["show", "plain", "--seed", "1"], &[]);
    assert!(!text(&out).0.contains("limit `"), "{}", text(&out).0);
    let out = run(
        FILE,
        &["show", "orders", "--seed", "1", "--format", "json"],
        &[],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["limit"], "db");
}

#[test]
fn check_points_at_an_unknown_limit_and_at_an_adaptive_kind() {
    let bad = FILE
        .replace("limit = \"db\"", "limit = \"dB\"")
        .replace("max_in_flight = 8", "kind = \"aimd\"\nmax_in_flight = 8");
    let out = run(&bad, &["check"], &[]);
    let (stdout, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("policy `orders` uses limit `dB`, which is not defined"),
        "{all}"
    );
    assert!(all.contains("did you mean `db`?"), "{all}");
    assert!(
        all.contains("concurrency limit kind `aimd` is not yet supported"),
        "{all}"
    );
    assert!(all.contains("supported: fixed"), "{all}");
}
