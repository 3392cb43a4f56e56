//! The annotated HTTP client against the scripted 127.0.0.1 server, under a
//! paused clock: the gaps between requests are the waits actually taken.

use examples::http::{HttpError, Reply, RetryAfter, ScriptedServer, fetch};
use std::time::{Duration, SystemTime};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn setup() {
    // `http` in the test profile: computed waits of at most 10 ms, hints
    // clamped at 10 s, a 20 s deadline, 6 calls.
    examples::install_policies("test").expect("examples/retry.toml loads");
}

#[tokio::test(start_paused = true)]
async fn both_retry_after_forms_are_obeyed_and_bad_values_ignored() {
    setup();
    let server = ScriptedServer::start(vec![
        Reply::with_retry_after(503, RetryAfter::Seconds(2)),
        Reply::with_retry_after(429, RetryAfter::In(secs(3))),
        Reply::with_retry_after(503, RetryAfter::Raw("soon".into())),
        Reply::with_retry_after(503, RetryAfter::Raw("-5".into())),
        Reply::with_retry_after(429, RetryAfter::Date(SystemTime::UNIX_EPOCH)),
    ])
    .await
    .unwrap();
    let body = fetch(server.addr(), "/").await.unwrap();
    assert!(body.contains("hello"));
    assert_eq!(server.requests(), 6);
    let gaps = server.gaps();
    eprintln!("waits taken: {gaps:?}");
    assert_eq!(gaps[0], secs(2), "delay-seconds");
    // An HTTP-date has one-second resolution and is read against the wall
    // clock a moment after the server wrote it: 3 s ahead, truncated, read
    // a few real milliseconds later, is at most 3 s and at worst a little
    // under 2 s.
    let date_gap = gaps[1];
    assert!(
        date_gap >= Duration::from_millis(1_500) && date_gap <= secs(3),
        "HTTP-date: {date_gap:?}"
    );
    // Garbage, negative and past values fall back to the computed wait.
    for gap in &gaps[2..] {
        assert!(*gap <= Duration::from_millis(10), "{gaps:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_far_future_date_is_clamped_by_max_retry_after() {
    setup();
    let next_year = SystemTime::now() + secs(365 * 86_400);
    let server = ScriptedServer::start(vec![Reply::with_retry_after(
        429,
        RetryAfter::Date(next_year),
    )])
    .await
    .unwrap();
    fetch(server.addr(), "/").await.unwrap();
    assert_eq!(server.gaps(), [secs(10)]);
}

#[tokio::test(start_paused = true)]
async fn client_errors_are_permanent_and_end_after_one_request() {
    setup();
    let server = ScriptedServer::start(vec![Reply::status(404)])
        .await
        .unwrap();
    let err = fetch(server.addr(), "/missing").await.unwrap_err();
    assert_eq!(err, HttpError::Client { status: 404 });
    assert_eq!(server.requests(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_recovers_exhausts_the_attempts() {
    setup();
    let server = ScriptedServer::start(vec![Reply::status(500); 10])
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let err = fetch(server.addr(), "/").await.unwrap_err();
    assert_eq!(err, HttpError::from_status(500, None));
    assert_eq!(server.requests(), 6);
    assert!(start.elapsed() <= Duration::from_millis(50));
}
