//! Issue 42 on every async entry point: a call the breaker holds back
//! keeps its attempts. (Its own test binary: `#[retry]` reads the
//! process-wide registry, which breaker_entry_points.rs replaces too.)

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Policy, Registry, Retry, registry, retry};
use std::future::Future;
use std::io::{Error, ErrorKind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service, ServiceExt};

fn answer(fail: bool) -> Result<(), Error> {
    if fail {
        Err(ErrorKind::ConnectionReset.into())
    } else {
        Ok(())
    }
}

static SENT: AtomicU32 = AtomicU32::new(0);

/// The first attempt sent fails, every later one succeeds.
fn first_fails() -> Result<(), Error> {
    answer(SENT.fetch_add(1, Ordering::Relaxed) == 0)
}

#[retry(policy = "breaker-keeps-attempts")]
async fn annotated_keeps() -> Result<(), Error> {
    first_fails()
}

/// A service whose first request fails.
#[derive(Clone)]
struct FirstFails;

impl Service<()> for FirstFails {
    type Response = ();
    type Error = Error;
    type Future = std::future::Ready<Result<(), Error>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, (): ()) -> Self::Future {
        std::future::ready(first_fails())
    }
}

/// Issue 42 on every async entry point (the blocking loop's test is in
/// retry-core's breaker_loop.rs, on a clock that moves as it sleeps): a
/// call of 2 attempts (4 s apart, so a total wait of 4 s) against a breaker
/// opened for 1 s is refused, waits the break, and still sends both
/// attempts: the probe fails, the next succeeds.
#[test]
fn on_every_entry_point_a_refusal_uses_none_of_the_policys_attempts() {
    type Call = fn(Policy) -> Pin<Box<dyn Future<Output = Result<(), Error>>>>;
    let entries: [(&str, Call); 4] = [
        ("Retry::call", |p| {
            Box::pin(async move { Retry::new(&p).call(|| async { first_fails() }).await })
        }),
        ("call_with_report", |p| {
            Box::pin(async move {
                let (result, report) = Retry::new(&p)
                    .call_with_report(|| async { first_fails() })
                    .await;
                assert_eq!((report.attempts, report.refused), (3, 1), "{report:?}");
                result
            })
        }),
        ("#[retry]", |p| {
            registry::install(
                Registry::builder()
                    .policy("breaker-keeps-attempts", p)
                    .build(),
            );
            Box::pin(annotated_keeps())
        }),
        ("tower", |p| {
            Box::pin(async move { RetryLayer::new(p).layer(FirstFails).oneshot(()).await })
        }),
    ];
    for (entry, call) in entries {
        SENT.store(0, Ordering::Relaxed);
        let b = Arc::new(
            CircuitBreaker::builder()
                .name("keeps")
                .min_calls(1)
                .open_for(Duration::from_secs(1))
                .open_jitter(0.0)
                .build()
                .unwrap(),
        );
        let p = Policy::builder()
            .jitter(retrykit_core::Jitter::None)
            .base(Duration::from_secs(4))
            .max_attempts(2)
            .breaker(Some(Arc::clone(&b)))
            .build()
            .unwrap();
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(async move {
                let now = tokio::time::Instant::now().into_std();
                let ticket = b.try_acquire(now).unwrap();
                b.record(ticket, now, true);
                assert_eq!(b.state(), BreakerState::Open);
                call(p).await
            });
        assert!(result.is_ok(), "{entry}: {result:?}");
        assert_eq!(
            SENT.load(Ordering::Relaxed),
            2,
            "{entry}: both attempts were sent"
        );
    }
}
