//! The `retry-policy` binary on a valid file and an invalid one: output and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VALID: &str = r#"
[defaults]
jitter = "full"
max_attempts = 5

[policies.outbox]
backoff = "exponential"
base = "100ms"
factor = 2.0
cap = "30s"
max_attempts = 8
deadline = "2m"
attempt_timeout = "5s"
retry_on = ["transient", "throttled"]
budget = "broker"

[policies.outbox-fast]
extends = "outbox"
cap = "2s"

[policies.short]
backoff = "constant"
base = "1s"
cap = "5s"
max_attempts = 0
deadline = "3500ms"

[budgets.broker]
ratio = 0.1
min_per_sec = 10
window = "10s"

[profiles.test.policies.outbox]
base = "1ms"
cap = "5ms"
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run(args: &[&str]) -> Output {
    run_with_env(args, &[])
}

/// Runs the binary with a clean retry environment plus `vars`.
fn run_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(vars.iter().copied()).output().unwrap()
}

const FAST_ENV: &[(&str, &str)] = &[("RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS", "3")];

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

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

/// Runs the binary in `dir` (so that `./retry.toml` is looked for there).
fn run_in(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.current_dir(dir).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(vars.iter().copied()).output().unwrap()
}

#[test]
fn a_file_that_cannot_be_read_means_the_command_could_not_run() {
    // check prints diagnostics on stdout; the other commands on stderr.
    let out = run(&["check", "/no/such/retry.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("cannot read /no/such/retry.toml"),
        "{}",
        stdout(&out)
    );
    for command in [
        &["list"][..],
        &["show", "a"],
        &["explain", "a"],
        &["simulate", "a"],
    ] {
        let mut args = command.to_vec();
        args.extend(["-c", "/no/such/retry.toml"]);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    }
    // A file with problems is still 1, and --help says which is which.
    let help = stdout(&run(&["--help"]));
    assert!(help.contains("1 the configuration has errors"), "{help}");
    assert!(help.contains("2 the command could not run"), "{help}");
    assert!(help.contains("cannot be read"), "{help}");
}

#[test]
fn each_read_failure_gets_a_hint_that_fits_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hint = |args: &[&str], vars: &[(&str, &str)]| {
        let out = run_in(d, args, vars);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        stdout(&out) + &stderr(&out)
    };
    // A named file that is missing: check the path, not RETRY_CONFIG.
    let text = hint(&["check", "missing.toml"], &[]);
    assert!(text.contains("check the path"), "{text}");
    assert!(!text.contains("RETRY_CONFIG"), "{text}");
    let text = hint(&["list", "-c", "missing.toml"], &[]);
    assert!(!text.contains("RETRY_CONFIG"), "{text}");
    // A directory.
    std::fs::create_dir(d.join("conf")).unwrap();
    let text = hint(&["check", "conf"], &[]);
    assert!(text.contains("is a directory"), "{text}");
    assert!(!text.contains("RETRY_CONFIG"), "{text}");
    // Not UTF-8: where the bad byte is.
    std::fs::write(d.join("latin1.toml"), b"[policies.a]\n# caf\xe9\n").unwrap();
    let text = hint(&["check", "latin1.toml"], &[]);
    assert!(text.contains("UTF-8"), "{text}");
    assert!(text.contains("line 2, column 6"), "{text}");
    assert!(!text.contains("RETRY_CONFIG"), "{text}");
    // RETRY_CONFIG naming a missing file: say that it is RETRY_CONFIG's path.
    let text = hint(&["list"], &[("RETRY_CONFIG", "elsewhere.toml")]);
    assert!(text.contains("RETRY_CONFIG names"), "{text}");
    // Only the default file, looked for and not found, suggests RETRY_CONFIG.
    let text = hint(&["list"], &[]);
    assert!(text.contains("cannot read retry.toml"), "{text}");
    assert!(text.contains("set RETRY_CONFIG"), "{text}");
    assert!(text.contains("--config FILE"), "{text}");
    let text = hint(&["check"], &[]);
    assert!(text.contains("set RETRY_CONFIG"), "{text}");
}

