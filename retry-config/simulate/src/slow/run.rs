//! The slow scenario's event loop, in whole milliseconds (ticks). Within a
//! tick, events are taken in this order, each kind in the order it was
//! scheduled: the dependency's answers, then attempts' timeouts, then ends
//! of waits for a permit, then attempts due (new calls, then retries); last,
//! free slots take calls from the dependency's queue. So a run is a
//! function of its inputs.

use super::gate::{Gate, Held, ticks};
use super::{Slow, SlowReport};
use crate::error::SimulateError;
use crate::seed::client_seed;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Poisson};
use retrykit_core::kernel::{Decider, Failure, Step};
use retrykit_core::limit::adaptive::Outcome;
use retrykit_core::limit::{ConcurrencyLimit, LimitKind};
use retrykit_core::{Class, Policy, Problems};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

/// What an event is, in the order events of one tick are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The dependency answers an attempt.
    Answer,
    /// An attempt's timeout (or its call's deadline) runs out.
    TimedOut,
    /// A call's wait for a permit runs out.
    WaitOver,
    /// A call's next attempt is due.
    Due,
}

/// (tick, kind, sequence, call, the call's attempt number).
type Event = Reverse<(u64, Kind, u64, u32, u32)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between attempts.
    Sleeping,
    /// Queued for a permit.
    Waiting,
    /// An attempt is in flight.
    InFlight,
    /// Ended.
    Done,
}

struct Call {
    arrival: u64,
    process: u32,
    /// The call's deadline, as a tick.
    deadline: Option<u64>,
    decider: Decider,
    /// Numbers the call's attempts: an event of another is stale.
    attempt: u32,
    state: State,
    held: Option<Held>,
}

/// The run's state.
struct Sim<'p> {
    policy: &'p Policy,
    origin: Instant,
    service: u64,
    slots: u64,
    calls: Vec<Call>,
    gates: Vec<Gate>,
    events: BinaryHeap<Event>,
    seq: u64,
    /// The dependency: calls in its places, and its queue.
    serving: u64,
    queue: VecDeque<(u32, u32)>,
    latencies: Vec<u64>,
    report: SlowReport,
    duration: u64,
    in_time: u64,
}

impl Slow {
    /// Runs `policy` on the scenario. Each process gets a fresh limit of
    /// the kind and settings of the policy's limit (none without one); the
    /// policy's breaker, budgets and hedging are not simulated.
    ///
    /// # Errors
    ///
    /// A [`SimulateError`] naming each field out of range (`load`,
    /// `duration`, `processes`, `slots`, `service`), with the fix.
    ///
    /// ```
    /// use retrykit_sim::Slow;
    /// let slow = Slow { slots: 0, ..Slow::default() };
    /// let err = slow.run(&retrykit_core::Policy::default()).unwrap_err();
    /// assert_eq!(err.problems()[0].field, "slots");
    /// ```
    pub fn run(&self, policy: &Policy) -> Result<SlowReport, SimulateError> {
        self.run_any(policy, None)
    }

    /// Runs `policy` with each process's limit of `kind` in place of the
    /// policy's limit's (an adaptive kind: its controller, one per process,
    /// fed one sample per attempt as the real limit feeds it). The policy's
    /// limit's `max_wait` and `max_waiting` still hold (without a limit, a
    /// call never waits for a place).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run), and the problems of `kind`'s settings, each
    /// naming its field (`initial_limit`, ...).
    ///
    /// ```
    /// use retrykit_core::limit::{LimitKind, adaptive::GradientSettings};
    /// use retrykit_sim::Slow;
    /// let gradient = LimitKind::Gradient(GradientSettings::default());
    /// let r = Slow::default().run_with_limit(&retrykit_core::Policy::default(), &gradient)?;
    /// assert_eq!(r.limit.as_deref(), Some("gradient"));
    /// assert!(r.limit_at_end.is_some());
    /// # Ok::<(), retrykit_sim::SimulateError>(())
    /// ```
    pub fn run_with_limit(
        &self,
        policy: &Policy,
        kind: &LimitKind,
    ) -> Result<SlowReport, SimulateError> {
        if let Err(e) = ConcurrencyLimit::new(None, *kind, None, 0) {
            return Err(SimulateError::new("slow", e.problems().to_vec()));
        }
        self.run_any(policy, Some(kind))
    }

