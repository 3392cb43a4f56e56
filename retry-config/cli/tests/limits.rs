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
fn check_points_at_an_unknown_limit_and_at_a_key_of_another_kind() {
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
        all.contains(
            "limit `db`: `max_in_flight` does not apply to a limit whose kind is \"aimd\""
        ),
        "{all}"
    );
    assert!(
        all.contains("set max_limit (and initial_limit) instead"),
        "{all}"
    );
}

const ADAPTIVE: &str = r#"
[policies.orders]
limit = "db"

[policies.search]
limit = "index"

[limits.db]
kind = "aimd"
initial_limit = 10
max_limit = 50
decrease = 0.5
drop_above = "250ms"

[limits.index]
kind = "gradient"
"#;

#[test]
fn check_list_show_and_explain_cover_the_adaptive_kinds() {
    let out = run(ADAPTIVE, &["check"], &[]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = run(ADAPTIVE, &["list"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("db     aimd, 10 in flight now (1 to 50; x0.5 on a drop: timeout, throttled, slower than 250ms); waits up to the deadline, 1000 queued at most; used by orders\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("index  gradient, 20 in flight now (1 to 1000; tolerance 1); waits up to the deadline, 1000 queued at most; used by search\n"),
        "{stdout}"
    );
    let out = run(ADAPTIVE, &["show", "orders", "--seed", "1"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("limit `db` holds every attempt to the size of an adaptive limit (aimd, 10 in flight now"),
        "{stdout}"
    );
    let out = run(
        ADAPTIVE,
        &["explain", "index"],
        &[("RETRY_LIMIT__INDEX__TOLERANCE", "2")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = stdout.lines().map(words).collect();
    for line in [
        "kind gradient own table",
        "tolerance 2 environment RETRY_LIMIT__INDEX__TOLERANCE",
        "probe_every 200 built-in default",
        "decrease - (unused by gradient limits)",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(line)),
            "{line}\n{stdout}"
        );
    }
}
