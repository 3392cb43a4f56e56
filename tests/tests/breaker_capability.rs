//! A policy's circuit breaker at a call site whose error type cannot stand
//! for an attempt the breaker refused is never silently ignored at run
//! time: `init()` refuses it, naming the site and the fix. (The build-time
//! half is `ui/retry/breaker-*.rs`.)

use retrykit_config::Setup;

/// No `Classify`: no error of it can stand for a refusal.
#[retrykit_core::retry(policy = "brk-uncarried")]
fn uncarried() -> Result<(), String> {
    Err("busy".into())
}

/// `io::Error` can (an `Other` error carrying the refusal).
#[retrykit_core::retry(policy = "brk-carried")]
fn carried() -> std::io::Result<()> {
    Ok(())
}

const BOTH_GUARDED: &str = "[defaults]\ncap = \"1ms\"\nbase = \"1ms\"\nmax_attempts = 2\n\
    [policies.brk-uncarried]\nbreaker = \"dep\"\n\
    [policies.brk-carried]\nbreaker = \"dep\"\n\
    [breakers.dep]\nmin_calls = 10\n";

#[test]
fn init_refuses_a_breaker_the_error_type_cannot_carry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, BOTH_GUARDED).unwrap();
    let err = Setup::new(&path)
        .report_warnings(false)
        .install()
        .unwrap_err();
    let errors: Vec<_> = err.errors().collect();
    assert_eq!(
        errors.len(),
        1,
        "only the site that cannot carry it: {}",
        err.render()
    );
    let message = &errors[0].message;
    assert!(
        message.contains("policy `brk-uncarried` names breaker `dep`"),
        "{message}"
    );
    assert!(
        message.contains("breaker_capability::uncarried` at tests/tests/breaker_capability.rs:9"),
        "{message}"
    );
    assert_eq!(errors[0].key, "policies.brk-uncarried.breaker");
    assert!(
        err.render().contains("#[classify(breaker_open)]"),
        "{}",
        err.render()
    );

    // Switching it off for that policy is the other fix.
    std::fs::write(
        &path,
        BOTH_GUARDED.replace(
            "[policies.brk-uncarried]\nbreaker = \"dep\"",
            "[policies.brk-uncarried]\nbreaker = \"none\"",
        ),
    )
    .unwrap();
    Setup::new(&path).report_warnings(false).install().unwrap();
    assert!(carried().is_ok());
    assert_eq!(uncarried(), Err("busy".to_owned()));
    let installed = retrykit_core::registry::policy("brk-carried").unwrap();
    assert_eq!(installed.breaker().unwrap().name(), Some("dep"));
}
