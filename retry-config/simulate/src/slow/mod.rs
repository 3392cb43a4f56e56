//! The slow scenario: a dependency whose latency grows with its load, and
//! a fleet of client processes calling it under a policy, each process with
//! its own concurrency limit when the policy names one.
//!
//! The dependency has `slots` places; each call in a place takes `service`,
//! and calls beyond the places wait in one queue, first come, first served.
//! Its latency is therefore the service time plus the queue ahead (Little's
//! law: with `n` calls at the dependency, a new one is answered after
//! `service × ⌈(n + 1) / slots⌉`). The dependency does not know when a
//! client stops waiting: an attempt abandoned at its `attempt_timeout` is
//! still served, and that place's work is wasted.
//!
//! New calls arrive at `load` per millisecond for `duration` (a Poisson
//! stream drawn from `seed`), dealt to the `processes` in turn. Each call
//! follows its policy as the real loop does: the engine's
//! [`Decider`](retrykit_core::kernel::Decider) decides every retry and its
//! jitter, and every attempt holds a permit of its process's limit while it
//! is in flight (see [`Slow::run`]).

mod gate;
mod run;

use super::error::SimulateError;
use retrykit_core::Problems;
use std::time::Duration;

/// A slow-dependency scenario. Fill in the fields you care about and keep
/// the rest from [`Slow::default`].
///
/// ```
/// use retrykit_sim::Slow;
/// use retrykit_core::Policy;
/// use std::time::Duration;
///
/// // Half the dependency's capacity: nothing queues, every call takes 10 ms.
/// let slow = Slow { load: 1.0, duration: Duration::from_secs(1), ..Slow::default() };
/// let r = slow.run(&Policy::default())?;
/// assert_eq!(r.succeeded, r.calls);
/// assert_eq!(r.p99, Duration::from_millis(10));
/// # Ok::<(), retrykit_sim::SimulateError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Slow {
    /// New calls per millisecond, from the whole fleet (above 0, at most
    /// [`Slow::MAX_LOAD`]).
    pub load: f64,
    /// How long new calls arrive (1 ms to [`Slow::MAX_DURATION`]).
    pub duration: Duration,
    /// Client processes, each with its own limit (1 to [`Slow::MAX_PROCESSES`]).
    pub processes: u32,
    /// Calls the dependency serves at once (1 to [`Slow::MAX_SLOTS`]).
    pub slots: u32,
    /// The time a call takes once in a slot, in whole milliseconds
    /// (1 ms to [`Slow::MAX_SERVICE`]).
    pub service: Duration,
    /// Seeds the arrivals and every call's jitter.
    pub seed: u64,
}

impl Default for Slow {
    /// 3 calls per ms for 10 s from 10 processes, against 20 slots of
    /// 10 ms (a capacity of 2 calls per ms), seed 0.
    fn default() -> Self {
        Slow {
            load: 3.0,
            duration: Duration::from_secs(10),
            processes: 10,
            slots: 20,
            service: Duration::from_millis(10),
            seed: 0,
        }
    }
}

/// One policy's run of the slow scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowReport {
    /// What limited each process: `None` without a limit, else the limit's
    /// kind, and a fixed limit's size, as the table shows it (`"fixed 2"`,
    /// `"gradient"`).
    pub limit: Option<String>,
    /// The fleet's limit when new calls stopped arriving: the sum of the
    /// processes' sizes (`None` without a limit).
    pub limit_at_end: Option<u64>,
    /// Calls that arrived.
    pub calls: u64,
    /// Attempts sent to the dependency.
    pub attempts: u64,
    /// Calls that succeeded.
    pub succeeded: u64,
    /// Calls that succeeded while new calls were arriving, per millisecond
    /// of `duration`: the goodput under the load.
    pub goodput: f64,
    /// Calls that ended for want of a permit (`limit_full`).
    pub limit_full: u64,
    /// Calls that ended otherwise without success (attempts or deadline
    /// used up by timeouts).
    pub gave_up: u64,
    /// Calls still open when the run stopped.
    pub unfinished: u64,
    /// Median time from a call's arrival to its success.
    pub p50: Duration,
    /// 99th percentile of the same.
    pub p99: Duration,
    /// The most calls at the dependency at once, in its places and its
    /// queue (abandoned attempts included).
    pub peak_in_flight: u64,
    /// Attempts the dependency served after their client stopped waiting.
    pub wasted: u64,
    /// Whether the run stopped at [`Slow::MAX_ATTEMPTS`] or
    /// [`Slow::HORIZON`] with calls still open.
    pub stopped: bool,
}

impl Slow {
    /// The most new calls per millisecond.
    pub const MAX_LOAD: f64 = 10_000.0;
    /// The longest time new calls arrive.
    pub const MAX_DURATION: Duration = Duration::from_secs(3600);
    /// The most calls a run may have (`load × duration`).
    pub const MAX_CALLS: u64 = 1_000_000;
    /// The most client processes.
    pub const MAX_PROCESSES: u32 = 1024;
    /// The most slots.
    pub const MAX_SLOTS: u32 = 1_000_000;
    /// The longest service time.
    pub const MAX_SERVICE: Duration = Duration::from_secs(60);
    /// Attempts after which a run stops, calls still open left unfinished.
    pub const MAX_ATTEMPTS: u64 = 10_000_000;
    /// Simulated time after `duration` at which a run stops, calls still
    /// open left unfinished.
    pub const HORIZON: Duration = Duration::from_secs(3600);

    /// The calls per millisecond the dependency serves at most.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::Slow::default().capacity(), 2.0);
    /// ```
    pub fn capacity(&self) -> f64 {
        f64::from(self.slots) / (self.service.as_secs_f64() * 1000.0).max(1.0)
    }

    fn check(&self) -> Result<(), SimulateError> {
        let mut p = Problems::default();
        p.require(
            self.load.is_finite() && self.load > 0.0 && self.load <= Self::MAX_LOAD,
            "load",
            "must be above 0 and at most 10000 calls per millisecond",
            format!(
                "set the calls per millisecond the fleet makes (got {})",
                self.load
            ),
        );
        p.require(
            self.duration >= Duration::from_millis(1) && self.duration <= Self::MAX_DURATION,
            "duration",
            "must be from 1ms to 1h",
            "set how long new calls arrive, e.g. 10s".to_owned(),
        );
        let calls = self.load * self.duration.as_secs_f64() * 1000.0;
        p.require(
            calls.is_nan() || calls <= Self::MAX_CALLS as f64,
            "load",
            "times duration must be at most 1000000 calls",
            format!("lower the load or the duration (they make about {calls:.0} calls)"),
        );
        p.require(
            (1..=Self::MAX_PROCESSES).contains(&self.processes),
            "processes",
            "must be from 1 to 1024",
            "set the client processes, each with its own limit".to_owned(),
        );
        p.require(
            (1..=Self::MAX_SLOTS).contains(&self.slots),
            "slots",
            "must be from 1 to 1000000",
            "set the calls the dependency serves at once".to_owned(),
        );
        p.require(
            self.service >= Duration::from_millis(1) && self.service <= Self::MAX_SERVICE,
            "service",
            "must be from 1ms to 1m",
            "set the time one call takes at the dependency, e.g. 10ms".to_owned(),
        );
        SimulateError::check("slow", p.into_vec())
    }
}
