//! `init()` prints the file's warnings unless told not to, and strict mode
//! turns a call whose policy is missing into the end of the program rather
//! than a single attempt. Each case runs in a child process (the registry
//! and strict mode are process-wide; exit codes are the point).

use retrykit_config::Setup;
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
    use retrykit_core::__private::site::{CallSite, PolicyCache};
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

/// `init()` in a child process with `vars` set; what it returned, rendered.
fn init_with(test: &str, vars: &[(&str, &std::path::Path)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture"])
        .env(CHILD, "init")
        .env_remove("RETRY_STRICT")
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_PROFILE");
    for (k, v) in vars {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let start = stdout.find("<<<").expect("the child printed its outcome") + 3;
    let end = stdout.find(">>>").unwrap();
    stdout[start..end].to_owned()
}

/// In the child: runs `init()` and prints its outcome between markers.
fn print_init() {
    let outcome = match retrykit_config::init() {
        Ok(_) => "ok".to_owned(),
        Err(diags) => diags.render(),
    };
    println!("<<<{outcome}>>>");
}

#[test]
fn an_unrecognised_retry_strict_is_an_error_naming_the_accepted_values() {
    if std::env::var(CHILD).is_ok() {
        return print_init();
    }
    let (_dir, path) = file();
    let test = "an_unrecognised_retry_strict_is_an_error_naming_the_accepted_values";
    for value in ["2", "enabled", "o n"] {
        let rendered = init_with(
            test,
            &[
                ("RETRY_CONFIG", &path),
                ("RETRY_STRICT", std::path::Path::new(value)),
            ],
        );
        assert!(rendered.contains("RETRY_STRICT"), "{value:?}: {rendered}");
        assert!(
            rendered.contains("1, true, yes, on") && rendered.contains("0, false, no, off"),
            "the accepted values: {rendered}"
        );
        assert!(rendered.contains("unset"), "the fix: {rendered}");
    }
    // Empty is unset, as for RETRY_CONFIG and RETRY_PROFILE.
    for value in [" On ", "0", "FALSE", "yes", ""] {
        let rendered = init_with(
            test,
            &[
                ("RETRY_CONFIG", &path),
                ("RETRY_STRICT", std::path::Path::new(value)),
            ],
        );
        assert_eq!(rendered, "ok", "{value:?}");
    }
}

#[test]
fn init_words_a_bad_retry_config_as_the_tool_does() {
    if std::env::var(CHILD).is_ok() {
        return print_init();
    }
    let test = "init_words_a_bad_retry_config_as_the_tool_does";
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let rendered = init_with(test, &[("RETRY_CONFIG", &missing)]);
    assert!(rendered.contains("cannot read"), "{rendered}");
    assert!(
        rendered.contains("RETRY_CONFIG names this file"),
        "{rendered}"
    );
    assert!(!rendered.contains("set RETRY_CONFIG"), "{rendered}");
    let rendered = init_with(test, &[("RETRY_CONFIG", dir.path())]);
    assert!(rendered.contains("it is a directory"), "{rendered}");
    assert!(!rendered.contains("no policy file found"), "{rendered}");
}

/// A bad `RETRY_STRICT` is `init()`'s error, said once: retrykit-core, which
/// warns about such a value when asked on its own, is not asked as well.
#[test]
fn a_bad_retry_strict_is_said_once_by_init() {
    if std::env::var(CHILD).is_ok() {
        return print_init();
    }
    let (_dir, path) = file();
    let test = "a_bad_retry_strict_is_said_once_by_init";
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(CHILD, "init")
        .env("RETRY_CONFIG", &path)
        .env("RETRY_STRICT", "2")
        .env_remove("RETRY_PROFILE")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(stdout.matches("RETRY_STRICT is `2`").count(), 1, "{stdout}");
    assert!(!stderr.contains("RETRY_STRICT"), "said again: {stderr}");
}
