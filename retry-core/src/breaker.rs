//! Circuit breakers: one control for a whole dependency, shared by every
//! policy that names it (`breaker = "broker"`). The keys and their rules
//! are in docs/policy-file.md (Circuit breakers).
//!
//! - **Opens** when at least `min_calls` attempts were counted over the
//!   sliding `window` and the share that failed reaches `failure_ratio`: for
//!   `open_for` no attempt is sent, first attempts included.
//! - **Half-opens** after the break and lets `probes` attempts through: all
//!   succeed, it closes; one fails, it opens again for twice as long (up to
//!   `max_open_for`, never longer than `probe_every`). Each break is cut by
//!   a random share of up to `open_jitter`, so a fleet's breakers do not
//!   half-open together.
//! - **Releases** after a close: held-back attempts go at one per
//!   `release_ramp`, the rate doubling every `release_ramp` while they
//!   succeed. A throttled answer cuts the rate and counts as a failure only
//!   when `release_trip_on` lists it. An attempt over the rate is refused as
//!   by an open breaker, told when a place is free. The release ends once
//!   its rate goes unused.
//!
//! A failure is an attempt whose error's class is in `trip_on` (transient,
//! timeout and throttled by default) or, with `slow_call`, one that took at
//! least that long. Any other answer, a permanent error included, is a
//! success: the dependency answered. A refused attempt, a cancelled one (a
//! dropped call, a hedge that lost its race) and a refused hedge count
//! nothing. The window is exact on every entry point: an attempt counts in
//! the slot of the time it was let through, and only the last `window`
//! judges.
//!
//! In the loop every attempt, first attempts and hedges alike, asks the
//! breaker before it is sent (the order is in docs/guarantees.md). A refused
//! attempt is not sent, uses none of the policy's attempts and takes nothing
//! from the budgets; the call waits within its deadline and the policy's
//! total wait (the sum of its schedule's longest waits), or ends with
//! [`Ending::BreakerOpen`](crate::Ending::BreakerOpen) and the error its type
//! makes of a [`BreakerOpen`]
//! ([`Classify::from_breaker_open`](crate::Classify::from_breaker_open)).
//!
//! A breaker takes no lock but during a release (a short one over its
//! rate). Each transition is made once, however many calls race for it,
//! and said once (stderr and a `warn` event of target `retry`).
//!
//! ```
//! use retrykit_core::breaker::{BreakerState, CircuitBreaker};
//! use std::sync::Arc;
//! use std::time::{Duration, Instant};
//!
//! let breaker = Arc::new(
//!     CircuitBreaker::builder().name("broker").min_calls(4).failure_ratio(0.5)
//!         .open_for(Duration::from_secs(5)).probe_every(Duration::from_secs(5))
//!         .open_jitter(0.0).build().unwrap(),
//! );
//! let now = Instant::now();
//! for _ in 0..4 {
//!     let ticket = breaker.try_acquire(now).unwrap();
//!     breaker.record(ticket, now, true);
//! }
//! assert_eq!(breaker.state(), BreakerState::Open);
//! let refused = breaker.try_acquire(now).unwrap_err();
//! // Five seconds (kept to the millisecond).
//! assert!(refused.retry_in() > Duration::from_millis(4_998) && refused.retry_in() <= Duration::from_secs(5));
//! // After the break, one probe goes through; its success closes the breaker.
//! let later = now + refused.retry_in();
//! let probe = breaker.try_acquire(later).unwrap();
//! assert!(breaker.try_acquire(later).is_err(), "only the probe goes through");
//! breaker.record(probe, later, false);
//! assert_eq!(breaker.state(), BreakerState::Closed);
//! ```

// The state is one atomic word (phase, trips, a period counter and the
// phase's payload), changed only by compare-and-swap, so a transition is
// never lost or made twice: the thread that wins it is the one that says it.
// The counts are the crate's lock-free sliding window (window.rs).
mod build;
#[cfg(feature = "redis")]
mod fleet;
mod refused;
mod release;
mod said;
mod state;
mod ticket;

pub use build::BreakerBuilder;
#[cfg(feature = "redis")]
pub use fleet::BreakerFleetStatus;
pub use refused::BreakerOpen;
pub(crate) use refused::uncarried;
pub use state::{BreakerState, BreakerStatus};
pub use ticket::Ticket;

use crate::window::Window;
use release::Release;
use state::{Phase, Word};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The window's counters: attempts counted, and of those the failures.
const ATTEMPTS: usize = 0;
const FAILURES: usize = 1;

