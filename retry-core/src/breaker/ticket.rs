//! What a breaker lets through: a [`Ticket`] for the attempt, and for a
//! half-open probe its place, given back when the probe goes unanswered.

use super::CircuitBreaker;
use super::state::Phase;
use std::sync::Arc;
use std::time::Instant;

/// What a breaker let through: the attempt to send, and whether it is one
/// of half-open's probes. Hand it back with [`CircuitBreaker::record`]
/// once the attempt is answered; dropping it unrecorded (the attempt was
/// cancelled) counts nothing and gives a probe's place back.
#[derive(Debug)]
#[must_use = "record the attempt's outcome, or drop the ticket if it was cancelled"]
pub struct Ticket {
    pub(super) began: Instant,
    pub(super) probe: Option<Probe>,
}

impl Ticket {
    /// A closed breaker's ticket for an attempt let through at `now`.
    pub(crate) fn closed(now: Instant) -> Ticket {
        Ticket {
            began: now,
            probe: None,
        }
    }

    /// A half-open probe's ticket, holding its place of `period`.
    pub(super) fn probe(
        breaker: &Arc<CircuitBreaker>,
        now: Instant,
        period: u8,
        fleet: bool,
    ) -> Ticket {
        let breaker = Some(Arc::clone(breaker));
        Ticket {
            began: now,
            probe: Some(Probe {
                breaker,
                period,
                fleet,
            }),
        }
    }

    /// When the attempt was let through.
    pub fn began(&self) -> Instant {
        self.began
    }

    /// Whether the attempt is a half-open probe.
    pub fn is_probe(&self) -> bool {
        self.probe.is_some()
    }
}

/// A half-open probe's place: given back when dropped unrecorded.
#[derive(Debug)]
pub(super) struct Probe {
    /// `None` once the probe's outcome was recorded.
    pub(super) breaker: Option<Arc<CircuitBreaker>>,
    pub(super) period: u8,
    /// Leased from the fleet breaker (its period is the fleet's).
    pub(super) fleet: bool,
}

impl Drop for Probe {
    fn drop(&mut self) {
        if let Some(breaker) = self.breaker.take() {
            breaker.release(self.period, self.fleet);
        }
    }
}

impl CircuitBreaker {
    /// Gives back the place of a probe of `period` that was not answered.
    fn release(&self, period: u8, fleet: bool) {
        #[cfg(feature = "redis")]
        if fleet {
            if let Some(link) = &self.fleet {
                link.answered(period, None);
            }
            return;
        }
        let _ = fleet;
        let mut word = self.word();
        while let Phase::HalfOpen { out, ok } = word.phase() {
            if word.period() != period || out == 0 {
                return;
            }
            let next = word.with(Phase::HalfOpen { out: out - 1, ok });
            match self.swap(word, next) {
                Ok(()) => return,
                Err(seen) => word = seen,
            }
        }
    }
}
