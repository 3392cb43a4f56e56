//! A reqwest middleware that stands for the dependency: it answers 200
//! without sending anything, and counts the requests it got in `sent`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};

/// What the dependency middleware returns.
pub type Answered<'a> =
    Pin<Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>>;

/// Answers 200, counting the request in `sent`.
pub fn answer<'a>(sent: &AtomicU32) -> Answered<'a> {
    sent.fetch_add(1, Ordering::SeqCst);
    Box::pin(async { Ok(http::Response::builder().body("").unwrap().into()) })
}
