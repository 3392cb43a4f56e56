//! The build-time check and the run time find the same policy file, wherever
//! the program is started from; and when no file is found, the first call
//! says so, listing every path tried.
//!
//! Builds a small workspace with cargo (`app/` holding its `retry.toml`,
//! like a service in a monorepo), in a target directory shared with
//! `config_rebuild.rs`, then runs the binary as `cargo run -p app` would
//! from the workspace root, and from an unrelated directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAIN: &str = r#"use std::sync::atomic::{AtomicU32, Ordering};

static CALLS: AtomicU32 = AtomicU32::new(0);

#[retrykit_core::retry(policy = "send")]
fn send() -> Result<u32, std::io::Error> {
    let call = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
    if call < 3 { Err(std::io::ErrorKind::ConnectionReset.into()) } else { Ok(call) }
}

fn main() {
    for _ in 0..2 {
        CALLS.store(0, Ordering::Relaxed);
        match send() {
            Ok(calls) => println!("succeeded after {calls} calls"),
            Err(_) => println!("failed after {} calls", CALLS.load(Ordering::Relaxed)),
        }
    }
}
"#;

fn target_dir() -> PathBuf {
    tests::scratch_target_dir()
}

fn run(exe: &Path, cwd: &Path) -> Output {
    Command::new(exe)
        .current_dir(cwd)
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_PROFILE")
        .env_remove("RETRY_STRICT")
        .output()
        .unwrap()
}

#[test]
fn a_binary_finds_the_file_its_build_checked_from_any_directory() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = target_dir();
    let root = target.join("anywhere");
    let app = root.join("app");
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"app\"]\nresolver = \"3\"\n",
    )
    .unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    let manifest = format!(
        "[package]\nname = \"retry-anywhere\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nretrykit-core = {{ path = {:?}, features = [\"macros\"] }}\nretrykit-config = {{ path = {:?} }}\n",
        workspace.join("retry-core"),
        workspace.join("retry-config"),
    );
    std::fs::write(app.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(app.join("src/main.rs"), MAIN).unwrap();
    let config = app.join("retry.toml");
    std::fs::write(
        &config,
        "[policies.send]\nmax_attempts = 4\nbase = \"1ms\"\ncap = \"1ms\"\njitter = \"none\"\n",
    )
    .unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--quiet", "--offline", "-p", "retry-anywhere"])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RETRY_CONFIG")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let exe = target.join("debug").join("retry-anywhere");
    let elsewhere = tempfile::tempdir().unwrap();

    // `cargo run -p app` from the workspace root, and a start from elsewhere.
    for cwd in [root.as_path(), elsewhere.path()] {
        let out = run(&exe, cwd);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "succeeded after 3 calls\nsucceeded after 3 calls\n",
            "from {}: {}",
            cwd.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The file is gone: the call still runs (once), and its first call says
    // why, naming the policy, the call site, every path tried and the fix.
    let moved = app.join("retry.toml.away");
    std::fs::rename(&config, &moved).unwrap();
    let out = run(&exe, elsewhere.path());
    std::fs::rename(&moved, &config).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stdout, "failed after 1 calls\nfailed after 1 calls\n",
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("warning:").count(),
        1,
        "one warning per call site, not per call: {stderr}"
    );
    assert!(
        stderr.contains("retry policy `send`, which is not defined"),
        "{stderr}"
    );
    assert!(
        stderr.contains("retry_anywhere::send` at app/src/main.rs:5"),
        "{stderr}"
    );
    assert!(stderr.contains("no policy file found"), "{stderr}");
    assert!(
        stderr.contains(&elsewhere.path().join("retry.toml").display().to_string()),
        "the working directory is listed: {stderr}"
    );
    assert!(
        stderr.contains(&config.canonicalize().unwrap().display().to_string()),
        "the file the build checked is listed: {stderr}"
    );
    assert!(stderr.contains("fix: define [policies.send]"), "{stderr}");
}
