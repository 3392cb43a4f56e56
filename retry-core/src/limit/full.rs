//! A limit's refusal: [`LimitFull`].

use super::ConcurrencyLimit;
use std::fmt;
use std::sync::Arc;

/// A call could not get a permit from a limit in time: the queue was
/// full, or its `max_wait` or the call's deadline ran out first. Nothing
/// was sent; the call ends with [`Ending::LimitFull`](crate::Ending::LimitFull).
///
/// ```
/// use retrykit_core::limit::LimitFull;
/// let full = LimitFull::new(Some("db"), 4);
/// assert_eq!(full.to_string(), "concurrency limit `db` is full (4 in flight)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitFull {
    name: Option<Arc<str>>,
    max_in_flight: u32,
}

impl LimitFull {
    /// The refusal of the limit `name`, which lets `max_in_flight` attempts in flight.
    pub fn new(name: Option<&str>, max_in_flight: u32) -> Self {
        LimitFull {
            name: name.map(Into::into),
            max_in_flight,
        }
    }

    /// The refusal of `limit`.
    pub(crate) fn of(limit: &ConcurrencyLimit) -> Self {
        LimitFull {
            name: limit.name.clone(),
            max_in_flight: limit.max_in_flight(),
        }
    }

    /// The limit's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl fmt::Display for LimitFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name.as_deref().unwrap_or("<unnamed>");
        write!(
            f,
            "concurrency limit `{name}` is full ({} in flight)",
            self.max_in_flight
        )
    }
}

impl std::error::Error for LimitFull {}
