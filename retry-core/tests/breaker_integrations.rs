//! A circuit breaker through the tower layers and the reqwest middleware,
//! on tokio's paused clock: a refused attempt is never sent, the caller can
//! match the refusal (tower's HTTP `BoxError` downcasts to `BreakerOpen`,
//! the classify layer returns the user's own variant, reqwest returns
//! `Error::Middleware` wrapping it), and the report in the response's
//! extensions counts the refusals.
#![cfg(all(feature = "tower", feature = "reqwest-middleware"))]

use http::{Request, Response};
use retrykit_core::breaker::{BreakerOpen, BreakerState, CircuitBreaker};
use retrykit_core::http::{BoxError, ReplayBody};
use retrykit_core::reqwest::RetryMiddleware;
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Class, Classify, Ending, Jitter, Policy, Report};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;
use tower::{Layer, ServiceExt};

mod support;
use support::paused_runtime;

const OPEN_FOR: Duration = Duration::from_secs(1);

/// A breaker opened by two failures, for 1 s.
fn open_breaker() -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name("dep")
        .min_calls(2)
        .failure_ratio(0.5)
        .open_for(OPEN_FOR)
        .open_jitter(0.0)
        .build()
        .map(Arc::new)
        .unwrap();
    let now = std::time::Instant::now();
    for _ in 0..2 {
        let ticket = b.try_acquire(now).unwrap();
        b.record(ticket, now, true);
    }
    assert_eq!(b.state(), BreakerState::Open);
    b
}

fn policy(b: &Arc<CircuitBreaker>, max_attempts: u32) -> Policy {
    Policy::builder()
        .name("integrated")
        .jitter(Jitter::None)
        .max_attempts(max_attempts)
        .breaker(Some(Arc::clone(b)))
        .build()
        .unwrap()
}

/// Sends one GET through the HTTP layer to a server that counts requests
/// and answers 200.
async fn via_tower_http(p: Policy, sent: &'static AtomicU32) -> Result<Response<()>, BoxError> {
    let server = tower::service_fn(move |_: Request<ReplayBody<String>>| async move {
        sent.fetch_add(1, SeqCst);
        Ok::<_, BoxError>(Response::new(()))
    });
    let svc = RetryLayer::new(p).http().layer(server);
    svc.oneshot(Request::new(String::new())).await
}

#[test]
fn tower_http_waits_for_the_reopening_and_its_report_counts_the_refusal() {
    static SENT: AtomicU32 = AtomicU32::new(0);
    let b = open_breaker();
    paused_runtime().block_on(async {
        // A total wait of 1.5 s (5 attempts from 100 ms): the 1 s break fits.
        let response = via_tower_http(policy(&b, 5), &SENT).await.unwrap();
        let report = response.extensions().get::<Report>().unwrap();
        assert_eq!(
            (report.ending, report.attempts, report.refused),
            (Ending::Success, 2, 1)
        );
        assert_eq!(SENT.load(SeqCst), 1, "the refused attempt was never sent");
    });
}

/// Issue 42 through the tower HTTP layer: a refusal uses none of the
/// policy's 2 attempts (a 4 s total wait), so after the refused attempt
/// the probe's 503 and the next attempt's 200 are both sent.
#[test]
fn tower_http_a_refusal_uses_none_of_the_policys_attempts() {
    static SENT: AtomicU32 = AtomicU32::new(0);
    let b = open_breaker();
    paused_runtime().block_on(async {
        let p = policy(&b, 2)
            .to_builder()
            .base(Duration::from_secs(4))
            .build()
            .unwrap();
        let server = tower::service_fn(|_: Request<ReplayBody<String>>| async {
            let status = match SENT.fetch_add(1, SeqCst) {
                0 => http::StatusCode::SERVICE_UNAVAILABLE,
                _ => http::StatusCode::OK,
            };
            let mut response = Response::new(());
            *response.status_mut() = status;
            Ok::<_, BoxError>(response)
        });
        let svc = RetryLayer::new(p).http().layer(server);
        let response = svc.oneshot(Request::new(String::new())).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::OK);
        let report = response.extensions().get::<Report>().unwrap();
        assert_eq!(
            (report.ending, report.attempts, report.refused),
            (Ending::Success, 3, 1)
        );
        assert_eq!(SENT.load(SeqCst), 2, "both attempts were sent");
    });
}