/// A circuit breaker shared by the policies that name it (see the
/// [module docs](self)). Build one with [`CircuitBreaker::builder`].
///
/// # Examples
///
/// ```
/// use retrykit_core::{breaker::{BreakerState, CircuitBreaker}, Policy};
/// use std::sync::Arc;
/// let broker = Arc::new(CircuitBreaker::builder().name("broker").min_calls(10).build().unwrap());
/// // Every policy that guards the broker shares the one breaker.
/// let publish = Policy::builder().breaker(Some(Arc::clone(&broker))).build().unwrap();
/// let consume = Policy::builder().breaker(Some(Arc::clone(&broker))).build().unwrap();
/// assert!(Arc::ptr_eq(publish.breaker().unwrap(), consume.breaker().unwrap()));
/// assert_eq!((broker.name(), broker.state()), (Some("broker"), BreakerState::Closed));
/// ```
pub struct CircuitBreaker {
    settings: build::Settings,
    name: Option<Arc<str>>,
    /// Times in the state word are milliseconds since this instant.
    origin: Instant,
    state: AtomicU64,
    counts: Window,
    seed: Option<u64>,
    /// The fleet this breaker is shared with, when its scope is the fleet.
    #[cfg(feature = "redis")]
    fleet: Option<fleet::FleetBreaker>,
    /// Says nothing of its state changes (a simulator's breaker).
    quiet: bool,
    /// Whether a release is in progress (`release` holds it): read
    /// without the lock on every closed attempt.
    releasing: AtomicBool,
    /// The release after the last close, while it lasts.
    release: Mutex<Option<Release>>,
}

