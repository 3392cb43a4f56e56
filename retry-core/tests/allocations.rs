//! Heap allocations on the hot path, counted by a counting global allocator.
//! This file is its own test binary so the allocator sees only these tests.
//! Not with the `metrics` feature: recording a call's metrics allocates its
//! labels (documented in `retrykit_core::metrics`).
#![cfg(not(feature = "metrics"))]

use retrykit_core::{Class, Classify, Policy, Registry, Retry, registry};
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

/// A call whose first `failures` attempts fail, each after pending for
/// `pause` on tokio's timer (zero: at once), through `policy`, on a paused
/// runtime.
fn failing_first(
    rt: &tokio::runtime::Runtime,
    policy: &Policy,
    failures: u32,
    pause: Duration,
) -> u32 {
    let mut calls = 0;
    let r = rt.block_on(Retry::new(policy).seed(1).call(|| {
        calls += 1;
        let n = calls;
        async move {
            if n > failures {
                return Ok(n);
            }
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
            Err(Flaky)
        }
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

/// A policy whose circuit breaker is closed: asking it and telling it the
/// outcome allocate nothing (its state is one atomic word, its counts a
/// fixed ring of atomics).
#[test]
fn a_closed_breaker_adds_no_allocation() {
    let breaker = retrykit_core::CircuitBreaker::builder().build().unwrap();
    let policy = Policy::builder()
        .breaker(Some(std::sync::Arc::new(breaker)))
        .build()
        .unwrap();
    let rt = current_thread();
    let _context = rt.enter();
    let _ = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
    let info = allocation_counter::measure(|| {
        for _ in 0..100 {
            let r = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
            assert!(matches!(r, Poll::Ready(Ok(1))));
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    let status = policy
        .breaker()
        .unwrap()
        .status(tokio::time::Instant::now().into_std());
    assert_eq!(status.attempts, 101, "every attempt was counted");
}

/// The waits between attempts are held in the call's own future: a call
/// that retries allocates nothing for them, however many it makes. The
/// call's timer block is made only for an attempt's timeout, at an
/// attempt's first `Pending` (an attempt ready at once arms none), and
/// then once however many attempts follow.
#[test]
fn a_retrying_call_allocates_only_its_timeout_once() {
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
    let (at_once, pending) = (Duration::ZERO, Duration::from_millis(1));
    // Warm up tokio's timer wheel and the thread-locals.
    failing_first(&rt, &timed, 5, pending);
    for (policy, failures, pause, expected) in [
        (&policy, 0, at_once, 0),
        (&policy, 1, at_once, 0),
        (&policy, 5, at_once, 0),
        (&policy, 5, pending, 0),
        (&timed, 0, at_once, 0),
        (&timed, 5, at_once, 0),
        (&timed, 1, pending, 1),
        (&timed, 5, pending, 1),
    ] {
        let info = allocation_counter::measure(|| {
            assert_eq!(failing_first(&rt, policy, failures, pause), failures + 1);
        });
        assert_eq!(
            info.count_total,
            expected,
            "{failures} failures pending {pause:?}, timeout {:?}: {info:?}",
            policy.attempt_timeout()
        );
    }
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
