//! One concurrency limit rule on every entry point: with the limit's only
//! permit held elsewhere, a call through `Retry::call`, `call_with_report`,
//! an async `#[retry]` fn, the tower layer and the blocking driver waits
//! `max_wait`, sends nothing, and ends with an `io::Error` of kind
//! `WouldBlock` carrying the `LimitFull`; once the permit is back, the same
//! call goes through and gives its own permit back. An adaptive limit hears
//! of each attempt through every entry point as its permit comes back.

use retrykit_core::limit::{ConcurrencyLimit, LimitFull};
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

const MAX_WAIT: Duration = Duration::from_millis(3);

static SENT: AtomicU32 = AtomicU32::new(0);

/// The tests take turns: they share `SENT` and the installed registry.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn send() -> Result<(), Error> {
    SENT.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

fn policy(limit: &Arc<ConcurrencyLimit>) -> Policy {
    Policy::builder()
        .limit(Some(Arc::clone(limit)))
        .build()
        .unwrap()
}

#[retry(policy = "limit-entry-points")]
async fn annotated() -> Result<(), Error> {
    send()
}

#[derive(Clone)]
struct Dependency;

impl Service<()> for Dependency {
    type Response = ();
    type Error = Error;
    type Future = std::future::Ready<Result<(), Error>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: ()) -> Self::Future {
        std::future::ready(send())
    }
}

type Call = Box<dyn Fn(Policy) -> Pin<Box<dyn Future<Output = Result<(), Error>>>>>;

/// Runs `call` twice on a paused runtime: with the permit held (it must
/// end limit-full after `MAX_WAIT`, having sent nothing), then freed.
fn check(entry: &str, call: Call) {
    let limit = Arc::new(ConcurrencyLimit::named("entry-dep", 1, Some(MAX_WAIT), 4).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        SENT.store(0, Ordering::SeqCst);
        let held = limit.try_acquire().unwrap();
        let start = std::time::Instant::now();
        let tokio_start = tokio::time::Instant::now();
        let error = call(policy(&limit)).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::WouldBlock, "{entry}: {error}");
        let full = error.get_ref().and_then(|e| e.downcast_ref::<LimitFull>());
        assert_eq!(full.and_then(LimitFull::name), Some("entry-dep"), "{entry}");
        let waited = tokio_start.elapsed().max(start.elapsed());
        assert!(waited >= MAX_WAIT, "{entry} waited {waited:?}");
        assert_eq!(SENT.load(Ordering::SeqCst), 0, "{entry} sent nothing");
        assert_eq!(limit.waiting(), 0, "{entry} left the queue");
        drop(held);
        call(policy(&limit)).await.unwrap();
        assert_eq!(SENT.load(Ordering::SeqCst), 1, "{entry}");
        assert_eq!(limit.in_flight(), 0, "{entry} gave its permit back");
    });
}

#[test]
fn every_entry_point_waits_max_wait_then_ends_limit_full() {
    let _turn = serial();
    check(
        "Retry::call",
        Box::new(|p| Box::pin(async move { Retry::new(&p).call(|| async { send() }).await })),
    );
    check(
        "call_with_report",
        Box::new(|p| {
            Box::pin(async move {
                let (result, report) = Retry::new(&p).call_with_report(|| async { send() }).await;
                let expected = match &result {
                    Ok(()) => retrykit_core::Ending::Success,
                    Err(_) => retrykit_core::Ending::LimitFull,
                };
                assert_eq!(report.ending, expected);
                result
            })
        }),
    );
    check(
        "#[retry]",
        Box::new(|p| {
            registry::install(Registry::builder().policy("limit-entry-points", p).build());
            Box::pin(annotated())
        }),
    );
    check(
        "tower",
        Box::new(|p| {
            let layer = RetryLayer::new(p);
            Box::pin(async move { layer.layer(Dependency).oneshot(()).await })
        }),
    );
    check(
        "blocking",
        Box::new(|p| {
            let out = Retry::blocking(&p).call_blocking(send);
            Box::pin(std::future::ready(out))
        }),
    );
}

#[retry(policy = "limit-entry-points-adaptive")]
async fn annotated_slow() -> Result<(), Error> {
    tokio::time::sleep(SLOW).await;
    send()
}

/// Longer than the adaptive limit's `drop_above`: each answer is a drop.
const SLOW: Duration = Duration::from_millis(10);

#[derive(Clone)]
struct SlowDependency;

impl Service<()> for SlowDependency {
    type Response = ();
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: ()) -> Self::Future {
        Box::pin(async {
            tokio::time::sleep(SLOW).await;
            send()
        })
    }
}

/// Runs `call` once on a paused runtime under an AIMD limit of 4 that
/// halves on an answer slower than 5 ms (2 ms for the blocking driver,
/// which sleeps for real): the slow answer reaches the limit's controller
/// as its permit comes back.
fn check_adaptive(entry: &str, drop_above: Duration, call: Call) {
    use retrykit_core::limit::LimitKind;
    use retrykit_core::limit::adaptive::AimdSettings;
    let kind = LimitKind::Aimd(AimdSettings {
        initial: 4,
        decrease: 0.5,
        drop_above: Some(drop_above),
        ..AimdSettings::default()
    });
    let limit = Arc::new(ConcurrencyLimit::new(Some("adaptive-dep"), kind, None, 4).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        call(policy(&limit)).await.unwrap();
        assert_eq!(
            limit.max_in_flight(),
            2,
            "{entry}: the slow answer halved 4"
        );
        assert_eq!(limit.in_flight(), 0, "{entry} gave its permit back");
    });
}

#[test]
fn every_entry_point_feeds_an_adaptive_limit() {
    let _turn = serial();
    let fast = Duration::from_millis(5);
    check_adaptive(
        "Retry::call",
        fast,
        Box::new(|p| {
            Box::pin(async move {
                Retry::new(&p)
                    .call(|| async {
                        tokio::time::sleep(SLOW).await;
                        send()
                    })
                    .await
            })
        }),
    );
    check_adaptive(
        "#[retry]",
        fast,
        Box::new(|p| {
            registry::install(
                Registry::builder()
                    .policy("limit-entry-points-adaptive", p)
                    .build(),
            );
            Box::pin(annotated_slow())
        }),
    );
    check_adaptive(
        "tower",
        fast,
        Box::new(|p| {
            let layer = RetryLayer::new(p);
            Box::pin(async move { layer.layer(SlowDependency).oneshot(()).await })
        }),
    );
    check_adaptive(
        "blocking",
        Duration::from_millis(1),
        Box::new(|p| {
            let out = Retry::blocking(&p).call_blocking(|| {
                std::thread::sleep(Duration::from_millis(2));
                send()
            });
            Box::pin(std::future::ready(out))
        }),
    );
}
