//! The compile-time check follows the file: a crate whose `retry.toml`
//! loses a policy stops compiling at the call site, and compiles again when
//! the policy comes back, with no `cargo clean` in between. A file
//! `RETRY_CONFIG` names that is not there fails the build; no file at all
//! makes the build say (once) that nothing is checked, and how to turn the
//! check on.
//!
//! Builds a two-line crate with cargo, in its own target directory next to
//! trybuild's (the first build compiles retrykit-core once; later ones only the
//! small crate).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAIN: &str = r#"#[retrykit_core::retry(policy = "outbox")]
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
    build_with(dir, target, None)
}

/// Builds with `RETRY_CONFIG` set to `config`, or unset.
fn build_with(dir: &Path, target: &Path, config: Option<&Path>) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--quiet", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RETRY_CONFIG")
        .env_remove("RUSTFLAGS");
    if let Some(config) = config {
        command.env("RETRY_CONFIG", config);
    }
    command.output().unwrap()
}

/// A scratch crate `name` in `target/<dir>`, depending on retrykit-core, with
/// `main` as its `src/main.rs` (written afresh, so the next build compiles
/// it) and `metadata` appended to its manifest. Returns its directory.
fn scratch(target: &Path, dir: &str, name: &str, main: &str, metadata: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = target.join(dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nretrykit-core = {{ path = {:?}, features = [\"macros\"] }}\n\n[workspace]\n{metadata}",
        workspace.join("retry-core")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    dir
}

/// `MAIN` with two more call sites naming `policy`.
fn three_sites(policy: &str) -> String {
    MAIN.replace(
        "fn main() {",
        &format!(
            "#[retrykit_core::retry(policy = \"{policy}\")]\nfn again() -> Result<(), std::io::Error> {{ Ok(()) }}\n\n\
             #[retrykit_core::retry(policy = \"{policy}\")]\nfn third() -> Result<(), std::io::Error> {{ Ok(()) }}\n\n\
             fn main() {{\n    again().unwrap();\n    third().unwrap();"
        ),
    )
}

#[test]
fn editing_retry_toml_rebuilds_and_rechecks_the_names() {
    let target = target_dir();
    let dir = scratch(&target, "crate", "retry-rebuild-check", MAIN, "");
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
    let target = target_dir();
    let dir = scratch(
        &target,
        "broken",
        "retry-broken-check",
        &three_sites("outbox"),
        "",
    );
    std::fs::write(dir.join("retry.toml"), "[policies.outbox\nbase = \"1ms\"\n").unwrap();
    let out = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken file fails the build");
    assert_eq!(
        stderr.matches("is not valid TOML").count(),
        1,
        "one error for the file, not one per call site:\n{stderr}"
    );
    // Issue 31: one rule, said where it bites: the build reads names only.
    assert!(
        stderr.contains("the build reads the file only for policy names")
            && stderr.contains(
                "are checked by retrykit_config::init() and `retry-policy check`, not here"
            ),
        "{stderr}"
    );
}

#[test]
fn a_retry_config_that_names_no_file_fails_the_build() {
    let target = target_dir();
    let dir = scratch(
        &target,
        "named-missing",
        "retry-named-missing",
        &three_sites("outbox"),
        "",
    );
    // The nearest file defines the policy, but the variable names another:
    // it is not replaced by this one (as at run time).
    std::fs::write(
        dir.join("retry.toml"),
        "[policies.outbox]\nbase = \"1ms\"\n",
    )
    .unwrap();

    let missing = dir.join("nowhere.toml");
    let out = build_with(&dir, &target, Some(&missing));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let error = format!(
        "error: cannot check policy `outbox`: RETRY_CONFIG names {}, which does not exist; \
         fix: create the file, or correct RETRY_CONFIG or unset it to use the nearest retry.toml",
        missing.display()
    );
    assert!(stderr.contains(&error), "{stderr}");
    assert_eq!(
        stderr.matches("RETRY_CONFIG names").count(),
        1,
        "one error, not one per call site:\n{stderr}"
    );
    assert!(
        stderr.contains("#[retrykit_core::retry(policy = \"outbox\")]"),
        "the error is on the policy string:\n{stderr}"
    );

    let out = build_with(&dir, &target, Some(&dir));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let error = format!(
        "RETRY_CONFIG names {}, which is a directory, not a file; \
         fix: set RETRY_CONFIG to the policy file (e.g. {}), or unset it",
        dir.display(),
        dir.join("retry.toml").display()
    );
    assert!(stderr.contains(&error), "{stderr}");

    // Pointing it at the file mends the build.
    let out = build_with(&dir, &target, Some(&dir.join("retry.toml")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn without_a_file_the_build_says_once_that_nothing_is_checked_and_how_to_check() {
    let target = target_dir();
    // The scratch directory and every directory above it hold no retry.toml.
    let main = three_sites("outbx");
    let dir = scratch(&target, "unchecked", "retry-unchecked", &main, "");
    let config = dir.join("retry.toml");
    let _ = std::fs::remove_file(&config);

    let out = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "nothing to check it against:\n{stderr}"
    );
    assert_eq!(
        stderr
            .matches("no retry.toml for crate `retry-unchecked`")
            .count(),
        1,
        "one warning, not one per call site:\n{stderr}"
    );
    for part in [
        "no_retry_toml_found_so_policy_names_are_not_checked`: no retry.toml for crate",
        "policy names are not checked at build time",
        &format!("looked in {} and every directory above it", dir.display()),
        "set RETRY_CONFIG to the file",
        "then run `cargo clean -p retry-unchecked` or touch a source file",
        "`[package.metadata.retry] expect-config = false`",
    ] {
        assert!(stderr.contains(part), "{part:?} in:\n{stderr}");
    }

    // Following the advice: the file, then a touched source file.
    std::fs::write(&config, "[policies.outbox]\nbase = \"1ms\"\n").unwrap();
    std::fs::write(dir.join("src/main.rs"), &main).unwrap();
    let out = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("unknown policy `outbx`; did you mean `outbox`?"),
        "{stderr}"
    );
    assert!(!stderr.contains("no retry.toml"), "{stderr}");

    // A crate whose policies come from code turns the warning off.
    std::fs::remove_file(&config).unwrap();
    let dir = scratch(
        &target,
        "unchecked",
        "retry-unchecked",
        &main,
        "\n[package.metadata.retry]\nexpect-config = false\n",
    );
    let out = build(&dir, &target);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
