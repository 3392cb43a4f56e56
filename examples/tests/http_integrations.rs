//! The integrations against the scripted server on 127.0.0.1 (failing,
//! throttling with Retry-After, slowing down), under tokio's paused clock:
//! hyper-util's client under the tower layer, and reqwest under the
//! middleware. The gaps between requests are the waits actually taken.

use bytes::Bytes;
use examples::http::{Reply, RetryAfter, ScriptedServer};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retrykit_core::http::ReplayBody;
use retrykit_core::reqwest::RetryMiddleware;
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Ending, Jitter, Policy, Report};
use std::time::Duration;
use tower::{Layer, ServiceExt};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Small computed waits, so the waits the tests see are the server's hints.
fn policy() -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .jitter(Jitter::None)
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(10))
        .max_attempts(5)
        .max_retry_after(Some(secs(10)))
}

type Body = ReplayBody<Full<Bytes>>;

fn hyper_client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Body> {
    Client::builder(TokioExecutor::new()).build_http()
}

fn get(server: &ScriptedServer) -> http::Request<Full<Bytes>> {
    let uri = format!("http://{}/", server.addr());
    http::Request::get(uri).body(Full::default()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn tower_over_hyper_obeys_both_retry_after_forms_and_the_ceiling() {
    examples::install_policies("test").expect("examples/retry.toml loads");
    let server = ScriptedServer::start(vec![
        Reply::with_retry_after(503, RetryAfter::Seconds(2)),
        Reply::with_retry_after(429, RetryAfter::In(secs(3))),
        Reply::with_retry_after(503, RetryAfter::Seconds(3600)),
    ])
    .await
    .unwrap();
    // The `http` policy of examples/retry.toml, test profile: hints clamped at 10 s.
    let client = RetryLayer::policy("http").http().layer(hyper_client());
    let response = client.oneshot(get(&server)).await.unwrap();
    assert_eq!(response.status(), 200);
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.ending, report.attempts), (Ending::Success, 4));
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "hello from 127.0.0.1");
    let gaps = server.gaps();
    assert_eq!(gaps[0], secs(2), "delay-seconds");
    // An HTTP-date has one-second resolution and is read against the wall
    // clock a moment after the server wrote it.
    assert!(
        gaps[1] >= Duration::from_millis(1_500) && gaps[1] <= secs(3),
        "{gaps:?}"
    );
    assert_eq!(
        gaps[2],
        secs(10),
        "an hour's hint, clamped by max_retry_after"
    );
}

#[tokio::test(start_paused = true)]
async fn tower_over_hyper_cuts_a_slow_attempt_short() {
    let server = ScriptedServer::start(vec![Reply::slow(200, secs(30))])
        .await
        .unwrap();
    let timeout = policy().attempt_timeout(Some(secs(1))).build().unwrap();
    let client = RetryLayer::new(timeout).http().layer(hyper_client());
    let start = tokio::time::Instant::now();
    let response = client.oneshot(get(&server)).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(server.requests(), 2);
    assert!(start.elapsed() < secs(2), "{:?}", start.elapsed());
}

#[tokio::test(start_paused = true)]
async fn tower_over_hyper_does_not_resend_a_post_or_a_body_too_large() {
    let server = ScriptedServer::start(vec![Reply::status(503), Reply::status(503)])
        .await
        .unwrap();
    let uri = format!("http://{}/orders", server.addr());
    let client = RetryLayer::new(policy().build().unwrap())
        .http()
        .layer(hyper_client());

    let post = http::Request::post(&uri)
        .body(Full::from("order 17"))
        .unwrap();
    let response = client.clone().oneshot(post).await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(
        (response.status().as_u16(), report.ending),
        (503, Ending::NotIdempotent)
    );

    let large = Full::new(Bytes::from(vec![b'x'; 64 * 1024 + 1]));
    let put = http::Request::put(&uri).body(large).unwrap();
    let response = client.oneshot(put).await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(
        (response.status().as_u16(), report.ending),
        (503, Ending::BodyNotReplayable)
    );
    assert_eq!(server.requests(), 2, "each sent once");
}

fn reqwest_client(middleware: RetryMiddleware) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build()
}

#[tokio::test(start_paused = true)]
async fn reqwest_middleware_sees_the_response_and_its_hint() {
    let server = ScriptedServer::start(vec![
        Reply::with_retry_after(503, RetryAfter::Seconds(2)),
        Reply::with_retry_after(429, RetryAfter::Seconds(3600)),
    ])
    .await
    .unwrap();
    let client = reqwest_client(RetryMiddleware::new(policy().build().unwrap()));
    let url = format!("http://{}/", server.addr());
    let response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(report.attempts, 3);
    assert_eq!(server.gaps(), [secs(2), secs(10)]);
    assert_eq!(response.text().await.unwrap(), "hello from 127.0.0.1");
}

#[tokio::test(start_paused = true)]
async fn reqwest_middleware_resends_only_what_it_may() {
    let server = ScriptedServer::start(vec![Reply::status(503); 4])
        .await
        .unwrap();
    let client = reqwest_client(RetryMiddleware::new(policy().build().unwrap()));
    let url = format!("http://{}/orders", server.addr());

    let response = client.post(&url).body("order 17").send().await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(
        (response.status().as_u16(), report.ending),
        (503, Ending::NotIdempotent)
    );
    assert_eq!(server.requests(), 1);

    let keyed = client
        .post(&url)
        .header("idempotency-key", "order-17")
        .body("order 17")
        .send()
        .await
        .unwrap();
    assert_eq!(keyed.status(), 200);
    assert_eq!(server.requests(), 1 + 4);
}

/// `hedge_after` 1 s, every hedge admitted.
fn hedging() -> Policy {
    use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(secs(1)));
    hedge.share = 1.0;
    policy().hedge(Some(hedge)).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn reqwest_middleware_hedges_a_slow_get_but_not_a_post() {
    let server = ScriptedServer::start(vec![Reply::slow(200, secs(30)), Reply::status(200)])
        .await
        .unwrap();
    let client = reqwest_client(RetryMiddleware::new(hedging()));
    let url = format!("http://{}/", server.addr());
    let start = tokio::time::Instant::now();
    let response = client.get(&url).send().await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.hedges, report.winner), (2, 1, 2));
    assert!(
        start.elapsed() < secs(2),
        "the hedge answered: {:?}",
        start.elapsed()
    );
    assert_eq!(server.requests(), 2);

    let slow = ScriptedServer::start(vec![Reply::slow(200, secs(3))])
        .await
        .unwrap();
    let url = format!("http://{}/orders", slow.addr());
    let response = client.post(&url).body("order 17").send().await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(
        (report.hedges, report.unhedged),
        (0, Some(Ending::NotIdempotent))
    );
    assert_eq!(slow.requests(), 1);
}
