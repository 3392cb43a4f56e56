//! A program that depends on retry-config but never names it in code still
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
