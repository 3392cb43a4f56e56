//! The concurrency limit's rule on the HTTP and gRPC entry points, as
//! tests/tests/limit_entry_points.rs checks it on the others: with the
//! limit's only permit held elsewhere, a call through the tower HTTP layer,
//! the reqwest middleware or the gRPC layer waits `max_wait`, sends
//! nothing, and fails with an error that downcasts to the `LimitFull`;
//! once the permit is back, the same call goes through and gives its own
//! permit back.
#![cfg(all(feature = "tower", feature = "reqwest-middleware", feature = "grpc"))]

use http::{Request, Response};
use retrykit_core::Policy;
use retrykit_core::http::{BoxError, ReplayBody};
use retrykit_core::limit::{ConcurrencyLimit, LimitFull};
use retrykit_core::reqwest::RetryMiddleware;
use retrykit_core::tower::RetryLayer;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;
use tower::{Layer, ServiceExt};

mod support;
use support::paused_runtime;

const MAX_WAIT: Duration = Duration::from_millis(3);

/// Requests that reached each entry point's dependency.
static SENT: AtomicU32 = AtomicU32::new(0);

/// A call's error, as the test reads it: the `LimitFull` it carries, if any.
type Outcome = Result<(), Option<LimitFull>>;
type Call = Box<dyn Fn(Policy) -> Pin<Box<dyn Future<Output = Outcome>>>>;

fn full(error: &(dyn std::error::Error + 'static)) -> Option<LimitFull> {
    error.downcast_ref::<LimitFull>().cloned()
}

/// Runs `call` twice on a paused runtime: with the permit held (it must
/// fail limit-full after `MAX_WAIT`, having sent nothing), then freed.
fn check(entry: &str, call: Call) {
    let limit = Arc::new(ConcurrencyLimit::named("http-dep", 1, Some(MAX_WAIT), 4).unwrap());
    let policy = || {
        Policy::builder()
            .limit(Some(Arc::clone(&limit)))
            .build()
            .unwrap()
    };
    paused_runtime().block_on(async {
        SENT.store(0, SeqCst);
        let held = limit.try_acquire().unwrap();
        let start = tokio::time::Instant::now();
        let refused = call(policy()).await.unwrap_err();
        let refused = refused.unwrap_or_else(|| panic!("{entry}: the error carries no LimitFull"));
        assert_eq!(refused.name(), Some("http-dep"), "{entry}");
        assert!(
            start.elapsed() >= MAX_WAIT,
            "{entry} waited {:?}",
            start.elapsed()
        );
        assert_eq!(SENT.load(SeqCst), 0, "{entry} sent nothing");
        assert_eq!(limit.waiting(), 0, "{entry} left the queue");
        drop(held);
        call(policy())
            .await
            .unwrap_or_else(|e| panic!("{entry}: {e:?}"));
        assert_eq!(SENT.load(SeqCst), 1, "{entry}");
        assert_eq!(limit.in_flight(), 0, "{entry} gave its permit back");
    });
}

fn reqwest_server<'a>(
    _: reqwest::Request,
    _: &'a mut http::Extensions,
    _: reqwest_middleware::Next<'a>,
) -> support::reqwest_dep::Answered<'a> {
    support::reqwest_dep::answer(&SENT)
}

#[test]
fn tower_http_reqwest_and_grpc_wait_max_wait_then_fail_limit_full() {
    check(
        "tower http",
        Box::new(|p| {
            let server = tower::service_fn(|_: Request<ReplayBody<String>>| async {
                SENT.fetch_add(1, SeqCst);
                Ok::<_, BoxError>(Response::new(()))
            });
            let svc = RetryLayer::new(p).http().layer(server);
            Box::pin(async move {
                match svc.oneshot(Request::new(String::new())).await {
                    Ok(_) => Ok(()),
                    Err(e) => Err(full(&*e)),
                }
            })
        }),
    );
    check(
        "reqwest",
        Box::new(|p| {
            let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
                .with(RetryMiddleware::new(p))
                .with(reqwest_server)
                .build();
            Box::pin(async move {
                match client.get("http://dep.invalid/").send().await {
                    Ok(_) => Ok(()),
                    Err(reqwest_middleware::Error::Middleware(e)) => Err(full(e.as_ref())),
                    Err(other) => panic!("{other}"),
                }
            })
        }),
    );
    check(
        "grpc",
        Box::new(|p| {
            let server = tower::service_fn(|_: Request<tonic::body::Body>| async {
                SENT.fetch_add(1, SeqCst);
                let response = Response::builder()
                    .header("grpc-status", "0")
                    .body(tonic::body::Body::empty());
                Ok::<_, std::convert::Infallible>(response.unwrap())
            });
            let svc = RetryLayer::new(p).grpc().layer(server);
            Box::pin(async move {
                match svc.oneshot(Request::new(tonic::body::Body::empty())).await {
                    Ok(_) => Ok(()),
                    Err(e) => Err(full(&*e)),
                }
            })
        }),
    );
}
