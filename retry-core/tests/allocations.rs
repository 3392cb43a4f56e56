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

/// The plain path (the default policy: no deadline, budget, breaker or
/// timeout) and the same with a deadline, which reads the clock at the start.
#[test]
fn a_first_attempt_success_allocates_nothing() {
    let plain = Policy::default();
    let deadline = Policy::builder()
        .deadline(Some(Duration::from_secs(5)))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _context = rt.enter();
    for policy in [&plain, &deadline] {
        // Warm up thread-locals (the jitter generator, tokio's clock context).
        let _ = poll_once(Retry::new(policy).call(|| async { Ok::<_, Flaky>(1) }));
        let info = allocation_counter::measure(|| {
            let r = poll_once(Retry::new(policy).call(|| async { Ok::<_, Flaky>(1) }));
            assert!(matches!(r, Poll::Ready(Ok(1))));
        });
        assert_eq!(
            info.count_total,
            0,
            "deadline {:?}: {info:?}",
            policy.deadline()
        );
    }
}

/// A policy with a local retry budget, in each mode: a success tells the
/// budget (a window's slots and counters are fixed atomics, a token
/// bucket's tokens an atomic, an adaptive limiter's state a few floats
/// under a lock) and allocates nothing. Each mode's effect is checked where
/// the budget shows it, so a call that skipped the budget fails here rather
/// than pass for free: a window counts every call, a drained token bucket
/// is refilled by the successes. An adaptive limiter that no throttle has
/// switched on paces nothing and shows no success it saw; only its count of
/// allocations is checked (one that paces arms the call's timer, and so
/// allocates its block once, as an attempt timeout does).
#[test]
fn a_budgeted_success_allocates_nothing() {
    use retrykit_core::RetryBudget;
    let rt = current_thread();
    let _context = rt.enter();
    let throttling = RetryBudget::grpc_throttling(10.0, 0.1).unwrap();
    let bucket = throttling.throttling().unwrap();
    for _ in 0..5 {
        bucket.record(true);
    }
    assert_eq!(bucket.tokens(), 5.0, "drained to half");
    let budgets = [
        ("window", RetryBudget::builder().build().unwrap()),
        ("adaptive", RetryBudget::adaptive()),
        ("grpc_throttling", throttling),
    ];
    for (mode, budget) in budgets {
        let budget = std::sync::Arc::new(budget);
        let policy = Policy::builder()
            .budget(Some(std::sync::Arc::clone(&budget)))
            .build()
            .unwrap();
        assert_eq!(policy.budget().map(|b| b.mode().as_str()), Some(mode));
        let _ = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
        let info = allocation_counter::measure(|| {
            for _ in 0..100 {
                let r = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
                assert!(matches!(r, Poll::Ready(Ok(1))), "{mode}");
            }
        });
        assert_eq!(info.count_total, 0, "{mode}: {info:?}");
        let now = tokio::time::Instant::now().into_std();
        match mode {
            "window" => assert_eq!(budget.totals(now), (101, 0), "every call counted"),
            "grpc_throttling" => {
                let tokens = budget.throttling().unwrap().tokens();
                assert_eq!(tokens, 10.0, "101 successes refilled 5 tokens");
            }
            _ => assert!(!budget.limiter().unwrap().is_limiting()),
        }
    }
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

/// A policy with a concurrency limit that has room: taking a permit and
/// giving it back allocate nothing (its queue's room is reserved when the
/// limit is built), on the async and the blocking entry points. An
/// adaptive limit reads each attempt's latency and outcome as its permit
/// comes back: its controller's state is a few numbers, so that allocates
/// nothing either, as its size moves.
#[test]
fn a_limit_with_room_adds_no_allocation_of_any_kind() {
    use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
    use retrykit_core::limit::{ConcurrencyLimit, LimitKind};
    let kinds = [
        LimitKind::Fixed { max_in_flight: 2 },
        LimitKind::Aimd(AimdSettings {
            initial: 2,
            ..AimdSettings::default()
        }),
        LimitKind::Gradient(GradientSettings {
            initial: 2,
            ..GradientSettings::default()
        }),
    ];
    for kind in kinds {
        let limit = std::sync::Arc::new(ConcurrencyLimit::new(Some("a"), kind, None, 8).unwrap());
        let policy = Policy::builder()
            .limit(Some(std::sync::Arc::clone(&limit)))
            .build()
            .unwrap();
        let rt = current_thread();
        let _context = rt.enter();
        let _ = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
        let info = allocation_counter::measure(|| {
            for _ in 0..100 {
                let r = poll_once(Retry::new(&policy).call(|| async { Ok::<_, Flaky>(1) }));
                assert!(matches!(r, Poll::Ready(Ok(1))));
                let r = Retry::blocking(&policy).call_blocking(|| Ok::<_, Flaky>(2));
                assert_eq!(r.unwrap(), 2);
            }
        });
        assert_eq!(info.count_total, 0, "{kind:?}: {info:?}");
        assert_eq!(limit.in_flight(), 0);
    }
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

/// A first attempt that succeeds after pending once on tokio's timer, under
/// `attempt_timeout` and without: the call's timer block (its one heap
/// block, where tokio's `Sleep` for the timeout is armed in place) is made
/// at that first `Pending`, so this success path allocates exactly once,
/// and without a timeout not at all. tokio's armed `Sleep` adds nothing of
/// its own: `tokio::time::timeout` around the same attempt allocates
/// nothing, its `Sleep` held in its future. The call's block exists
/// because the loop reuses one slot for every attempt's timer.
#[test]
fn a_pending_success_under_attempt_timeout_allocates_its_timer_once() {
    let rt = current_thread();
    let plain = Policy::default();
    let timed = Policy::builder()
        .attempt_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    let attempt = || async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<_, Flaky>(7)
    };
    // Warm up tokio's timer wheel and the thread-locals.
    assert_eq!(rt.block_on(Retry::new(&timed).call(attempt)).unwrap(), 7);
    let by_hand = allocation_counter::measure(|| {
        let r =
            rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), attempt()).await });
        assert_eq!(r.unwrap().unwrap(), 7);
    });
    assert_eq!(by_hand.count_total, 0, "tokio's timeout: {by_hand:?}");
    for (policy, expected) in [(&plain, 0), (&timed, 1)] {
        let info = allocation_counter::measure(|| {
            assert_eq!(rt.block_on(Retry::new(policy).call(attempt)).unwrap(), 7);
        });
        assert_eq!(
            info.count_total,
            expected,
            "timeout {:?}: {info:?}",
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