#[test]
fn check_says_when_a_file_defines_no_policies() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.toml", ""),
        ("only-budgets.toml", "[budgets.b]\nratio = 0.1\n"),
    ] {
        let file = write(dir.path(), name, text);
        let out = run(&["check", file.to_str().unwrap()]);
        let text = stdout(&out);
        assert!(text.contains("defines no policies"), "{name}: {text}");
        assert!(!text.contains(": ok ("), "{name}: {text}");
        // A warning, so --deny-warnings fails on it.
        let out = run(&["check", file.to_str().unwrap(), "--deny-warnings"]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stdout(&out));
    }
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
fn simulate_names_flags_it_has_in_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let out = run(&[
        "simulate",
        "outbox",
        "-c",
        file.to_str().unwrap(),
        "--tick",
        "99y",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(text.contains("--tick"), "{text}");
    assert!(text.contains("--horizon"), "{text}");
    // And the flag it names exists.
    let out = run(&[
        "simulate",
        "outbox",
        "-c",
        file.to_str().unwrap(),
        "--tick",
        "99y",
        "--horizon",
        "99y",
        "--clients",
        "10",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn simulate_reads_its_durations_in_the_files_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let path = file.to_str().unwrap();
    let base = ["simulate", "outbox", "-c", path, "--clients", "10"];
    // A fraction and a spaced sum read as they do in retry.toml.
    let out = run(&[&base[..], &["--tick", "0.5ms", "--outage", "1s 500ms"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // `M` is refused as in the file (minutes or milliseconds?), never read as months.
    let out = run(&[&base[..], &["--outage", "1M"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(text.contains("--outage"), "{text}");
    assert!(
        text.contains("`m` (minutes) or `ms` (milliseconds)"),
        "{text}"
    );
}

#[test]
fn simulate_says_which_limit_cut_a_run_short() {
    // Unlimited attempts for an hour against a server down for a day: without
    // a limit, ten thousand clients would make some 3.6 billion calls.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "retry.toml",
        "[policies.endless]\nbackoff = \"constant\"\nbase = \"10ms\"\ncap = \"10ms\"\nmax_attempts = 0\ndeadline = \"1h\"\n",
    );
    let path = file.to_str().unwrap();
    let base = ["simulate", "endless", "-c", path, "--outage", "1day"];
    let out = run(&[&base[..], &["--max-calls", "5000"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("CALLS"), "{text}");
    let note = text
        .lines()
        .find(|l| l.contains("still retrying"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains("--max-calls 5000"), "{note}");
    let out = run(&[&base[..], &["--max-calls", "5000", "--format", "json"]].concat());
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["policies"][0]["calls"], 5000);
    assert_eq!(json["policies"][0]["stopped_by"], "call_limit");
    assert_eq!(json["max_calls"], 5000);
    // The horizon, named as the flag that moves it.
    let out = run(&[&base[..], &["--horizon", "2s", "--clients", "10"]].concat());
    let text = stdout(&out);
    let note = text
        .lines()
        .find(|l| l.contains("still retrying"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains("--horizon"), "{note}");
    // The limit itself is bounded: no flag value buys an unbounded run.
    let out = run(&[&base[..], &["--max-calls", "2000000000"]].concat());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn simulate_json_shows_the_timer_model_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let path = file.to_str().unwrap();
    let base = [
        "simulate",
        "outbox",
        "-c",
        path,
        "--clients",
        "10",
        "--format",
        "json",
    ];
    let json = |extra: &[&str]| -> serde_json::Value {
        let out = run(&[&base[..], extra].concat());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let modelled = json(&["--timer-resolution", "2ms", "--timer-skipped", "0.25"]);
    assert_eq!(modelled["timer_resolution_ms"], 2.0, "{modelled}");
    assert_eq!(modelled["timer_skipped"], 0.25, "{modelled}");
    // Without --timer-resolution the plain tick model runs: the keys are
    // there, null, so that a script can tell the two apart.
    let plain = json(&[]);
    assert!(plain["timer_resolution_ms"].is_null(), "{plain}");
    assert!(plain["timer_skipped"].is_null(), "{plain}");
    assert!(plain.get("timer_skipped").is_some(), "{plain}");
}

#[test]
fn huge_numbers_print_in_scientific_notation() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "retry.toml",
        "[policies.a]\nfactor = 1e308\ncap = \"30s\"\n",
    );
    let out = run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("factor = 1e308"), "{text}");
    assert!(text.contains("(got 1e308)"), "{text}");
    assert!(!text.contains("00000000000000000000"), "{text}");
    // The label and the fix both print the value as it was written.
    let file = write(dir.path(), "tiny.toml", "[budgets.b]\nratio = -1e-300\n");
    let text = stdout(&run(&["check", file.to_str().unwrap()]));
    assert!(text.contains("ratio = -1e-300"), "{text}");
    assert!(text.contains("(got -1e-300)"), "{text}");
}

/// A chain of `n` policies, `p{i}` extending `p{i-1}`: `p0` sets the cap and
/// the attempts, the middle one the base, a profile and the environment
/// reach the chain through its root and its second link.
fn chain(n: usize) -> String {
    let mut text = String::from("[policies.p0]\ncap = \"1s\"\nmax_attempts = 2\n");
    for i in 1..n {
        text.push_str(&format!("[policies.p{i}]\nextends = \"p{}\"\n", i - 1));
        if i == n / 2 {
            text.push_str("base = \"7ms\"\n");
        }
    }
    text.push_str("[profiles.test.policies.p0]\nmax_attempts = 4\n");
    text
}

#[test]
fn the_deepest_allowed_extends_chain_loads_and_a_deeper_one_is_one_clear_error() {
    // A 5,000-deep chain once never finished (each policy's chain walked
    // from scratch); now `extends` is at most MAX_EXTENDS_DEPTH deep, and a
    // deeper chain is refused at once, naming the key and the limit.
    let dir = tempfile::tempdir().unwrap();
    let too_deep = write(dir.path(), "too-deep.toml", &chain(5000));
    let out = run(&["check", too_deep.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("extends"), "{said}");
    assert!(
        said.contains(&retrykit_config::MAX_EXTENDS_DEPTH.to_string()),
        "{said}"
    );

    let n = retrykit_config::MAX_EXTENDS_DEPTH + 1;
    let file = write(dir.path(), "deep.toml", &chain(n));
    let path = file.to_str().unwrap();
    let out = run(&["check", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains(": ok ("), "{}", stdout(&out));

    let leaf = format!("p{}", n - 1);
    let vars = [("RETRY_POLICY__P1__JITTER", "none")];
    let out = run_with_env(&["explain", &leaf, "-c", path, "-p", "test"], &vars);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let ancestors: Vec<String> = (0..n - 1).rev().map(|i| format!("p{i}")).collect();
    assert!(
        text.contains(&format!("extends: {}\n", ancestors.join(" → "))),
        "the whole chain, nearest first"
    );
    let row = |key: &str| {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} row"));
        line.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert!(
        row("cap").starts_with("cap 1s extends `p0`"),
        "{}",
        row("cap")
    );
    let middle = format!("base 7ms extends `p{}`", n / 2);
    assert!(row("base").starts_with(&middle), "{}", row("base"));
    assert!(row("max_attempts").starts_with("max_attempts 4 profile `test`"));
    assert!(row("jitter").starts_with("jitter none environment RETRY_POLICY__P1__JITTER"));

    let out = run(&["list", "-c", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.contains(", extends p"))
            .count(),
        n - 1
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

/// Issue 22: a name of 65,536 characters or more once made `list` and
/// `simulate` panic (a `{:width$}` past the formatter's limit). The name is
/// shown clipped, with an ellipsis, and every line stays short.
#[test]
fn huge_names_are_clipped_and_never_panic() {
    let huge = "p".repeat(70_000);
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "retry.toml",
        &format!(
            "[policies.{huge}]\nbase = \"10ms\"\ncap = \"20ms\"\nmax_attempts = 2\nbudget = \"{huge}\"\n\
             [policies.child]\nextends = \"{huge}\"\n\
             [policies.short]\nbase = \"10ms\"\ncap = \"20ms\"\nmax_attempts = 2\n\
             [budgets.{huge}]\nratio = 0.1\n"
        ),
    );
    let path = file.to_str().unwrap();
    let bounded = |out: &Output| {
        let (text, err) = (stdout(out), stderr(out));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            &err[..err.len().min(2000)]
        );
        assert!(!err.contains("panicked"), "{}", &err[..err.len().min(2000)]);
        let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(longest < 1_000, "a line of {longest} characters");
        assert!(text.contains('…'), "{text}");
        text
    };
    let text = bounded(&run(&["list", "-c", path]));
    assert!(text.contains("  short "), "{text}");
    for scenario in ["herd", "contention"] {
        bounded(&run(&[
            "simulate",
            "short",
            "--compare",
            &huge,
            "-c",
            path,
            "--clients",
            "10",
            "--scenario",
            scenario,
        ]));
    }
}

/// Issue 22: `--scenario contention` silently ignored the herd's flags.
#[test]
fn simulate_contention_refuses_the_herds_flags() {
    for (flag, value) in [
        ("--tick", "2ms"),
        ("--outage", "5s"),
        ("--capacity", "50"),
        ("--max-calls", "1000"),
        ("--timer-resolution", "1ms"),
    ] {
        let out = run(&[
            "simulate",
            "--scenario",
            "contention",
            "--clients",
            "10",
            flag,
            value,
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stdout(&out));
        let text = stderr(&out);
        assert!(text.contains(flag), "{text}");
        assert!(text.contains("herd scenario only"), "{text}");
        assert!(text.contains("--scenario herd"), "{text}");
        assert!(text.contains(&format!("drop {flag}")), "{text}");
    }
    // Without them, contention runs.
    let out = run(&["simulate", "--scenario", "contention", "--clients", "10"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Issue 22: `--timer-resolution 0ms` was told to "use a tick of at most 0ns".
#[test]
fn a_zero_timer_resolution_gets_one_clear_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "retry.toml", VALID);
    let path = file.to_str().unwrap();
    let base = ["simulate", "outbox", "-c", path, "--clients", "10"];
    let out = run(&[&base[..], &["--timer-resolution", "0ms"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(!text.contains("0ns"), "{text}");
    assert_eq!(text.matches("--timer-resolution").count(), 1, "{text}");
    assert!(
        text.contains("--timer-resolution must be at least one tick; use 1ms"),
        "{text}"
    );
    assert!(text.contains("the tick (1ms)"), "{text}");
    // With a coarser tick, the fix is the tick's length, not tokio's 1ms.
    let out = run(&[&base[..], &["--tick", "10ms", "--timer-resolution", "0ms"]].concat());
    let text = stderr(&out);
    assert!(text.contains("at least one tick; use 10ms"), "{text}");
    // A non-zero resolution finer than the tick: both ways out are named.
    let out = run(&[&base[..], &["--tick", "10ms", "--timer-resolution", "2ms"]].concat());
    let text = stderr(&out);
    assert!(text.contains("at least 10ms"), "{text}");
    assert!(text.contains("a tick of at most 2ms"), "{text}");
}

/// Issue 22: a reader that closes stdout early (`| head -1`) made the tool
/// panic on the broken pipe (status 101). It now stops quietly, status 0.
#[test]
fn a_closed_stdout_ends_the_tool_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..3000)
        .map(|i| format!("[policies.p{i}]\nmax_attempts = 2\n"))
        .collect();
    let file = write(dir.path(), "many.toml", &text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_retry-policy"))
        .args(["list", "-c", file.to_str().unwrap()])
        .env_remove("RETRY_PROFILE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    // The listing is larger than a pipe holds: the tool is still writing
    // when the reader goes.
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(first, "policies (3000):\n");
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!said.contains("panicked"), "{said}");
}