impl fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("name", &self.name)
            .field("state", &self.state())
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl CircuitBreaker {
    /// The breaker's name, when it came from a file or was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The state as last changed (an open breaker whose break is over
    /// reads open until an attempt asks it).
    pub fn state(&self) -> BreakerState {
        self.deciding_word().phase().state()
    }

    /// The state and counts now, on the default clock (tokio's with the
    /// `tokio` feature, else the system's), which the breaker's times use.
    pub fn status_now(&self) -> BreakerStatus {
        self.status(crate::window::now())
    }

    /// The state and counts at `now`: a fleet breaker's while Redis
    /// answers (the fleet's window), this process's otherwise. `now` is on
    /// the default clock ([`status_now`](Self::status_now) reads it).
    pub fn status(&self, now: Instant) -> BreakerStatus {
        let word = self.deciding_word();
        let (attempts, failures) = match word.phase() {
            Phase::Closed { from } => self.closed_totals(now, from),
            _ => (0, 0),
        };
        let open_for = match word.phase() {
            Phase::Open { until_ms } => Some(self.until(until_ms).saturating_duration_since(now)),
            _ => None,
        };
        BreakerStatus {
            state: word.phase().state(),
            trips: word.trips(),
            attempts,
            failures,
            open_for,
        }
    }

    /// Asks to send an attempt at `now`: a ticket when the breaker is
    /// closed, or half-open with a probe's place free; why not otherwise.
    /// An open breaker whose break is over half-opens here.
    ///
    /// # Errors
    /// [`BreakerOpen`] when the attempt must not be sent.
    pub fn try_acquire(self: &Arc<Self>, now: Instant) -> Result<Ticket, BreakerOpen> {
        #[cfg(feature = "redis")]
        if let Some(fleet) = &self.fleet {
            if fleet.deciding() {
                return fleet.try_acquire(self, now);
            }
            if let Some(view) = fleet.take_fallen() {
                self.fall_back(view, now);
            }
        }
        let mut word = self.word();
        loop {
            let next = match word.phase() {
                Phase::Closed { .. } => return self.released(now),
                Phase::Open { until_ms } if self.ms(now) < until_ms => {
                    let retry_in = self.until(until_ms).saturating_duration_since(now);
                    return Err(self.refusal(BreakerState::Open, retry_in));
                }
                // The break is over: this attempt is the first probe.
                Phase::Open { .. } => word.turn(Phase::HalfOpen { out: 1, ok: 0 }),
                Phase::HalfOpen { out, ok } if out < self.settings.probes => {
                    word.with(Phase::HalfOpen { out: out + 1, ok })
                }
                // The probes answer soon: ask again in a ramp step.
                Phase::HalfOpen { .. } => {
                    let retry_in = self.settings.release_ramp.min(self.settings.probe_every);
                    return Err(self.refusal(BreakerState::HalfOpen, retry_in));
                }
            };
            match self.swap(word, next) {
                Ok(()) => {
                    if word.phase().state() == BreakerState::Open {
                        self.herald().half_open();
                    }
                    return Ok(Ticket::probe(self, now, next.period(), false));
                }
                Err(seen) => word = seen,
            }
        }
    }

    /// Records the outcome of the attempt `ticket` let through, answered at
    /// `now`: `failed` when its error's class is one the breaker counts
    /// ([`counts_class`](Self::counts_class)). An attempt that took
    /// `slow_call` or longer counts as failed whatever its outcome.
    pub fn record(&self, ticket: Ticket, now: Instant, failed: bool) {
        if self.releasing.load(Ordering::Acquire) {
            self.release_answered(now, !failed, false);
        }
        self.recorded(ticket, now, failed, false);
    }

    /// [`record`](Self::record) by the error's class (`None`: it succeeded),
    /// as the loop does; during a release a throttled answer slows it and
    /// fails only when `release_trip_on` lists it.
    ///
    /// ```
    /// use retrykit_core::{Class, breaker::{BreakerState, CircuitBreaker}};
    /// use std::sync::Arc;
    /// let b = Arc::new(CircuitBreaker::builder().min_calls(1).build().unwrap());
    /// let now = std::time::Instant::now();
    /// b.record_class(b.try_acquire(now).unwrap(), now, Some(Class::THROTTLED));
    /// assert_eq!(b.state(), BreakerState::Open, "throttled counts outside a release");
    /// ```
    pub fn record_class(&self, ticket: Ticket, now: Instant, class: Option<crate::class::Class>) {
        let throttled = class == Some(crate::class::Class::THROTTLED);
        let releasing = self.releasing.load(Ordering::Acquire);
        let failed = match class {
            Some(crate::class::Class::Retryable(name)) if releasing => self.release_trips(name),
            Some(class) => self.counts_class(class),
            None => false,
        };
        if releasing {
            self.release_answered(now, class.is_none(), throttled);
        }
        self.recorded(ticket, now, failed, releasing && throttled && !failed);
    }

    /// Records an outcome; `spared` is a throttled answer the release took
    /// (not a failure, and not a success either: it is not counted).
    fn recorded(&self, mut ticket: Ticket, now: Instant, failed: bool, spared: bool) {
        let failed = failed
            || self
                .settings
                .slow_call
                .is_some_and(|slow| now.saturating_duration_since(ticket.began) >= slow);
        match ticket.probe.take() {
            Some(mut probe) => {
                // Recorded, so its place is not given back.
                probe.breaker = None;
                #[cfg(feature = "redis")]
                if probe.fleet {
                    if let Some(fleet) = &self.fleet {
                        fleet.answered(probe.period, Some(failed));
                    }
                    return;
                }
                self.probe_answered(probe.period, now, failed);
            }
            None if spared => {}
            None => self.counted(ticket.began, now, failed),
        }
    }

    /// The closed window's counts: the fleet's while it decides.
    fn closed_totals(&self, now: Instant, from: u64) -> (u64, u64) {
        #[cfg(feature = "redis")]
        if let Some(fleet) = self.deciding_fleet() {
            return fleet.totals();
        }
        self.counts.totals_from(now, from)
    }

    /// The state that decides: the fleet's while Redis answers, else this
    /// process's.
    fn deciding_word(&self) -> Word {
        #[cfg(feature = "redis")]
        if let Some(fleet) = self.deciding_fleet() {
            return fleet.view();
        }
        self.word()
    }

    /// Whether the breaker is releasing the attempts it held back (closed
    /// after a break, at a limited rate: see the [module docs](self)).
    ///
    /// ```
    /// assert!(!retrykit_core::breaker::CircuitBreaker::builder().build().unwrap().releasing());
    /// ```
    pub fn releasing(&self) -> bool {
        self.releasing.load(Ordering::Acquire)
    }

    /// Whether an error of class `class` counts as a failure (`trip_on`).
    pub fn counts_class(&self, class: crate::class::Class) -> bool {
        // `trip_on` never lists "permanent" (the builder refuses it).
        self.settings.trip_on.iter().any(|c| **c == *class.name())
    }

    /// A closed-state attempt's outcome: counted in the window at the time
    /// it began; a failure may trip the breaker.
    fn counted(&self, began: Instant, now: Instant, failed: bool) {
        self.counts.add(began, ATTEMPTS, 1);
        #[cfg(feature = "redis")]
        if let Some(fleet) = &self.fleet {
            fleet.counted(failed);
            if fleet.deciding() {
                // The fleet judges; the local window counts all along.
                if failed {
                    self.counts.add(began, FAILURES, 1);
                }
                return;
            }
        }
        if !failed {
            return;
        }
        self.counts.add(began, FAILURES, 1);
        let mut word = self.word();
        while let Phase::Closed { from } = word.phase() {
            let (attempts, failures) = self.counts.totals_from(now, from);
            if !self.settings.trips(attempts, failures) {
                return;
            }
            let trips = word.trips().saturating_add(1);
            let (next, open_for) = self.opened(word, trips, now);
            match self.swap(word, next) {
                Ok(()) => {
                    self.stop_release();
                    return self.herald().opened(failures, attempts, open_for);
                }
                Err(seen) => word = seen,
            }
        }
    }

    /// A probe's outcome: a failure opens the breaker again; the last of
    /// `probes` successes closes it. An answer from an earlier half-open
    /// period changes nothing.
    fn probe_answered(&self, period: u8, now: Instant, failed: bool) {
        let mut word = self.word();
        loop {
            let Phase::HalfOpen { out, ok } = word.phase() else {
                return;
            };
            if word.period() != period {
                return;
            }
            let next = if failed {
                let trips = word.trips().saturating_add(1);
                let (next, open_for) = self.opened(word, trips, now);
                if self.swap(word, next).is_ok() {
                    return self.herald().reopened(open_for);
                }
                word = self.word();
                continue;
            } else if ok + 1 >= self.settings.probes {
                self.counts.reset(now);
                word.turn(Phase::Closed {
                    from: self.counts.epoch(now),
                })
                .with_trips(0)
            } else {
                word.with(Phase::HalfOpen { out, ok: ok + 1 })
            };
            match self.swap(word, next) {
                Ok(()) if next.phase().state() == BreakerState::Closed => {
                    self.start_release(now);
                    return self.herald().closed();
                }
                Ok(()) => return,
                Err(seen) => word = seen,
            }
        }
    }

    /// The state after opening for the `trips`-th time in a row at `now`,
    /// and for how long.
    fn opened(&self, word: Word, trips: u32, now: Instant) -> (Word, Duration) {
        let s = &self.settings;
        let doublings = trips.saturating_sub(1).min(40);
        let full = s
            .open_for
            .saturating_mul(1 << doublings.min(31))
            .min(s.max_open_for)
            .min(s.probe_every);
        let sample = crate::rng::sample(self.seed, u32::from(word.period()));
        let cut = full.mul_f64((s.open_jitter * sample.as_f64()).clamp(0.0, 1.0));
        let open_for = full.saturating_sub(cut).max(Duration::from_millis(1));
        let until_ms = self.ms(now).saturating_add(ms_ceil(open_for));
        let next = word.turn(Phase::Open { until_ms }).with_trips(trips);
        (next, open_for)
    }

    fn word(&self) -> Word {
        Word(self.state.load(Ordering::Acquire))
    }

    fn swap(&self, seen: Word, next: Word) -> Result<(), Word> {
        self.state
            .compare_exchange(seen.0, next.0, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(Word)
    }

    /// `now` in whole milliseconds since the origin.
    fn ms(&self, now: Instant) -> u64 {
        ms_since(self.origin, now)
    }

    fn until(&self, until_ms: u64) -> Instant {
        self.origin
            .checked_add(Duration::from_millis(until_ms))
            .unwrap_or(self.origin)
    }

    /// Says state changes as this breaker makes them (not the fleet's).
    fn herald(&self) -> said::Herald<'_> {
        said::Herald {
            name: self.name(),
            settings: &self.settings,
            fleet: false,
            quiet: self.quiet,
        }
    }
}

/// `now` in whole milliseconds since `origin`.
fn ms_since(origin: Instant, now: Instant) -> u64 {
    let since = now.saturating_duration_since(origin);
    since
        .as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(since.subsec_millis()))
}

/// Whole milliseconds, rounded up.
fn ms_ceil(d: Duration) -> u64 {
    let ms = d.as_millis();
    let up = if d.subsec_nanos().is_multiple_of(1_000_000) {
        ms
    } else {
        ms + 1
    };
    u64::try_from(up).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
