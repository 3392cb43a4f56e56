//! One breaker rule on every entry point: the same traffic through
//! `Retry::call`, `call_with_report`, an async `#[retry]` fn, the tower
//! layer and the blocking driver makes the same transitions at the same
//! attempts, and the window is exact: successes from before the window
//! judge nothing.
//!
//! The traffic: a breaker of `window = 10s`, `min_calls = 8`,
//! `failure_ratio = 0.5`; 7 successes, a 10.5 s pause, then failures. The
//! 7 successes have left the window, so the breaker opens at the 8th
//! failure, never sooner.

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::clock::TokioClock;
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Policy, Registry, Retry, registry, retry};
use std::future::Future;
use std::io::{Error, ErrorKind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service, ServiceExt};

const SUCCESSES: usize = 7;
const FAILURES: usize = 12;

/// Built before the paused runtime starts, so that the runtime's clock
/// never reads earlier than the window's origin.
fn breaker() -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name("entry-dep")
        .window(Duration::from_secs(10))
        .min_calls(8)
        .failure_ratio(0.5)
        .open_jitter(0.0)
        .build()
        .unwrap();
    Arc::new(b)
}

/// One attempt a call, so that each call is one count.
fn policy(b: &Arc<CircuitBreaker>) -> Policy {
    Policy::builder()
        .max_attempts(1)
        .breaker(Some(Arc::clone(b)))
        .build()
        .unwrap()
}

fn answer(fail: bool) -> Result<(), Error> {
    if fail {
        Err(ErrorKind::ConnectionReset.into())
    } else {
        Ok(())
    }
}

/// The breaker's state after each call of the traffic, through `call`.
async fn traffic<F, Fut>(b: &CircuitBreaker, mut call: F) -> Vec<BreakerState>
where
    F: FnMut(bool) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut states = Vec::new();
    for _ in 0..SUCCESSES {
        call(false).await.unwrap();
        states.push(b.state());
    }
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    for _ in 0..FAILURES {
        assert!(call(true).await.is_err());
        states.push(b.state());
    }
    states
}

/// Runs the traffic on a paused runtime against a breaker of its own.
fn through<F>(run: F) -> Vec<BreakerState>
where
    F: FnOnce(Arc<CircuitBreaker>) -> Pin<Box<dyn Future<Output = Vec<BreakerState>>>>,
{
    let b = breaker();
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(run(b))
}

static FAIL: AtomicBool = AtomicBool::new(false);

#[retry(policy = "breaker-entry-points")]
async fn annotated() -> Result<(), Error> {
    answer(FAIL.load(Ordering::Relaxed))
}

/// A service that answers as it is told with each request.
#[derive(Clone)]
struct Dependency;

impl Service<bool> for Dependency {
    type Response = ();
    type Error = Error;
    type Future = std::future::Ready<Result<(), Error>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, fail: bool) -> Self::Future {
        std::future::ready(answer(fail))
    }
}

#[test]
fn every_entry_point_opens_at_the_same_attempt_of_an_exact_window() {
    let mut runs: Vec<(&str, Vec<BreakerState>)> = Vec::new();
    runs.push((
        "Retry::call",
        through(|b| {
            Box::pin(async move {
                let p = policy(&b);
                traffic(&b, |fail| {
                    Retry::new(&p).call(move || async move { answer(fail) })
                })
                .await
            })
        }),
    ));
    runs.push((
        "call_with_report",
        through(|b| {
            Box::pin(async move {
                let p = policy(&b);
                let p = &p;
                traffic(&b, |fail| async move {
                    let call = Retry::new(p).call_with_report(move || async move { answer(fail) });
                    call.await.0
                })
                .await
            })
        }),
    ));
    runs.push((
        "#[retry]",
        through(|b| {
            Box::pin(async move {
                let p = policy(&b);
                registry::install(
                    Registry::builder()
                        .policy("breaker-entry-points", p)
                        .build(),
                );
                traffic(&b, |fail| {
                    FAIL.store(fail, Ordering::Relaxed);
                    annotated()
                })
                .await
            })
        }),
    ));
    runs.push((
        "tower",
        through(|b| {
            Box::pin(async move {
                let layer = RetryLayer::new(policy(&b));
                traffic(&b, |fail| layer.layer(Dependency).oneshot(fail)).await
            })
        }),
    ));
    runs.push((
        "blocking",
        through(|b| {
            Box::pin(async move {
                let p = policy(&b);
                traffic(&b, |fail| {
                    let out = Retry::blocking(&p)
                        .clock(TokioClock)
                        .call_blocking(|| answer(fail));
                    std::future::ready(out)
                })
                .await
            })
        }),
    ));

    let (_, first) = &runs[0];
    let opened_at = first.iter().position(|s| *s == BreakerState::Open);
    assert_eq!(
        opened_at.map(|i| i + 1 - SUCCESSES),
        Some(8),
        "the breaker opens at the 8th failure: the successes before the window judge nothing ({first:?})"
    );
    for (entry, states) in &runs {
        assert_eq!(
            states, first,
            "{entry} makes the transitions Retry::call makes"
        );
    }
}
