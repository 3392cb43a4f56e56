//! A client process's concurrency limit in the slow scenario: the policy's
//! own kind of limit, built afresh for each process from the policy's
//! limit's settings, so runs share no state and the policy's limit is never
//! touched. A fixed limit is retrykit-core's `ConcurrencyLimit` itself; the
//! permits it grants are held by the simulated attempts and dropped when
//! they end. An adaptive limit's size is retrykit-core's own controller
//! (`limit::adaptive::Controller`), one per process, fed one sample per
//! attempt as the real limit feeds it: the time from the grant to the
//! attempt's end, how it ended, and the attempts in flight. The queue of calls waiting for a permit is the simulator's
//! (the real one waits on a clock): first come, first served, at most
//! `max_waiting` calls, each for at most `max_wait`.

use retrykit_core::Policy;
use retrykit_core::limit::adaptive::{Controller, Outcome, Sample};
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
    /// A place of an adaptive limit, granted at this tick.
    Place(u64),
}

/// What sizes a process's limit.
enum Size {
    None,
    Fixed(Arc<ConcurrencyLimit>),
    /// retrykit-core's controller, fed one sample per attempt.
    Adaptive {
        controller: Controller,
        in_flight: u32,
    },
}

/// One process's limit and its queue of waiting calls.
pub(super) struct Gate {
    size: Size,
    max_wait: Option<Duration>,
    max_waiting: u32,
    /// Calls queued for a permit, first come first served; a call whose
    /// wait ran out stays until it reaches the front (`live` counts the rest).
    pub(super) waiting: VecDeque<u32>,
    /// Calls in `waiting` still waiting.
    pub(super) live: usize,
}

impl Gate {
    /// The gate of a process following `policy`: its limit, or with
    /// `adaptive`, that controller in place of the limit's size (the
    /// limit's `max_wait` and `max_waiting` kept).
    pub(super) fn of(policy: &Policy, adaptive: Option<&Controller>) -> Gate {
        let limit = policy.limit();
        let size = match (adaptive, limit) {
            (Some(c), _) => Size::Adaptive {
                controller: c.clone(),
                in_flight: 0,
            },
            // The settings of a valid limit build a valid limit.
            (None, Some(l)) => {
                ConcurrencyLimit::fixed(l.max_in_flight(), l.max_wait(), l.max_waiting())
                    .map_or(Size::None, |l| Size::Fixed(Arc::new(l)))
            }
            (None, None) => Size::None,
        };
        Gate {
            size,
            max_wait: limit.and_then(|l| l.max_wait()),
            max_waiting: limit.map_or(0, |l| l.max_waiting()),
            waiting: VecDeque::new(),
            live: 0,
        }
    }

    /// How the table names the limit: `None` without one.
    pub(super) fn describe(policy: &Policy, adaptive: Option<&Controller>) -> Option<String> {
        match (adaptive, policy.limit()) {
            (Some(c), _) => Some(c.kind().to_owned()),
            (None, Some(l)) => Some(format!("fixed {}", l.max_in_flight())),
            (None, None) => None,
        }
    }

    /// The limit's size now (`None` without one).
    pub(super) fn size(&self) -> Option<u32> {
        match &self.size {
            Size::None => None,
            Size::Fixed(l) => Some(l.max_in_flight()),
            Size::Adaptive { controller, .. } => Some(controller.limit()),
        }
    }

    /// A permit now at tick `now`, if one is free and no call waits before
    /// this one.
    pub(super) fn try_acquire(&mut self, now: u64) -> Option<Held> {
        if self.live > 0 && !matches!(self.size, Size::None) {
            return None;
        }
        self.try_acquire_first(now)
    }

    /// A permit at tick `now` for the first waiting call (or a new one).
    pub(super) fn try_acquire_first(&mut self, now: u64) -> Option<Held> {
        match &mut self.size {
            Size::None => Some(Held::Nothing),
            Size::Fixed(l) => l.try_acquire().map(|p| Held::Permit { _permit: p }),
            Size::Adaptive {
                controller,
                in_flight,
            } => (*in_flight < controller.limit()).then(|| {
                *in_flight += 1;
                Held::Place(now)
            }),
        }
    }

    /// An attempt gives back what it held at tick `now`, having ended with
    /// `outcome`: an adaptive controller reads it as a sample.
    pub(super) fn give_back(&mut self, held: Held, now: u64, outcome: Outcome) {
        if let (
            Held::Place(since),
            Size::Adaptive {
                controller,
                in_flight,
            },
        ) = (&held, &mut self.size)
        {
            let latency = Duration::from_millis(now.saturating_sub(*since));
            controller.on_sample(Sample {
                latency,
                outcome,
                in_flight: *in_flight,
            });
            *in_flight = in_flight.saturating_sub(1);
        }
        drop(held);
    }

    /// Whether a call may join the queue, and until which tick it may wait
    /// (`None`: without end) given its deadline's tick.
    pub(super) fn may_wait(&self, now: u64, deadline: Option<u64>) -> Option<Option<u64>> {
        if matches!(self.size, Size::None) || self.live >= self.max_waiting as usize {
            return None;
        }
        let bound = self.max_wait.map(|w| now.saturating_add(ticks(w)));
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
