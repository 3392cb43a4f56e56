//! Error classification: an error's class, and the wait a server asked for.

use crate::class::Class;
use std::io;
use std::time::Duration;

/// A failed attempt that ran past the policy's `attempt_timeout`, or that
/// the call's `deadline` cut short (the call then ends). A test of a
/// [`Classify::from_timeout`] builds one with [`AttemptTimeout::new`].
///
/// ```
/// use retrykit_core::AttemptTimeout;
/// use std::time::Duration;
/// assert_eq!(AttemptTimeout::new(2, Duration::from_secs(1)).to_string(), "attempt 2 timed out after 1s");
/// let cut = AttemptTimeout::at_deadline(2, Duration::from_millis(400));
/// assert_eq!(cut.to_string(), "attempt 2 was cut short at the call's deadline (400ms)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptTimeout {
    /// Which call timed out (1 is the first).
    pub attempt: u32,
    /// The `attempt_timeout`, or the `deadline` when `deadline` is `true`.
    pub timeout: Duration,
    /// The call's deadline, not the attempt's own timeout, cut it short.
    pub deadline: bool,
}

impl AttemptTimeout {
    /// Attempt `attempt` (1 is the first) ran past `timeout`.
    pub const fn new(attempt: u32, timeout: Duration) -> Self {
        AttemptTimeout {
            attempt,
            timeout,
            deadline: false,
        }
    }

    /// Attempt `attempt` (1 is the first) was cut short at the call's `deadline`.
    pub const fn at_deadline(attempt: u32, deadline: Duration) -> Self {
        AttemptTimeout {
            attempt,
            timeout: deadline,
            deadline: true,
        }
    }
}

impl std::fmt::Display for AttemptTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.deadline {
            true => write!(
                f,
                "attempt {} was cut short at the call's deadline ({:?})",
                self.attempt, self.timeout
            ),
            false => write!(
                f,
                "attempt {} timed out after {:?}",
                self.attempt, self.timeout
            ),
        }
    }
}

impl std::error::Error for AttemptTimeout {}

/// Tells the retry engine what an error is; `#[derive(Classify)]` writes it.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Class, Classify};
/// use std::time::Duration;
///
/// enum ApiError { Unavailable, RateLimited(Duration), BadRequest }
///
/// impl Classify for ApiError {
///     fn class(&self) -> Class {
///         match self {
///             ApiError::Unavailable => Class::TRANSIENT,
///             ApiError::RateLimited(_) => Class::THROTTLED,
///             ApiError::BadRequest => Class::Permanent,
///         }
///     }
///     fn retry_after(&self) -> Option<Duration> {
///         match self {
///             ApiError::RateLimited(d) => Some(*d),
///             _ => None,
///         }
///     }
/// }
/// assert_eq!(ApiError::RateLimited(Duration::from_secs(2)).retry_after(), Some(Duration::from_secs(2)));
/// ```
pub trait Classify {
    /// Permanent, or retryable in a named class.
    fn class(&self) -> Class;

    /// A server's instruction to wait this long before the next attempt
    /// (an HTTP `Retry-After`, a gRPC pushback). `None` by default.
    fn retry_after(&self) -> Option<Duration> {
        None
    }

    /// The error that stands for a timed-out attempt, or `None` when this
    /// type cannot represent one: then `attempt_timeout` is not enforced,
    /// as the engine never cancels an attempt whose failure it cannot report.
    fn from_timeout(timeout: AttemptTimeout) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = timeout;
        None
    }

    /// The error that stands for an attempt the circuit breaker refused
    /// (nothing was sent), or `None` when this type cannot represent one:
    /// then the attempts are sent as if the breaker were closed, and a
    /// warning says so once per call site.
    fn from_breaker_open(open: crate::breaker::BreakerOpen) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = open;
        None
    }

    /// The error that stands for an attempt a concurrency limit gave no
    /// permit in time (nothing was sent), or `None` when this type cannot
    /// represent one: then the attempt is sent without a permit, and a
    /// warning says so once per limit and type.
    fn from_limit_full(full: crate::limit::LimitFull) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = full;
        None
    }

    /// The error that stands for a fault chaos injected in place of an
    /// attempt (docs/chaos.md), with the fault's [`class`](Self::class) and
    /// [`retry_after`](Self::retry_after), or `None` when this type cannot
    /// represent one: the attempt is then sent, with a warning once per
    /// policy and type.
    fn from_chaos(fault: crate::chaos::InjectedFault) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = fault;
        None
    }
}

