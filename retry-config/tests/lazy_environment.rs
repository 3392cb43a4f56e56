//! Without `init`, a bad environment value never turns retries off: the
//! lazy load sets it aside, saying so (the variable, its value, the fix);
//! the policies it does not concern retry as the file says, and one it
//! concerns runs once and says why at its first call. `init` still refuses.
//! Discovery reads the process environment, so each case runs in a child
//! process with its own variables.

use retrykit_core::__private::site::{CallSite, PolicyCache};
use std::process::Command;

const CHILD: &str = "LAZY_ENV_TEST_CHILD";

const QUICK: CallSite = CallSite::new("quick", "src/quick.rs", 3, "fetch_quick");
const OTHER: CallSite = CallSite::new("other", "src/other.rs", 5, "fetch_other");
retrykit_core::__private::inventory::submit! { QUICK }
retrykit_core::__private::inventory::submit! { OTHER }
static QUICK_SITE: PolicyCache = PolicyCache::new(QUICK);
static OTHER_SITE: PolicyCache = PolicyCache::new(OTHER);

const FILE: &str = "[policies.quick]\nmax_attempts = 4\ncap = \"1s\"\n\
                    [policies.other]\nmax_attempts = 6\ncap = \"1s\"\n\
                    [policies.other-child]\nextends = \"other\"\n\
                    [profiles.test.policies.quick]\nmax_attempts = 5\n";

/// In the child: what each site gets, as `quick=N other=N child=N`.
#[test]
fn child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let attempts = |p: std::sync::Arc<retrykit_core::Policy>| p.max_attempts().unwrap_or(0);
    let child = retrykit_core::registry::policy("other-child").map_or(0, attempts);
    let (quick, other) = (attempts(QUICK_SITE.policy()), attempts(OTHER_SITE.policy()));
    let _ = attempts(OTHER_SITE.policy()); // said once only
    println!("quick={quick} other={other} child={child}");
    if std::env::var_os("LAZY_ENV_TEST_INIT").is_some() {
        let refused = retrykit_config::init().is_err();
        println!("init refused: {refused}");
    }
}