#[test]
fn tower_http_ends_with_an_error_that_downcasts_to_breaker_open() {
    static SENT: AtomicU32 = AtomicU32::new(0);
    let b = open_breaker();
    paused_runtime().block_on(async {
        let error = via_tower_http(policy(&b, 1), &SENT).await.unwrap_err();
        let open = error.downcast_ref::<BreakerOpen>().expect("a BreakerOpen");
        assert_eq!(
            (open.breaker(), open.state()),
            (Some("dep"), BreakerState::Open)
        );
        assert_eq!(SENT.load(SeqCst), 0);
    });
}

#[derive(Debug)]
enum Answer {
    Refused(BreakerOpen),
}

impl Classify for Answer {
    fn class(&self) -> Class {
        Class::Permanent
    }
    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(Answer::Refused(open))
    }
}

#[test]
fn the_classify_layer_returns_the_users_own_refusal() {
    static SENT: AtomicU32 = AtomicU32::new(0);
    let b = open_breaker();
    paused_runtime().block_on(async {
        let server = tower::service_fn(|_: ()| async {
            SENT.fetch_add(1, SeqCst);
            Ok::<_, Answer>(())
        });
        let svc = RetryLayer::new(policy(&b, 1)).layer(server);
        let Err(Answer::Refused(open)) = svc.oneshot(()).await else {
            panic!("not refused")
        };
        let left = OPEN_FOR - open.retry_in();
        // The breaker opened on the real clock just before: what is left of
        // its break is the whole break less the time the set-up took.
        assert!(
            left < Duration::from_millis(500),
            "the refusal carries the breaker's break: {left:?} of it gone"
        );
        assert_eq!(SENT.load(SeqCst), 0);
    });
}

/// An error type with no way to say "breaker open".
#[derive(Debug)]
struct Mute;

impl Classify for Mute {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

#[test]
fn the_classify_layer_warns_once_when_the_error_type_cannot_carry_a_refusal() {
    const CHILD: &str = "RETRYKIT_BREAKER_MUTE_CHILD";
    const TEST: &str = "the_classify_layer_warns_once_when_the_error_type_cannot_carry_a_refusal";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST, "--nocapture"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let warning = "whose circuit breaker `dep` cannot hold its attempts back there: its \
                       error type cannot stand for an attempt the breaker refused";
        assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
        assert!(
            stderr.contains("fix: add a `#[classify(breaker_open)]` variant"),
            "{stderr}"
        );
        return;
    }
    static SENT: AtomicU32 = AtomicU32::new(0);
    let b = open_breaker();
    paused_runtime().block_on(async {
        let server = tower::service_fn(|_: ()| async {
            SENT.fetch_add(1, SeqCst);
            Ok::<_, Mute>(())
        });
        let layer = RetryLayer::new(policy(&b, 1));
        for _ in 0..2 {
            assert!(layer.layer(server).oneshot(()).await.is_ok());
        }
        // The breaker could not hold them back: both were sent.
        assert_eq!(SENT.load(SeqCst), 2);
    });
}

type Answered<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a,
    >,
>;

static REQWEST_SENT: AtomicU32 = AtomicU32::new(0);

/// Stands in for the server (no network): counts requests, answers 200.
fn server<'a>(
    _: reqwest::Request,
    _: &'a mut http::Extensions,
    _: reqwest_middleware::Next<'a>,
) -> Answered<'a> {
    REQWEST_SENT.fetch_add(1, SeqCst);
    Box::pin(async { Ok(http::Response::builder().body("").unwrap().into()) })
}

#[test]
fn reqwest_returns_a_middleware_error_wrapping_breaker_open_or_waits() {
    let b = open_breaker();
    paused_runtime().block_on(async {
        let client = |p| {
            reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
                .with(RetryMiddleware::new(p))
                .with(server)
                .build()
        };
        let refused = client(policy(&b, 1))
            .get("http://dep.invalid/")
            .send()
            .await;
        let Err(reqwest_middleware::Error::Middleware(error)) = refused else {
            panic!("{refused:?}")
        };
        let open = error.downcast_ref::<BreakerOpen>().expect("a BreakerOpen");
        assert_eq!(open.breaker(), Some("dep"));
        assert_eq!(REQWEST_SENT.load(SeqCst), 0);
        // A total wait of 1.5 s (5 attempts from 100 ms): the 1 s break fits.
        let waited = client(policy(&b, 5))
            .get("http://dep.invalid/")
            .send()
            .await
            .unwrap();
        let report = waited.extensions().get::<Report>().unwrap();
        assert_eq!((report.ending, report.refused), (Ending::Success, 1));
        assert_eq!(REQWEST_SENT.load(SeqCst), 1);
    });
}
