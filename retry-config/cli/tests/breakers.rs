//! `retry-policy` on circuit breakers: `check` reports their problems at
//! the text, `list` shows them and which policies name them, `explain`
//! explains one key by key, and `show` says a policy's schedule has one.

mod common;

use common::{run_file as run, text};

const FILE: &str = r#"
[defaults]
attempt_timeout = "2s"

[policies.publish]
breaker = "broker"

[policies.consume]
breaker = "broker"

[policies.plain]

[breakers.broker]
failure_ratio = 0.5
min_calls = 20
probes = 3
slow_call = "1s"

[breakers.spare]
"#;

#[test]
fn list_shows_each_breaker_and_the_policies_that_name_it() {
    let out = run(FILE, &["list"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("publish  exponential ×2 100ms..10s, full jitter, 3 attempts, timeout 2s, breaker broker\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "breakers (2):\n  broker  opens at 50% failed of at least 20 attempts over 30s, for 5s..30s; 3 probe(s), slow_call 1s; used by publish, consume\n  spare   opens at 10% failed of at least 100 attempts over 30s, for 5s..30s; 1 probe(s); unused\n"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("breaker `spare` is not used by any policy"),
        "{stderr}"
    );
}

#[test]
fn explain_shows_a_breakers_every_key_and_a_policys_breaker() {
    let vars = [("RETRY_BREAKER__BROKER__OPEN_FOR", "2s")];
    let out = run(FILE, &["explain", "broker"], &vars);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.starts_with("breaker `broker`\nnamed by: publish, consume\n"),
        "{stdout}"
    );
    let row = |key: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} row in\n{stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        row("failure_ratio").starts_with("failure_ratio 0.5 own table"),
        "{stdout}"
    );
    assert_eq!(
        row("open_for"),
        "open_for 2s environment RETRY_BREAKER__BROKER__OPEN_FOR environment:1:33"
    );
    assert_eq!(row("max_open_for"), "max_open_for 30s built-in default");
    let out = run(FILE, &["explain", "publish"], &[]);
    let (stdout, _) = text(&out);
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        stdout
            .lines()
            .any(|l| words(l).starts_with("breaker broker own table")
                && l.ends_with("retry.toml:6:11")),
        "{stdout}"
    );
}

#[test]
fn show_says_the_breaker_may_refuse_attempts() {
    let out = run(FILE, &["show", "publish", "--seed", "1"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("breaker `broker` is asked before every attempt"),
        "{stdout}"
    );
    let out = run(FILE, &["show", "plain", "--seed", "1"], &[]);
    assert!(!text(&out).0.contains("breaker"), "{}", text(&out).0);
    let out = run(
        FILE,
        &["show", "publish", "--seed", "1", "--format", "json"],
        &[],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["breaker"], "broker");
}

#[test]
fn check_points_at_a_breaker_that_does_not_exist_and_at_bad_breaker_values() {
    let bad = FILE
        .replace(
            "breaker = \"broker\"\n\n[policies.consume]",
            "breaker = \"brokr\"\n\n[policies.consume]",
        )
        .replace("probes = 3", "probes = 0");
    let out = run(&bad, &["check", "--format", "short"], &[]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(":6:11: error: policy `publish` uses breaker `brokr`, which is not defined [policies.publish.breaker] (did you mean `broker`?)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(":16:10: error: breaker `broker`: `probes` must be from 1 to 10000"),
        "{stdout}"
    );
}

/// Issue 41 point 11: a fleet breaker's `store_timeout` and `refresh`, set
/// in the file or the environment, in `show`, `explain` and `list`; a
/// local breaker's `show` says nothing of a fleet.
#[test]
fn show_explain_and_list_give_a_fleet_breakers_store_timeout_and_refresh() {
    let fleet = FILE.replace(
        "slow_call = \"1s\"\n",
        "slow_call = \"1s\"\nscope = \"fleet\"\nstore = \"redis://me:secret@127.0.0.1:1/\"\nstore_timeout = \"40ms\"\n",
    );
    let vars = [("RETRY_BREAKER__BROKER__REFRESH", "3ms")];
    let out = run(&fleet, &["show", "publish", "--seed", "1"], &vars);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let line = "breaker `broker` is shared by the fleet through redis://127.0.0.1:1/ (store_timeout 40ms, refresh 3ms)\n";
    assert!(stdout.contains(line), "{stdout}");
    assert!(!stdout.contains("secret"), "{stdout}");
    let args = ["show", "publish", "--seed", "1", "--format", "json"];
    let json: serde_json::Value =
        serde_json::from_slice(&run(&fleet, &args, &vars).stdout).unwrap();
    assert_eq!(json["breaker_fleet"]["store_timeout_ms"], 40.0);
    assert_eq!(json["breaker_fleet"]["refresh_ms"], 3.0);
    assert_eq!(json["breaker_fleet"]["store"], "redis://127.0.0.1:1/");

    let (stdout, _) = text(&run(&fleet, &["explain", "broker"], &vars));
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let rows: Vec<String> = stdout.lines().map(words).collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("store_timeout 40ms own table ")
                && r.ends_with("retry.toml:20:17")),
        "{stdout}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("refresh 3ms environment RETRY_BREAKER__BROKER__REFRESH")),
        "{stdout}"
    );
    let (stdout, _) = text(&run(&fleet, &["list"], &vars));
    assert!(stdout.contains("; shared by the fleet through redis://127.0.0.1:1/ (store_timeout 40ms, refresh 3ms); used by publish, consume"), "{stdout}");

    let (stdout, _) = text(&run(FILE, &["show", "publish", "--seed", "1"], &[]));
    assert!(!stdout.contains("shared by the fleet"), "{stdout}");
    let (stdout, _) = text(&run(FILE, &["explain", "broker"], &[]));
    let rows: Vec<String> = stdout.lines().map(words).collect();
    assert!(
        rows.contains(&"refresh - (unused by a local breaker) built-in default".to_owned()),
        "{stdout}"
    );
}

#[test]
fn explain_reaches_every_table_of_a_shared_name_and_suggests_across_kinds() {
    let file = "[policies.broker]\nattempt_timeout = \"1s\"\nbreaker = \"broker\"\nbudget = \"broker\"\n\
                [budgets.broker]\nratio = 0.3\n[breakers.broker]\nprobes = 2\n\
                [policies.other]\nbreaker = \"payments\"\nattempt_timeout = \"1s\"\n[breakers.payments]\n";
    let out = run(file, &["explain", "broker"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let heads: Vec<&str> = stdout.lines().filter(|l| l.ends_with('`')).collect();
    assert_eq!(
        heads,
        ["policy `broker`", "budget `broker`", "breaker `broker`"],
        "{stdout}"
    );
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        stdout
            .lines()
            .any(|l| words(l).starts_with("ratio 0.3 own table")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| words(l).starts_with("probes 2 own table")),
        "{stdout}"
    );
    // A misspelt breaker name is offered the breaker, naming its kind.
    let out = run(file, &["explain", "paymnts"], &[]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("did you mean `payments`, a breaker?"),
        "{stderr}"
    );
    assert!(stderr.contains("breaker: broker, payments"), "{stderr}");
    let out = run(file, &["explain", "brokr"], &[]);
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("did you mean `broker`, a policy, a budget and a breaker?"),
        "{stderr}"
    );
}
