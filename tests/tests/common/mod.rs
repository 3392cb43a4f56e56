//! What the async `#[retry]` tests share: a constant-backoff policy and an
//! error type with a class per variant.
// Each test file uses some of these.
#![allow(dead_code)]

use retrykit_core::{Backoff, Classify, Jitter, Policy};
use std::time::Duration;

/// `attempts` attempts, `base_ms` apart, no jitter.
pub fn constant(base_ms: u64, attempts: u32) -> Policy {
    Policy::builder()
        .backoff(Backoff::Constant)
        .base(Duration::from_millis(base_ms))
        .jitter(Jitter::None)
        .max_attempts(attempts)
        .build()
        .unwrap()
}

/// An API's errors: one transient, one throttled with a hint, one permanent.
#[derive(Debug, Clone, PartialEq, Classify)]
pub enum ApiError {
    #[classify(transient)]
    Unavailable,
    #[classify(class = "throttled", retry_after = wait)]
    Throttled { wait: Duration },
    #[classify(permanent)]
    BadRequest,
}
