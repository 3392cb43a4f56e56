//! A client process's concurrency limit in the slow scenario: the policy's
//! own kind of limit, built afresh for each process from the policy's
//! limit's settings, so runs share no state and the policy's limit is never
//! touched. A fixed limit is retrykit-core's `ConcurrencyLimit` itself; the
//! permits it grants are held by the simulated attempts and dropped when
//! they end. The queue of calls waiting for a permit is the simulator's
//! (the real one waits on a clock): first come, first served, at most
//! `max_waiting` calls, each for at most `max_wait`.

use retrykit_core::Policy;
use retrykit_core::limit::{ConcurrencyLimit, Permit};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// What an attempt holds while it is in flight.
#[derive(Debug)]
pub(super) enum Held {
    /// Nothing: the process has no limit.
    Nothing,
    /// A fixed limit's permit, given back when dropped.
    Permit {
        /// Given back to its limit when the attempt drops it.
        _permit: Permit,
    },
}

/// One process's limit and its queue of waiting calls.
pub(super) struct Gate {
    limit: Option<Arc<ConcurrencyLimit>>,
    /// Calls queued for a permit, first come first served; a call whose
    /// wait ran out stays until it reaches the front (`live` counts the rest).
    pub(super) waiting: VecDeque<u32>,
    /// Calls in `waiting` still waiting.
    pub(super) live: usize,
}

impl Gate {
    /// The gate of a process following `policy`.
    pub(super) fn of(policy: &Policy) -> Gate {
        let limit = policy.limit().and_then(|l| {
            // The settings of a valid limit build a valid limit.
            ConcurrencyLimit::fixed(l.max_in_flight(), l.max_wait(), l.max_waiting())
                .ok()
                .map(Arc::new)
        });
        Gate {
            limit,
            waiting: VecDeque::new(),
            live: 0,
        }
    }

    /// How the table names the limit: `None` without one.
    pub(super) fn describe(policy: &Policy) -> Option<String> {
        policy
            .limit()
            .map(|l| format!("fixed {}", l.max_in_flight()))
    }

    /// A permit now, if one is free and no call waits before this one.
    pub(super) fn try_acquire(&self) -> Option<Held> {
        match &self.limit {
            None => Some(Held::Nothing),
            Some(l) if self.live == 0 => l.try_acquire().map(|p| Held::Permit { _permit: p }),
            Some(_) => None,
        }
    }

    /// A permit for the first waiting call, once one was given back.
    pub(super) fn try_acquire_first(&self) -> Option<Held> {
        match &self.limit {
            None => Some(Held::Nothing),
            Some(l) => l.try_acquire().map(|p| Held::Permit { _permit: p }),
        }
    }

    /// Whether a call may join the queue, and until which tick it may wait
    /// (`None`: without end) given its deadline's tick.
    pub(super) fn may_wait(&self, now: u64, deadline: Option<u64>) -> Option<Option<u64>> {
        let l = self.limit.as_ref()?;
        if self.live >= l.max_waiting() as usize {
            return None;
        }
        let bound = l.max_wait().map(|w| now.saturating_add(ticks(w)));
        Some(match (bound, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }
}

/// A duration in whole milliseconds, rounded up, at least 1.
pub(super) fn ticks(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000).max(1);
    u64::try_from(ms).unwrap_or(u64::MAX)
}
