//! The contenders both benchmark binaries measure: one async function and one
//! error type, called plainly, through `#[retry]`, through retrykit-core's API,
//! and through backon, tokio-retry2 and tryhard, configured alike (exponential
//! backoff, three attempts in all).
//!
//! The `#[retry]` functions name policies that `examples/retry.toml` defines
//! (`publish`, `outbox`) because the macro checks names against that file at
//! compile time; [`install_policies`] rebinds both names at run time to the
//! benchmark's own policies, so the file's values play no part.

#![allow(dead_code)] // Each binary uses its own subset.

use backon::{ExponentialBuilder, Retryable as _};
use retrykit_core::breaker::BreakerOpen;
use retrykit_core::{
    AttemptTimeout, Backoff, CarriesBreakerOpen, CarriesTimeout, Class, Classify, Jitter, Policy,
    Registry, Retry, retry,
};
use std::cell::Cell;
use std::future::{Future, ready};
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio_retry2::RetryError;
use tokio_retry2::strategy::ExponentialBackoff;

/// The policy name the success and one-failure benchmarks resolve.
pub const LOOP_POLICY: &str = "publish";
/// The policy name the scale benchmark resolves.
pub const SCALE_POLICY: &str = "outbox";

/// Retries after a failure; every contender retries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flaky;

impl Classify for Flaky {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }

    // The file's `publish` sets `attempt_timeout` and names a breaker, so
    // the `#[retry]` functions below must return a type that can stand for
    // both; the benchmarks install policies with neither, so neither is
    // ever made.
    fn from_timeout(_: AttemptTimeout) -> Option<Self> {
        Some(Flaky)
    }

    fn from_breaker_open(_: BreakerOpen) -> Option<Self> {
        Some(Flaky)
    }
}

impl CarriesTimeout for Flaky {}

impl CarriesBreakerOpen for Flaky {}

/// The call every contender wraps: no I/O, so the wrapper's cost is all
/// that is left to see.
pub async fn fetch(n: u64) -> Result<u64, Flaky> {
    Ok(black_box(n).wrapping_add(1))
}

/// A call whose future is large, as real clients' are (a buffer held across
/// an await): how much each wrapper adds on top of a big future.
pub async fn fetch_big(n: u64) -> Result<u64, Flaky> {
    let buffer = [n.to_le_bytes()[0]; 1024];
    ready(()).await;
    Ok(u64::from(black_box(&buffer)[0]))
}

/// `#[retry]` around the large call.
#[retry(policy = "publish")]
pub async fn annotated_big(n: u64) -> Result<u64, Flaky> {
    fetch_big(n).await
}

/// The same call, failing while `failures` is above zero (each failure
/// counts it down), so one benchmark can script "fail once, then succeed".
pub async fn fetch_flaky(failures: &Cell<u32>, n: u64) -> Result<u64, Flaky> {
    match failures.get() {
        0 => Ok(black_box(n).wrapping_add(1)),
        left => {
            failures.set(left - 1);
            Err(Flaky)
        }
    }
}

/// The loop policy: exponential, three attempts, and no wait (base and cap
/// zero), so the one-failure benchmark measures the loop, not the timer.
pub fn loop_policy() -> Policy {
    Policy::builder()
        .backoff(Backoff::Exponential { factor: 2.0 })
        .base(Duration::ZERO)
        .cap(Duration::ZERO)
        .jitter(Jitter::None)
        .max_attempts(3)
        .build()
        .expect("a valid loop policy")
}

/// The loop policy with full jitter: the random draw included.
pub fn jittered_loop_policy() -> Policy {
    loop_policy()
        .to_builder()
        .jitter(Jitter::Full)
        .build()
        .expect("a valid jittered policy")
}

/// Installs the benchmark's policies under the names the annotated
/// functions use; `scale` is the scale benchmark's policy.
pub fn install_policies(scale: Policy) {
    retrykit_core::registry::install(
        Registry::builder()
            .policy(LOOP_POLICY, loop_policy())
            .policy(SCALE_POLICY, scale)
            .build(),
    );
}

/// `#[retry]` around the call.
#[retry(policy = "publish")]
pub async fn annotated(n: u64) -> Result<u64, Flaky> {
    fetch(n).await
}

/// `#[retry]` around the scripted call.
#[retry(policy = "publish")]
pub async fn annotated_flaky(failures: &Cell<u32>, n: u64) -> Result<u64, Flaky> {
    fetch_flaky(failures, n).await
}

/// The limit for a policy with `attempt_timeout`: the call under
/// `tokio::time::timeout` (5 s), by hand, a timeout mapped to the error.
pub async fn by_hand_timeout(n: u64) -> Result<u64, Flaky> {
    tokio::time::timeout(Duration::from_secs(5), fetch(n))
        .await
        .unwrap_or(Err(Flaky))
}

/// retrykit-core's API, used directly with a policy the caller holds.
pub fn core(policy: &Policy, n: u64) -> impl Future<Output = Result<u64, Flaky>> + '_ {
    Retry::new(policy).call(move || fetch(n))
}

/// retrykit-core's API around the scripted call.
pub fn core_flaky<'a>(
    policy: &'a Policy,
    failures: &'a Cell<u32>,
    n: u64,
) -> impl Future<Output = Result<u64, Flaky>> + 'a {
    Retry::new(policy).call(move || fetch_flaky(failures, n))
}

