//! The thundering herd: a whole fleet fails at once and retries against a
//! service that is down for a while and then has limited room.
//!
//! Time is cut into ticks. Every client makes its first call in tick 0,
//! which fails unless the outage is zero (that is the scenario, not the
//! policy's doing). A call made in tick `t` is answered at the end of the tick,
//! so the client's [`Decider`] sees the failure at `(t + 1)·tick` and the next
//! call lands in the tick containing `(t + 1)·tick + wait`. Until `outage` has
//! passed every call fails as transient; after that the service accepts the
//! first `capacity` calls of each tick (in the order they were scheduled) and
//! throttles the rest.
//!
//! The run has two phases: during the outage clients cannot affect each
//! other, so each runs on its own through windows of ticks ([`outage`]);
//! once the service is back they compete for capacity and run tick by tick
//! ([`recovery`]). A policy with a circuit breaker couples the clients
//! through it from the first call, so it runs tick by tick from tick 0
//! ([`breakers`]).

mod breakers;
mod chaos;
mod outage;
mod recovery;
mod report;
mod tally;

use super::error::SimulateError;
use super::histogram::ArrivalHistogram;
use super::seed::client_seed;
use super::send::SendRate;
use super::timer::TimerModel;
pub use breakers::BreakerScope;
use breakers::Breakers;
use recovery::Recovery;
pub use report::{HerdReport, StoppedBy};
use retrykit_core::Policy;
use retrykit_core::Problems;
use retrykit_core::kernel::Decider;
use std::time::{Duration, Instant};
use tally::Tally;

/// The most bins a herd's histogram may keep (16 MiB of counters).
const MAX_ARRIVAL_BINS: usize = 1 << 20;

/// A thundering-herd scenario. Fill in the fields you care about and keep
/// the rest from [`Herd::default`].
///
/// The model: every client makes its first call in tick 0. Calls that start
/// before `outage` fail as transient; after it, the first `capacity` calls of
/// each tick succeed and the rest fail as throttled. A call is answered at
/// the end of its tick, and the client's next call lands in the tick holding
/// that instant plus the wait its policy's [`Decider`] chose.
///
/// ```
/// use retrykit_sim::Herd;
/// use retrykit_core::{Jitter, Policy};
/// use std::time::Duration;
///
/// let herd = Herd { clients: 1000, outage: Duration::from_millis(500), capacity: 100, ..Herd::default() };
/// let lockstep = Policy::builder().jitter(Jitter::None).max_attempts(5).build().unwrap();
/// let jittered = lockstep.to_builder().jitter(Jitter::Full).build().unwrap();
///
/// let a = herd.run(&lockstep).unwrap();
/// let b = herd.run(&jittered).unwrap();
/// assert_eq!(a.first_wave, 1000);
/// assert_eq!(a.peak_retries, 1000); // every client retries in the same tick
/// assert!(b.peak_retries < a.peak_retries / 5);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Herd {
    /// Clients that fail together at time 0.
    pub clients: u32,
    /// How long the service stays down.
    pub outage: Duration,
    /// Calls per tick the service accepts once it is back (at least 1).
    pub capacity: u64,
    /// The simulation's time step.
    pub tick: Duration,
    /// Seeds every client's jitter stream (see [`client_seed`]).
    pub seed: u64,
    /// Simulated time after which clients still retrying are left unfinished.
    pub horizon: Duration,
    /// Calls after which the run stops, clients still retrying left unfinished:
    /// a guard against a policy that would retry for days in 1 ns ticks.
    pub max_calls: u64,
    /// The clients' timer, when modelled: a call is then answered the
    /// instant it is made, and the client's next call lands where its timer
    /// fires (see [`TimerModel`]). `None`: answered at the end of its tick,
    /// the next call in the tick holding that instant plus the wait.
    pub timer: Option<TimerModel>,
    /// The clients' machine, when modelled: calls due beyond its send rate
    /// wait in a queue, first come, first served, and are made in the tick
    /// they are sent in (see [`SendRate`]). `None`: every call due in a tick
    /// is made in it.
    pub send: Option<SendRate>,
    /// Bins of the arrivals histogram (2 to 2²⁰): a run longer than this
    /// many ticks merges neighbouring ticks into one bin.
    pub arrival_bins: usize,
    /// How the policy's circuit breaker, if it has one, is shared: one per
    /// client process, or one for the fleet (see [`BreakerScope`]). Each
    /// run builds its own, from the policy's breaker's settings.
    pub breaker: BreakerScope,
}

