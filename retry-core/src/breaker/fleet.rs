//! A fleet breaker's host side (feature `redis`): one breaker shared by
//! every process through Redis, on the fleet budget's link
//! ([`crate::fleet`]'s round-trip thread, its fail-open and resume).
//!
//! The design (store, leases, bounds, fall-back) is in the [`crate::fleet`]
//! module docs. Here: the fleet's state as an atomic [`Word`] that calls
//! read (its period is the fleet's; an open break's end is in this host's
//! milliseconds), the probe and release places leased to this host, and the
//! counts and answers waiting for the next round trip.

use super::state::{Phase, Word};
use super::{BreakerOpen, BreakerState, CircuitBreaker, Ticket, build::Settings};
use crate::fleet::{FleetOptions, FleetState, Health, spawn};
use retrykit_schema::keys::Key;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// A fleet breaker's link, as its host sees it.
///
/// ```
/// use retrykit_core::breaker::{BreakerState, CircuitBreaker};
/// use retrykit_core::fleet::{FleetOptions, FleetState};
/// // Nothing listens on port 1: the host decides alone, and says which.
/// let b = CircuitBreaker::builder().name("db").build().unwrap()
///     .with_fleet(FleetOptions::new("db", "redis://127.0.0.1:1/")).unwrap();
/// let status = b.fleet_status().unwrap();
/// assert_ne!(status.link, FleetState::Fleet);
/// assert_eq!(status.state, BreakerState::Closed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerFleetStatus {
    /// Who decides: the fleet (Redis answers) or this host's local breaker.
    pub link: FleetState,
    /// Times the host fell back to its local breaker.
    pub fallbacks: u64,
    /// Times the fleet breaker resumed after a fall-back.
    pub recoveries: u64,
    /// The fleet's state at the last round trip.
    pub state: BreakerState,
    /// The fleet's trips in a row at the last round trip.
    pub trips: u32,
    /// Attempts in the fleet's window at the last round trip (while closed).
    pub attempts: u64,
    /// Of those, failures.
    pub failures: u64,
    /// Probe places leased to this host and not used yet.
    pub probes_held: u64,
    /// Probe places leased to this host in all.
    pub probes_leased: u64,
    /// Attempts this host counted in Redis in all.
    pub attempts_sent: u64,
    /// Whether the fleet was releasing the calls it held back after a
    /// close, at the last round trip.
    pub releasing: bool,
    /// The fleet's release rate at the last round trip, in calls per
    /// second (0 when not releasing).
    pub release_per_sec: u64,
    /// Release places leased to this host in all.
    pub release_leased: u64,
}

/// A host's link to its fleet breaker. Dropping it stops the thread.
pub(super) struct FleetBreaker {
    shared: Arc<Shared>,
}

impl fmt::Debug for FleetBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetBreaker")
            .field("store", &self.shared.health.options.store_shown())
            .field("link", &self.shared.health.state())
            .finish_non_exhaustive()
    }
}

/// What calls and the round-trip thread share.
struct Shared {
    health: Health,
    settings: Settings,
    name: Option<Arc<str>>,
    seed: Option<u64>,
    /// The breaker's origin: the view's times are milliseconds since it.
    origin: Instant,
    /// The fleet's state as a [`Word`] (its period is the fleet's).
    view: AtomicU64,
    /// Probe places leased to this host: the period (bits 32..) and count.
    held: AtomicU64,
    /// Closed attempts and failures since the last round trip.
    attempts: AtomicU64,
    failures: AtomicU64,
    /// Probe answers since the last round trip: period (bits 48..), then
    /// successes, failures and places given back, 16 bits each.
    answers: AtomicU64,
    /// Calls refused for want of a probe lease, this round and the last.
    demand: AtomicU64,
    demand_last: AtomicU64,
    /// Set when the host falls back while the fleet decided: the next call
    /// hands the fleet's last state to the local breaker.
    fallen: AtomicBool,
    /// Whether the fleet releases (the last round trip's word).
    releasing: AtomicBool,
    /// The fleet's release rate, in calls per 1000 s.
    release_rate: AtomicU64,
    /// Release places leased to this host and not used yet.
    places: AtomicU64,
    /// Calls refused for want of a release place since the last round trip.
    places_demand: AtomicU64,
    /// Release answers since the last round trip: successes, throttled.
    released: [AtomicU64; 2],
    /// Release refusals so far: numbers their spread's draws.
    draws: AtomicU32,
    release_leased: AtomicU64,
    totals: [AtomicU64; 2],
    probes_leased: AtomicU64,
    attempts_sent: AtomicU64,
}

