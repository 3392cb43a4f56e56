//! The tower layer with HTTP semantics over a scripted in-process service,
//! on tokio's paused clock: statuses, both hints, the hint ceiling,
//! idempotency, body replay and its limit, attempt timeouts.
#![cfg(feature = "tower")]

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use retrykit_core::http::{BoxError, ReplayBody};
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Ending, Jitter, Policy, Report};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// What the scripted server saw: each request's method and body, and when.
#[derive(Default)]
struct Seen {
    bodies: Vec<Bytes>,
    at: Vec<Instant>,
}

/// One scripted reply: status, headers, and how long the server takes.
#[derive(Clone)]
struct Reply(u16, &'static [(&'static str, &'static str)], Duration);

fn reply(status: u16) -> Reply {
    Reply(status, &[], Duration::ZERO)
}

/// Sends `request` through the layer to a server that reads the whole body,
/// then answers with the next reply (200 once the script is done).
async fn send(
    policy: Policy,
    script: &[Reply],
    request: Request<Full<Bytes>>,
) -> (Result<Response<String>, BoxError>, Arc<Mutex<Seen>>) {
    let script = Arc::new(Mutex::new(script.iter().cloned().collect::<VecDeque<_>>()));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    let server = tower::service_fn(move |request: Request<ReplayBody<Full<Bytes>>>| {
        let script = script.clone();
        let log = log.clone();
        async move {
            let body = request.into_body().collect().await?.to_bytes();
            {
                let mut log = log.lock().unwrap();
                log.bodies.push(body);
                log.at.push(Instant::now());
            }
            let Reply(status, headers, delay) =
                script.lock().unwrap().pop_front().unwrap_or(reply(200));
            tokio::time::sleep(delay).await;
            let mut response = Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(*name, *value);
            }
            Ok::<_, BoxError>(response.body(format!("{status}")).unwrap())
        }
    });
    let service = RetryLayer::new(policy).http().layer(server);
    (service.oneshot(request).await, seen)
}

fn policy() -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .jitter(Jitter::None)
        .base(Duration::from_millis(10))
        .max_attempts(4)
}

fn get() -> Request<Full<Bytes>> {
    Request::get("/").body(Full::default()).unwrap()
}

fn report(response: &Response<String>) -> Report {
    *response.extensions().get::<Report>().expect("the report")
}

fn gaps(seen: &Mutex<Seen>) -> Vec<Duration> {
    let at = &seen.lock().unwrap().at;
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test(start_paused = true)]
async fn retryable_statuses_are_retried_and_the_last_response_returned() {
    let script = [reply(503), reply(502), reply(429), reply(504)];
    let (result, seen) = send(policy().build().unwrap(), &script, get()).await;
    let response = result.unwrap();
    assert_eq!(response.status(), 504, "the last response, not an error");
    assert_eq!(report(&response).ending, Ending::Exhausted);
    assert_eq!(seen.lock().unwrap().at.len(), 4);

    let (result, _) = send(policy().build().unwrap(), &[reply(404)], get()).await;
    let response = result.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(
        (report(&response).ending, report(&response).attempts),
        (Ending::Permanent, 1)
    );

    let lenient = policy().retry_on_status([409]).build().unwrap();
    let (result, _) = send(lenient, &[reply(409)], get()).await;
    let response = result.unwrap();
    assert_eq!(
        (response.status().as_u16(), report(&response).attempts),
        (200, 2)
    );
}

#[tokio::test(start_paused = true)]
async fn server_hints_are_obeyed_and_clamped_by_max_retry_after() {
    let script = [
        Reply(503, &[("retry-after", "3")], Duration::ZERO),
        Reply(429, &[("grpc-retry-pushback-ms", "1500")], Duration::ZERO),
        Reply(503, &[("retry-after", "3600")], Duration::ZERO),
    ];
    let ceiling = policy()
        .max_retry_after(Some(Duration::from_secs(5)))
        .build()
        .unwrap();
    let (result, seen) = send(ceiling, &script, get()).await;
    assert_eq!(result.unwrap().status(), 200);
    let secs = Duration::from_secs;
    assert_eq!(gaps(&seen), [secs(3), Duration::from_millis(1500), secs(5)]);

    let stop = [Reply(
        503,
        &[("grpc-retry-pushback-ms", "-1")],
        Duration::ZERO,
    )];
    let (result, _) = send(policy().build().unwrap(), &stop, get()).await;
    assert_eq!(report(&result.unwrap()).ending, Ending::Permanent);
}

#[tokio::test(start_paused = true)]
async fn only_idempotent_requests_are_sent_again() {
    let post = || Request::post("/orders").body(Full::from("order")).unwrap();
    let (result, seen) = send(policy().build().unwrap(), &[reply(503)], post()).await;
    let response = result.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        (report(&response).ending, report(&response).attempts),
        (Ending::NotIdempotent, 1)
    );
    assert_eq!(seen.lock().unwrap().at.len(), 1);

    let keyed = Request::post("/orders")
        .header("idempotency-key", "order-17")
        .body(Full::from("order"))
        .unwrap();
    let (result, _) = send(policy().build().unwrap(), &[reply(503)], keyed).await;
    assert_eq!(report(&result.unwrap()).attempts, 2);

    let opted_in = policy().retry_methods(["POST"]).build().unwrap();
    let (result, _) = send(opted_in, &[reply(503)], post()).await;
    assert_eq!(report(&result.unwrap()).attempts, 2);
}

