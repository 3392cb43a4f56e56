//! A program that depends on retrykit-config but never names it in code still
//! gets the documented lazy load: its `#[retry]` retries by the file that
//! `RETRY_CONFIG` names (issue: "Lazy loading that depends on the linker").

use std::process::Command;

#[test]
fn a_program_that_never_names_retry_config_still_loads_its_policies() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policies.toml");
    std::fs::write(
        &file,
        "[policies.lazy-app]\nmax_attempts = 5\nbase = \"1ms\"\ncap = \"1ms\"\njitter = \"none\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lazy-app"))
        .env("RETRY_CONFIG", &file)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "succeeded after 3 calls", "stderr: {stderr}");
}

fn run_lazy_app(file: Option<&std::path::Path>, strict: bool) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_lazy-app"));
    command
        .current_dir(dir.path())
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_STRICT");
    if let Some(file) = file {
        command.env("RETRY_CONFIG", file);
    }
    if strict {
        command.env("RETRY_STRICT", "1");
    }
    command.output().unwrap()
}

#[test]
fn without_strict_mode_a_missing_policy_runs_once_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policies.toml");
    std::fs::write(&file, "[policies.lazy-ap]\nbase = \"1ms\"\ncap = \"1ms\"\n").unwrap();
    let out = run_lazy_app(Some(&file), false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "failed after 1 calls: connection reset"
    );
    assert!(
        stderr.contains(
            "uses retry policy `lazy-app`, which is not defined (did you mean `lazy-ap`?)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
}

#[test]
fn strict_mode_stops_the_program_when_the_policy_is_missing_or_nothing_loads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policies.toml");
    std::fs::write(&file, "[policies.other]\nbase = \"1ms\"\ncap = \"1ms\"\n").unwrap();
    for file in [Some(file.as_path()), None] {
        let out = run_lazy_app(file, true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "the call never ran"
        );
        assert!(
            stderr.contains("strict mode (RETRY_STRICT) stops the program"),
            "{stderr}"
        );
    }
}