/// The probe places a `held` word keeps for `period` (none when the word
/// is of another period).
fn held_in(held: u64, period: u64) -> u64 {
    if held >> 32 == period {
        held & 0xFFFF_FFFF
    } else {
        0
    }
}

const SUCCEEDED: u32 = 32;
const FAILED: u32 = 16;
const GIVEN_BACK: u32 = 0;

impl FleetBreaker {
    pub(super) fn start(
        options: FleetOptions,
        breaker: &CircuitBreaker,
    ) -> std::io::Result<FleetBreaker> {
        let shared = Arc::new(Shared {
            health: Health::new(options),
            settings: breaker.settings.clone(),
            name: breaker.name.clone(),
            seed: breaker.seed,
            origin: breaker.origin,
            view: AtomicU64::new(0),
            held: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            answers: AtomicU64::new(0),
            demand: AtomicU64::new(0),
            demand_last: AtomicU64::new(0),
            fallen: AtomicBool::new(false),
            releasing: AtomicBool::new(false),
            release_rate: AtomicU64::new(0),
            places: AtomicU64::new(0),
            places_demand: AtomicU64::new(0),
            released: Default::default(),
            draws: AtomicU32::new(0),
            release_leased: AtomicU64::new(0),
            totals: Default::default(),
            probes_leased: AtomicU64::new(0),
            attempts_sent: AtomicU64::new(0),
        });
        spawn(&shared)?;
        Ok(FleetBreaker { shared })
    }

    pub(super) fn options(&self) -> &FleetOptions {
        &self.shared.health.options
    }

    /// Whether the fleet decides now (Redis answered the last round trip).
    pub(super) fn deciding(&self) -> bool {
        self.shared.health.state() == FleetState::Fleet
    }

    /// The fleet's state as last seen.
    pub(super) fn view(&self) -> Word {
        Word(self.shared.view.load(Ordering::Acquire))
    }

    /// The fleet's state once, after the host fell back from it.
    pub(super) fn take_fallen(&self) -> Option<Word> {
        let s = &self.shared;
        (s.fallen.load(Ordering::Relaxed) && s.fallen.swap(false, Ordering::AcqRel))
            .then(|| self.view())
    }