impl Default for Herd {
    /// 1000 clients, a 1 s outage, 100 calls per 1 ms tick, seed 0, a one-day
    /// horizon, at most a billion calls, no timer or send-rate model,
    /// [`ArrivalHistogram::DEFAULT_MAX_BINS`] bins and one breaker per
    /// process in one process.
    fn default() -> Self {
        Herd {
            clients: 1000,
            outage: Duration::from_secs(1),
            capacity: 100,
            tick: Duration::from_millis(1),
            seed: 0,
            horizon: Duration::from_secs(24 * 3600),
            max_calls: 1_000_000_000,
            timer: None,
            send: None,
            arrival_bins: ArrivalHistogram::DEFAULT_MAX_BINS,
            breaker: BreakerScope::default(),
        }
    }
}

impl Herd {
    fn validate(&self) -> Result<(), SimulateError> {
        let mut c = Problems::default();
        c.require(
            !self.tick.is_zero(),
            "tick",
            "must be greater than zero",
            "use a step such as 1ms".into(),
        );
        c.durations([
            ("tick", Some(self.tick)),
            ("outage", Some(self.outage)),
            ("horizon", Some(self.horizon)),
        ]);
        c.require(
            self.capacity > 0,
            "capacity",
            "must be at least 1 call per tick",
            "to model a service that never comes back, use an outage longer than the horizon"
                .into(),
        );
        if let Some(timer) = self.timer {
            c.durations([("timer.resolution", Some(timer.resolution))]);
            // Time moves a tick at a time: a grid finer than the tick would
            // put wake-ups inside a tick, which the simulator cannot place.
            // A zero grid is the extreme case, and its fix is the grid itself
            // (a tick of at most zero is no fix: a tick must be longer).
            let fix = if timer.resolution.is_zero() {
                format!(
                    "use {:?}, or any grid from the tick ({:?}) up (tokio's timer is 1ms)",
                    self.tick.max(Duration::from_millis(1)),
                    self.tick
                )
            } else {
                format!(
                    "use a timer grid of at least {:?}, or a tick of at most {:?}, or no timer model: \
                     a timer finer than the tick changes nothing a tick can show",
                    self.tick, timer.resolution
                )
            };
            c.require(
                !timer.resolution.is_zero() && timer.resolution >= self.tick,
                "timer.resolution",
                "must be at least one tick",
                fix,
            );
            c.require(
                (0.0..=TimerModel::MAX_SKIPPED).contains(&timer.skipped),
                "timer.skipped",
                "must be a share from 0 to 0.9",
                "use the share of timer steps a run measured without wake-ups, e.g. 0.25".into(),
            );
        }
        if let Some(send) = self.send {
            c.require(
                SendRate::accepts(send.per_ms),
                "send.rate",
                "must be a number of calls per millisecond from 0.000001 to 10^9",
                "use the rate the clients' machine was measured to send, e.g. 90 (calls per ms); \
                 to model no limit, leave the send rate out"
                    .into(),
            );
            c.require(
                (1..=SendRate::MAX_PROCESSES).contains(&send.processes)
                    && send.processes <= self.clients.max(1),
                "send.processes",
                "must be from 1 to 1024, and at most the clients",
                format!(
                    "use 1 for one queue for the whole fleet, or the number of client processes (at most {})",
                    self.clients.clamp(1, SendRate::MAX_PROCESSES)
                ),
            );
        }
        self.breaker.check(self.clients, &mut c);
        c.require(
            (2..=MAX_ARRIVAL_BINS).contains(&self.arrival_bins),
            "arrival_bins",
            "must be from 2 to 2^20",
            format!("use {}", ArrivalHistogram::DEFAULT_MAX_BINS),
        );
        c.require(
            self.horizon >= self.tick,
            "horizon",
            "must be at least one tick",
            format!("raise horizon to at least {:?}", self.tick),
        );
        SimulateError::check("herd", c.into_vec())
    }

