//! A Retry-After that does not fit the deadline ends the call at once,
//! rather than sleeping and then giving up. (Its own test binary: it
//! installs its own `http` policy in the process-wide registry.)

use examples::http::{HttpError, Reply, RetryAfter, ScriptedServer, fetch};
use retrykit_core::{Policy, Registry, registry};
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn a_hint_beyond_the_deadline_ends_the_call_now() {
    let http = Policy::builder()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(10))
        .max_attempts(5)
        .deadline(Some(Duration::from_secs(5)))
        .max_retry_after(Some(Duration::from_secs(60)))
        .build()
        .unwrap();
    registry::install(Registry::builder().policy("http", http).build());
    let server = ScriptedServer::start(vec![Reply::with_retry_after(503, RetryAfter::Seconds(30))])
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let err = fetch(server.addr(), "/").await.unwrap_err();
    assert_eq!(
        err,
        HttpError::from_status(503, Some(Duration::from_secs(30)))
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}
