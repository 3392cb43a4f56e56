//! `init()` prints the file's warnings unless told not to, and strict mode
//! turns a call whose policy is missing into the end of the program rather
//! than a single attempt. Each case runs in a child process (the registry
//! and strict mode are process-wide; exit codes are the point).

use retry_config::Setup;
use std::process::{Command, Output};

const CHILD: &str = "RETRY_CONFIG_STRICT_TEST_CHILD";

/// A cap beyond the deadline: a warning, not an error.
const WARNS: &str = "[policies.slow]\nbase = \"1ms\"\ncap = \"10s\"\ndeadline = \"1s\"\n";

fn child(test: &str, case: &str, file: &std::path::Path) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(CHILD, case)
        .env("RETRY_TEST_FILE", file)
        .env_remove("RETRY_STRICT")
        .env_remove("RETRY_CONFIG")
        .output()
        .unwrap()
}

fn file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, WARNS).unwrap();
    (dir, path)
}

#[test]
fn install_prints_the_warnings_unless_told_not_to() {
    if let Ok(case) = std::env::var(CHILD) {
        let path = std::env::var("RETRY_TEST_FILE").unwrap();
        let setup = Setup::new(path).report_warnings(case == "loud");
        assert!(!setup.install().unwrap().warnings().is_empty());
        return;
    }
    let (_dir, path) = file();
    let test = "install_prints_the_warnings_unless_told_not_to";
    let loud = child(test, "loud", &path);
    let stderr = String::from_utf8_lossy(&loud.stderr);
    assert!(loud.status.success(), "{stderr}");
    assert!(stderr.contains("warning: policy `slow`"), "{stderr}");
    let quiet = child(test, "quiet", &path);
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(quiet.status.success(), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
}

#[test]
fn strict_mode_ends_the_program_at_a_missing_policy() {
    use retry_core::__private::site::{CallSite, PolicyCache};
    // Not registered (an install would refuse it): a site the registry learns of at its first call.
    const CALL: CallSite = CallSite::new("not-in-the-file", "src/jobs.rs", 9, "jobs::run");
    static SITE: PolicyCache = PolicyCache::new(CALL);
    if let Ok(case) = std::env::var(CHILD) {
        let path = std::env::var("RETRY_TEST_FILE").unwrap();
        Setup::new(path)
            .strict(case == "strict")
            .report_warnings(false)
            .install()
            .unwrap();
        let policy = SITE.policy();
        println!("ran with max_attempts {:?}", policy.max_attempts());
        return;
    }
    let (_dir, path) = file();
    let test = "strict_mode_ends_the_program_at_a_missing_policy";
    let lenient = child(test, "lenient", &path);
    assert!(lenient.status.success());
    assert!(String::from_utf8_lossy(&lenient.stdout).contains("ran with max_attempts Some(1)"));
    assert!(String::from_utf8_lossy(&lenient.stderr).contains("runs once, without retry"));

    let strict = child(test, "strict", &path);
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(1), "{stderr}");
    assert!(!String::from_utf8_lossy(&strict.stdout).contains("ran with"));
    assert!(
        stderr.contains("`jobs::run` at src/jobs.rs:9 uses retry policy `not-in-the-file`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&path.display().to_string()),
        "names the file loaded: {stderr}"
    );
}
