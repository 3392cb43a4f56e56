//! The HTTP client demo: a local server on 127.0.0.1 answers 503 and 429
//! with `Retry-After` in both RFC 9110 forms (and some garbage), then 200;
//! the `#[retry(policy = "http")]` client obeys and prints the waits taken.

use examples::http::{Reply, RetryAfter, ScriptedServer, fetch};
use std::time::{Duration, SystemTime};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profile = std::env::var("RETRY_PROFILE").unwrap_or_else(|_| "demo".into());
    examples::install_policies(&profile).map_err(|d| d.to_string())?;
    let script = vec![
        Reply::with_retry_after(503, RetryAfter::Seconds(1)),
        Reply::with_retry_after(429, RetryAfter::In(Duration::from_secs(2))),
        Reply::with_retry_after(503, RetryAfter::Raw("not-a-date".into())),
        Reply::with_retry_after(429, RetryAfter::Date(SystemTime::UNIX_EPOCH)),
    ];
    for (i, reply) in script.iter().enumerate() {
        let header = reply
            .retry_after
            .as_ref()
            .map(|r| r.header_value(SystemTime::now()))
            .unwrap_or_default();
        println!(
            "reply {}: HTTP {} Retry-After: {header}",
            i + 1,
            reply.status
        );
    }
    println!("then: HTTP 200\n");
    let server = ScriptedServer::start(script).await?;
    let started = tokio::time::Instant::now();
    let body = fetch(server.addr(), "/orders/42").await?;
    println!(
        "GET /orders/42 → {body:?} after {} requests",
        server.requests()
    );
    for (i, gap) in server.gaps().iter().enumerate() {
        println!("  wait before request {}: {gap:?}", i + 2);
    }
    println!("total {:?}", started.elapsed());
    Ok(())
}
