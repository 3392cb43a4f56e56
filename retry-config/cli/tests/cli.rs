//! The `retry-policy` binary on a valid file and an invalid one: output and exit codes.

mod common;

use common::*;

#[test]
fn check_accepts_a_valid_file_and_reports_its_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let out = run(&["check", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("beyond the deadline"), "{text}"); // `short`: cap 5s, deadline 3.5s
    assert!(text.contains("0 errors, 1 warning"), "{text}");
    assert!(
        text.contains("ok with warnings (the base settings and every profile)"),
        "{text}"
    );
    // --deny-warnings turns the warning into a failure.
    let out = run(&["check", file.to_str().unwrap(), "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("1 error, 0 warnings"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_rejects_an_invalid_file_with_every_problem_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "bad.toml",
        "[policies.a]\nbsae = \"1s\"\ncap = 30\n",
    );
    let out = run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("bad.toml:2:1"), "{text}");
    assert!(text.contains("did you mean `base`?"), "{text}");
    assert!(text.contains("bad.toml:3:7"), "{text}");
    assert!(text.contains("cap = \"30ms\""), "{text}");
    assert!(text.contains("2 errors"), "{text}");
}

/// The tool's `redis` feature (on by default) turns on retrykit-config's, so it
/// checks the files of programs that share a budget through Redis.
#[cfg(feature = "redis")]
#[test]
fn check_and_list_accept_a_fleet_budget() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "retry.toml",
        "[policies.p]\nbudget = \"broker\"\n\n[budgets.broker]\nratio = 0.1\nscope = \"fleet\"\nstore = \"redis://127.0.0.1:1/\"\n",
    );
    let out = run(&["check", file.to_str().unwrap(), "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&["list", "-c", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("broker  ratio 0.1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn help_opens_with_what_the_tool_does() {
    let help = stdout(&run(&["--help"]));
    let first = help.lines().next().unwrap();
    assert!(first.contains("retry polic"), "{first}");
    assert!(
        !first.contains(env!("CARGO_PKG_DESCRIPTION")),
        "the crate's description is not the tool's: {first}"
    );
}

#[test]
fn help_names_every_override_that_no_env_ignores() {
    for args in [&["--help"][..], &["check", "--help"]] {
        let help = stdout(&run(args));
        let no_env = help
            .lines()
            .skip_while(|l| !l.contains("--no-env"))
            .nth(1)
            .unwrap_or_default();
        for prefix in ["RETRY_POLICY__", "RETRY_BUDGET__", "RETRY_BREAKER__"] {
            assert!(
                no_env.contains(prefix),
                "{args:?}: --no-env omits {prefix}: {no_env}"
            );
        }
    }
    let help = stdout(&run(&["--help"]));
    assert!(help.contains("RETRY_BREAKER__<NAME>__<KEY>"), "{help}");
}

#[test]
fn show_does_not_offer_more_attempts_than_it_can_show() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "retry.toml",
        "[policies.forever]\nbase = \"1ms\"\ncap = \"1ms\"\nmax_attempts = 0\ndeadline = \"10y\"\n",
    );
    let path = file.to_str().unwrap();
    let out = run(&[
        "show",
        "forever",
        "-c",
        path,
        "--seed",
        "1",
        "--attempts",
        "100000",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let last = text
        .lines()
        .find(|l| l.contains("the call would go on"))
        .unwrap();
    assert!(!last.contains("use --attempts N for more"), "{last}");
    assert!(last.contains("100000"), "{last}");
    // Below the maximum the hint stays.
    let out = run(&[
        "show",
        "forever",
        "-c",
        path,
        "--seed",
        "1",
        "--attempts",
        "5",
    ]);
    assert!(
        stdout(&out).contains("use --attempts N for more"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn list_shows_every_policy_and_budget() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let out = run_with_env(&["list", "--config", file.to_str().unwrap()], FAST_ENV);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let expected = "\
policies (3):
  outbox       exponential ×2 100ms..30s, full jitter, 8 attempts, deadline 2m, timeout 5s, on transient|throttled, budget broker
  outbox-fast  exponential ×2 100ms..2s, full jitter, 3 attempts, deadline 2m, timeout 5s, on transient|throttled, budget broker, extends outbox
  short        constant 1s..5s, full jitter, unlimited attempts, deadline 3s 500ms
budgets (1):
  broker  ratio 0.1, at least 10/s, window 10s; used by outbox, outbox-fast
breakers (0):
";
    assert_eq!(text, expected);
    assert!(
        stderr(&out).contains("beyond the deadline"),
        "warnings go to stderr"
    );
}

#[test]
fn explain_names_the_layer_of_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let out = run_with_env(
        &[
            "explain",
            "outbox-fast",
            "-c",
            file.to_str().unwrap(),
            "--profile",
            "test",
        ],
        FAST_ENV,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |key: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} row in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        text.starts_with("policy `outbox-fast` (profile `test`)\nextends: outbox\n"),
        "{text}"
    );
    assert_eq!(
        row("base"),
        format!("base 1ms profile `test` {}:34:8", file.display())
    );
    assert_eq!(
        row("cap"),
        format!("cap 5ms profile `test` {}:35:7", file.display())
    );
    assert_eq!(
        row("max_attempts"),
        "max_attempts 3 environment RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS environment:1:41"
    );
    assert_eq!(
        row("jitter"),
        format!("jitter full [defaults] {}:3:10", file.display())
    );
    assert_eq!(
        row("deadline"),
        format!("deadline 2m extends `outbox` {}:12:12", file.display())
    );
    assert_eq!(row("min_delay"), "min_delay 0s built-in default");
}

#[test]
fn show_prints_the_schedule_until_the_attempt_limit() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let args = [
        "show",
        "outbox",
        "-c",
        file.to_str().unwrap(),
        "--seed",
        "7",
        "--format",
        "json",
    ];
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let attempts = json["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 8);
    assert_eq!(json["ends"]["reason"], "attempt_limit");
    assert_eq!(json["seed"], 7);
    let mut cumulative = 0.0;
    for (i, a) in attempts.iter().take(7).enumerate() {
        let envelope = a["envelope_ms"].as_f64().unwrap();
        let wait = a["wait_ms"].as_f64().unwrap();
        assert_eq!(envelope, 100.0 * 2f64.powi(i as i32));
        assert!(
            (0.0..=envelope).contains(&wait),
            "full jitter stays under the envelope"
        );
        assert!((a["starts_at_ms"].as_f64().unwrap() - cumulative).abs() < 0.01);
        cumulative += wait;
        assert!((a["cumulative_ms"].as_f64().unwrap() - cumulative).abs() < 0.01);
    }
    assert!(attempts[7]["wait_ms"].is_null());
    // The same seed gives the same schedule.
    assert_eq!(stdout(&run(&args)), stdout(&out));
    // The table has a row per attempt and says why the call ends.
    let table = run(&[
        "show",
        "outbox",
        "-c",
        file.to_str().unwrap(),
        "--seed",
        "7",
    ]);
    let text = stdout(&table);
    assert!(text.contains("ATTEMPT"), "{text}");
    assert!(
        text.contains("the attempt limit ends the call after attempt 8"),
        "{text}"
    );
}

#[test]
fn show_stops_where_the_deadline_ends_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    // Constant 1s waits, no randomness worth speaking of, deadline 3.5s: attempts at 0, ~1s, ~2s, ~3s at most.
    let out = run(&[
        "show",
        "short",
        "-c",
        file.to_str().unwrap(),
        "--seed",
        "1",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["ends"]["reason"], "deadline");
    let attempts = json["attempts"].as_array().unwrap();
    let last_start = attempts.last().unwrap()["starts_at_ms"].as_f64().unwrap();
    assert!(last_start < 3500.0);
    assert!(
        attempts.len() >= 4,
        "full jitter of 1s waits fits at least 4 attempts in 3.5s"
    );
}

#[test]
fn an_unknown_policy_is_a_usage_error_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let out = run(&["show", "outbx", "-c", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean `outbox`?"),
        "{}",
        stderr(&out)
    );
    let out = run(&["explain", "nope", "-c", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    // The one did-you-mean ignores case, like every other suggestion.
    let out = run(&["show", "OUTBOX", "-c", file.to_str().unwrap()]);
    assert!(
        stderr(&out).contains("did you mean `outbox`?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn commands_on_an_invalid_file_exit_1_and_bad_arguments_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", "[policies.a]\nbase = 5\n");
    let out = run(&["list", "-c", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("retry.toml:2:8"), "{}", stderr(&out));
    assert_eq!(run(&["show"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(run(&["--help"]).status.code(), Some(0));
}

#[test]
fn color_is_off_when_piped_and_on_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.toml", "[policies.a]\nbsae = \"1s\"\n");
    let plain = stdout(&run(&["check", file.to_str().unwrap()]));
    assert!(!plain.contains('\u{1b}'), "{plain}");
    let colored = stdout(&run(&[
        "check",
        file.to_str().unwrap(),
        "--color",
        "always",
    ]));
    assert!(colored.contains("\u{1b}["), "{colored}");
}

#[test]
fn check_prints_short_and_json_diagnostics_for_tools() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "bad.toml",
        "[policies.a]\nbsae = \"1s\"\ncap = \"1s\"\n",
    );
    let path = file.to_str().unwrap();
    let out = run(&["check", path, "--format", "short"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!(
            "{path}:2:1: error: unknown key `bsae` in policy `a` [policies.a.bsae] (did you mean `base`?)\n"
        )
    );
    let out = run(&["check", path, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let line: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(line["severity"], "error");
    assert_eq!(
        (line["line"].as_u64(), line["column"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(line["end"]["column"], 5);
    assert_eq!(line["suggestion"], "base");
    assert_eq!(line["key"], "policies.a.bsae");
}
