//! A breaker's state in one word, so every transition is one
//! compare-and-swap: bits 0–1 the phase, 2–7 the trips in a row
//! (saturating at 63), 8–15 a period counter (wrapping; it changes at every
//! transition, so a probe's late answer or give-back cannot touch a later
//! half-open period), and 16–63 the phase's payload: closed, the window
//! epoch its counts start from; open, when the break ends (milliseconds
//! since the breaker's origin); half-open, the probes out (16 bits) and
//! the probes that succeeded (16 bits).

use std::time::Duration;

/// The three states of a circuit breaker.
///
/// ```
/// assert_eq!(retrykit_core::breaker::BreakerState::HalfOpen.as_str(), "half_open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Attempts go through and are counted.
    Closed,
    /// No attempt goes through until the break ends.
    Open,
    /// Only the probes go through; they decide whether it closes.
    HalfOpen,
}

impl BreakerState {
    /// The state's name, as tracing fields, metrics and reports write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

crate::problem::display_as_str!(BreakerState);

/// A breaker's state and counts, for code that watches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerStatus {
    /// The state.
    pub state: BreakerState,
    /// Times it opened in a row without closing since (0 when closed).
    pub trips: u32,
    /// Attempts counted in the window since it last closed.
    pub attempts: u64,
    /// Of those, failures.
    pub failures: u64,
    /// While open: how long until it half-opens.
    pub open_for: Option<Duration>,
}

/// A phase with its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Closed { from: u64 },
    Open { until_ms: u64 },
    HalfOpen { out: u32, ok: u32 },
}

impl Phase {
    pub(super) fn state(self) -> BreakerState {
        match self {
            Phase::Closed { .. } => BreakerState::Closed,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }
}

const PAYLOAD: u64 = (1 << 48) - 1;
const HALF: u64 = 0xFFFF;
const MAX_TRIPS: u32 = 63;

/// The packed state (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Word(pub(super) u64);

impl Word {
    pub(super) fn phase(self) -> Phase {
        let payload = self.0 >> 16;
        match self.0 & 0b11 {
            0 => Phase::Closed { from: payload },
            1 => Phase::Open { until_ms: payload },
            _ => Phase::HalfOpen {
                out: (payload & HALF) as u32,
                ok: ((payload >> 16) & HALF) as u32,
            },
        }
    }

    pub(super) fn trips(self) -> u32 {
        ((self.0 >> 2) & 0b11_1111) as u32
    }

    pub(super) fn period(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// The same period in phase `phase` (a change within a phase).
    pub(super) fn with(self, phase: Phase) -> Word {
        let (tag, payload) = match phase {
            Phase::Closed { from } => (0, from.min(PAYLOAD)),
            Phase::Open { until_ms } => (1, until_ms.min(PAYLOAD)),
            Phase::HalfOpen { out, ok } => (
                2,
                u64::from(out).min(HALF) | (u64::from(ok).min(HALF) << 16),
            ),
        };
        Word((self.0 & 0xFFFC) | tag | (payload << 16))
    }

    /// A transition to `phase`: the next period.
    pub(super) fn turn(self, phase: Phase) -> Word {
        let period = u64::from(self.period().wrapping_add(1)) << 8;
        Word((self.0 & !0xFF00) | period).with(phase)
    }

    /// Period `period` with `trips` in phase `phase` (a fleet breaker's
    /// state as Redis gives it).
    #[cfg(feature = "redis")]
    pub(super) fn at(period: u8, trips: u32, phase: Phase) -> Word {
        Word(u64::from(period) << 8).with(phase).with_trips(trips)
    }

    pub(super) fn with_trips(self, trips: u32) -> Word {
        let trips = u64::from(trips.min(MAX_TRIPS)) << 2;
        Word((self.0 & !0b1111_1100) | trips)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_round_trips_and_saturates() {
        let w = Word(0)
            .turn(Phase::HalfOpen { out: 3, ok: 70_000 })
            .with_trips(99);
        assert_eq!(w.phase(), Phase::HalfOpen { out: 3, ok: 0xFFFF });
        assert_eq!((w.trips(), w.period()), (63, 1));
        let open = w.turn(Phase::Open { until_ms: u64::MAX });
        assert_eq!(open.phase(), Phase::Open { until_ms: PAYLOAD });
        assert_eq!((open.trips(), open.period()), (63, 2));
        let mut spun = open;
        for _ in 0..256 {
            spun = spun.turn(Phase::Closed { from: 5 });
        }
        assert_eq!(spun.period(), open.period(), "the period wraps");
        assert_eq!(spun.phase(), Phase::Closed { from: 5 });
    }
}
