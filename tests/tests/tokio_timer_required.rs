//! An async `#[retry]` waits on tokio's timer, so it must run inside a tokio
//! runtime with time enabled. Without one it fails at its first call, with a
//! message naming the function and the fix, even when that call succeeds at
//! once and would never wait (issue 22: it used to panic deep inside tokio
//! at the first retry, so tests whose calls succeed never saw it).

use retrykit_core::{Policy, retry};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use tests::add_policy;

#[retry(policy = "timer-required-no-runtime")]
async fn succeeds_without_a_runtime() -> Result<u8, std::io::Error> {
    Ok(7)
}

#[retry(policy = "timer-required-no-time")]
async fn succeeds_without_time() -> Result<u8, std::io::Error> {
    Ok(7)
}

#[retry(policy = "timer-required-with-time")]
async fn succeeds_with_time() -> Result<u8, std::io::Error> {
    Ok(7)
}

/// The text a panic carried.
fn said(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(text) => *text,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    }
}

/// Runs `call` twice (every call fails, not only the first), returning what
/// the second panic said; panics itself if either call returned.
fn failure_of(call: impl Fn() -> Result<u8, std::io::Error>) -> String {
    let first = catch_unwind(AssertUnwindSafe(&call));
    assert!(first.is_err(), "the first call returned {first:?}");
    let second = catch_unwind(AssertUnwindSafe(&call));
    said(second.expect_err("the second call fails too"))
}

fn assert_names_the_fixes(text: &str) {
    for fix in [
        "#[tokio::main]",
        "enable_time()",
        "#[tokio::test(start_paused = true)]",
    ] {
        assert!(text.contains(fix), "names the fix {fix}: {text}");
    }
    assert!(
        text.contains("tokio_timer_required.rs"),
        "names the call site: {text}"
    );
}

#[test]
fn an_async_retry_outside_any_tokio_runtime_fails_at_its_first_call() {
    add_policy("timer-required-no-runtime", Policy::default());
    let text = failure_of(|| futures_executor::block_on(succeeds_without_a_runtime()));
    assert!(
        text.contains("succeeds_without_a_runtime"),
        "names the function: {text}"
    );
    assert!(text.contains("not inside a tokio runtime"), "{text}");
    assert_names_the_fixes(&text);
}

#[test]
fn an_async_retry_in_a_runtime_without_time_fails_at_its_first_call() {
    add_policy("timer-required-no-time", Policy::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let text = failure_of(|| runtime.block_on(succeeds_without_time()));
    assert!(
        text.contains("succeeds_without_time"),
        "names the function: {text}"
    );
    assert!(text.contains("built without its timer"), "{text}");
    assert_names_the_fixes(&text);
}

#[test]
fn an_async_retry_in_a_runtime_with_time_runs() {
    add_policy("timer-required-with-time", Policy::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    assert_eq!(runtime.block_on(succeeds_with_time()).unwrap(), 7);
}

/// Issue 31: finding out that the runtime has no timer made tokio panic
/// (caught), and the panic hook printed tokio's message and a backtrace
/// before ours. Ours is the first thing printed now, and tokio's not at all.
#[test]
fn without_a_timer_our_message_is_the_first_thing_printed() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_async_retry_in_a_runtime_without_time_fails_at_its_first_call",
            "--nocapture",
        ])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("timers are disabled"), "{stderr}");
    let first = stderr
        .lines()
        .position(|l| l.contains("panicked at"))
        .unwrap_or_else(|| panic!("no panic printed: {stderr}"));
    let next: Vec<&str> = stderr.lines().skip(first).take(2).collect();
    assert!(
        next.join("\n").contains("succeeds_without_time"),
        "ours comes first: {stderr}"
    );
}