    /// The fleet's verdict on an attempt at `now` (see the module docs).
    pub(super) fn try_acquire(
        &self,
        breaker: &Arc<CircuitBreaker>,
        now: Instant,
    ) -> Result<Ticket, BreakerOpen> {
        let s = &self.shared;
        let view = self.view();
        match view.phase() {
            Phase::Closed { .. } => return self.released(breaker, now),
            Phase::Open { until_ms } if breaker.ms(now) < until_ms => {
                let retry_in = breaker.until(until_ms).saturating_duration_since(now);
                return Err(breaker.refusal(BreakerState::Open, retry_in));
            }
            _ => {}
        }
        let period = view.period();
        let took = s
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held_in(held, u64::from(period)) > 0).then(|| held - 1)
            });
        if took.is_ok() {
            return Ok(Ticket::probe(breaker, now, period, true));
        }
        // Ask for a lease now rather than at the next refresh.
        s.demand.fetch_add(1, Ordering::Relaxed);
        s.health.wake.notify_one();
        let (state, retry_in) = match view.phase() {
            Phase::HalfOpen { out, .. } if out >= s.settings.probes => (
                BreakerState::HalfOpen,
                s.settings.release_ramp.min(s.settings.probe_every),
            ),
            Phase::HalfOpen { .. } => (BreakerState::HalfOpen, s.health.options.refresh()),
            _ => (BreakerState::Open, s.health.options.refresh()),
        };
        Err(breaker.refusal(state, retry_in))
    }

    /// A closed fleet's verdict on an attempt at `now`: while the fleet
    /// releases, a place leased to this host, or a refusal that asks for
    /// one and says to come back after the next round trip, spread over a
    /// `release_ramp`.
    fn released(&self, breaker: &CircuitBreaker, now: Instant) -> Result<Ticket, BreakerOpen> {
        let s = &self.shared;
        if !s.releasing.load(Ordering::Acquire) {
            breaker.stop_release();
            return Ok(Ticket::closed(now));
        }
        // The answers of the release are the release's (release_trip_on).
        breaker.releasing.store(true, Ordering::Release);
        let took = s
            .places
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if took.is_ok() {
            return Ok(Ticket::closed(now));
        }
        s.places_demand.fetch_add(1, Ordering::Relaxed);
        s.health.wake.notify_one();
        let n = s.draws.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        let seed = s.seed.map(|seed| seed ^ super::release::SPREAD_STREAM);
        let draw = crate::rng::sample(seed, n).as_f64().clamp(0.0, 1.0);
        let retry_in = s.health.options.refresh() + s.settings.release_ramp.mul_f64(draw);
        Err(breaker.refusal(BreakerState::Closed, retry_in))
    }

    /// An attempt of the fleet's release was answered: a success or a
    /// throttled answer, for the fleet's rate at the next round trip.
    pub(super) fn release_answered(&self, ok: bool) {
        self.shared.released[usize::from(!ok)].fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the fleet was releasing at the last round trip.
    pub(super) fn fleet_releasing(&self) -> bool {
        self.shared.releasing.load(Ordering::Acquire)
    }

    /// A closed attempt's outcome, for the next round trip. When the
    /// fleet's window as last seen, with what this host has not sent yet,
    /// meets the opening rule, that round trip goes at once rather than at
    /// the next refresh: the fleet opens within a round trip of the
    /// failures that open it, as a local breaker opens on the failure itself.
    pub(super) fn counted(&self, failed: bool) {
        let s = &self.shared;
        let unsent = s.attempts.fetch_add(1, Ordering::Relaxed) + 1;
        if !failed {
            return;
        }
        let unsent_failures = s.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let (attempts, failures) = self.totals();
        if s.settings
            .trips(attempts + unsent, failures + unsent_failures)
        {
            s.health.wake.notify_one();
        }
    }

    /// A fleet probe of `period` answered (`Some(failed)`) or given back.
    pub(super) fn answered(&self, period: u8, failed: Option<bool>) {
        let shift = match failed {
            Some(false) => SUCCEEDED,
            Some(true) => FAILED,
            None => GIVEN_BACK,
        };
        let _ = self
            .shared
            .answers
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |a| {
                // Answers of an earlier period are stale: Redis has moved on.
                let a = if a >> 48 == u64::from(period) {
                    a
                } else {
                    u64::from(period) << 48
                };
                let n = (a >> shift) & 0xFFFF;
                Some(if n < 0xFFFF { a + (1 << shift) } else { a })
            });
    }

    pub(super) fn status(&self) -> BreakerFleetStatus {
        let s = &self.shared;
        let view = self.view();
        let (fallbacks, recoveries) = s.health.counts();
        let held = s.held.load(Ordering::Relaxed);
        BreakerFleetStatus {
            link: s.health.state(),
            fallbacks,
            recoveries,
            state: view.phase().state(),
            trips: view.trips(),
            attempts: s.totals[0].load(Ordering::Relaxed),
            failures: s.totals[1].load(Ordering::Relaxed),
            probes_held: held_in(held, u64::from(view.period())),
            probes_leased: s.probes_leased.load(Ordering::Relaxed),
            attempts_sent: s.attempts_sent.load(Ordering::Relaxed),
            releasing: s.releasing.load(Ordering::Relaxed),
            release_per_sec: s.release_rate.load(Ordering::Relaxed) / 1000,
            release_leased: s.release_leased.load(Ordering::Relaxed),
        }
    }

    /// The fleet window's attempts and failures at the last round trip.
    pub(super) fn totals(&self) -> (u64, u64) {
        let t = &self.shared.totals;
        (t[0].load(Ordering::Relaxed), t[1].load(Ordering::Relaxed))
    }
}