/// Marks an error type whose [`Classify::from_timeout`] gives a value. A
/// `#[retry]` function whose policy sets `attempt_timeout` (in the file the
/// build sees) must return one, or the build fails. `#[derive(Classify)]`
/// implements it for a type with a `#[classify(timeout)]` variant.
///
/// ```
/// use retrykit_core::{AttemptTimeout, CarriesTimeout, Class, Classify};
///
/// #[derive(Debug)]
/// enum DbError { Busy, TimedOut }
///
/// impl Classify for DbError {
///     fn class(&self) -> Class { Class::TRANSIENT }
///     fn from_timeout(_: AttemptTimeout) -> Option<Self> { Some(DbError::TimedOut) }
/// }
/// impl CarriesTimeout for DbError {}
///
/// fn needs<E: CarriesTimeout>() {}
/// needs::<DbError>();
/// needs::<std::io::Error>();
/// assert!(DbError::from_timeout(AttemptTimeout::new(1, Default::default())).is_some());
/// ```
pub trait CarriesTimeout: Classify {}

impl CarriesTimeout for io::Error {}

/// Marks an error type whose [`Classify::from_breaker_open`] gives a value.
/// A `#[retry]` function whose policy names a breaker (in the file the build
/// sees) must return one, or the build fails. `#[derive(Classify)]`
/// implements it for a type with a `#[classify(breaker_open)]` variant
/// (implemented as [`CarriesTimeout`]'s example shows).
pub trait CarriesBreakerOpen: Classify {}

impl CarriesBreakerOpen for io::Error {}

impl<E: Classify + ?Sized> Classify for Box<E> {
    fn class(&self) -> Class {
        (**self).class()
    }
    fn retry_after(&self) -> Option<Duration> {
        (**self).retry_after()
    }
}

/// I/O errors are classified by kind: `TimedOut` is a timeout; connection,
/// interruption, would-block and broken-pipe kinds are transient; the rest
/// (not found, permission denied, invalid input, …) are permanent.
///
/// ```
/// use retrykit_core::{Class, Classify};
/// use std::io::{Error, ErrorKind};
/// assert_eq!(Error::from(ErrorKind::ConnectionReset).class(), Class::TRANSIENT);
/// assert_eq!(Error::from(ErrorKind::NotFound).class(), Class::Permanent);
/// ```
impl Classify for io::Error {
    fn class(&self) -> Class {
        use io::ErrorKind::*;
        if let Some(fault) = injected(self) {
            return fault.class;
        }
        match self.kind() {
            TimedOut => Class::TIMEOUT,
            ConnectionRefused
            | ConnectionReset
            | ConnectionAborted
            | NotConnected
            | AddrInUse
            | AddrNotAvailable
            | BrokenPipe
            | WouldBlock
            | Interrupted
            | UnexpectedEof
            | HostUnreachable
            | NetworkUnreachable
            | NetworkDown
            | ResourceBusy
            | StaleNetworkFileHandle => Class::TRANSIENT,
            _ => Class::Permanent,
        }
    }

    fn from_timeout(timeout: AttemptTimeout) -> Option<Self> {
        Some(io::Error::new(io::ErrorKind::TimedOut, timeout))
    }

    /// An `Other` error carrying the [`BreakerOpen`](crate::breaker::BreakerOpen):
    /// permanent, so an outer retry does not hammer an open breaker.
    fn from_breaker_open(open: crate::breaker::BreakerOpen) -> Option<Self> {
        Some(io::Error::other(open))
    }

    /// A `WouldBlock` error carrying the [`LimitFull`](crate::limit::LimitFull).
    fn from_limit_full(full: crate::limit::LimitFull) -> Option<Self> {
        Some(io::Error::new(io::ErrorKind::WouldBlock, full))
    }

    /// The injected hint, for an error carrying an injected fault.
    fn retry_after(&self) -> Option<Duration> {
        injected(self).and_then(|fault| fault.retry_after)
    }

    /// An error carrying the [`InjectedFault`](crate::chaos::InjectedFault),
    /// of its class (its kind: `TimedOut` for a timeout, `ConnectionReset`
    /// for a transient fault, `Other` otherwise).
    ///
    /// ```
    /// use retrykit_core::{Class, Classify, chaos::InjectedFault};
    /// use std::time::Duration;
    /// let fault = InjectedFault::new(Class::THROTTLED, Some(Duration::from_secs(2)), 1);
    /// let e = std::io::Error::from_chaos(fault).unwrap();
    /// assert_eq!((e.class(), e.retry_after()), (Class::THROTTLED, Some(Duration::from_secs(2))));
    /// ```
    fn from_chaos(fault: crate::chaos::InjectedFault) -> Option<Self> {
        let kind = match fault.class {
            Class::TIMEOUT => io::ErrorKind::TimedOut,
            Class::TRANSIENT => io::ErrorKind::ConnectionReset,
            _ => io::ErrorKind::Other,
        };
        Some(io::Error::new(kind, fault))
    }
}

/// The injected fault an I/O error carries, if it carries one.
fn injected(error: &io::Error) -> Option<&crate::chaos::InjectedFault> {
    error.get_ref()?.downcast_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_timeouts_round_trip_through_from_timeout() {
        let t = AttemptTimeout::new(1, Duration::from_millis(5));
        let e = io::Error::from_timeout(t).unwrap();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(e.class(), Class::TIMEOUT);
    }
}
