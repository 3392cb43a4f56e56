//! An HTTP client that honours `Retry-After`, and a scripted local server
//! (127.0.0.1 only) that answers 503 and 429 with `Retry-After` in both
//! forms RFC 9110 §10.2.3 allows, then succeeds.
//!
//! The client's error type classifies 5xx as transient, 429 as throttled and
//! other 4xx as permanent, and carries the `Retry-After` (parsed by
//! `retrykit_core::http::parse_retry_after`) as a server
//! hint, which the engine obeys (clamped by `max_retry_after`, and ending the
//! call at once when it does not fit the deadline).

mod client;
mod demo;
mod server;

pub use client::{HttpError, fetch, fetch_once};
pub use demo::{demo_script, run_demo};
pub use server::{Exchange, Reply, RetryAfter, ScriptedServer};
