//! The `retry-policy` binary on input it cannot use: files it cannot read,
//! files past a limit, huge values and names, and a closed stdout.

mod common;

use common::*;
use std::process::{Command, Output};

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