/// A sleeper that never waits: retrykit-core's loop with the timer taken out.
#[derive(Debug, Clone, Copy)]
pub struct NoWait;

impl retrykit_core::clock::Sleeper for NoWait {
    type Sleep = std::future::Ready<()>;
    fn sleep(&self, _: Duration) -> Self::Sleep {
        ready(())
    }
}

/// retrykit-core's API around the scripted call, without tokio's timer.
pub fn core_flaky_no_timer<'a>(
    policy: &'a Policy,
    failures: &'a Cell<u32>,
    n: u64,
) -> impl Future<Output = Result<u64, Flaky>> + 'a {
    Retry::new(policy)
        .sleeper(NoWait)
        .call(move || fetch_flaky(failures, n))
}

/// backon's settings: exponential from `min_delay`, two retries.
fn backon_builder(min_delay: Duration) -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(min_delay)
        .with_max_delay(min_delay.max(Duration::from_secs(10)))
        .with_max_times(2)
}

/// backon's `.retry()` around the call (base 100 ms, as retrykit-core's default).
pub fn backon(n: u64) -> impl Future<Output = Result<u64, Flaky>> {
    (move || fetch(n)).retry(backon_builder(Duration::from_millis(100)))
}

/// backon around the scripted call, with zero waits.
pub fn backon_flaky(failures: &Cell<u32>, n: u64) -> impl Future<Output = Result<u64, Flaky>> + '_ {
    (move || fetch_flaky(failures, n)).retry(backon_builder(Duration::ZERO))
}

/// tokio-retry2's strategy: exponential from `base_ms`, two retries.
fn tokio_retry2_strategy(base_ms: u64) -> std::iter::Take<ExponentialBackoff> {
    ExponentialBackoff::from_millis(base_ms).take(2)
}

/// tokio-retry2 around the call. Its actions return `RetryError<E>`, so the
/// call's error is marked transient, as that crate's users write it.
pub fn tokio_retry2(n: u64) -> impl Future<Output = Result<u64, Flaky>> {
    tokio_retry2::Retry::spawn(tokio_retry2_strategy(100), move || async move {
        fetch(n).await.map_err(RetryError::transient)
    })
}

/// tokio-retry2 around the scripted call, with zero waits.
pub fn tokio_retry2_flaky(
    failures: &Cell<u32>,
    n: u64,
) -> impl Future<Output = Result<u64, Flaky>> + '_ {
    tokio_retry2::Retry::spawn(tokio_retry2_strategy(0), move || async move {
        fetch_flaky(failures, n)
            .await
            .map_err(RetryError::transient)
    })
}

/// tryhard around the call: two retries, exponential from 100 ms.
pub fn tryhard(n: u64) -> impl Future<Output = Result<u64, Flaky>> {
    tryhard::retry_fn(move || fetch(n))
        .retries(2)
        .exponential_backoff(Duration::from_millis(100))
}

/// tryhard around the scripted call, with zero waits.
pub fn tryhard_flaky(
    failures: &Cell<u32>,
    n: u64,
) -> impl Future<Output = Result<u64, Flaky>> + '_ {
    tryhard::retry_fn(move || fetch_flaky(failures, n))
        .retries(2)
        .exponential_backoff(Duration::ZERO)
}

/// The limit without a timer: two plain calls back to back.
pub async fn by_hand_flaky_no_timer(failures: &Cell<u32>, n: u64) -> Result<u64, Flaky> {
    match fetch_flaky(failures, n).await {
        Ok(v) => Ok(v),
        Err(_) => fetch_flaky(failures, n).await,
    }
}

/// backon around the scripted call with a sleeper that never waits.
pub fn backon_flaky_no_timer(
    failures: &Cell<u32>,
    n: u64,
) -> impl Future<Output = Result<u64, Flaky>> + '_ {
    (move || fetch_flaky(failures, n))
        .retry(backon_builder(Duration::ZERO))
        .sleep(|_: Duration| ready(()))
}

/// The limit for "fail once, then succeed": two plain calls with a zero wait
/// on tokio's timer between them, written by hand.
pub async fn by_hand_flaky(failures: &Cell<u32>, n: u64) -> Result<u64, Flaky> {
    match fetch_flaky(failures, n).await {
        Ok(v) => Ok(v),
        Err(_) => {
            tokio::time::sleep(Duration::ZERO).await;
            fetch_flaky(failures, n).await
        }
    }
}

/// Drives `fut` with one poll and a no-op waker. On the success path every
/// contender finishes in one poll, and polling them all the same way keeps
/// the comparison fair (no runtime machinery in the figure). Always inlined,
/// so every contender's future is polled where it was built: left to the
/// inliner, the small futures were polled in place and the larger ones were
/// first copied to this function's frame, a cost of the harness that fell on
/// some contenders and not others.
///
/// # Panics
/// When `fut` is not ready after one poll: that contender would need a
/// runtime to drive it and the comparison would no longer be like for like.
#[inline(always)]
pub fn poll_once<F: Future>(fut: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(fut).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a contender did not finish in one poll"),
    }
}

/// A current-thread runtime with the timer, for `enter()` or `block_on`.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime")
}

/// A current-thread runtime on a paused clock: tokio rounds a zero wait up
/// to its 1 ms tick, and the paused clock jumps to it instead of sleeping.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a paused tokio runtime")
}
