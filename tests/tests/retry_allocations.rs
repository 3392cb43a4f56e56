//! An annotated function whose first attempt succeeds allocates nothing and
//! boxes nothing: the expansion adds a registry lookup, stack state and
//! zero-sized wrappers only. Its own test binary, so the counting allocator
//! sees only these tests.

use retrykit_core::{Classify, retry};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Busy;

#[retry(policy = "alloc-async")]
async fn fetch(id: u32, key: &str) -> Result<usize, Busy> {
    Ok(id as usize + key.len())
}

#[retry(policy = "alloc-blocking")]
fn read(id: u32) -> Result<u32, Busy> {
    Ok(id)
}

/// No `Classify`: the transient fallback is just as free.
#[retry(policy = "alloc-async")]
async fn unclassified(id: u32) -> Result<u32, String> {
    Ok(id)
}

fn poll_once<F: Future>(fut: F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    pin!(fut).poll(&mut cx)
}

#[test]
fn first_attempt_success_allocates_nothing() {
    // No other test reloads the registry until this one is done: the first
    // call after a reload looks its policy up again, which may allocate.
    let held = tests::no_reloads();
    tests::add_policy_held(&held, "alloc-async", retrykit_core::Policy::default());
    tests::add_policy_held(&held, "alloc-blocking", retrykit_core::Policy::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _context = rt.enter();
    // Warm up thread-locals (jitter generator, clock context).
    let _ = poll_once(fetch(1, "k"));
    let _ = poll_once(unclassified(1));
    let _ = read(1);
    if retrykit_core::RECORDS_METRICS {
        eprintln!(
            "skipped: with retrykit-core's `metrics` feature, each call's metric labels allocate"
        );
        return;
    }
    let info = allocation_counter::measure(|| {
        assert!(matches!(poll_once(fetch(1, "key")), Poll::Ready(Ok(4))));
        assert!(matches!(poll_once(unclassified(2)), Poll::Ready(Ok(2))));
        assert!(matches!(read(3), Ok(3)));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[retry(policy = "alloc-timeout")]
async fn timed(id: u32) -> Result<u32, Busy> {
    Ok(id)
}

/// An attempt ready at once makes no sleep: `attempt_timeout` is armed only
/// at an attempt's first `Pending`, so its success path allocates nothing
/// either (as `tokio::time::timeout`, which registers its timer only when
/// polled); `Retry::call` and `#[retry]` alike.
#[test]
fn an_attempt_timeout_allocates_nothing_on_the_success_path() {
    let policy = retrykit_core::Policy::builder()
        .attempt_timeout(Some(std::time::Duration::from_secs(5)))
        .build()
        .unwrap();
    // As above: no reload between the warm-up and the count.
    let held = tests::no_reloads();
    tests::add_policy_held(&held, "alloc-timeout", policy.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _context = rt.enter();
    let core = || retrykit_core::Retry::new(&policy).call(|| async { Ok::<_, Busy>(5) });
    // Warm up thread-locals (jitter generator, clock context).
    let _ = poll_once(timed(1));
    let _ = poll_once(core());
    if retrykit_core::RECORDS_METRICS {
        eprintln!(
            "skipped: with retrykit-core's `metrics` feature, each call's metric labels allocate"
        );
        return;
    }
    let info = allocation_counter::measure(|| {
        assert!(matches!(poll_once(timed(4)), Poll::Ready(Ok(4))));
        assert!(matches!(poll_once(core()), Poll::Ready(Ok(5))));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[test]
fn the_counter_does_see_allocations() {
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 16]);
    });
    assert!(info.count_total >= 1);
}
