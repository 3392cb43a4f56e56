//! One seeded chaos on every entry point: the same 24 calls through
//! `Retry::call`, `call_with_report`, `#[retry]`, the blocking driver, the
//! tower HTTP layer, the reqwest middleware and the gRPC layer get the same
//! injections, so each call sends the same number of requests and ends the
//! same way; the async ones take exactly the same (paused) time, an
//! injected throttled fault's Retry-After included. A call that gives up
//! on an injected fault fails as its entry point says: the fault itself
//! (`io::Error`, HTTP `BoxError`, reqwest's middleware error) or gRPC's
//! `RESOURCE_EXHAUSTED` for a throttled fault.
#![cfg(all(
    feature = "tower",
    feature = "reqwest-middleware",
    feature = "grpc",
    feature = "macros"
))]

use http::{Request, Response};
use retrykit_core::chaos::{Chaos, InjectedFault};
use retrykit_core::clock::TokioClock;
use retrykit_core::http::{BoxError, ReplayBody};
use retrykit_core::reqwest::RetryMiddleware;
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Class, Jitter, Policy, Registry, Report, Retry, registry, retry};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;
use tower::{Layer, ServiceExt};

mod support;
use support::paused_runtime;

const CALLS: usize = 24;
const MS: fn(u64) -> Duration = Duration::from_millis;

/// Half the attempts fail throttled (Retry-After 3 ms), a third are
/// delayed 1 to 2 ms; seed 11.
fn policy() -> Policy {
    let chaos = Chaos::new(Some(11))
        .fault(0.5, Class::THROTTLED, Some(MS(3)))
        .unwrap()
        .latency(0.3, MS(1), MS(2))
        .unwrap();
    Policy::builder()
        .name("chaos-entry-points")
        .base(MS(1))
        .jitter(Jitter::None)
        .max_attempts(3)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap()
}

static SENT: AtomicU32 = AtomicU32::new(0);

fn send() -> Result<(), std::io::Error> {
    SENT.fetch_add(1, SeqCst);
    Ok(())
}

#[allow(deprecated)] // policies installed in code: no retry.toml to check
#[retry(policy = "chaos-entry-points")]
async fn annotated() -> Result<(), std::io::Error> {
    send()
}

/// One call's outcome: whether it succeeded, requests sent, and (async
/// entry points) the paused time it took.
type Outcome = (bool, u32, Option<Duration>);

type Call = Box<dyn FnMut() -> Pin<Box<dyn Future<Output = bool>>>>;

/// Runs the calls `call` makes, on a paused runtime.
fn through(timed: bool, mut call: Call) -> Vec<Outcome> {
    SENT.store(0, SeqCst);
    paused_runtime().block_on(async {
        let mut out = Vec::new();
        for _ in 0..CALLS {
            let before = SENT.load(SeqCst);
            let start = tokio::time::Instant::now();
            let ok = call().await;
            let took = timed.then(|| start.elapsed());
            out.push((ok, SENT.load(SeqCst) - before, took));
        }
        out
    })
}

fn is_fault(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<InjectedFault>()
        .is_some_and(|f| f.class == Class::THROTTLED && f.retry_after == Some(MS(3)))
}

fn reqwest_server<'a>(
    _: reqwest::Request,
    _: &'a mut http::Extensions,
    _: reqwest_middleware::Next<'a>,
) -> support::reqwest_dep::Answered<'a> {
    support::reqwest_dep::answer(&SENT)
}

