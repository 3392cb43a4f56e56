//! The clock and the sleeper, both injectable
//! ([`Retry::clock`](crate::Retry::clock),
//! [`Retry::sleeper`](crate::Retry::sleeper)), so a test can drive the loop
//! on its own time. With the `tokio` feature the default clock is tokio's,
//! so paused-clock tests see virtual time in the deadline logic too.
//!
//! ```
//! use retrykit_core::clock::{BlockingSleeper, Clock, SystemClock};
//! use retrykit_core::{Jitter, Policy, Retry};
//! use std::cell::Cell;
//! use std::time::Duration;
//!
//! /// Records the waits instead of sleeping.
//! struct Record(Cell<Duration>);
//! impl BlockingSleeper for &Record {
//!     fn sleep(&self, d: Duration) { self.0.set(self.0.get() + d); }
//! }
//!
//! let policy = Policy::builder().jitter(Jitter::None).max_attempts(3).build().unwrap();
//! let slept = Record(Cell::new(Duration::ZERO));
//! let r: Result<(), std::io::Error> = Retry::blocking(&policy)
//!     .sleeper(&slept)
//!     .call_blocking(|| Err(std::io::ErrorKind::TimedOut.into()));
//! assert!(r.is_err());
//! assert_eq!(slept.0.get(), Duration::from_millis(100 + 200));
//! assert!(SystemClock.now() <= SystemClock.now());
//! ```

use std::future::Future;
use std::time::{Duration, Instant};

/// Tells the engine what time it is.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }
}

/// Waits asynchronously (a test's may return at once, as the module
/// example's blocking one records instead of sleeping).
pub trait Sleeper {
    /// The future that completes after the wait.
    type Sleep: Future<Output = ()>;
    /// Starts a wait of `d`.
    fn sleep(&self, d: Duration) -> Self::Sleep;
}

/// Waits by blocking the calling thread.
pub trait BlockingSleeper {
    /// Blocks for `d`.
    fn sleep(&self, d: Duration);
}

/// The operating system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// `std::thread::sleep`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleeper;

impl BlockingSleeper for ThreadSleeper {
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Tokio's clock: virtual time when the runtime's clock is paused.
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    fn now(&self) -> Instant {
        crate::window::now()
    }
}

/// `tokio::time::sleep`.
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

/// Why tokio's timer cannot serve a call made from here (no runtime, or
/// one without a timer), or `None`; asked once per async `#[retry]` site.
/// tokio cannot be asked, so this makes a zero sleep under `catch_unwind`,
/// quietly ([`quiet_probe`]), so the caller's message comes first.
#[cfg(feature = "tokio")]
pub(crate) fn tokio_timer_missing() -> Option<&'static str> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Some(
            "this call is not inside a tokio runtime (another executor, such as \
             futures::executor::block_on, polls it)",
        );
    }
    quiet_probe(|| drop(tokio::time::sleep(Duration::ZERO)))
        .then_some("this call runs in a tokio runtime built without its timer")
}

/// Whether `probe` panics, without the panic hook printing it: the hook in
/// place at the first probe is wrapped, once, by one that passes on every
/// panic but a probe's on the same thread (a hook set later replaces it,
/// and a probe is then printed).
#[cfg(feature = "tokio")]
fn quiet_probe(probe: impl FnOnce()) -> bool {
    use std::cell::Cell;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Once;
    thread_local! {
        static PROBING: Cell<bool> = const { Cell::new(false) };
    }
    static WRAP: Once = Once::new();
    WRAP.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !PROBING.with(Cell::get) {
                previous(info);
            }
        }));
    });
    PROBING.with(|p| p.set(true));
    let panicked = panic::catch_unwind(AssertUnwindSafe(probe)).is_err();
    PROBING.with(|p| p.set(false));
    panicked
}

/// The clock async retries use by default: tokio's with the `tokio` feature.
#[cfg(feature = "tokio")]
pub type DefaultClock = TokioClock;
/// The clock async retries use by default: tokio's with the `tokio` feature.
#[cfg(not(feature = "tokio"))]
pub type DefaultClock = SystemClock;

/// The sleeper async retries use by default: tokio's timer.
#[cfg(feature = "tokio")]
pub type DefaultSleeper = TokioSleeper;
/// Without the `tokio` feature there is no default async sleeper: set one
/// with [`Retry::sleeper`](crate::Retry::sleeper).
#[cfg(not(feature = "tokio"))]
pub type DefaultSleeper = crate::hooks::Unset;
