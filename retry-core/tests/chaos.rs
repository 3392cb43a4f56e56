//! Chaos in the one loop, under tokio's paused clock: an injected fault is a
//! failed attempt of its class that never calls the closure; injected
//! latency delays the attempt before its closure, against the attempt
//! timeout and the deadline; the breaker hears injected faults; a seed
//! repeats its injections exactly.

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::chaos::Chaos;
use retrykit_core::{Class, Classify, Ending, Jitter, Policy, Retry};
use std::io::{Error, ErrorKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const MS: fn(u64) -> Duration = Duration::from_millis;

fn policy(chaos: Chaos) -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .name("chaos-test")
        .base(MS(100))
        .jitter(Jitter::None)
        .max_attempts(3)
        .chaos(Some(Arc::new(chaos)))
}

/// Calls `p` once; how many times the closure ran, and the outcome.
async fn call(p: &Policy, work: Duration) -> (u32, Result<(), Error>, retrykit_core::Report) {
    let ran = AtomicU32::new(0);
    let (out, report) = Retry::new(p)
        .call_with_report(|| {
            ran.fetch_add(1, Ordering::Relaxed);
            async move {
                tokio::time::sleep(work).await;
                Ok::<(), Error>(())
            }
        })
        .await;
    (ran.into_inner(), out, report)
}