/// The fleet side of [`CircuitBreaker`]'s API.
impl CircuitBreaker {
    /// Shares this breaker with every host using the same name and store
    /// (feature `redis`; `scope = "fleet"` in a file): state, counts and
    /// probes are kept in Redis, synced by a background thread every
    /// [`refresh`](crate::fleet::FleetOptions::refresh); no call waits for
    /// it, and while it fails this breaker decides alone (the
    /// [`fleet`](crate::fleet) module docs give the bounds).
    ///
    /// ```
    /// use retrykit_core::{breaker::CircuitBreaker, fleet::FleetOptions};
    /// let err = CircuitBreaker::builder().name("db").build().unwrap()
    ///     .with_fleet(FleetOptions::new("db", "")).unwrap_err();
    /// assert_eq!(err.problems()[0].field, "store");
    /// assert!(err.problems()[0].fix.contains("[breakers.db]"), "{}", err.problems()[0].fix);
    /// ```
    ///
    /// # Errors
    /// A [`PolicyError`](crate::PolicyError) naming each bad option (a
    /// missing or non-Redis `store`, a bad `timeout` or `refresh`), or the
    /// background thread that could not start.
    pub fn with_fleet(
        mut self,
        options: crate::fleet::FleetOptions,
    ) -> Result<Self, crate::PolicyError> {
        let (kind, store) = (crate::PolicyErrorKind::Breaker, Key::BreakerStore);
        crate::PolicyError::check(kind, self.name(), options.problems("breaker"))?;
        let link = FleetBreaker::start(options, &self)
            .map_err(|e| crate::fleet::unstarted(kind, self.name(), store, &e))?;
        self.fleet = Some(link);
        Ok(self)
    }

    /// The fleet breaker's options; `None` for a local breaker.
    pub fn fleet_options(&self) -> Option<&crate::fleet::FleetOptions> {
        self.fleet.as_ref().map(FleetBreaker::options)
    }

    /// The fleet breaker's link and state as its last round trip saw them;
    /// `None` for a local breaker.
    pub fn fleet_status(&self) -> Option<BreakerFleetStatus> {
        self.fleet.as_ref().map(FleetBreaker::status)
    }

    /// The fleet link, while the fleet decides.
    pub(super) fn deciding_fleet(&self) -> Option<&FleetBreaker> {
        self.fleet.as_ref().filter(|f| f.deciding())
    }

    /// The host fell back from the fleet, whose last state was `view`: the
    /// local breaker takes it on (open until the same time; half-open
    /// becomes open until now, so its next attempt is a local probe;
    /// closed keeps the local window's own counts, and a fleet's release
    /// goes on as this host's own, from its first step).
    pub(super) fn fall_back(&self, view: Word, now: Instant) {
        let word = self.word();
        if matches!(view.phase(), Phase::Closed { .. })
            && self
                .fleet
                .as_ref()
                .is_some_and(FleetBreaker::fleet_releasing)
        {
            self.start_release(now);
        }
        let next = match view.phase() {
            Phase::Closed { .. } if word.phase().state() == BreakerState::Closed => return,
            Phase::Closed { .. } => word
                .turn(Phase::Closed {
                    from: self.counts.epoch(now),
                })
                .with_trips(0),
            Phase::Open { until_ms } => {
                word.turn(Phase::Open { until_ms }).with_trips(view.trips())
            }
            Phase::HalfOpen { .. } => word
                .turn(Phase::Open {
                    until_ms: self.ms(now),
                })
                .with_trips(view.trips()),
        };
        // A call that changed the word meanwhile decided from it already.
        let _ = self.swap(word, next);
    }
}

mod round;
