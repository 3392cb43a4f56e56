//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)] // each test binary uses a different part

use retrykit_core::{Jitter, Policy};
use retrykit_sim::Herd;
use std::time::Duration;

/// Every jitter mode, proportional at 0.3.
pub const ALL_JITTERS: [Jitter; 5] = [
    Jitter::None,
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
    Jitter::Proportional(0.3),
];

/// Backoff from 50 ms, capped at 2 s, with `jitter` and `attempts` in all.
pub fn policy(jitter: Jitter, attempts: u32) -> Policy {
    Policy::builder()
        .base(Duration::from_millis(50))
        .cap(Duration::from_secs(2))
        .jitter(jitter)
        .max_attempts(attempts)
        .build()
        .unwrap()
}

/// A service that never comes back within anyone's retries.
pub fn hopeless(clients: u32) -> Herd {
    Herd {
        clients,
        outage: Duration::from_secs(3600),
        ..Herd::default()
    }
}
