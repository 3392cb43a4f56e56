//! What a breaker lets through: a [`Ticket`] for the attempt, and for a
//! half-open probe its place, given back when the probe goes unanswered.

use super::CircuitBreaker;
use super::state::Phase;
use std::sync::Arc;
use std::sync::atomic::Ordering;
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
    #[inline]
    pub(crate) fn closed(now: Instant) -> Ticket {
        Ticket {
            began: now,
            probe: None,
        }
    }

    /// When the attempt was let through.
    ///
    /// ```
    /// # use retrykit_core::breaker::CircuitBreaker;
    /// # use std::sync::Arc;
    /// let b = Arc::new(CircuitBreaker::builder().build().unwrap());
    /// let now = std::time::Instant::now();
    /// assert_eq!(b.try_acquire(now).unwrap().began(), now);
    /// ```
    pub fn began(&self) -> Instant {
        self.began
    }

    /// Whether the attempt is a half-open probe.
    ///
    /// ```
    /// # use retrykit_core::breaker::CircuitBreaker;
    /// # use std::sync::Arc;
    /// let b = Arc::new(CircuitBreaker::builder().build().unwrap());
    /// assert!(!b.try_acquire(std::time::Instant::now()).unwrap().is_probe());
    /// ```
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
    /// Whether a call's first attempt may go untimed, with no ticket (a
    /// local breaker without `slow_call`, `Policy::starts_guarded`): the
    /// breaker is closed. One load and one test.
    #[inline(always)]
    pub(crate) fn closed(&self) -> bool {
        self.word().is_closed()
    }

    /// Counts a success of an attempt [`closed`](Self::closed) let
    /// through, reading no clock: one atomic add, and at every
    /// `place_every`-th success `now()` read to put the successes not yet
    /// in the window into the slot of that time (see the module docs).
    #[inline(always)]
    pub(crate) fn count_success(&self, now: impl FnOnce() -> Instant) {
        if self.unplaced.fetch_add(1, Ordering::Relaxed) + 1 >= self.place_every {
            self.place(now());
        }
    }

    /// Puts the successes not yet in the window into the slot of `now`
    /// (at a failure, or at every `place_every`-th success).
    #[cold]
    #[inline(never)]
    pub(super) fn place(&self, now: Instant) {
        if self.unplaced.load(Ordering::Relaxed) == 0 {
            return;
        }
        let n = self.unplaced.swap(0, Ordering::Relaxed);
        if n > 0 {
            self.counts.add(now, super::ATTEMPTS, n);
        }
    }

    /// Records a success of `ticket`'s attempt when that is only one count
    /// in the window (a closed-state ticket of a local breaker without
    /// `slow_call`: the count goes in the slot the attempt began in) and
    /// says so; `false`, doing nothing, for [`record`](Self::record)'s
    /// general case. Takes the ticket by reference, so a caller holding it
    /// in place does not move it.
    #[inline]
    pub(crate) fn record_success_alone(&self, ticket: &Ticket) -> bool {
        let alone = ticket.probe.is_none() && self.settings.slow_call.is_none() && !self.in_fleet();
        if alone {
            self.counts.add(ticket.began, super::ATTEMPTS, 1);
        }
        alone
    }

    /// Whether the breaker is shared with a fleet (`with_fleet`).
    #[inline]
    pub(crate) fn in_fleet(&self) -> bool {
        #[cfg(feature = "redis")]
        let fleet = self.fleet.is_some();
        #[cfg(not(feature = "redis"))]
        let fleet = false;
        fleet
    }

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
