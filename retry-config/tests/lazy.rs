//! The registry loads the discovered file on its first lookup when `init`
//! was never called. Discovery reads the process environment, so the check
//! runs in a child process with its own `RETRY_CONFIG` and `RETRY_PROFILE`.

use std::process::Command;

const CHILD: &str = "RETRY_CONFIG_LAZY_TEST_CHILD";

// A call site whose policy the file lacks: the lazy loader still installs the
// valid file, and that site's first call (which runs without retry) says so
// on stderr, once, with a did-you-mean.
const LAZZY: retrykit_core::__private::site::CallSite =
    retrykit_core::__private::site::CallSite::new("lazzy", "src/jobs.rs", 7, "run_job");
retrykit_core::__private::inventory::submit! { LAZZY }

static SITE: retrykit_core::__private::site::PolicyCache =
    retrykit_core::__private::site::PolicyCache::new(LAZZY);

#[test]
fn the_first_lookup_loads_retry_toml_with_the_profile_and_environment() {
    if std::env::var_os(CHILD).is_some() {
        // In the child: nothing was installed, so this lookup runs the lazy loader.
        assert_eq!(retrykit_config::DEFAULT_FILE, "retry.toml");
        let policy =
            retrykit_core::registry::policy("lazy").expect("the lazy loader installed the file");
        assert_eq!(policy.base(), std::time::Duration::from_millis(1)); // profile `test`
        assert_eq!(policy.max_attempts(), Some(9)); // environment
        for _ in 0..2 {
            let fallback = SITE.policy();
            assert_eq!(fallback.max_attempts(), Some(1));
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("custom.toml");
    std::fs::write(
        &path,
        "[policies.lazy]\nbase = \"100ms\"\ncap = \"1s\"\n[profiles.test.policies.lazy]\nbase = \"1ms\"\n",
    )
    .unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_first_lookup_loads_retry_toml_with_the_profile_and_environment",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("RETRY_CONFIG", &path)
        .env("RETRY_PROFILE", "test")
        .env("RETRY_POLICY__LAZY__MAX_ATTEMPTS", "9")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the child process failed:\n{stderr}"
    );
    assert_eq!(
        stderr
            .matches("`run_job` at src/jobs.rs:7 uses retry policy `lazzy`, which is not defined (did you mean `lazy`?)")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains(&path.display().to_string()),
        "names the file loaded: {stderr}"
    );
}
