//! Hot reload into retrykit-core's process-wide registry: good → bad → good
//! while other threads keep looking policies up and running calls, through
//! both `reload()` and the file watcher. Tests here share the global
//! registry, so they take a lock.

use retrykit_config::{Setup, reload};
use retrykit_core::clock::BlockingSleeper;
use retrykit_core::{Retry, registry};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

static GLOBAL_REGISTRY: Mutex<()> = Mutex::new(());

/// Waits cost nothing: the calls exercise the loop, not the clock.
struct NoSleep;
impl BlockingSleeper for NoSleep {
    fn sleep(&self, _: Duration) {}
}

/// Replaces the file atomically, as deployment tools and careful editors do.
fn replace(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn good(max_attempts: u32) -> String {
    format!("[policies.svc]\nbase = \"1ms\"\ncap = \"10ms\"\nmax_attempts = {max_attempts}\n")
}
const BAD: &str = "[policies.svc]\nbase = 10\nmax_atempts = 2\n";

/// Threads that look `svc` up and run a call that fails once, until stopped.
/// Every lookup must find a policy from a good file (3 or 4 attempts).
fn callers(stop: &Arc<AtomicBool>) -> (Vec<thread::JoinHandle<()>>, Arc<AtomicU64>) {
    let calls = Arc::new(AtomicU64::new(0));
    let handles = (0..4)
        .map(|_| {
            let stop = stop.clone();
            let calls = calls.clone();
            thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let policy = registry::policy("svc").expect("a policy is always installed");
                    let max = policy.max_attempts();
                    assert!(
                        max == Some(3) || max == Some(4),
                        "saw a policy from no good file: {max:?}"
                    );
                    let mut failed = false;
                    let result = Retry::blocking(&policy).sleeper(NoSleep).call_blocking(|| {
                        if failed {
                            Ok(())
                        } else {
                            failed = true;
                            Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset))
                        }
                    });
                    assert!(result.is_ok());
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    (handles, calls)
}

/// Spins (yielding) until `n` more calls completed, so each phase overlaps running calls.
fn wait_for_calls(calls: &AtomicU64, n: u64) {
    let target = calls.load(Ordering::Relaxed) + n;
    while calls.load(Ordering::Relaxed) < target {
        thread::yield_now();
    }
}

#[test]
fn reload_goes_good_bad_good_while_calls_run() {
    let _guard = GLOBAL_REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, good(3)).unwrap();
    Setup::new(&path).install().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let (handles, calls) = callers(&stop);
    wait_for_calls(&calls, 100);

    replace(&path, BAD);
    let problems = reload().unwrap_err();
    assert_eq!(problems.errors().count(), 2, "{}", problems.render());
    assert_eq!(
        registry::policy("svc").unwrap().max_attempts(),
        Some(3),
        "the bad file was applied"
    );
    wait_for_calls(&calls, 100);

    replace(&path, &good(4));
    reload().unwrap();
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(4));
    wait_for_calls(&calls, 100);

    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join()
            .expect("a caller saw a missing or half-applied policy");
    }
}

#[test]
fn the_watcher_swaps_good_files_and_keeps_the_last_good_one() {
    let _guard = GLOBAL_REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, good(3)).unwrap();
    let setup = Setup::new(&path);
    setup.clone().install().unwrap();

    let (tx, rx) = mpsc::channel();
    let watcher = setup.watch(Duration::from_millis(2), move |outcome| {
        let _ = tx.send(outcome.map(|_| ()).map_err(|d| d.render()));
    });
    let stop = Arc::new(AtomicBool::new(false));
    let (handles, calls) = callers(&stop);
    // A generous ceiling only guards against a hang; the watcher answers in milliseconds.
    let next = || {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the watcher reported nothing")
    };

    replace(&path, BAD);
    let rendered = next().unwrap_err();
    assert!(
        rendered.contains("did you mean `max_attempts`?"),
        "{rendered}"
    );
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(3));
    wait_for_calls(&calls, 50);

    replace(&path, &good(4));
    next().unwrap();
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(4));
    wait_for_calls(&calls, 50);

    watcher.stop();
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join()
            .expect("a caller saw a missing or half-applied policy");
    }
}

#[test]
fn a_missing_file_keeps_the_installed_policies() {
    let _guard = GLOBAL_REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, good(3)).unwrap();
    Setup::new(&path).install().unwrap();
    std::fs::remove_file(&path).unwrap();
    let err = reload().unwrap_err();
    assert!(err.to_string().contains("cannot read"), "{err}");
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(3));
}

#[test]
fn an_empty_file_is_rejected_and_keeps_the_installed_policies() {
    let _guard = GLOBAL_REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, good(3)).unwrap();
    Setup::new(&path).install().unwrap();
    std::fs::write(&path, "").unwrap();
    let err = reload().unwrap_err();
    assert!(err.to_string().contains("defines no policies"), "{err}");
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(3));
}
