//! Heap allocations on the hot path, counted by a counting global allocator.
//! This file is its own test binary so the allocator sees only these tests.
//! Not with the `metrics` feature: recording a call's metrics allocates its
//! labels (documented in `retry_core::metrics`).
#![cfg(not(feature = "metrics"))]

use retry_core::{Class, Classify, Policy, Registry, Retry, registry};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// Polls a future once with a no-op waker; the success path must complete.
fn poll_once<F: Future>(fut: F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    pin!(fut).poll(&mut cx)
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A call whose first `failures` attempts fail, through `policy`, on a paused runtime.
fn failing_first(rt: &tokio::runtime::Runtime, policy: &Policy, failures: u32) -> u32 {
    let mut calls = 0;
    let r = rt.block_on(Retry::new(policy).seed(1).call(|| {
        calls += 1;
        let n = calls;
        async move { if n <= failures { Err(Flaky) } else { Ok(n) } }
    }));
    r.unwrap()
}

#[test]
fn a_first_attempt_success_allocates_nothing() {
    let policy = Policy::builder()
        .deadline(Some(Duration::from_secs(5)))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _context = rt.enter();
    // Warm up thread-locals (the jitter generator, tokio's clock context).
    let _ = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
    let info = allocation_counter::measure(|| {
        let r = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
        assert!(matches!(r, Poll::Ready(Ok(1))));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

/// The call's state for retrying (the kernel's state and its one timer) is
/// made once, at the first retry, however many retries follow; a policy
/// with an attempt timeout makes it at the first attempt instead. When the
/// call ends the thread keeps it, so the thread's next call that retries
/// allocates nothing.
#[test]
fn a_call_that_needs_a_timer_allocates_at_most_once_however_many_attempts() {
    let rt = current_thread();
    let policy = Policy::builder()
        .base(Duration::from_millis(1))
        .max_attempts(6)
        .build()
        .unwrap();
    let timed = policy
        .to_builder()
        .attempt_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    // Warm up tokio's timer wheel and the thread-locals.
    failing_first(&rt, &timed, 5);
    for (policy, failures) in [
        (&policy, 0),
        (&policy, 1),
        (&policy, 5),
        (&timed, 0),
        (&timed, 5),
    ] {
        for (kept, allocations) in [(false, 1), (true, 0)] {
            // Without a kept block: another call, waiting, holds it.
            let taken = (!kept).then(|| take_kept_block(&rt, policy));
            let info = allocation_counter::measure(|| {
                assert_eq!(failing_first(&rt, policy, failures), failures + 1);
            });
            drop(taken);
            let expected = if failures == 0 && policy.attempt_timeout().is_none() {
                0
            } else {
                allocations
            };
            assert_eq!(
                info.count_total,
                expected,
                "{failures} failures, timeout {:?}, block kept: {kept}: {info:?}",
                policy.attempt_timeout()
            );
        }
    }
}

/// Holds a call that has retried once and is waiting, so the block the
/// thread kept is in use; dropping the call gives it back.
fn take_kept_block<'p>(
    rt: &tokio::runtime::Runtime,
    policy: &'p Policy,
) -> std::pin::Pin<Box<impl Future<Output = Result<u32, Flaky>> + 'p>> {
    let _context = rt.enter();
    let mut call = Box::pin(Retry::new(policy).call(|| async { Err::<u32, _>(Flaky) }));
    assert!(
        poll_once(call.as_mut()).is_pending(),
        "the call waits after its first failure"
    );
    call
}

/// A kept block holds no timer, even from a call dropped while it waited
/// (its timer would hold the runtime's driver), and is reused on a new
/// runtime after the one whose timer it held is gone.
#[test]
fn a_kept_block_holds_no_timer_and_outlives_its_runtime() {
    use retry_core::clock::{Sleeper, TokioSleeper};
    let policy = Policy::builder()
        .base(Duration::from_secs(5))
        .max_attempts(3)
        .build()
        .unwrap();
    let rt = current_thread();
    drop(TokioSleeper::reuse_block());
    let waiting = take_kept_block(&rt, &policy);
    assert!(
        TokioSleeper::reuse_block().is_none(),
        "the waiting call holds it"
    );
    drop(waiting);
    let kept = TokioSleeper::reuse_block().expect("the dropped call's block is kept");
    assert_eq!(format!("{kept:?}"), "Block { armed: false, .. }");
    TokioSleeper::keep_block(kept);
    drop(rt);

    let rt = current_thread();
    let info = allocation_counter::measure(|| {
        assert_eq!(failing_first(&rt, &policy, 2), 3);
    });
    assert_eq!(info.count_total, 0, "the kept block is reused: {info:?}");
}

#[test]
fn the_blocking_success_path_allocates_nothing() {
    let policy = Policy::default();
    let info = allocation_counter::measure(|| {
        let r = Retry::blocking(&policy).call_blocking(|| Ok::<_, Flaky>(2));
        assert_eq!(r.unwrap(), 2);
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[test]
fn resolving_a_name_allocates_nothing() {
    registry::install(
        Registry::builder()
            .policy("alloc-test", Policy::default())
            .build(),
    );
    let _ = registry::policy("alloc-test");
    let info = allocation_counter::measure(|| {
        let p = registry::policy("alloc-test").expect("installed");
        assert_eq!(p.name(), Some("alloc-test"));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[test]
fn the_counter_does_see_allocations() {
    // Guard that the tests above can fail.
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 16]);
    });
    assert!(info.count_total >= 1);
}
