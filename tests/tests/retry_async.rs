//! `#[retry]` on async functions, driven by policies in the registry, on
//! tokio's paused clock: attempts and virtual time follow the policy.

mod common;

use common::{ApiError, constant};
use retrykit_core::{Backoff, Class, Classify, Jitter, Policy, RetryEvent, retry};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tests::add_policy;
use tokio::time::Instant;

static ALWAYS_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-always-fails")]
async fn always_fails() -> Result<(), ApiError> {
    ALWAYS_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(ApiError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn exponential_policy_sets_attempts_and_virtual_time() {
    let policy = Policy::builder()
        .backoff(Backoff::Exponential { factor: 2.0 })
        .base(Duration::from_millis(100))
        .cap(Duration::from_secs(1))
        .jitter(Jitter::None)
        .max_attempts(5)
        .build()
        .unwrap();
    add_policy("async-always-fails", policy);
    let start = Instant::now();
    assert_eq!(always_fails().await, Err(ApiError::Unavailable));
    assert_eq!(ALWAYS_CALLS.load(Ordering::SeqCst), 5);
    // 100 + 200 + 400 + 800 ms between five attempts.
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
}

static PERMANENT_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-permanent")]
async fn permanent() -> Result<(), ApiError> {
    PERMANENT_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(ApiError::BadRequest)
}

#[tokio::test(start_paused = true)]
async fn permanent_error_ends_after_one_attempt() {
    add_policy("async-permanent", constant(100, 10));
    let start = Instant::now();
    assert_eq!(permanent().await, Err(ApiError::BadRequest));
    assert_eq!(PERMANENT_CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

static RETRY_ON_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-retry-on")]
async fn fails_with(error: ApiError) -> Result<(), ApiError> {
    RETRY_ON_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn retry_on_limits_the_classes_retried() {
    let policy = constant(10, 4)
        .to_builder()
        .retry_on(["throttled"])
        .build()
        .unwrap();
    add_policy("async-retry-on", policy);
    // A transient error is outside `retry_on`: one attempt.
    assert_eq!(
        fails_with(ApiError::Unavailable).await,
        Err(ApiError::Unavailable)
    );
    assert_eq!(RETRY_ON_CALLS.swap(0, Ordering::SeqCst), 1);
    // A throttled one is retried, and its hint (3s) replaces the 10ms wait.
    let start = Instant::now();
    let throttled = ApiError::Throttled {
        wait: Duration::from_secs(3),
    };
    assert_eq!(fails_with(throttled.clone()).await, Err(throttled));
    assert_eq!(RETRY_ON_CALLS.load(Ordering::SeqCst), 4);
    assert_eq!(start.elapsed(), Duration::from_secs(9));
}

static RELOAD_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-reload")]
async fn reloads_on_first_attempt() -> Result<(), ApiError> {
    if RELOAD_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        // A reload while this call runs: it must keep the policy it started with.
        add_policy("async-reload", constant(1000, 1));
    }
    Err(ApiError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn reload_during_a_run_changes_only_the_next_call() {
    add_policy("async-reload", constant(100, 3));
    let start = Instant::now();
    assert!(reloads_on_first_attempt().await.is_err());
    assert_eq!(RELOAD_CALLS.swap(0, Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert!(reloads_on_first_attempt().await.is_err());
    assert_eq!(
        RELOAD_CALLS.load(Ordering::SeqCst),
        1,
        "the next call sees max_attempts = 1"
    );
}

static OUTLIVING_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-outlived")]
async fn outlives_many_reloads() -> Result<(), ApiError> {
    if OUTLIVING_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        // Many reloads during the first attempt: the call holds the policy
        // it started with all the same.
        for _ in 0..12 {
            add_policy("async-outlived", constant(10, 5));
        }
    }
    Err(ApiError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn a_call_outliving_many_reloads_in_its_first_attempt_keeps_its_policy() {
    add_policy("async-outlived", constant(100, 2));
    let start = Instant::now();
    assert!(outlives_many_reloads().await.is_err());
    assert_eq!(
        OUTLIVING_CALLS.swap(0, Ordering::SeqCst),
        2,
        "the starting policy's 2 attempts"
    );
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    assert!(outlives_many_reloads().await.is_err());
    assert_eq!(
        OUTLIVING_CALLS.load(Ordering::SeqCst),
        5,
        "the next call's 5"
    );
}

static UNKNOWN_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-never-installed")]
async fn unknown_policy() -> Result<(), ApiError> {
    UNKNOWN_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(ApiError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn unknown_policy_at_run_time_makes_one_attempt() {
    assert_eq!(unknown_policy().await, Err(ApiError::Unavailable));
    assert_eq!(UNKNOWN_CALLS.load(Ordering::SeqCst), 1);
    assert!(
        retrykit_core::__private::loader::missing_policies(&retrykit_core::registry::current())
            .iter()
            .any(|site| site.policy == "async-never-installed"
                && site.function.ends_with("unknown_policy")),
        "the call site is registered for the start-up check"
    );
}

fn only_unavailable(e: &ApiError) -> bool {
    *e == ApiError::Unavailable
}

static EVENTS: Mutex<Vec<(u32, Duration)>> = Mutex::new(Vec::new());

fn record(event: &RetryEvent<'_, ApiError>) {
    assert_eq!(event.policy, Some("async-hooks"));
    assert_eq!(*event.error, ApiError::Unavailable);
    EVENTS.lock().unwrap().push((event.attempt, event.wait));
}

static HOOKED_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-hooks", retry_if = only_unavailable, on_retry = record)]
async fn hooked(error: ApiError) -> Result<(), ApiError> {
    HOOKED_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn retry_if_narrows_and_on_retry_sees_each_wait() {
    add_policy("async-hooks", constant(40, 3));
    let throttled = ApiError::Throttled {
        wait: Duration::from_millis(1),
    };
    assert_eq!(hooked(throttled.clone()).await, Err(throttled));
    assert_eq!(
        HOOKED_CALLS.swap(0, Ordering::SeqCst),
        1,
        "retry_if refused a throttled error"
    );
    assert!(EVENTS.lock().unwrap().is_empty());
    assert_eq!(
        hooked(ApiError::Unavailable).await,
        Err(ApiError::Unavailable)
    );
    assert_eq!(HOOKED_CALLS.load(Ordering::SeqCst), 3);
    let waits = Duration::from_millis(40);
    assert_eq!(*EVENTS.lock().unwrap(), [(1, waits), (2, waits)]);
}

#[derive(Debug, Classify)]
enum SlowError {
    #[classify(timeout)]
    TimedOut,
}

#[retry(policy = "async-attempt-timeout")]
async fn slow_then_fast(attempts: &AtomicU32) -> Result<u32, SlowError> {
    let n = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 1 {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn timeout_variant_lets_attempt_timeout_cancel_an_attempt() {
    let policy = constant(100, 3)
        .to_builder()
        .attempt_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    add_policy("async-attempt-timeout", policy);
    assert_eq!(SlowError::TimedOut.class(), Class::TIMEOUT);
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(slow_then_fast(&attempts).await.unwrap(), 2);
    assert_eq!(start.elapsed(), Duration::from_millis(1100));
}

/// Never ends on its own: receives, forever, from a channel that always
/// holds an item, spending tokio's cooperative budget on every poll.
#[retry(policy = "async-spends-the-budget")]
async fn spends_the_budget() -> Result<(), SlowError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    loop {
        tx.send(()).unwrap();
        rx.recv().await;
    }
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_ends_an_attempt_that_spends_the_budget() {
    let policy = constant(10, 2)
        .to_builder()
        .attempt_timeout(Some(Duration::from_millis(50)))
        .build()
        .unwrap();
    add_policy("async-spends-the-budget", policy);
    // The spinning attempt keeps the runtime busy, so the paused clock
    // never moves on its own: this task moves it 1 ms each time it runs.
    let ticker = tokio::spawn(async {
        loop {
            tokio::time::advance(Duration::from_millis(1)).await;
        }
    });
    let start = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(3), spends_the_budget()).await;
    let took = start.elapsed();
    ticker.abort();
    assert!(
        matches!(result, Ok(Err(SlowError::TimedOut))),
        "{result:?} after {took:?}"
    );
    let expected = Duration::from_millis(50 + 10 + 50);
    assert!(
        took.abs_diff(expected) <= Duration::from_millis(2),
        "took {took:?}"
    );
}

fn allow_everything(_: &ApiError) -> bool {
    true
}

static NARROW_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-narrow-only", retry_if = allow_everything)]
async fn refused_by_policy() -> Result<(), ApiError> {
    NARROW_CALLS.fetch_add(1, Ordering::SeqCst);
    Err(ApiError::Unavailable)
}

#[tokio::test(start_paused = true)]
async fn retry_if_cannot_widen_what_the_policy_allows() {
    let policy = constant(10, 5)
        .to_builder()
        .retry_on(["throttled"])
        .build()
        .unwrap();
    add_policy("async-narrow-only", policy);
    assert_eq!(refused_by_policy().await, Err(ApiError::Unavailable));
    assert_eq!(NARROW_CALLS.load(Ordering::SeqCst), 1);
}

static GAINS_DEADLINE_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "async-gains-a-deadline")]
async fn fails_slowly() -> Result<(), ApiError> {
    GAINS_DEADLINE_CALLS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(100)).await;
    Err(ApiError::Unavailable)
}

/// A call site learns, once per registry generation, that its calls can
/// leave the policy until they fail; a reload to a policy with a deadline
/// must reach the next call's start (the clock read as it begins), or the
/// deadline would count from nothing and never bind.
#[tokio::test(start_paused = true)]
async fn a_reload_that_adds_a_deadline_reaches_the_next_calls_start() {
    add_policy("async-gains-a-deadline", constant(100, 10));
    for _ in 0..2 {
        assert!(fails_slowly().await.is_err());
    }
    assert_eq!(GAINS_DEADLINE_CALLS.swap(0, Ordering::SeqCst), 20);
    let deadline = constant(100, 10)
        .to_builder()
        .deadline(Some(Duration::from_millis(450)))
        .build()
        .unwrap();
    add_policy("async-gains-a-deadline", deadline);
    let start = Instant::now();
    assert!(fails_slowly().await.is_err());
    // Attempts at 0, 200 and 400 ms (each 100 ms, then a 100 ms wait); after
    // the third, 500 ms have passed: no wait fits before 450 ms.
    assert_eq!(GAINS_DEADLINE_CALLS.load(Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

/// How many references to `name`'s policy exist besides this lookup's own:
/// the registry's, and the running call's once it holds the policy.
fn holders(name: &str) -> usize {
    std::sync::Arc::strong_count(&retrykit_core::registry::policy(name).unwrap()) - 1
}

static HOLDERS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

#[retry(policy = "async-pickup")]
async fn held(failures: u32) -> Result<(), ApiError> {
    let mut seen = HOLDERS.lock().unwrap();
    seen.push(holders("async-pickup"));
    match seen.len() as u32 <= failures {
        true => Err(ApiError::Unavailable),
        false => Ok(()),
    }
}

/// A call takes its policy as it starts and holds it to its end, plain or
/// not (here a deadline): its first attempt already sees it held.
///
/// It counts the holders of the registry's current policy, so no other
/// test may reload the registry meanwhile: `add_policy` makes every policy
/// anew, and a running call rightly keeps the policy of the registry it
/// started with (or, started just after a reload, holds it from the start).
/// Run beside the other tests it failed now and then, each way a reload can
/// land ([1, 1], [2, 2] and [2, 1] in 300 runs). So it holds `no_reloads`
/// throughout, on a runtime of its own (no lock held across an await).
#[test]
fn a_call_holds_its_policy_from_its_first_attempt() {
    let reloads = tests::no_reloads();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    for policy in [
        constant(10, 3),
        constant(10, 3)
            .to_builder()
            .deadline(Some(Duration::from_secs(5)))
            .build()
            .unwrap(),
    ] {
        tests::add_policy_held(&reloads, "async-pickup", policy);
        let seen = runtime.block_on(async {
            // The first call after a reload looks the name up (and holds it).
            held(0).await.unwrap();
            HOLDERS.lock().unwrap().clear();
            held(1).await.unwrap();
            std::mem::take(&mut *HOLDERS.lock().unwrap())
        });
        assert_eq!(seen, [2, 2], "the first attempt, then the retry");
    }
}