    fn run_any(
        &self,
        policy: &Policy,
        adaptive: Option<&LimitKind>,
    ) -> Result<SlowReport, SimulateError> {
        self.check()?;
        let duration = ticks(self.duration);
        let mut sim = Sim {
            policy,
            origin: Instant::now(),
            service: ticks(self.service),
            slots: u64::from(self.slots),
            calls: Vec::new(),
            gates: (0..self.processes)
                .map(|_| Gate::of(policy, adaptive))
                .collect(),
            events: BinaryHeap::new(),
            seq: 0,
            serving: 0,
            queue: VecDeque::new(),
            latencies: Vec::new(),
            report: SlowReport {
                limit: adaptive
                    .or_else(|| policy.limit().map(|l| l.kind()))
                    .map(Gate::describe),
                limit_at_end: None,
                calls: 0,
                attempts: 0,
                succeeded: 0,
                goodput: 0.0,
                limit_full: 0,
                gave_up: 0,
                unfinished: 0,
                p50: Duration::ZERO,
                p99: Duration::ZERO,
                peak_in_flight: 0,
                wasted: 0,
                stopped: false,
            },
            duration,
            in_time: 0,
        };
        let poisson = Poisson::new(self.load).map_err(|e| {
            let mut p = Problems::default();
            p.require(false, "load", "must be a Poisson rate", e.to_string());
            SimulateError::new("slow", p.into_vec())
        })?;
        let mut arrivals = SmallRng::seed_from_u64(client_seed(self.seed, u64::MAX));
        let horizon = duration.saturating_add(ticks(Self::HORIZON));
        let mut t = 0;
        loop {
            if t < duration {
                // A Poisson draw of a rate of at most MAX_LOAD fits.
                let n = poisson.sample(&mut arrivals) as u64;
                for _ in 0..n {
                    sim.arrive(t, self.seed, self.processes);
                }
            }
            sim.tick(t);
            if t + 1 == duration {
                sim.report.limit_at_end = sim.limit_now();
            }
            if sim.report.attempts > Self::MAX_ATTEMPTS || t >= horizon {
                sim.report.stopped = sim.calls.iter().any(|c| c.state != State::Done);
                break;
            }
            // The next tick with something to do.
            t = match sim.events.peek() {
                _ if t + 1 < duration => t + 1,
                Some(Reverse((next, ..))) => (*next).max(t + 1),
                None if sim.serving == 0 && sim.queue.is_empty() => break,
                None => t + 1,
            };
        }
        Ok(sim.finish())
    }
}

