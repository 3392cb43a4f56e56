//! What a [`Herd`](crate::Herd) run reports: the counts, the peaks and
//! the times of one policy's run, and what stopped it early.

use super::{BreakerScope, ticks_to_duration};
use crate::histogram::ArrivalHistogram;
use std::time::Duration;

/// What one policy did to the service in a [`Herd`](crate::Herd) scenario.
///
/// ```
/// use retrykit_sim::Herd;
/// let r = Herd { clients: 10, ..Herd::default() }.run(&retrykit_core::Policy::default()).unwrap();
/// assert_eq!(r.successes + r.give_ups + r.unfinished, 10);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HerdReport {
    /// Clients simulated.
    pub clients: u32,
    /// The simulation's time step.
    pub tick: Duration,
    /// First calls: the synchronised first failure, the scenario's doing,
    /// all in tick 0 unless a [`SendRate`](crate::SendRate) spreads them.
    pub first_wave: u64,
    /// Ticks from tick 0 to the last with a first call: 1 unless a
    /// [`SendRate`](crate::SendRate) spreads the first wave (0 for a run that made no call).
    pub first_wave_ticks: u64,
    /// Retry arrivals in the busiest tick after tick 0: the policy's doing.
    pub peak_retries: u64,
    /// The (first) tick where [`peak_retries`](Self::peak_retries) happened.
    pub peak_tick: u64,
    /// Every call made, first calls included.
    pub calls: u64,
    /// Clients that eventually succeeded.
    pub successes: u64,
    /// Clients whose policy gave up.
    pub give_ups: u64,
    /// Clients still retrying when the horizon or the call limit stopped the run.
    pub unfinished: u64,
    /// Why clients were left unfinished, when some were.
    pub stopped_by: Option<StoppedBy>,
    /// Ticks in which at least one call arrived.
    pub busy_ticks: u64,
    /// Ticks until every client had succeeded or given up (or the run stopped).
    pub ticks: u64,
    /// Median time from the first failure to success, over the clients that succeeded.
    pub p50: Option<Duration>,
    /// 99th-percentile time to success, over the clients that succeeded.
    pub p99: Option<Duration>,
    /// Retry arrivals per tick (first calls, tick 0's and any a send rate
    /// delays, are counted in [`first_wave`](Self::first_wave) instead).
    pub arrivals: ArrivalHistogram,
    /// Whether the policy had a retry budget, which the simulation ignores: a
    /// budget belongs to one process, and here each client is its own process.
    pub ignored_budget: bool,
    /// Calls that reached the service while it was down: made in a tick
    /// that starts before the outage ends, first calls included.
    pub outage_calls: u64,
    /// Calls (first calls and retries) in the busiest tick from the first
    /// that starts after the outage.
    pub peak_after_outage: u64,
    /// The (first) tick where [`peak_after_outage`](Self::peak_after_outage) happened.
    pub peak_after_outage_tick: u64,
    /// Time from the outage's end until every client had succeeded or
    /// given up (zero if all were done before it); `None` when the run
    /// stopped with clients unfinished.
    pub drain: Option<Duration>,
    /// Attempts the circuit breaker refused: not sent, so in no other count
    /// of calls (a refused attempt still uses one of the policy's attempts).
    pub refused: u64,
    /// Of [`give_ups`](Self::give_ups), the clients whose last attempt the
    /// breaker refused, with no attempt or time left to wait for it.
    pub breaker_give_ups: u64,
    /// The scope the policy's circuit breaker ran at; `None` without one.
    pub breaker: Option<BreakerScope>,
    /// Attempts the policy's chaos failed in place of a call (docs/chaos.md):
    /// never sent, so in no count of calls (each still uses one of the
    /// policy's attempts). A faulted attempt whose delay timed it out first
    /// is counted in [`delay_timeouts`](Self::delay_timeouts) instead.
    pub injected: u64,
    /// Attempts the policy's chaos delayed before sending them, faulted
    /// or not (docs/chaos.md).
    pub delayed: u64,
    /// The delays of the [`delayed`](Self::delayed) attempts, in all, as
    /// drawn (each reaches the service after its delay rounded up to the tick).
    pub delayed_for: Duration,
    /// Of [`delayed`](Self::delayed), the attempts whose delay reached their
    /// time limit (`attempt_timeout`, or what was left of the deadline):
    /// never sent, each failed as a timeout when the limit ran out.
    pub delay_timeouts: u64,
}

/// What stopped a [`Herd`](crate::Herd) run before every client had succeeded or given up.
///
/// ```
/// use retrykit_sim::{Herd, StoppedBy};
/// use retrykit_core::Policy;
/// let herd = Herd { clients: 10, outage: std::time::Duration::from_secs(60), max_calls: 15, ..Herd::default() };
/// let r = herd.run(&Policy::default()).unwrap();
/// assert_eq!(r.stopped_by, Some(StoppedBy::CallLimit));
/// assert_eq!(r.calls, 15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoppedBy {
    /// [`Herd::horizon`](crate::Herd::horizon): clients whose next call fell after it were left.
    Horizon,
    /// [`Herd::max_calls`](crate::Herd::max_calls): the run stopped when it had made that many calls.
    CallLimit,
}

impl HerdReport {
    /// Time until every client had succeeded or given up: [`ticks`](Self::ticks) × tick.
    ///
    /// ```
    /// use retrykit_sim::Herd;
    /// let r = Herd { clients: 1, outage: std::time::Duration::ZERO, ..Herd::default() }
    ///     .run(&retrykit_core::Policy::default()).unwrap();
    /// assert_eq!(r.finished_after(), std::time::Duration::from_millis(1));
    /// ```
    pub fn finished_after(&self) -> Duration {
        ticks_to_duration(self.ticks, self.tick)
    }
}