/// Runs the child with `vars` over a clean retry environment; its stdout and stderr.
fn run(vars: &[(&str, &str)]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, FILE).unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"]);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.env(CHILD, "1")
        .env("RETRY_CONFIG", &path)
        .envs(vars.iter().copied());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the child failed:\n{stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn a_bad_retry_strict_leaves_strict_mode_off_and_every_policy_retrying() {
    let (stdout, stderr) = run(&[("RETRY_STRICT", "2"), ("LAZY_ENV_TEST_INIT", "1")]);
    assert!(
        stdout.contains("quick=4 other=6 child=6"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("init refused: true"), "{stdout}");
    assert!(stderr.contains("RETRY_STRICT is `2`"), "{stderr}");
    assert!(stderr.contains("set RETRY_STRICT=1"), "the fix: {stderr}");
    assert!(stderr.contains("strict mode stays off"), "{stderr}");
    assert!(!stderr.contains("not defined"), "{stderr}");
}

#[test]
fn a_profile_the_file_lacks_leaves_the_base_settings() {
    let (stdout, stderr) = run(&[("RETRY_PROFILE", "typo"), ("LAZY_ENV_TEST_INIT", "1")]);
    assert!(
        stdout.contains("quick=4 other=6 child=6"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("init refused: true"), "{stdout}");
    assert!(stderr.contains("profile `typo` is not defined"), "{stderr}");
    assert!(stderr.contains("RETRY_PROFILE is `typo`"), "{stderr}");
    assert!(stderr.contains("base settings are used"), "{stderr}");
    assert!(!stderr.contains("which is not defined"), "{stderr}");
}

#[test]
fn a_bad_value_for_one_policy_withholds_it_and_its_children_only() {
    let (stdout, stderr) = run(&[
        ("RETRY_POLICY__OTHER__BASE", "garbage\u{1b}[31m"),
        ("LAZY_ENV_TEST_INIT", "1"),
    ]);
    // `quick` retries as the file says; `other` (and `other-child`, which
    // extends it) run once.
    assert!(
        stdout.contains("quick=4 other=1 child=0"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("init refused: true"), "{stdout}");
    assert!(
        stderr.contains(
            "RETRY_POLICY__OTHER__BASE is not used: policies other, other-child run once"
        ),
        "said at load: {stderr}"
    );
    // At `other`'s first call, once: the variable, its escaped value, the fix.
    let first_call =
        "`fetch_other` at src/other.rs:5 uses retry policy `other`, which was left out";
    assert_eq!(stderr.matches(first_call).count(), 1, "{stderr}");
    assert!(
        stderr.contains("RETRY_POLICY__OTHER__BASE is `garbage\\u{1b}[31m`"),
        "{stderr}"
    );
    assert!(stderr.contains("fix: "), "{stderr}");
    assert!(
        !stderr.contains("`quick`"),
        "quick is not concerned: {stderr}"
    );
    assert!(!stderr.contains("define [policies."), "{stderr}");
}

#[test]
fn an_empty_retry_profile_is_no_profile() {
    let (stdout, stderr) = run(&[("RETRY_PROFILE", "")]);
    assert!(stdout.contains("quick=4 other=6"), "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn a_bad_profile_and_a_bad_value_together_cost_only_what_the_value_concerns() {
    let (stdout, stderr) = run(&[
        ("RETRY_PROFILE", "typo"),
        ("RETRY_POLICY__OTHER__BASE", "garbage"),
    ]);
    assert!(
        stdout.contains("quick=4 other=1 child=0"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("RETRY_PROFILE is `typo`"), "{stderr}");
    assert!(
        stderr.contains("RETRY_POLICY__OTHER__BASE is `garbage`"),
        "{stderr}"
    );
}

#[test]
fn a_file_with_errors_says_not_loaded_never_define_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, "[policies.quick]\nbase = 100\n").unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture"])
        .env(CHILD, "1")
        .env("RETRY_CONFIG", &path)
        .env_remove("RETRY_PROFILE")
        .env_remove("RETRY_STRICT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("uses retry policy `quick`, which was left out of the policies loaded"),
        "{stderr}"
    );
    assert!(!stderr.contains("define [policies.quick]"), "{stderr}");
}

/// A long bad value with control characters in it: everything said about
/// it, at load and at the first call, shows it escaped and cut (its
/// excerpt too), never the whole value or a raw escape sequence.
#[test]
fn a_long_bad_value_is_said_escaped_and_cut_everywhere() {
    let value = format!("garbage\u{1b}[31m{}", "x".repeat(20_000));
    let (stdout, stderr) = run(&[("RETRY_POLICY__OTHER__BASE", value.as_str())]);
    assert!(
        stdout.contains("quick=4 other=1 child=0"),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "a raw escape: {stderr:?}");
    let long = "x".repeat(500);
    assert!(!stderr.contains(&long), "the whole value: {stderr}");
    assert!(stderr.len() < 5_000, "{} bytes: {stderr}", stderr.len());
    // At the first call: the variable, its value escaped and cut, and the fix.
    assert!(
        stderr.contains("RETRY_POLICY__OTHER__BASE is `garbage\\u{1b}[31mxxx"),
        "{stderr}"
    );
    assert!(stderr.contains("x…`"), "{stderr}");
    assert!(stderr.contains("fix: "), "{stderr}");
    // At load: the rule and where, with the excerpt's escape shown escaped.
    assert!(stderr.contains("`base` is not a duration"), "{stderr}");
    assert!(
        stderr.contains("RETRY_POLICY__OTHER__BASE=garbage\\u{1b}[31mxxx"),
        "{stderr}"
    );
}