#[test]
fn every_entry_point_gets_the_same_injections() {
    let mut runs: Vec<(&str, Vec<Outcome>)> = Vec::new();
    let p = policy();
    runs.push((
        "Retry::call",
        through(true, {
            Box::new(move || {
                let p = p.clone();
                Box::pin(async move {
                    match Retry::new(&p).call(|| async { send() }).await {
                        Ok(()) => true,
                        Err(e) => {
                            assert!(is_fault(e.get_ref().unwrap()), "{e}");
                            false
                        }
                    }
                })
            })
        }),
    ));
    let p = policy();
    runs.push((
        "call_with_report",
        through(true, {
            Box::new(move || {
                let p = p.clone();
                Box::pin(async move {
                    let (out, report) = Retry::new(&p).call_with_report(|| async { send() }).await;
                    // Every attempt but a successful last one was injected.
                    let sent = u32::from(out.is_ok());
                    assert!(report.injected >= report.attempts - sent, "{report:?}");
                    out.is_ok()
                })
            })
        }),
    ));
    registry::install(
        Registry::builder()
            .policy("chaos-entry-points", policy())
            .build(),
    );
    runs.push((
        "#[retry]",
        through(
            true,
            Box::new(|| Box::pin(async { annotated().await.is_ok() })),
        ),
    ));
    let p = policy();
    runs.push((
        "blocking",
        through(false, {
            Box::new(move || {
                let out = Retry::blocking(&p).clock(TokioClock).call_blocking(send);
                Box::pin(std::future::ready(out.is_ok()))
            })
        }),
    ));
    let layer = RetryLayer::new(policy()).http();
    runs.push((
        "tower http",
        through(true, {
            Box::new(move || {
                let server = tower::service_fn(|_: Request<ReplayBody<String>>| async {
                    send().unwrap();
                    Ok::<_, BoxError>(Response::new(()))
                });
                let svc = layer.clone().layer(server);
                Box::pin(async move {
                    match svc.oneshot(Request::new(String::new())).await {
                        Ok(response) => {
                            assert!(response.extensions().get::<Report>().is_some());
                            true
                        }
                        Err(e) => {
                            assert!(is_fault(&*e), "{e}");
                            false
                        }
                    }
                })
            })
        }),
    ));
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryMiddleware::new(policy()))
        .with(reqwest_server)
        .build();
    runs.push((
        "reqwest",
        through(true, {
            Box::new(move || {
                let client = client.clone();
                Box::pin(async move {
                    match client.get("http://dep.invalid/").send().await {
                        Ok(_) => true,
                        Err(reqwest_middleware::Error::Middleware(e)) => {
                            assert!(is_fault(e.as_ref()), "{e}");
                            false
                        }
                        Err(other) => panic!("{other}"),
                    }
                })
            })
        }),
    ));
    let layer = RetryLayer::new(policy()).grpc();
    runs.push((
        "grpc",
        through(true, {
            Box::new(move || {
                let server = tower::service_fn(|_: Request<tonic::body::Body>| async {
                    send().unwrap();
                    let response = Response::builder()
                        .header("grpc-status", "0")
                        .body(tonic::body::Body::empty());
                    Ok::<_, std::convert::Infallible>(response.unwrap())
                });
                let svc = layer.clone().layer(server);
                Box::pin(async move {
                    match svc.oneshot(Request::new(tonic::body::Body::empty())).await {
                        Ok(_) => true,
                        Err(e) => {
                            let status = e.downcast_ref::<tonic::Status>().expect("a tonic Status");
                            assert_eq!(status.code(), tonic::Code::ResourceExhausted);
                            assert!(
                                status
                                    .message()
                                    .starts_with("chaos: injected throttled fault")
                            );
                            false
                        }
                    }
                })
            })
        }),
    ));

    let (_, first) = &runs[0];
    let failed = first.iter().filter(|o| !o.0).count();
    let sent: u32 = first.iter().map(|o| o.1).sum();
    // The seed's injections: some calls give up, and fewer requests go out
    // than attempts are made.
    assert!(failed > 0 && failed < CALLS, "{first:?}");
    assert!(sent >= (CALLS - failed) as u32, "{first:?}");
    for (entry, outcomes) in &runs {
        let untimed = |o: &Vec<Outcome>| o.iter().map(|(ok, n, _)| (*ok, *n)).collect::<Vec<_>>();
        assert_eq!(
            untimed(outcomes),
            untimed(first),
            "{entry}: the same injections as Retry::call"
        );
        if outcomes[0].2.is_some() {
            assert_eq!(
                outcomes, first,
                "{entry}: the same paused time as Retry::call"
            );
        }
    }
}
