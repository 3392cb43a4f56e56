//! One rule for an empty profile name: `--profile ""` selects no profile,
//! as an empty `RETRY_PROFILE` does, and nothing suggests a `[profiles.]` table.

use std::process::{Command, Output};

fn run(args: &[&str], profile_var: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.args(args)
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_PROFILE");
    if let Some(p) = profile_var {
        cmd.env("RETRY_PROFILE", p);
    }
    cmd.output().unwrap()
}

#[test]
fn an_empty_profile_flag_is_the_base_settings_like_an_empty_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(
        &path,
        "[policies.quick]\nbase = \"10ms\"\ncap = \"1s\"\n[profiles.test.policies.quick]\nbase = \"1ms\"\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let flag = run(&["explain", "quick", "-c", file, "--profile", ""], None);
    let var = run(&["explain", "quick", "-c", file], Some(""));
    let flag_out = String::from_utf8_lossy(&flag.stdout);
    let flag_err = String::from_utf8_lossy(&flag.stderr);
    assert!(flag.status.success(), "{flag_out}{flag_err}");
    assert!(!flag_err.contains("[profiles.]"), "{flag_err}");
    assert_eq!(flag_out, String::from_utf8_lossy(&var.stdout));
    assert!(flag_out.contains("10ms"), "the base settings: {flag_out}");
    for args in [
        &["check", file, "--profile", ""][..],
        &["list", "-c", file, "--profile", ""],
    ] {
        let out = run(args, None);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
