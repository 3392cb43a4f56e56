//! The clock and the sleeper, both injectable.
//!
//! With the `tokio` feature the default clock is tokio's, so an application's
//! paused-clock tests (`tokio::time::pause`) see virtual time pass through the
//! deadline logic too, not only through the sleeps.

use std::future::Future;
use std::time::{Duration, Instant};

/// Tells the engine what time it is.
///
/// ```
/// use retry_core::{Clock, SystemClock};
/// let a = SystemClock.now();
/// assert!(SystemClock.now() >= a);
/// ```
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }
}

/// Waits asynchronously.
///
/// ```
/// use retry_core::Sleeper;
/// use std::future::{ready, Ready};
/// use std::time::Duration;
/// struct NoWait;
/// impl Sleeper for NoWait {
///     type Sleep = Ready<()>;
///     fn sleep(&self, _: Duration) -> Ready<()> { ready(()) }
/// }
/// let _ = NoWait.sleep(Duration::from_secs(1));
/// ```
pub trait Sleeper {
    /// The future that completes after the wait.
    type Sleep: Future<Output = ()>;
    /// Starts a wait of `d`.
    fn sleep(&self, d: Duration) -> Self::Sleep;
}

/// Waits by blocking the calling thread.
///
/// ```
/// use retry_core::{BlockingSleeper, ThreadSleeper};
/// ThreadSleeper.sleep(std::time::Duration::from_micros(1));
/// ```
pub trait BlockingSleeper {
    /// Blocks for `d`.
    fn sleep(&self, d: Duration);
}

/// The operating system's monotonic clock.
///
/// ```
/// use retry_core::Clock;
/// let _ = retry_core::SystemClock.now();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// `std::thread::sleep`.
///
/// ```
/// use retry_core::BlockingSleeper;
/// retry_core::ThreadSleeper.sleep(std::time::Duration::ZERO);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleeper;

impl BlockingSleeper for ThreadSleeper {
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Tokio's clock: virtual time when the runtime's clock is paused.
///
/// ```
/// use retry_core::Clock;
/// let _ = retry_core::TokioClock.now();
/// ```
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// `tokio::time::sleep`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use retry_core::Sleeper;
/// retry_core::TokioSleeper.sleep(std::time::Duration::from_micros(1)).await;
/// # }
/// ```
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl Sleeper for TokioSleeper {
    type Sleep = tokio::time::Sleep;
    fn sleep(&self, d: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(d)
    }
}

/// The clock async retries use by default: tokio's with the `tokio` feature.
#[cfg(feature = "tokio")]
pub type DefaultClock = TokioClock;
/// The clock async retries use by default: tokio's with the `tokio` feature.
#[cfg(not(feature = "tokio"))]
pub type DefaultClock = SystemClock;
