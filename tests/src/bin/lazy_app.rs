//! A program that depends on retrykit-config (see `tests/Cargo.toml`) but never
//! names it: it has no `init()` and no `use retrykit_config`. Its `#[retry]`
//! must still retry by the policy in `RETRY_CONFIG`, loaded on first use.
//! Run by `tests/tests/lazy_link.rs`.

use retrykit_core::retry;
use std::sync::atomic::{AtomicU32, Ordering};

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Fails twice, then succeeds.
#[retry(policy = "lazy-app")]
fn flaky() -> Result<u32, std::io::Error> {
    let call = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
    if call < 3 {
        Err(std::io::ErrorKind::ConnectionReset.into())
    } else {
        Ok(call)
    }
}

fn main() {
    match flaky() {
        Ok(calls) => println!("succeeded after {calls} calls"),
        Err(e) => println!("failed after {} calls: {e}", CALLS.load(Ordering::Relaxed)),
    }
}