    /// Runs every client under `policy` (its retry budget, if any, is ignored:
    /// see [`HerdReport::ignored_budget`]). Deterministic for a given seed.
    ///
    /// # Errors
    ///
    /// A [`SimulateError`] naming each setting out of range (`tick`,
    /// `outage`, `horizon`, `capacity`), with the fix.
    ///
    /// ```
    /// use retrykit_sim::Herd;
    /// use retrykit_core::Policy;
    /// let herd = Herd { clients: 500, ..Herd::default() };
    /// let p = Policy::default();
    /// assert_eq!(herd.run(&p).unwrap(), herd.run(&p).unwrap());
    /// ```
    pub fn run(&self, policy: &Policy) -> Result<HerdReport, SimulateError> {
        self.run_with(policy, outage::PARALLEL_FROM)
    }

    /// [`run`](Self::run), with threads for outage windows of at least
    /// `parallel_from` calls.
    fn run_with(&self, policy: &Policy, parallel_from: usize) -> Result<HerdReport, SimulateError> {
        self.validate()?;
        let ignored_budget = policy.budget().is_some();
        let unbudgeted;
        let policy = if ignored_budget {
            unbudgeted =
                policy.to_builder().budget(None).build().map_err(|e| {
                    SimulateError::check("herd", e.problems().to_vec()).unwrap_err()
                })?;
            &unbudgeted
        } else {
            policy
        };
        let mut ctx = Ctx::new(self, policy);
        ctx.breakers = policy
            .breaker()
            .map(|b| Breakers::new(b, self.breaker, self.clients, self.seed, ctx.origin))
            .transpose()?;
        let mut tally = Tally::new(self.clients, self.arrival_bins, ctx.outage_ticks);
        // The longest computed wait, in ticks: the span the wheel should cover.
        let span = policy.cap().as_nanos() / self.tick.as_nanos();
        let mut recovery = Recovery::new(u64::try_from(span).unwrap_or(u64::MAX), self.clients);
        let seed = self.seed;
        let client = |i: u32| Decider::new(Some(client_seed(seed, u64::from(i))));
        // With a send rate, clients share their machine from the first
        // call, and with a breaker they share it: they run together from
        // tick 0 (see `recovery`).
        if ctx.outage_ticks == 0
            || ctx.send.is_some()
            || ctx.breakers.is_some()
            || ctx.chaos.is_some()
        {
            for i in 0..self.clients {
                recovery.add(0, client(i));
            }
        } else {
            outage::run(
                &ctx,
                self.clients,
                client,
                &mut tally,
                &mut recovery,
                parallel_from,
            );
        }
        recovery.run(&ctx, &mut tally);
        let breaker = ctx.breakers.is_some().then_some(self.breaker);
        Ok(tally.report(self, ignored_budget, breaker))
    }
}

/// What both phases of a run need to know.
pub(super) struct Ctx<'p> {
    pub(super) policy: &'p Policy,
    pub(super) tick_ns: u64,
    /// The first tick that starts after the outage.
    pub(super) outage_ticks: u64,
    pub(super) horizon_ticks: u64,
    pub(super) max_calls: u64,
    pub(super) capacity: u64,
    /// The clients' send rate, when modelled.
    pub(super) send: Option<SendRate>,
    /// The run's circuit breakers, when the policy has one.
    breakers: Option<Breakers>,
    /// The faults and delays the policy's chaos injects, when it has any.
    chaos: Option<chaos::Injections>,
    timer: Option<TimerModel>,
    seed: u64,
    origin: Instant,
}

