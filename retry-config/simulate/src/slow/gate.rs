//! A client process's concurrency limit in the slow scenario: retrykit-core's
//! own `ConcurrencyLimit`, built afresh for each process from the policy's
//! limit's kind and settings (or with another kind in its place), so runs
//! share no state and the policy's limit is never touched. The simulated
//! attempts hold its permits and finish them as the retry loop does, with
//! the attempt's latency (from the grant to its end) and outcome, which an
//! adaptive kind's controller reads to set the size. The queue of calls
//! waiting for a permit is the simulator's (the real one waits on a clock):
//! first come, first served, at most `max_waiting` calls, each for at most
//! `max_wait`.

use retrykit_core::Policy;
use retrykit_core::limit::adaptive::Outcome;
use retrykit_core::limit::{ConcurrencyLimit, LimitKind, Permit};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// What an attempt holds while it is in flight.
#[derive(Debug)]
pub(super) enum Held {
    /// Nothing: the process has no limit.
    Nothing,
    /// A permit, granted at this tick.
    Permit(Permit, u64),
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
    /// The gate of a process following `policy`: its limit, of `kind` when
    /// given (the limit's `max_wait` and `max_waiting` kept; without a
    /// limit, a call never waits for a place).
    pub(super) fn of(policy: &Policy, kind: Option<&LimitKind>) -> Gate {
        let limit = policy.limit();
        let kind = kind.or_else(|| limit.map(|l| l.kind())).copied();
        let limit = kind.and_then(|kind| {
            let (wait, waiting) = limit.map_or((None, 0), |l| (l.max_wait(), l.max_waiting()));
            // `run` checked the kind's settings; a policy's limit is valid.
            ConcurrencyLimit::new(None, kind, wait, waiting)
                .ok()
                .map(Arc::new)
        });
        Gate {
            limit,
            waiting: VecDeque::new(),
            live: 0,
        }
    }

    /// How the table names a kind: `fixed N`, `aimd`, `gradient`.
    pub(super) fn describe(kind: &LimitKind) -> String {
        match kind {
            LimitKind::Fixed { max_in_flight } => format!("fixed {max_in_flight}"),
            other => other.name().to_owned(),
        }
    }

    /// The limit's size now (`None` without one).
    pub(super) fn size(&self) -> Option<u32> {
        self.limit.as_ref().map(|l| l.max_in_flight())
    }

    /// A permit at tick `now`, if one is free and no call waits before
    /// this one.
    pub(super) fn try_acquire(&self, now: u64) -> Option<Held> {
        if self.live > 0 && self.limit.is_some() {
            return None;
        }
        self.try_acquire_first(now)
    }

    /// A permit at tick `now` for the first waiting call (or a new one).
    pub(super) fn try_acquire_first(&self, now: u64) -> Option<Held> {
        match &self.limit {
            None => Some(Held::Nothing),
            Some(l) => l.try_acquire().map(|p| Held::Permit(p, now)),
        }
    }

    /// An attempt gives back what it held at tick `now`, having ended with
    /// `outcome`.
    pub(super) fn give_back(held: Held, now: u64, outcome: Outcome) {
        if let Held::Permit(permit, since) = held {
            permit.finish(Duration::from_millis(now.saturating_sub(since)), outcome);
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