impl Sim<'_> {
    fn at(&self, tick: u64) -> Instant {
        self.origin + Duration::from_millis(tick)
    }

    fn push(&mut self, tick: u64, kind: Kind, call: u32) {
        let attempt = self.calls[call as usize].attempt;
        self.seq += 1;
        self.events
            .push(Reverse((tick, kind, self.seq, call, attempt)));
    }

    /// A new call arrives at `t`; its first attempt is due now.
    fn arrive(&mut self, t: u64, seed: u64, processes: u32) {
        let index = self.calls.len() as u64;
        let process = u32::try_from(index % u64::from(processes)).unwrap_or(0);
        self.calls.push(Call {
            arrival: t,
            process,
            deadline: self.policy.deadline().map(|d| t.saturating_add(ticks(d))),
            decider: Decider::new(Some(client_seed(seed, index))),
            attempt: 0,
            state: State::Sleeping,
            held: None,
        });
        self.report.calls += 1;
        let call = u32::try_from(index).unwrap_or(u32::MAX);
        self.push(t, Kind::Due, call);
    }

    /// Takes every event of tick `t`, then fills the dependency's places.
    fn tick(&mut self, t: u64) {
        while let Some(&Reverse((tick, kind, _, call, attempt))) = self.events.peek() {
            if tick > t {
                break;
            }
            self.events.pop();
            let c = &self.calls[call as usize];
            let live = c.attempt == attempt;
            match kind {
                Kind::Answer => {
                    self.serving -= 1;
                    if live && c.state == State::InFlight {
                        self.succeed(call, t);
                    } else {
                        self.report.wasted += 1;
                    }
                }
                Kind::TimedOut if live && c.state == State::InFlight => self.time_out(call, t),
                Kind::WaitOver if live && c.state == State::Waiting => {
                    self.gates[c.process as usize].live -= 1;
                    self.end(call, t);
                    self.report.limit_full += 1;
                }
                Kind::Due if live && c.state == State::Sleeping => self.begin(call, t),
                _ => {}
            }
        }
        while self.serving < self.slots {
            let Some((call, attempt)) = self.queue.pop_front() else {
                break;
            };
            self.serving += 1;
            self.seq += 1;
            self.events.push(Reverse((
                t + self.service,
                Kind::Answer,
                self.seq,
                call,
                attempt,
            )));
        }
        let at_dependency = self.serving + self.queue.len() as u64;
        self.report.peak_in_flight = self.report.peak_in_flight.max(at_dependency);
    }

    /// The call's next attempt begins at `t`: it is sent with a permit, or
    /// waits for one, or the call ends with `limit_full`.
    fn begin(&mut self, call: u32, t: u64) {
        let now = self.at(t);
        let c = &mut self.calls[call as usize];
        c.decider.begin_attempt(self.policy, now);
        let gate = &mut self.gates[c.process as usize];
        if let Some(held) = gate.try_acquire(t) {
            return self.send(call, t, held);
        }
        match gate.may_wait(t, c.deadline) {
            Some(until) => {
                gate.waiting.push_back(call);
                gate.live += 1;
                c.state = State::Waiting;
                if let Some(until) = until {
                    self.push(until.max(t), Kind::WaitOver, call);
                }
            }
            None => {
                self.end(call, t);
                self.report.limit_full += 1;
            }
        }
    }

    /// The attempt goes to the dependency's queue at `t`, holding `held`.
    fn send(&mut self, call: u32, t: u64, held: Held) {
        let c = &mut self.calls[call as usize];
        c.attempt += 1;
        c.state = State::InFlight;
        c.held = Some(held);
        let cut = match (self.policy.attempt_timeout(), c.deadline) {
            (Some(timeout), Some(deadline)) => Some(t.saturating_add(ticks(timeout)).min(deadline)),
            (Some(timeout), None) => Some(t.saturating_add(ticks(timeout))),
            (None, deadline) => deadline,
        };
        self.queue.push_back((call, c.attempt));
        self.report.attempts += 1;
        if let Some(cut) = cut {
            self.push(cut.max(t), Kind::TimedOut, call);
        }
    }

    fn succeed(&mut self, call: u32, t: u64) {
        let arrival = self.calls[call as usize].arrival;
        self.latencies.push(t - arrival);
        self.report.succeeded += 1;
        if t < self.duration {
            self.in_time += 1;
        }
        self.give_back(call, t, Outcome::Answered);
        self.end(call, t);
    }

    /// The attempt in flight is abandoned at `t` as a timeout.
    fn time_out(&mut self, call: u32, t: u64) {
        self.give_back(call, t, Outcome::Timeout);
        let now = self.at(t);
        let failure = Failure {
            class: Class::TIMEOUT,
            hint: None,
            allowed: true,
        };
        let c = &mut self.calls[call as usize];
        match c.decider.after_failure(self.policy, failure, now) {
            Step::Retry { wait, .. } => {
                c.state = State::Sleeping;
                c.attempt += 1;
                let due = t.saturating_add(whole_ms(wait));
                self.push(due, Kind::Due, call);
            }
            Step::GiveUp(_) => {
                self.end(call, t);
                self.report.gave_up += 1;
            }
        }
    }

    /// The call ends (its permit, if any, already given back).
    fn end(&mut self, call: u32, _t: u64) {
        let c = &mut self.calls[call as usize];
        c.state = State::Done;
        c.attempt += 1;
    }

    /// The fleet's limit now: the sum of the processes' sizes.
    fn limit_now(&self) -> Option<u64> {
        self.gates.iter().map(|g| g.size().map(u64::from)).sum()
    }

    /// The call's permit is given back at `t` by an attempt that ended
    /// with `outcome`, and handed to the process's first waiting calls while
    /// the limit has room, whose attempts are then sent.
    fn give_back(&mut self, call: u32, t: u64, outcome: Outcome) {
        let c = &mut self.calls[call as usize];
        let process = c.process as usize;
        if let Some(held) = c.held.take() {
            Gate::give_back(held, t, outcome);
        }
        loop {
            let gate = &mut self.gates[process];
            let Some(&first) = gate.waiting.front() else {
                return;
            };
            if self.calls[first as usize].state != State::Waiting {
                gate.waiting.pop_front(); // its wait ran out
                continue;
            }
            let Some(held) = gate.try_acquire_first(t) else {
                return;
            };
            gate.waiting.pop_front();
            gate.live -= 1;
            self.send(first, t, held);
        }
    }

    fn finish(mut self) -> SlowReport {
        let mut r = self.report;
        r.unfinished = self.calls.iter().filter(|c| c.state != State::Done).count() as u64;
        r.goodput = self.in_time as f64 / self.duration.max(1) as f64;
        self.latencies.sort_unstable();
        r.p50 = Duration::from_millis(rank(&self.latencies, 0.5));
        r.p99 = Duration::from_millis(rank(&self.latencies, 0.99));
        r
    }
}

/// The nearest-rank percentile `q` of sorted `values` (0 when empty).
fn rank(values: &[u64], q: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let at = (q * values.len() as f64).ceil() as usize;
    values[at.clamp(1, values.len()) - 1]
}

/// A wait in whole milliseconds, rounded up (0 stays 0).
fn whole_ms(d: Duration) -> u64 {
    u64::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}
