//! A breaker's refusal: [`BreakerOpen`], what an attempt it did not let
//! through is told, and the warning for an error type that cannot carry one.

use super::{BreakerState, CircuitBreaker};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Why an attempt was not sent: the breaker was open, half-open with
/// every probe out, or closed and releasing the attempts it held back with
/// no place free. It is what an error type makes into its own error with
/// [`Classify::from_breaker_open`](crate::Classify::from_breaker_open).
///
/// ```
/// use retrykit_core::breaker::{BreakerOpen, BreakerState};
/// use std::time::Duration;
/// let open = BreakerOpen::new(Some("broker"), BreakerState::Open, Duration::from_millis(1500));
/// assert_eq!(open.to_string(), "circuit breaker `broker` is open: no attempt is sent for another 1.5s");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakerOpen {
    breaker: Option<Arc<str>>,
    state: BreakerState,
    retry_in: Duration,
}

impl BreakerOpen {
    /// A refusal by breaker `breaker` in `state`, which lets attempts
    /// through again (or asks again) in `retry_in`: for tests and for error
    /// types that wrap one.
    pub fn new(breaker: Option<&str>, state: BreakerState, retry_in: Duration) -> Self {
        BreakerOpen {
            breaker: breaker.map(Arc::from),
            state,
            retry_in,
        }
    }

    /// The breaker's name, when it has one.
    pub fn breaker(&self) -> Option<&str> {
        self.breaker.as_deref()
    }

    /// The state that refused: open, half-open with every probe out, or
    /// closed during a release.
    pub fn state(&self) -> BreakerState {
        self.state
    }

    /// How long until the breaker lets attempts through again (open, or
    /// closed during a release), or until it is worth asking again
    /// (half-open: its `release_ramp`).
    pub fn retry_in(&self) -> Duration {
        self.retry_in
    }
}

impl fmt::Display for BreakerOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match &self.breaker {
            Some(name) => format!("circuit breaker `{name}`"),
            None => "the circuit breaker".to_owned(),
        };
        let wait = retrykit_schema::duration::round_duration(self.retry_in);
        match self.state {
            BreakerState::HalfOpen => write!(
                f,
                "{name} is half-open and its probes are out: ask again in {wait}"
            ),
            BreakerState::Closed => write!(
                f,
                "{name} is releasing the attempts it held back at a limited rate: ask again in {wait}"
            ),
            BreakerState::Open => {
                write!(f, "{name} is open: no attempt is sent for another {wait}")
            }
        }
    }
}

impl std::error::Error for BreakerOpen {}

impl CircuitBreaker {
    /// This breaker's refusal, in `state`, of an attempt it lets through
    /// again (or asks again) in `retry_in`.
    pub(super) fn refusal(&self, state: BreakerState, retry_in: Duration) -> BreakerOpen {
        BreakerOpen {
            breaker: self.name.clone(),
            state,
            retry_in,
        }
    }
}

/// Says, once per breaker and error type, that `E` cannot stand for a
/// refusal (`Classify::from_breaker_open` gives `None`), so the breaker
/// cannot hold its attempts back: they are sent as if it were closed.
pub(crate) fn uncarried<E>(breaker: &CircuitBreaker) {
    let ty = std::any::type_name::<E>();
    if !crate::say::first_time("breaker", breaker.name.as_ref(), ty) {
        return;
    }
    say_warning!(
        format!(
            "warning: {} refused an attempt, but the error type `{ty}` cannot stand for a refusal \
             (its Classify::from_breaker_open gives None), so the attempt was sent anyway and the \
             breaker cannot hold this type's attempts back; fix: add a #[classify(breaker_open)] \
             variant to `{ty}` (or implement from_breaker_open)",
            breaker.herald().shown()
        ),
        breaker = breaker.name()
    );
}
