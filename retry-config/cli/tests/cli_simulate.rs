//! `retry-policy simulate`: its flags, their errors and what cut a run short.

mod common;

use common::*;

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
