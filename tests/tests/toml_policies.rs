//! `#[retry]` driven by a TOML file through retrykit-config: the schedule comes
//! from the file, `RETRY_PROFILE` switches it without recompiling, and a
//! reload during a call changes only the next call.
//!
//! The tests share the process-wide registry, so they take turns (`TURN`).

use retrykit_core::{Classify, retry};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::Instant;

const FILE: &str = r#"
[defaults]
jitter = "none"

[policies.toml-flaky]
backoff = "exponential"
base = "100ms"
factor = 2.0
cap = "10s"
max_attempts = 4

[policies.toml-throttled]
backoff = "constant"
base = "10ms"
max_attempts = 3
retry_on = ["throttled"]

[profiles.fast.policies.toml-flaky]
base = "1ms"
max_attempts = 2
"#;

static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Debug, Clone, PartialEq, Classify)]
enum SendError {
    #[classify(transient)]
    Unavailable,
    #[classify(class = "throttled", retry_after = 0)]
    Throttled(Duration),
}

static FLAKY_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "toml-flaky")]
async fn flaky() -> Result<(), SendError> {
    FLAKY_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(SendError::Unavailable)
}

#[retry(policy = "toml-throttled")]
async fn send(error: SendError, calls: &AtomicU32) -> Result<(), SendError> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(error)
}

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("retry.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(start_paused = true)]
async fn the_file_sets_attempts_and_virtual_time() {
    let _turn = TURN.lock().await;
    let dir = tempfile::tempdir().unwrap();
    retrykit_config::Setup::new(write_config(dir.path(), FILE))
        .install()
        .unwrap();
    FLAKY_CALLS.store(0, Ordering::SeqCst);
    let start = Instant::now();
    assert_eq!(flaky().await, Err(SendError::Unavailable));
    assert_eq!(FLAKY_CALLS.load(Ordering::SeqCst), 4);
    assert_eq!(start.elapsed(), Duration::from_millis(100 + 200 + 400));
}

#[tokio::test(start_paused = true)]
async fn retry_on_and_retry_after_from_the_file() {
    let _turn = TURN.lock().await;
    let dir = tempfile::tempdir().unwrap();
    retrykit_config::Setup::new(write_config(dir.path(), FILE))
        .install()
        .unwrap();
    let calls = AtomicU32::new(0);
    // `transient` is not in this policy's retry_on: one attempt.
    assert!(send(SendError::Unavailable, &calls).await.is_err());
    assert_eq!(calls.swap(0, Ordering::SeqCst), 1);
    // A throttled error's hint (2s) replaces the 10ms wait.
    let start = Instant::now();
    assert!(
        send(SendError::Throttled(Duration::from_secs(2)), &calls)
            .await
            .is_err()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), Duration::from_secs(4));
}

static RELOAD_CALLS: AtomicU32 = AtomicU32::new(0);
static RELOAD_FILE: std::sync::Mutex<Option<std::path::PathBuf>> = std::sync::Mutex::new(None);

#[retry(policy = "toml-flaky")]
async fn reloads_during_first_attempt() -> Result<(), SendError> {
    if RELOAD_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        let path = RELOAD_FILE.lock().unwrap().clone().unwrap();
        std::fs::write(&path, FILE.replace("max_attempts = 4", "max_attempts = 1")).unwrap();
        retrykit_config::reload().unwrap();
    }
    Err(SendError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn a_reload_during_a_call_changes_only_the_next_call() {
    let _turn = TURN.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), FILE);
    *RELOAD_FILE.lock().unwrap() = Some(path.clone());
    retrykit_config::Setup::new(&path).install().unwrap();
    assert!(reloads_during_first_attempt().await.is_err());
    assert_eq!(
        RELOAD_CALLS.swap(0, Ordering::SeqCst),
        4,
        "the running call keeps its policy"
    );
    assert!(reloads_during_first_attempt().await.is_err());
    assert_eq!(
        RELOAD_CALLS.load(Ordering::SeqCst),
        1,
        "the next call sees max_attempts = 1"
    );
}

/// Run in a child process by `retry_profile_switches_the_schedule`, with
/// `RETRY_CONFIG` and `RETRY_PROFILE` set; does nothing otherwise.
#[test]
fn profile_child() {
    let Ok(expected) = std::env::var("RETRY_TEST_EXPECT") else {
        return;
    };
    retrykit_config::init().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let (attempts, elapsed) = rt.block_on(async {
        FLAKY_CALLS.store(0, Ordering::SeqCst);
        let start = Instant::now();
        assert!(flaky().await.is_err());
        (FLAKY_CALLS.load(Ordering::SeqCst), start.elapsed())
    });
    assert_eq!(format!("{attempts} attempts in {elapsed:?}"), expected);
}

#[test]
fn retry_profile_switches_the_schedule_without_recompiling() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), FILE);
    for (profile, expected) in [("", "4 attempts in 700ms"), ("fast", "2 attempts in 1ms")] {
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["profile_child", "--exact", "--nocapture"])
            .env("RETRY_CONFIG", &path)
            .env("RETRY_PROFILE", profile)
            .env("RETRY_TEST_EXPECT", expected)
            .status()
            .unwrap();
        assert!(status.success(), "profile {profile:?}: expected {expected}");
    }
}