#[tokio::test(start_paused = true)]
async fn a_body_is_replayed_up_to_the_limit_and_no_further() {
    let small = Bytes::from(vec![7u8; 1024]);
    let put = |body: &Bytes| Request::put("/blob").body(Full::new(body.clone())).unwrap();
    let (result, seen) = send(policy().build().unwrap(), &[reply(503)], put(&small)).await;
    assert_eq!(report(&result.unwrap()).attempts, 2);
    assert_eq!(seen.lock().unwrap().bodies, [small.clone(), small.clone()]);

    let large = Bytes::from(vec![7u8; 64 * 1024 + 1]);
    let (result, seen) = send(policy().build().unwrap(), &[reply(503)], put(&large)).await;
    let response = result.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        (report(&response).ending, report(&response).attempts),
        (Ending::BodyNotReplayable, 1)
    );
    assert_eq!(seen.lock().unwrap().bodies, std::slice::from_ref(&large));

    let roomy = policy().max_replay_body(128 * 1024).build().unwrap();
    let (result, _) = send(roomy, &[reply(503)], put(&large)).await;
    assert_eq!(report(&result.unwrap()).attempts, 2);
}

#[tokio::test(start_paused = true)]
async fn a_slow_attempt_is_cut_short_but_a_slow_post_is_not_sent_again() {
    let timeout = policy()
        .attempt_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    let slow = [Reply(200, &[], Duration::from_secs(30))];
    let start = Instant::now();
    let (result, _) = send(timeout.clone(), &slow, get()).await;
    assert_eq!(report(&result.unwrap()).attempts, 2);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );

    let post = Request::post("/orders").body(Full::from("order")).unwrap();
    let (result, seen) = send(timeout, &slow, post).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("timed out after 1s"), "{err}");
    assert_eq!(seen.lock().unwrap().at.len(), 1);
}

#[cfg(feature = "tracing")]
mod spans {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// Counts `http.attempt` spans and the `http.request.resend_count`s recorded on them.
    #[derive(Default)]
    struct Attempts {
        next: AtomicU64,
        attempt_spans: Mutex<Vec<u64>>,
        resend_counts: Mutex<Vec<u64>>,
    }

    struct Recorder(Arc<Attempts>);

    impl Subscriber for Recorder {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            let id = self.0.next.fetch_add(1, Ordering::SeqCst) + 1;
            if attrs.metadata().name() == "http.attempt" {
                self.0.attempt_spans.lock().unwrap().push(id);
            }
            Id::from_u64(id)
        }
        fn record(&self, id: &Id, values: &Record<'_>) {
            if !self
                .0
                .attempt_spans
                .lock()
                .unwrap()
                .contains(&id.into_u64())
            {
                return;
            }
            let mut visit = |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                if field.name() == "http.request.resend_count" {
                    let n = format!("{value:?}").parse().unwrap();
                    self.0.resend_counts.lock().unwrap().push(n);
                }
            };
            values.record(&mut visit);
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn each_resend_carries_http_request_resend_count() {
        // Tracing caches each callsite's interest process-wide, and the other
        // tests of this binary run in parallel with no subscriber: alone in a
        // child process, the recorder sees every span.
        const CHILD: &str = "RETRY_TOWER_SPANS_CHILD";
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "spans::each_resend_carries_http_request_resend_count",
                ])
                .env(CHILD, "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
            return;
        }
        let seen = Arc::new(Attempts::default());
        tracing::subscriber::with_default(Recorder(seen.clone()), || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let script = [reply(503), reply(503)];
            let (result, _) = runtime.block_on(send(policy().build().unwrap(), &script, get()));
            assert_eq!(result.unwrap().status(), 200);
        });
        assert_eq!(seen.attempt_spans.lock().unwrap().len(), 3);
        assert_eq!(*seen.resend_counts.lock().unwrap(), [1, 2]);
    }
}

/// `hedge_after` 20 ms, every hedge admitted (a cap of one hedge per call).
fn hedging() -> Policy {
    use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(20)));
    hedge.share = 1.0;
    policy().hedge(Some(hedge)).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_slow_get_is_hedged_and_the_hedge_answers() {
    let slow = Reply(200, &[], Duration::from_secs(1));
    let fast = Reply(201, &[], Duration::from_millis(5));
    let start = Instant::now();
    let (result, seen) = send(hedging(), &[slow, fast], get()).await;
    let response = result.unwrap();
    assert_eq!(
        (response.status().as_u16(), start.elapsed()),
        (201, Duration::from_millis(25))
    );
    assert_eq!(gaps(&seen), [Duration::from_millis(20)]);
    let r = report(&response);
    assert_eq!(
        (r.attempts, r.hedges, r.winner, r.unhedged),
        (2, 1, 2, None)
    );
}

#[tokio::test(start_paused = true)]
async fn a_post_is_not_hedged_and_the_report_says_why() {
    let slow = Reply(200, &[], Duration::from_secs(1));
    let post = Request::post("/").body(Full::from("order")).unwrap();
    let (result, seen) = send(hedging(), &[slow], post).await;
    let r = report(&result.unwrap());
    assert_eq!(seen.lock().unwrap().at.len(), 1, "sent once");
    assert_eq!((r.hedges, r.unhedged), (0, Some(Ending::NotIdempotent)));
}

#[tokio::test(start_paused = true)]
async fn a_body_too_large_to_replay_is_not_hedged_and_the_report_says_why() {
    use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(20)));
    hedge.share = 1.0;
    let small_replay = policy()
        .hedge(Some(hedge))
        .max_replay_body(4)
        .build()
        .unwrap();
    let slow = Reply(200, &[], Duration::from_secs(1));
    let put = Request::put("/")
        .body(Full::from("more than four bytes"))
        .unwrap();
    let (result, seen) = send(small_replay, &[slow], put).await;
    let r = report(&result.unwrap());
    assert_eq!(seen.lock().unwrap().at.len(), 1, "sent once");
    assert_eq!((r.hedges, r.unhedged), (0, Some(Ending::BodyNotReplayable)));
}
