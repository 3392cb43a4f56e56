//! Chaos reaches a `#[retry]` fn whose error type is derived: with a
//! `#[classify(chaos)]` variant, `#[derive(Classify)]` writes `from_chaos`,
//! so the policy's injected faults take the place of attempts (the body is
//! not run), with the fault's class and Retry-After, as they do for
//! `std::io::Error`. Under tokio's paused clock, with seeded chaos.

use retrykit_core::chaos::{Chaos, InjectedFault};
use retrykit_core::{
    Class, Classify, Ending, Jitter, Policy, Registry, Retry, RetryEvent, registry, retry,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, thiserror::Error, Classify)]
enum BrokerError {
    #[error("broker unavailable")]
    #[classify(transient)]
    Unavailable,
    #[error("not sent: {0}")]
    #[classify(chaos)]
    Injected(InjectedFault),
}

/// How many times the body ran.
static SENT: AtomicU32 = AtomicU32::new(0);
/// Each `on_retry` event: the attempt, whether it was injected, whether the
/// wait came from a hint, and the wait.
static EVENTS: Mutex<Vec<(u32, bool, bool, Duration)>> = Mutex::new(Vec::new());
/// The tests take turns: they share the statics and the installed registry.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    let turn = SERIAL.lock().await;
    SENT.store(0, Ordering::SeqCst);
    EVENTS.lock().unwrap().clear();
    turn
}

fn seen(e: &RetryEvent<'_, BrokerError>) {
    EVENTS
        .lock()
        .unwrap()
        .push((e.attempt, e.injected, e.hinted, e.wait));
}

#[retry(policy = "derived-chaos", on_retry = seen)]
async fn publish(fail: bool) -> Result<(), BrokerError> {
    SENT.fetch_add(1, Ordering::SeqCst);
    if fail {
        Err(BrokerError::Unavailable)
    } else {
        Ok(())
    }
}

fn policy(attempts: u32, chaos: Chaos) -> Policy {
    Policy::builder()
        .name("derived-chaos")
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
        .max_attempts(attempts)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap()
}

fn install(p: Policy) {
    registry::install(Registry::builder().policy("derived-chaos", p).build());
}

#[tokio::test(start_paused = true)]
async fn every_attempt_faulted_never_runs_the_body_and_honours_the_retry_after() {
    let _turn = serial().await;
    let hint = Duration::from_secs(2);
    let chaos = || {
        Chaos::new(Some(7))
            .fault(1.0, Class::THROTTLED, Some(hint))
            .unwrap()
    };
    install(policy(3, chaos()));
    let start = Instant::now();
    let error = publish(false).await.unwrap_err();
    assert_eq!(SENT.load(Ordering::SeqCst), 0, "the body never ran");
    let BrokerError::Injected(fault) = error else {
        panic!("not the chaos variant: {error:?}");
    };
    assert_eq!(
        (fault.class, fault.retry_after, fault.attempt),
        (Class::THROTTLED, Some(hint), 3)
    );
    assert_eq!(error.class(), Class::THROTTLED);
    assert_eq!(
        EVENTS.lock().unwrap().clone(),
        [(1, true, true, hint), (2, true, true, hint)],
        "each wait is the fault's Retry-After, not the 100 ms backoff"
    );
    assert_eq!(start.elapsed(), 2 * hint);

    // The same policy through `call_with_report`: the report counts them.
    let p = policy(3, chaos());
    let (out, report) = Retry::new(&p)
        .call_with_report(|| async { publish_once() })
        .await;
    assert!(matches!(out, Err(BrokerError::Injected(f)) if f.attempt == 3));
    assert_eq!(
        (report.attempts, report.injected, report.ending),
        (3, 3, Ending::Exhausted)
    );
    assert_eq!(report.waited, 2 * hint);
    assert_eq!(SENT.load(Ordering::SeqCst), 0);
}

fn publish_once() -> Result<(), BrokerError> {
    SENT.fetch_add(1, Ordering::SeqCst);
    Err(BrokerError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn a_seeded_rate_injects_the_same_attempts_through_retry_as_the_report_counts() {
    let _turn = serial().await;
    let chaos = || {
        Chaos::new(Some(42))
            .fault(0.5, Class::TRANSIENT, None)
            .unwrap()
    };
    install(policy(10, chaos()));
    let last = publish(true).await.unwrap_err();
    let events = EVENTS.lock().unwrap().clone();
    assert_eq!(events.len(), 9, "every attempt but the last was retried");
    let injected = events.iter().filter(|e| e.1).count() as u32
        + u32::from(matches!(last, BrokerError::Injected(_)));
    let sent = SENT.load(Ordering::SeqCst);
    assert_eq!(sent + injected, 10, "each attempt was sent or injected");
    assert!(injected > 0 && sent > 0, "{injected} injected, {sent} sent");
    if let BrokerError::Injected(fault) = last {
        assert_eq!((fault.class, fault.attempt), (Class::TRANSIENT, 10));
    }

    // The same seed, through `call_with_report`: the same attempts injected.
    SENT.store(0, Ordering::SeqCst);
    let p = policy(10, chaos());
    let (_, report) = Retry::new(&p)
        .call_with_report(|| async { publish_once() })
        .await;
    assert_eq!((report.attempts, report.injected), (10, injected));
    assert_eq!(SENT.load(Ordering::SeqCst), sent);
}
