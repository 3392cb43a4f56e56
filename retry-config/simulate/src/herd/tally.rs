//! The counters of a herd run in progress, and the report they become.

use super::{BreakerScope, Herd, HerdReport, StoppedBy, ticks_to_duration};
use crate::ArrivalHistogram;
use std::time::Duration;

pub(super) struct Tally {
    arrivals: ArrivalHistogram,
    first_wave: u64,
    /// One past the last tick with a first call.
    first_wave_ticks: u64,
    /// (calls, tick) of the busiest tick after tick 0; the earliest wins ties.
    peak: (u64, u64),
    pub(super) calls: u64,
    busy_ticks: u64,
    give_ups: u64,
    pub(super) unfinished: u64,
    /// Whether the call limit stopped the run (else unfinished clients met the horizon).
    pub(super) hit_call_limit: bool,
    last_tick: Option<u64>,
    /// The tick of each success, for the percentiles.
    success_ticks: Vec<u64>,
    /// The first tick that starts after the outage.
    outage_ticks: u64,
    /// Calls made in ticks before it.
    outage_calls: u64,
    /// (calls, tick) of the busiest tick from it on; the earliest wins ties.
    peak_after: (u64, u64),
    /// Attempts a circuit breaker refused (never sent).
    pub(super) refused: u64,
    /// Clients that gave up because the breaker refused their last attempt.
    breaker_give_ups: u64,
    /// Attempts the policy's chaos failed in place of a call (never sent).
    pub(super) injected: u64,
    /// Attempts the policy's chaos delayed, and their delays in all.
    pub(super) delayed: u64,
    pub(super) delayed_for: Duration,
    /// Of those, attempts whose delay reached their time limit (never sent).
    pub(super) delay_timeouts: u64,
}

impl Tally {
    pub(super) fn new(clients: u32, bins: usize, outage_ticks: u64) -> Self {
        Tally {
            arrivals: ArrivalHistogram::new(bins),
            first_wave: 0,
            first_wave_ticks: 0,
            peak: (0, 0),
            calls: 0,
            busy_ticks: 0,
            give_ups: 0,
            unfinished: 0,
            hit_call_limit: false,
            last_tick: None,
            success_ticks: Vec::with_capacity(clients as usize),
            outage_ticks,
            outage_calls: 0,
            peak_after: (0, 0),
            refused: 0,
            breaker_give_ups: 0,
            injected: 0,
            delayed: 0,
            delayed_for: Duration::ZERO,
            delay_timeouts: 0,
        }
    }

    /// Counts the calls of one tick: first calls into the first wave,
    /// retries into the histogram and the peak. Each tick is reported once,
    /// in increasing order; `calls` are counted separately, as they are made.
    /// Without a send rate every first call is made in tick 0; with one they
    /// may spread over several ticks, and only their retries are the policy's doing.
    pub(super) fn tick(&mut self, tick: u64, first_calls: u64, retries: u64) {
        self.busy_ticks += 1;
        if first_calls > 0 {
            self.first_wave += first_calls;
            self.first_wave_ticks = tick + 1;
        }
        self.arrivals.record(tick, retries);
        if tick > 0 && retries > self.peak.0 {
            self.peak = (retries, tick);
        }
        let calls = first_calls + retries;
        if tick < self.outage_ticks {
            self.outage_calls += calls;
        } else if calls > self.peak_after.0 {
            self.peak_after = (calls, tick);
        }
    }

    /// The outage phase's calls of one tick (no send rate: first calls are
    /// tick 0's, every later call a retry).
    pub(super) fn outage_tick(&mut self, tick: u64, calls: u64) {
        if tick == 0 {
            self.tick(0, calls, 0);
        } else {
            self.tick(tick, 0, calls);
        }
    }

    pub(super) fn succeed(&mut self, tick: u64) {
        self.success_ticks.push(tick);
        self.finish(tick);
    }

    pub(super) fn give_up(&mut self, tick: u64) {
        self.give_ups += 1;
        self.finish(tick);
    }

    /// A client gave up in `tick` because the breaker refused its last attempt.
    pub(super) fn breaker_give_up(&mut self, tick: u64) {
        self.breaker_give_ups += 1;
        self.give_up(tick);
    }

    /// `count` give-ups, the last of them in `last`.
    pub(super) fn give_ups(&mut self, count: u64, last: u64) {
        self.give_ups += count;
        self.finish(last);
    }

    fn finish(&mut self, tick: u64) {
        self.last_tick = Some(self.last_tick.map_or(tick, |t| t.max(tick)));
    }

    pub(super) fn report(
        mut self,
        herd: &Herd,
        ignored_budget: bool,
        breaker: Option<BreakerScope>,
    ) -> HerdReport {
        let ticks = if self.unfinished > 0 {
            self.arrivals.ticks()
        } else {
            self.last_tick.map_or(0, |t| t + 1)
        };
        let p50 = percentile(&mut self.success_ticks, 0.5, herd.tick);
        let p99 = percentile(&mut self.success_ticks, 0.99, herd.tick);
        let drain = (self.unfinished == 0)
            .then(|| ticks_to_duration(ticks, herd.tick).saturating_sub(herd.outage));
        HerdReport {
            clients: herd.clients,
            tick: herd.tick,
            first_wave: self.first_wave,
            first_wave_ticks: self.first_wave_ticks,
            peak_retries: self.peak.0,
            peak_tick: self.peak.1,
            calls: self.calls,
            successes: self.success_ticks.len() as u64,
            give_ups: self.give_ups,
            unfinished: self.unfinished,
            stopped_by: match (self.unfinished, self.hit_call_limit) {
                (0, _) => None,
                (_, true) => Some(StoppedBy::CallLimit),
                (_, false) => Some(StoppedBy::Horizon),
            },
            busy_ticks: self.busy_ticks,
            ticks,
            p50,
            p99,
            arrivals: self.arrivals,
            ignored_budget,
            outage_calls: self.outage_calls,
            peak_after_outage: self.peak_after.0,
            peak_after_outage_tick: self.peak_after.1,
            drain,
            injected: self.injected,
            delayed: self.delayed,
            delayed_for: self.delayed_for,
            delay_timeouts: self.delay_timeouts,
            refused: self.refused,
            breaker_give_ups: self.breaker_give_ups,
            breaker,
        }
    }
}

/// The nearest-rank `q`-quantile of the success ticks, as time since time 0:
/// a call in tick t is answered at the end of it, (t + 1) ticks after time 0.
fn percentile(ticks: &mut [u64], q: f64, tick: Duration) -> Option<Duration> {
    if ticks.is_empty() {
        return None;
    }
    let rank = ((q * ticks.len() as f64).ceil() as usize).clamp(1, ticks.len()) - 1;
    let (_, &mut t, _) = ticks.select_nth_unstable(rank);
    Some(ticks_to_duration(t.saturating_add(1), tick))
}
