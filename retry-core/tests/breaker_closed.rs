//! A closed breaker's window is exact on every call: each attempt is
//! counted once, in the slot of the time it was let through, whether or
//! not the call reads the clock for a report.
#![cfg(feature = "tokio")]

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::{Policy, Retry};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::{Answer, paused_runtime};

/// Judges from `min_calls` attempts at a ratio of 0.5, over 10 s (1 s
/// slots).
/// Built before the paused runtime starts, so the runtime's clock never
/// reads earlier than the window's origin.
fn breaker_of(min_calls: u32) -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name("dep")
        .min_calls(min_calls)
        .failure_ratio(0.5)
        .window(Duration::from_secs(10))
        .open_jitter(0.0)
        .build()
        .unwrap();
    Arc::new(b)
}

/// One attempt a call, so each call is one count.
fn policy(b: &Arc<CircuitBreaker>) -> Policy {
    Policy::builder()
        .max_attempts(1)
        .breaker(Some(Arc::clone(b)))
        .build()
        .unwrap()
}

fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

async fn sleep(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

#[test]
fn a_timed_first_attempts_success_counts_once_in_the_slot_it_began_in() {
    let b = breaker_of(4);
    paused_runtime().block_on(async {
        let p = policy(&b);
        // Begins in slot 0, answers in slot 1.
        let (result, report) = Retry::new(&p)
            .call_with_report(|| async {
                sleep(1_500).await;
                Ok::<_, Answer>(())
            })
            .await;
        assert!(result.is_ok());
        // Read from the attempt's start (not zero: unread).
        let elapsed = report.elapsed.as_millis();
        assert!((1_500..1_510).contains(&elapsed), "{elapsed} ms");
        let (result, _) = Retry::new(&p)
            .call_with_report(|| async { Ok::<_, Answer>(()) })
            .await;
        assert!(result.is_ok());
        assert_eq!((b.status(now()).attempts, b.status(now()).failures), (2, 0));
        // At 10.2 s the window is slots 1 to 10: the first call, counted
        // where it began (slot 0), has left it; the second (slot 1) has not.
        sleep(8_700).await;
        assert_eq!(b.status(now()).attempts, 1);
        sleep(1_000).await;
        assert_eq!(b.status(now()).attempts, 0);
    });
}

#[test]
fn an_untimed_success_counts_once_in_the_slot_it_began_in() {
    let b = breaker_of(8);
    paused_runtime().block_on(async {
        let p = policy(&b);
        let ok = || async { Ok::<_, Answer>(()) };
        for _ in 0..7 {
            Retry::new(&p).call(ok).await.unwrap();
        }
        assert_eq!(b.status(now()).attempts, 7);
        // The window has passed: every one of them has left it.
        sleep(10_500).await;
        assert_eq!(b.status(now()).attempts, 0);
        Retry::new(&p).call(ok).await.unwrap();
        assert_eq!(b.status(now()).attempts, 1);
        sleep(9_000).await;
        assert_eq!(b.status(now()).attempts, 1);
        sleep(1_000).await;
        assert_eq!(b.status(now()).attempts, 0);
    });
}

/// `ok` successes, then failures: `b` is still closed after `closed` of
/// them (under `min_calls`), open after one more, and then refuses.
fn opens_after(b: &Arc<CircuitBreaker>, ok: usize, closed: usize) {
    paused_runtime().block_on(async {
        let p = policy(b);
        let up = || async { Ok::<_, Answer>(()) };
        for _ in 0..ok {
            Retry::new(&p).call(up).await.unwrap();
        }
        let down = || async { Err::<(), _>(Answer::Down) };
        for _ in 0..closed {
            assert!(Retry::new(&p).call(down).await.is_err());
        }
        assert_eq!(b.state(), BreakerState::Closed, "under min_calls");
        assert!(Retry::new(&p).call(down).await.is_err());
        assert_eq!(b.state(), BreakerState::Open);
        let refused = Retry::new(&p).call(up).await;
        assert!(matches!(refused, Err(Answer::Refused)));
    });
}

#[test]
fn a_failure_is_judged_with_every_success_in_the_window() {
    // 5 failures of 8 attempts, the 3 successes counted: over 0.5.
    opens_after(&breaker_of(8), 3, 4);
}

#[test]
fn failures_are_judged_against_the_successes_it_counted() {
    // 2 failures of 4 attempts: the ratio is reached only with both
    // successes counted.
    opens_after(&breaker_of(4), 2, 1);
}

#[test]
fn a_slow_call_threshold_judges_a_success() {
    let b = CircuitBreaker::builder()
        .min_calls(2)
        .failure_ratio(0.5)
        .slow_call(Some(Duration::from_millis(100)))
        .open_jitter(0.0)
        .build()
        .map(Arc::new)
        .unwrap();
    paused_runtime().block_on(async {
        let p = policy(&b);
        for _ in 0..2 {
            let slow = || async {
                sleep(200).await;
                Ok::<_, Answer>(())
            };
            Retry::new(&p).call(slow).await.unwrap();
        }
        assert_eq!(b.state(), BreakerState::Open, "two slow successes trip it");
    });
}
