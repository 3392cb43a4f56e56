//! A fleet breaker's host side (feature `redis`): one breaker shared by
//! every process through Redis, on the fleet budget's link
//! ([`crate::fleet`]'s round-trip thread, its fail-open and resume).
//!
//! **The store.** The breaker is one hash, `{retry-breaker:NAME}`, changed
//! only by `fleet/breaker.lua`, whose transitions mirror the local ones
//! (the same rules, checked on the same scenario vectors): attempts and
//! failures are counted over the window on Redis's clock (`TIME`), and the
//! state (closed, open until a time, half-open with probes leased) is kept
//! there, so every host sees the same one.
//!
//! **No call waits on Redis.** Every `refresh` (sooner when a call asks for
//! a probe) the host's thread sends the attempts counted since the last
//! round trip and the probes' answers, and gets back the fleet's state
//! (its break's end turned into this host's clock) and the probes leased to
//! it. A call reads that state from an atomic word; in half-open it sends
//! only if it takes a probe this host holds a lease for, and is otherwise
//! refused (told to ask again after the next round trip, or after
//! `open_for` when every probe place in the fleet is out). A host with
//! leases but no call asking for them in two rounds gives them back, so
//! the places go where the calls are. The local breaker keeps counting all
//! along; while the fleet decides it makes no transition of its own.
//!
//! **Bounds.** With `H` hosts, `refresh` r, round-trip `timeout` t, while
//! Redis answers:
//!
//! ```text
//! probes sent per half-open period  ≤ probes
//! attempts sent in an open period   ≤ Σ over hosts h of (in_flight_h + rate_h × (r + t))
//! ```
//!
//! - Probes: each probe is a place leased by the script, which leases at
//!   most `probes − out` and counts every lease in `out`; only a place given
//!   back (a lease unused, or a probe cancelled — which may have been
//!   sent, as a local breaker's cancelled probe is), or one unanswered for
//!   `open_for` (its host may have died; that starts a new half-open
//!   period), is leased again. So a half-open period sends at most `probes`
//!   probes plus those cancelled, whatever the number of hosts, where `H`
//!   local breakers would send `H × probes`.
//! - Attempts while open: the script opens the breaker at the round trip
//!   that brings the tripping failure. A host sends attempts only while its
//!   view says closed, and its next round trip starts at most `r` later and
//!   ends within `t` (or the host fails open). So after the opening, host
//!   `h` sends at most the attempts it begins in `r + t` (`rate_h × (r + t)`)
//!   and those already in flight. A local breaker, by contrast, sends
//!   attempts until its own window trips, on every host.
//!
//! **When Redis fails.** A round trip that errs or takes longer than
//! `timeout` makes the host fall back to its local breaker, which takes the
//! fleet's last state (open until the same time; half-open becomes a local
//! half-open with its own probes; closed keeps its own counts), says so once,
//! and says so again when the fleet breaker resumes. While failing open the
//! fleet sends up to `H × probes` probes per half-open period. The counts and
//! answers of a failed round trip are dropped (the local window has them).

use super::state::{Phase, Word};
use super::{
    BreakerOpen, BreakerState, CircuitBreaker, Probe, Ticket, build::Settings, ms_since, said,
};
use crate::fleet::{FleetOptions, FleetState, Health, Round, spawn};
use crate::rng::JitterRng;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
    totals: [AtomicU64; 2],
    probes_leased: AtomicU64,
    attempts_sent: AtomicU64,
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
    #[inline]
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
            Phase::Closed { .. } => {
                return Ok(Ticket {
                    began: now,
                    probe: None,
                });
            }
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
                let (p, n) = (held >> 32, held & 0xFFFF_FFFF);
                (p == u64::from(period) && n > 0).then(|| held - 1)
            });
        if took.is_ok() {
            let probe = Probe {
                breaker: Some(Arc::clone(breaker)),
                period,
                fleet: true,
            };
            return Ok(Ticket {
                began: now,
                probe: Some(probe),
            });
        }
        // Ask for a lease now rather than at the next refresh.
        s.demand.fetch_add(1, Ordering::Relaxed);
        s.health.wake.notify_one();
        let (state, retry_in) = match view.phase() {
            Phase::HalfOpen { out, .. } if out >= s.settings.probes => {
                (BreakerState::HalfOpen, s.settings.open_for)
            }
            Phase::HalfOpen { .. } => (BreakerState::HalfOpen, s.health.options.refresh()),
            _ => (BreakerState::Open, s.health.options.refresh()),
        };
        Err(breaker.refusal(state, retry_in))
    }

    /// A closed attempt's outcome, for the next round trip.
    pub(super) fn counted(&self, failed: bool) {
        self.shared.attempts.fetch_add(1, Ordering::Relaxed);
        if failed {
            self.shared.failures.fetch_add(1, Ordering::Relaxed);
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
                let a = if a >> 48 == u64::from(period) { a } else { u64::from(period) << 48 };
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
            probes_held: if held >> 32 == u64::from(view.period()) {
                held & 0xFFFF_FFFF
            } else {
                0
            },
            probes_leased: s.probes_leased.load(Ordering::Relaxed),
            attempts_sent: s.attempts_sent.load(Ordering::Relaxed),
        }
    }

    /// The fleet window's attempts and failures at the last round trip.
    pub(super) fn totals(&self) -> (u64, u64) {
        let t = &self.shared.totals;
        (t[0].load(Ordering::Relaxed), t[1].load(Ordering::Relaxed))
    }
}