#[tokio::test(start_paused = true)]
async fn each_class_fails_as_a_real_failure_of_its_class_without_calling_the_closure() {
    for (class, attempts, ending) in [
        (Class::TRANSIENT, 3, Ending::Exhausted),
        (Class::TIMEOUT, 3, Ending::Exhausted),
        (Class::THROTTLED, 3, Ending::Exhausted),
        (Class::Permanent, 1, Ending::Permanent),
    ] {
        let p = policy(Chaos::new(Some(1)).fault(1.0, class, None).unwrap())
            .build()
            .unwrap();
        let (ran, out, report) = call(&p, MS(0)).await;
        let error = out.unwrap_err();
        assert_eq!(ran, 0, "{class:?}: the closure is never called");
        assert_eq!(error.class(), class);
        assert!(error.to_string().starts_with("chaos: injected"), "{error}");
        assert_eq!(
            (report.attempts, report.injected, report.ending),
            (attempts, attempts, ending)
        );
        // The backoff ran as for a real failure: 100 ms, then 200 ms.
        let waited = if attempts == 3 { MS(300) } else { MS(0) };
        assert_eq!(report.waited, waited, "{class:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_injected_throttled_fault_carries_its_retry_after() {
    let chaos = Chaos::new(Some(1))
        .fault(1.0, Class::THROTTLED, Some(Duration::from_secs(2)))
        .unwrap();
    let p = policy(chaos).build().unwrap();
    let (ran, out, report) = call(&p, MS(0)).await;
    assert_eq!(ran, 0);
    assert_eq!(out.unwrap_err().retry_after(), Some(Duration::from_secs(2)));
    assert_eq!(
        report.waited,
        Duration::from_secs(4),
        "two hinted waits of 2 s"
    );
}

#[tokio::test(start_paused = true)]
async fn latency_counts_against_the_attempt_timeout() {
    // 300 ms of latency against a 100 ms attempt timeout: every attempt
    // times out before its closure is called.
    let chaos = Chaos::new(Some(1)).latency(1.0, MS(300), MS(300)).unwrap();
    let p = policy(chaos)
        .attempt_timeout(Some(MS(100)))
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let (ran, out, report) = call(&p, MS(0)).await;
    assert_eq!(ran, 0);
    assert_eq!(out.unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!((report.attempts, report.injected), (3, 3));
    assert_eq!(started.elapsed(), MS(3 * 100 + 100 + 200));

    // 50 ms of latency and 60 ms of work: 110 ms, past the 100 ms timeout,
    // though each alone is within it. The closure runs after the delay.
    let chaos = Chaos::new(Some(1)).latency(1.0, MS(50), MS(50)).unwrap();
    let p = policy(chaos)
        .attempt_timeout(Some(MS(100)))
        .build()
        .unwrap();
    let (ran, out, _) = call(&p, MS(60)).await;
    assert_eq!(ran, 3);
    assert_eq!(out.unwrap_err().kind(), ErrorKind::TimedOut);
    // 40 ms of work fits: one attempt, delayed, succeeds at 90 ms.
    let started = tokio::time::Instant::now();
    let (ran, out, report) = call(&p, MS(40)).await;
    assert!(out.is_ok());
    assert_eq!((ran, report.attempts, report.injected), (1, 1, 1));
    assert_eq!(started.elapsed(), MS(90));
}

#[tokio::test(start_paused = true)]
async fn latency_counts_against_the_deadline() {
    let chaos = Chaos::new(Some(1)).latency(1.0, MS(300), MS(300)).unwrap();
    let p = policy(chaos).deadline(Some(MS(250))).build().unwrap();
    let started = tokio::time::Instant::now();
    let (ran, out, report) = call(&p, MS(0)).await;
    assert_eq!(ran, 0);
    assert_eq!(out.unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(report.ending, Ending::Deadline);
    assert_eq!(started.elapsed(), MS(250));
}

#[tokio::test(start_paused = true)]
async fn the_breaker_opens_on_injected_faults() {
    let breaker = CircuitBreaker::builder()
        .name("chaos-dep")
        .min_calls(4)
        .failure_ratio(0.5)
        .open_jitter(0.0)
        .build()
        .unwrap();
    let breaker = Arc::new(breaker);
    let chaos = Chaos::new(Some(1))
        .fault(1.0, Class::TRANSIENT, None)
        .unwrap();
    let p = policy(chaos)
        .max_attempts(1)
        .breaker(Some(breaker.clone()))
        .build()
        .unwrap();
    let mut states = Vec::new();
    for _ in 0..5 {
        let (ran, out, _) = call(&p, MS(0)).await;
        assert_eq!(ran, 0);
        assert!(out.is_err());
        states.push(breaker.state());
    }
    use BreakerState::*;
    assert_eq!(states, [Closed, Closed, Closed, Open, Open]);
}

#[tokio::test(start_paused = true)]
async fn a_seed_repeats_its_injections_exactly() {
    let run = |seed| async move {
        let chaos = Chaos::new(Some(seed))
            .fault(0.3, Class::TRANSIENT, None)
            .unwrap()
            .latency(0.3, MS(10), MS(90))
            .unwrap();
        let p = policy(chaos).max_attempts(2).build().unwrap();
        let mut seen = Vec::new();
        for _ in 0..40 {
            let started = tokio::time::Instant::now();
            let (ran, out, report) = call(&p, MS(1)).await;
            seen.push((ran, out.is_ok(), report.injected, started.elapsed()));
        }
        seen
    };
    let first = run(7).await;
    assert_eq!(first, run(7).await, "the same seed, the same injections");
    assert_ne!(first, run(8).await, "another seed, other injections");
    let injected: u32 = first.iter().map(|s| s.2).sum();
    assert!(injected > 10, "{injected} of about 40 attempts injected");
}

#[tokio::test(start_paused = true)]
async fn an_error_type_without_from_chaos_is_sent_unfaulted() {
    #[derive(Debug)]
    struct Plain;
    impl Classify for Plain {
        fn class(&self) -> Class {
            Class::TRANSIENT
        }
    }
    let p = policy(
        Chaos::new(Some(1))
            .fault(1.0, Class::TRANSIENT, None)
            .unwrap(),
    )
    .build()
    .unwrap();
    let ran = AtomicU32::new(0);
    let (out, report) = Retry::new(&p)
        .call_with_report(|| {
            ran.fetch_add(1, Ordering::Relaxed);
            async { Ok::<(), Plain>(()) }
        })
        .await;
    assert!(out.is_ok());
    assert_eq!((ran.into_inner(), report.injected), (1, 0));
}

#[test]
fn blocking_calls_get_the_same_faults() {
    let p = policy(
        Chaos::new(Some(1))
            .fault(1.0, Class::TRANSIENT, None)
            .unwrap(),
    )
    .base(MS(1))
    .build()
    .unwrap();
    let mut ran = 0;
    let (out, report) = Retry::blocking(&p).call_blocking_with_report(|| {
        ran += 1;
        Ok::<(), Error>(())
    });
    assert_eq!(ran, 0);
    assert_eq!(out.unwrap_err().kind(), ErrorKind::ConnectionReset);
    assert_eq!(report.injected, 3);
}

#[test]
fn hedging_with_chaos_is_refused_at_build() {
    use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
    let chaos = Chaos::new(Some(1))
        .fault(0.1, Class::TRANSIENT, None)
        .unwrap();
    let err = policy(chaos)
        .hedge(Some(HedgeSettings::new(HedgeAfter::Fixed(MS(10)))))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("hedge_after"), "{err}");
    assert!(
        err.to_string().contains("cannot be combined with chaos"),
        "{err}"
    );
}
