//! A breaker reads one clock, the default one: a breaker built inside a
//! runtime under tokio's paused clock (as a `#[tokio::test(start_paused)]`
//! builds it, or loads it from a policy file) gives exact figures, and
//! `status_now` reads that clock itself. (One built before the runtime
//! starts counts from a real instant, so its figures are exact to the
//! millisecond only.)
#![cfg(feature = "tokio")]

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::{Policy, Retry};
use std::sync::Arc;
use std::time::Duration;

const S: fn(u64) -> Duration = Duration::from_secs;

async fn trip(breaker: &Arc<CircuitBreaker>) {
    let policy = Policy::builder()
        .max_attempts(1)
        .breaker(Some(Arc::clone(breaker)))
        .build()
        .unwrap();
    let out: std::io::Result<()> = Retry::new(&policy)
        .call(|| async { Err(std::io::ErrorKind::ConnectionReset.into()) })
        .await;
    assert!(out.is_err());
}

fn breaker() -> Arc<CircuitBreaker> {
    let built = CircuitBreaker::builder()
        .min_calls(1)
        .open_for(S(10))
        .probe_every(S(10))
        .open_jitter(0.0)
        .build()
        .unwrap();
    Arc::new(built)
}

#[tokio::test(start_paused = true)]
async fn open_for_is_exact_under_the_paused_clock() {
    // Some real time passes between the runtime's start and the build.
    std::thread::sleep(Duration::from_millis(2));
    let breaker = breaker();
    trip(&breaker).await;
    let status = breaker.status_now();
    assert_eq!(
        (status.state, status.open_for),
        (BreakerState::Open, Some(S(10)))
    );
    tokio::time::advance(S(4)).await;
    assert_eq!(breaker.status_now().open_for, Some(S(6)));
    let now = tokio::time::Instant::now().into_std();
    assert_eq!(breaker.status(now), breaker.status_now());
    // Due to let attempts through exactly now (it reads open until one asks).
    tokio::time::advance(S(6)).await;
    assert_eq!(breaker.status_now().open_for, Some(Duration::ZERO));
}