/// What a round trip took: closed attempts and failures (counted in the
/// view's period) and the probe answers.
struct Taken {
    attempts: u64,
}

impl Round for Shared {
    type Taken = Taken;
    type Reply = Vec<u64>;
    const SCRIPT: &'static str = include_str!("../fleet/breaker.lua");
    const WHAT: &'static str = "breaker";

    fn health(&self) -> &Health {
        &self.health
    }

    fn key(&self) -> String {
        self.health.options.breaker_key()
    }

    fn take(&self, invocation: &mut redis::ScriptInvocation<'_>) -> Taken {
        let view = Word(self.view.load(Ordering::Acquire));
        let period = u64::from(view.period());
        let attempts = self.attempts.swap(0, Ordering::AcqRel);
        let failures = self.failures.swap(0, Ordering::AcqRel).min(attempts);
        let answers = self.answers.swap(0, Ordering::AcqRel);
        let answers = if answers >> 48 == period { answers } else { 0 };
        let field = |shift: u32| (answers >> shift) & 0xFFFF;
        let demand = self.demand.swap(0, Ordering::AcqRel);
        let wanting = demand.max(self.demand_last.swap(demand, Ordering::AcqRel));
        let held = self.held.load(Ordering::Acquire);
        let holding = if held >> 32 == period { held & 0xFFFF_FFFF } else { 0 };
        // Leases no call asked for in two rounds go back to the fleet.
        let unused = if wanting == 0
            && holding > 0
            && self
                .held
                .compare_exchange(held, period << 32, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            holding
        } else {
            0
        };
        let probes = u64::from(self.settings.probes);
        let wanted = wanting.min(probes).saturating_sub(holding);
        let s = &self.settings;
        let sample = JitterRng::from_seed(self.seed).sample(u32::from(view.period()));
        invocation
            .arg(period)
            .arg(attempts)
            .arg(failures)
            .arg(period)
            .arg(field(SUCCEEDED))
            .arg(field(FAILED))
            .arg(field(GIVEN_BACK) + unused)
            .arg(wanted)
            .arg(s.failure_ratio)
            .arg(s.min_calls)
            .arg(u64::try_from(s.window.as_micros()).unwrap_or(u64::MAX))
            .arg(s.open_for.as_secs_f64() * 1000.0)
            .arg(s.max_open_for.as_secs_f64() * 1000.0)
            .arg(s.open_jitter)
            .arg(s.probes)
            .arg(sample.as_f64())
            .arg("");
        Taken { attempts }
    }

    fn answered(&self, taken: Taken, reply: Vec<u64>) {
        let [phase, trips, period, remaining, out, ok, granted, attempts, failures] = reply[..]
        else {
            return self.unanswered(taken);
        };
        let now = Instant::now();
        let period = (period & 0xFF) as u8;
        let phase = match phase {
            0 => Phase::Closed { from: 0 },
            1 => Phase::Open {
                until_ms: ms_since(self.origin, now).saturating_add(remaining),
            },
            _ => Phase::HalfOpen {
                out: u32::try_from(out).unwrap_or(u32::MAX),
                ok: u32::try_from(ok).unwrap_or(u32::MAX),
            },
        };
        let next = Word::at(period, u32::try_from(trips).unwrap_or(u32::MAX), phase);
        let before = Word(self.view.swap(next.0, Ordering::AcqRel));
        let _ = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                let kept = if held >> 32 == u64::from(period) { held & 0xFFFF_FFFF } else { 0 };
                Some(u64::from(period) << 32 | kept.saturating_add(granted).min(0xFFFF_FFFF))
            });
        self.totals[0].store(attempts, Ordering::Relaxed);
        self.totals[1].store(failures, Ordering::Relaxed);
        self.probes_leased.fetch_add(granted, Ordering::Relaxed);
        self.attempts_sent.fetch_add(taken.attempts, Ordering::Relaxed);
        if before.period() != next.period() || before.phase().state() != next.phase().state() {
            self.said_change(before, next, attempts, failures, Duration::from_millis(remaining));
        }
    }

    fn unanswered(&self, _taken: Taken) {
        if self.health.state() == FleetState::Fleet {
            self.fallen.store(true, Ordering::Release);
        }
    }

    fn said(&self, failing: bool, message: &str) {
        let fleet_state = self.view().phase().state().as_str();
        let message = if failing {
            message.to_owned()
        } else {
            format!("{message} (the fleet's state: {fleet_state})")
        };
        say_warning!(
            message,
            breaker = self.name.as_deref(),
            state = (if failing { "failing_open" } else { "fleet" }),
            fleet_state = fleet_state
        );
    }
}

impl Shared {
    fn view(&self) -> Word {
        Word(self.view.load(Ordering::Acquire))
    }

    /// Says the fleet's change from `before` to `next`, once on this host.
    fn said_change(&self, before: Word, next: Word, attempts: u64, failures: u64, open: Duration) {
        use BreakerState::{Closed, HalfOpen, Open};
        let herald = said::Herald {
            name: self.name.as_deref(),
            settings: &self.settings,
            fleet: true,
        };
        match (before.phase().state(), next.phase().state()) {
            (Closed, Open) => herald.opened(failures, attempts, open),
            (Open, HalfOpen) => herald.half_open(),
            (HalfOpen | Open, Open) => herald.reopened(open),
            (HalfOpen, Closed) => herald.closed(),
            // A fresh half-open period (places taken back) or a closed
            // period after one this host never saw: nothing to say.
            (HalfOpen, HalfOpen) | (Closed, Closed) => {}
            (from, to) => herald.jumped(from, to),
        }
    }
}