impl<'p> Ctx<'p> {
    fn new(herd: &Herd, policy: &'p Policy) -> Self {
        // validate() bounds tick, outage and horizon to 100 years: all fit in u64 nanoseconds.
        let tick = herd.tick.as_nanos().max(1);
        let to_u64 = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
        Ctx {
            policy,
            tick_ns: to_u64(tick),
            outage_ticks: to_u64(herd.outage.as_nanos().div_ceil(tick)),
            horizon_ticks: to_u64(herd.horizon.as_nanos() / tick),
            max_calls: herd.max_calls,
            capacity: herd.capacity,
            send: herd.send,
            breakers: None,
            chaos: chaos::Injections::of(policy, herd.seed),
            timer: herd.timer,
            seed: herd.seed,
            origin: Instant::now(),
        }
    }

    /// The synthetic instant `ns` after time 0, for the decider's deadline.
    fn at(&self, ns: u64) -> Instant {
        // At most ~200 years past now, which every platform's Instant can hold.
        self.origin
            .checked_add(Duration::from_nanos(ns))
            .unwrap_or(self.origin)
    }

    /// When a call in `tick` starts.
    pub(super) fn start(&self, tick: u64) -> Instant {
        self.at(tick.saturating_mul(self.tick_ns))
    }

    /// When a call in `tick` is answered: the end of the tick, or with a
    /// timer model just after it is made (the nanosecond keeps a wait of
    /// whole grid steps from firing on the call's own step).
    pub(super) fn end(&self, tick: u64) -> Instant {
        self.at(self.answered_ns(tick))
    }

    fn answered_ns(&self, tick: u64) -> u64 {
        match self.timer {
            None => tick.saturating_add(1).saturating_mul(self.tick_ns),
            Some(_) => tick.saturating_mul(self.tick_ns).saturating_add(1),
        }
    }

    /// Ticks covering `span`, rounded up.
    pub(super) fn ticks_of(&self, span: Duration) -> u64 {
        u64::try_from(span.as_nanos().div_ceil(u128::from(self.tick_ns))).unwrap_or(u64::MAX)
    }

    /// The tick of the next call after a call in `tick` and a `wait`: the
    /// tick holding the answer plus the wait, or where the timer fires, and
    /// never the call's own tick (time moves a tick at a time, so a retry
    /// there would see the same instant again and again).
    pub(super) fn next_tick(&self, tick: u64, wait: Duration) -> u64 {
        let wait = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
        let due = self.answered_ns(tick).saturating_add(wait);
        match &self.timer {
            None => due / self.tick_ns,
            Some(timer) => {
                (timer.fires_at(due, self.seed) / self.tick_ns).max(tick.saturating_add(1))
            }
        }
    }
}

pub(super) fn ticks_to_duration(ticks: u64, tick: Duration) -> Duration {
    let nanos = u128::from(ticks).saturating_mul(tick.as_nanos());
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrykit_core::Jitter;

    #[test]
    fn threads_do_not_change_the_result() {
        let herd = Herd {
            clients: 3001,
            outage: Duration::from_millis(1500),
            capacity: 7,
            max_calls: 20_001,
            seed: 9,
            ..Herd::default()
        };
        for jitter in [Jitter::None, Jitter::Full, Jitter::Decorrelated] {
            let p = Policy::builder()
                .jitter(jitter)
                .max_attempts(9)
                .build()
                .unwrap();
            let one = herd.run_with(&p, usize::MAX).unwrap();
            let many = herd.run_with(&p, 0).unwrap();
            assert_eq!(one, many, "{jitter:?}");
            let unlimited = Herd {
                max_calls: u64::MAX,
                ..herd.clone()
            };
            assert_eq!(
                unlimited.run_with(&p, usize::MAX).unwrap(),
                unlimited.run_with(&p, 0).unwrap()
            );
        }
    }
}
