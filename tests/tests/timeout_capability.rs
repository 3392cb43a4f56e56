//! A policy's `attempt_timeout` at a call site whose error type cannot stand
//! for a timed-out attempt is never silently ignored at run time: `init()`
//! refuses it, naming the site, and without `init` the first call warns.
//! (The build-time half is `ui/retry/attempt-timeout-*.rs`.)

use retrykit_config::Setup;
use std::process::Command;

const CHILD: &str = "RETRY_TIMEOUT_CAPABILITY_CHILD";

/// No `Classify`: every error is transient, and none can stand for a timeout.
#[retrykit_core::retry(policy = "cap-untimed")]
fn untimed() -> Result<(), String> {
    Err("busy".into())
}

/// `io::Error` can: `ErrorKind::TimedOut`.
#[retrykit_core::retry(policy = "cap-timed")]
fn timed() -> std::io::Result<()> {
    Ok(())
}

const BOTH_TIMED: &str = "[defaults]\ncap = \"1ms\"\nbase = \"1ms\"\nmax_attempts = 2\n\
    [policies.cap-untimed]\nattempt_timeout = \"10ms\"\n\
    [policies.cap-timed]\nattempt_timeout = \"10ms\"\n";

#[test]
fn init_refuses_a_timeout_the_error_type_cannot_carry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, BOTH_TIMED).unwrap();
    let err = Setup::new(&path).install().unwrap_err();
    let errors: Vec<_> = err.errors().collect();
    assert_eq!(
        errors.len(),
        1,
        "only the site that cannot carry it: {}",
        err.render()
    );
    let message = &errors[0].message;
    assert!(
        message.contains("policy `cap-untimed` sets attempt_timeout = 10ms"),
        "{message}"
    );
    assert!(
        message.contains("timeout_capability::untimed` at tests/tests/timeout_capability.rs:12"),
        "{message}"
    );
    assert!(
        err.render().contains("#[classify(timeout)]"),
        "{}",
        err.render()
    );

    // Switching it off for that policy is the other fix.
    std::fs::write(
        &path,
        BOTH_TIMED.replace(
            "[policies.cap-untimed]\nattempt_timeout = \"10ms\"",
            "[policies.cap-untimed]",
        ),
    )
    .unwrap();
    Setup::new(&path).install().unwrap();
    assert!(timed().is_ok());
    assert_eq!(untimed(), Err("busy".to_owned()));
}

#[test]
fn without_init_the_first_call_says_the_timeout_is_not_enforced() {
    if std::env::var_os(CHILD).is_some() {
        // Lazy load, then two calls: one warning.
        assert_eq!(untimed(), Err("busy".to_owned()));
        assert_eq!(untimed(), Err("busy".to_owned()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, BOTH_TIMED).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "without_init_the_first_call_says_the_timeout_is_not_enforced",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("RETRY_CONFIG", &path)
        .env_remove("RETRY_STRICT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warning = "uses retry policy `cap-untimed`, whose attempt_timeout (10ms) is not enforced on an attempt in flight there";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}
