//! What a newcomer reads first from the tool: an argument echoed back has
//! its control characters escaped, and `list` tells a hedged policy from an
//! unhedged one.

use std::process::{Command, Output};

fn run(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retry-policy"))
        .args(args)
        .current_dir(dir)
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_PROFILE")
        .output()
        .unwrap()
}

const FILE: &str = "[budgets.b]\n\
    [policies.plain]\ncap = \"1s\"\nbudget = \"b\"\n\
    [policies.hedged]\ncap = \"1s\"\nbudget = \"b\"\nhedge_after = \"p95\"\n\
    [policies.fixed]\ncap = \"1s\"\nbudget = \"b\"\nhedge_after = \"20ms\"\nhedge_share = 0.05\n";

#[test]
fn show_escapes_control_characters_of_its_argument() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("retry.toml"), FILE).unwrap();
    let out = run(dir.path(), &["show", "pl\u{1b}[31main"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "raw escape: {stderr:?}");
    assert!(stderr.contains("no policy `pl\\u{1b}[31main`"), "{stderr}");
}

#[test]
fn list_shows_hedging() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("retry.toml"), FILE).unwrap();
    let out = run(dir.path(), &["list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {stdout}"))
            .to_owned()
    };
    assert!(!line("plain").contains("hedge"), "{stdout}");
    assert!(
        line("hedged").contains("hedge after p95 (floor "),
        "{stdout}"
    );
    assert!(
        line("fixed").contains("hedge after 20ms (at most 5% of calls)"),
        "{stdout}"
    );
}
