//! What the `retry-policy` binary's tests share: a valid file, and running
//! the binary with a clean retry environment.
// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const VALID: &str = r#"
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

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

pub fn run(args: &[&str]) -> Output {
    run_with_env(args, &[])
}

/// Runs the binary with a clean retry environment plus `vars`.
pub fn run_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(vars.iter().copied()).output().unwrap()
}

pub const FAST_ENV: &[(&str, &str)] = &[("RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS", "3")];

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Runs the binary in `dir` (so that `./retry.toml` is looked for there).
pub fn run_in(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.current_dir(dir).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(vars.iter().copied()).output().unwrap()
}

/// Runs the binary on `file`, written as `retry.toml` in a fresh
/// directory, with a clean retry environment plus `vars`.
pub fn run_file(file: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "retry.toml", file);
    let mut all = args.to_vec();
    all.extend(["--config", path.to_str().unwrap()]);
    run_with_env(&all, vars)
}

/// The output's stdout and stderr, as text.
pub fn text(o: &Output) -> (String, String) {
    (stdout(o), stderr(o))
}
