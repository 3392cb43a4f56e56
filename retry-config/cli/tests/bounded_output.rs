//! `retry-policy check` on a file with 100,000 bad entries: every problem
//! is counted, at most `MAX_SHOWN_DIAGNOSTICS` are printed, then one line
//! says how many more there are and how to see them all (`--all`).

use std::process::{Command, Output};

fn check(path: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retry-policy"))
        .arg("check")
        .arg(path)
        .args(extra)
        .env_remove("RETRY_PROFILE")
        .env_remove("RETRY_CONFIG")
        .output()
        .unwrap()
}

#[test]
fn check_prints_under_100_kb_for_100_000_bad_entries_and_all_of_them_with_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    let list = vec!["\"Transient\""; 100_000].join(", ");
    std::fs::write(&path, format!("[policies.api]\nretry_on = [{list}]\n")).unwrap();

    for extra in [&[][..], &["--format", "short"]] {
        let out = check(&path, extra);
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.len() < 100_000, "{extra:?}: {} bytes", stdout.len());
        assert!(
            stdout.contains("... 99950 more not shown (the first 50 are); `retry-policy check --all` prints every one"),
            "{extra:?}: {}",
            &stdout[stdout.len().saturating_sub(500)..]
        );
    }
    let human = String::from_utf8_lossy(&check(&path, &[]).stdout).into_owned();
    assert!(human.ends_with("100000 errors, 0 warnings\n"), "{human}");

    let all = check(&path, &["--all", "--format", "short"]);
    let all = String::from_utf8_lossy(&all.stdout);
    assert_eq!(all.lines().count(), 100_000);
    assert!(!all.contains("not shown"));
}
