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

#[test]
fn a_first_attempt_success_allocates_nothing() {
    let policy = Policy::builder()
        .deadline(Some(Duration::from_secs(5)))
        .attempt_timeout(Some(Duration::from_secs(1)))
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
