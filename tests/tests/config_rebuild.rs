//! The compile-time check follows the file: a crate whose `retry.toml`
//! loses a policy stops compiling at the call site, and compiles again when
//! the policy comes back, with no `cargo clean` in between.
//!
//! Builds a two-line crate with cargo, in its own target directory next to
//! trybuild's (the first build compiles retry-core once; later ones only the
//! small crate).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAIN: &str = r#"#[retry_core::retry(policy = "outbox")]
fn send() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {
    send().unwrap();
}
"#;

fn target_dir() -> PathBuf {
    tests::scratch_target_dir()
}

fn build(dir: &Path, target: &Path) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args(["build", "--quiet", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RETRY_CONFIG")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn editing_retry_toml_rebuilds_and_rechecks_the_names() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = target_dir();
    let dir = target.join("crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"retry-rebuild-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nretry-core = {{ path = {:?}, features = [\"macros\"] }}\n\n[workspace]\n",
        workspace.join("retry-core")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    let config = dir.join("retry.toml");

    std::fs::write(&config, "[policies.outbox]\nbase = \"1ms\"\n").unwrap();
    let first = build(&dir, &target);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );

    std::fs::write(&config, "[policies.outbox-v2]\nbase = \"1ms\"\n").unwrap();
    let renamed = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&renamed.stderr);
    assert!(
        !renamed.status.success(),
        "the edit must trigger a rebuild and fail it"
    );
    assert!(
        stderr.contains("unknown policy `outbox`; did you mean `outbox-v2`?"),
        "{stderr}"
    );

    std::fs::write(&config, "[policies.outbox]\nbase = \"2ms\"\n").unwrap();
    let restored = build(&dir, &target);
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
}

#[test]
fn an_invalid_retry_toml_is_reported_once_not_once_per_call_site() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = target_dir();
    let dir = target.join("broken");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"retry-broken-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nretry-core = {{ path = {:?}, features = [\"macros\"] }}\n\n[workspace]\n",
        workspace.join("retry-core")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let three_sites = MAIN.replace(
        "fn main() {",
        "#[retry_core::retry(policy = \"outbox\")]\nfn again() -> Result<(), std::io::Error> { Ok(()) }\n\n\
         #[retry_core::retry(policy = \"outbox\")]\nfn third() -> Result<(), std::io::Error> { Ok(()) }\n\n\
         fn main() {\n    again().unwrap();\n    third().unwrap();",
    );
    std::fs::write(dir.join("src/main.rs"), three_sites).unwrap();
    std::fs::write(dir.join("retry.toml"), "[policies.outbox\nbase = \"1ms\"\n").unwrap();
    let out = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken file fails the build");
    assert_eq!(
        stderr.matches("is not valid TOML").count(),
        1,
        "one error for the file, not one per call site:\n{stderr}"
    );
}
