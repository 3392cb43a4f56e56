//! Helpers shared by retrykit-core's integration tests.
#![allow(dead_code)] // each test binary uses a different part

pub mod redis_server;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_dep;

use retrykit_core::breaker::BreakerOpen;
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::{Class, Classify, Policy, PolicyBuilder};
use std::time::{Duration, Instant};

/// A policy that may hedge every call: a new attempt `after_ms` after the
/// last one started while none has answered, up to `max_attempts` in all.
pub fn hedging(after_ms: u64, max_attempts: u32) -> PolicyBuilder {
    let mut settings = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(after_ms)));
    settings.share = 1.0;
    Policy::builder()
        .hedge(Some(settings))
        .max_attempts(max_attempts)
}

/// Attempt `n` (1-based) of a call whose first attempt is stuck: it answers
/// `n` after a second the first time, after 5 ms every later time, so a
/// hedge sent at 20 ms wins at 25 ms.
pub async fn first_stuck<E>(n: u32) -> Result<u32, E> {
    let ms = if n == 1 { 1000 } else { 5 };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(n)
}

/// A current-thread runtime with timers, on tokio's paused clock.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A call's error for the breaker tests: `Down` is transient (retried,
/// counted as a failure), `Refused` permanent, and an open breaker's
/// refusal becomes `Refused`.
#[derive(Debug)]
pub enum Answer {
    Down,
    Refused,
}

impl Classify for Answer {
    fn class(&self) -> Class {
        match self {
            Answer::Down => Class::TRANSIENT,
            Answer::Refused => Class::Permanent,
        }
    }
    fn from_breaker_open(_: BreakerOpen) -> Option<Self> {
        Some(Answer::Refused)
    }
}

/// Polls `done` until it holds, failing after `limit` (a fleet link runs on
/// real time; this bounds the test, it does not pace it).
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(since.elapsed() < limit, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}
