//! One concurrency limit rule on every entry point: with the limit's only
//! permit held elsewhere, a call through `Retry::call`, `call_with_report`,
//! an async `#[retry]` fn, the tower layer and the blocking driver waits
//! `max_wait`, sends nothing, and ends with an `io::Error` of kind
//! `WouldBlock` carrying the `LimitFull`; once the permit is back, the same
//! call goes through and gives its own permit back.

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
