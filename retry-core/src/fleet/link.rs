//! A host's side of a fleet budget: the lease a retry takes from, the calls
//! waiting to be sent, and the state of the link to Redis. Everything a call
//! touches is an atomic; the round trips happen on the refill thread.

use super::FleetOptions;
use super::refill;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Whether a fleet budget is deciding, or its host's local budget is.
///
/// ```
/// assert_eq!(retrykit_core::fleet::FleetState::FailingOpen.as_str(), "failing_open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FleetState {
    /// No round trip has finished yet: the local budget decides meanwhile.
    #[default]
    Connecting,
    /// Redis answers: retries come from the fleet's lease.
    Fleet,
    /// Redis failed or was too slow: the local budget decides until it answers.
    FailingOpen,
}

impl FleetState {
    /// A short name, for messages and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            FleetState::Connecting => "connecting",
            FleetState::Fleet => "fleet",
            FleetState::FailingOpen => "failing_open",
        }
    }

    /// The state of code `state as u8` (the variants' order).
    const fn from_u8(n: u8) -> FleetState {
        match n {
            1 => FleetState::Fleet,
            2 => FleetState::FailingOpen,
            _ => FleetState::Connecting,
        }
    }
}

/// What a fleet budget's link has done so far. Counters are added in minor
/// releases (`#[non_exhaustive]`).
///
/// ```
/// let s = retrykit_core::fleet::FleetStatus::default();
/// assert_eq!(s.state, retrykit_core::fleet::FleetState::Connecting);
/// assert_eq!(s.fallbacks, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FleetStatus {
    /// Who decides now.
    pub state: FleetState,
    /// Times the host fell back to its local budget.
    pub fallbacks: u64,
    /// Times the fleet budget resumed after a fall-back.
    pub recoveries: u64,
    /// Retries leased from Redis in all.
    pub leased: u64,
    /// Calls recorded in Redis in all.
    pub calls_sent: u64,
    /// Retries the lease holds now.
    pub lease: u64,
}

/// A link's health, shared by every kind of fleet link (budget, breaker):
/// where the store is, who decides now, how often it fell back and resumed,
/// and how a call wakes the round-trip thread early.
pub(crate) struct Health {
    pub(crate) options: FleetOptions,
    state: AtomicU8,
    fallbacks: AtomicU64,
    recoveries: AtomicU64,
    /// Wakes the round-trip thread before its next refresh.
    pub(crate) wake: tokio::sync::Notify,
}

impl Health {
    pub(crate) fn new(options: FleetOptions) -> Health {
        Health {
            options,
            state: AtomicU8::new(0),
            fallbacks: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            wake: tokio::sync::Notify::new(),
        }
    }

    pub(crate) fn state(&self) -> FleetState {
        FleetState::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Sets the state, counting a fall-back or a recovery; the state before.
    pub(crate) fn set_state(&self, state: FleetState) -> FleetState {
        let before = FleetState::from_u8(self.state.swap(state as u8, Ordering::AcqRel));
        match (before, state) {
            (FleetState::FailingOpen, FleetState::Fleet) => {
                self.recoveries.fetch_add(1, Ordering::Relaxed);
            }
            (b, FleetState::FailingOpen) if b != FleetState::FailingOpen => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        before
    }

    /// Times the host fell back to its local control, and times the fleet
    /// one resumed.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.fallbacks.load(Ordering::Relaxed),
            self.recoveries.load(Ordering::Relaxed),
        )
    }
}

/// The state shared by a budget's calls and its refill thread.
pub(super) struct Shared {
    pub(super) health: Health,
    pub(super) ratio: f64,
    pub(super) min_per_sec: f64,
    pub(super) window: std::time::Duration,
    pub(super) lease: AtomicU64,
    pub(super) pending_calls: AtomicU64,
    /// Calls sent with the last round trip (the lease follows the larger of
    /// the last two rounds').
    pub(super) calls_last_round: AtomicU64,
    pub(super) leased: AtomicU64,
    pub(super) calls_sent: AtomicU64,
}

/// A host's link to its fleet budget. Dropping it stops the refill thread.
pub(crate) struct FleetLink {
    shared: Arc<Shared>,
}

impl fmt::Debug for FleetLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetLink")
            .field("name", &self.shared.health.options.name())
            .field("store", &self.shared.health.options.store_shown())
            .field("state", &self.shared.health.state())
            .finish_non_exhaustive()
    }
}

impl FleetLink {
    /// Starts the refill thread for a budget of these settings.
    pub(crate) fn start(
        options: FleetOptions,
        ratio: f64,
        min_per_sec: f64,
        window: std::time::Duration,
    ) -> std::io::Result<FleetLink> {
        let shared = Arc::new(Shared {
            health: Health::new(options),
            ratio,
            min_per_sec,
            window,
            lease: AtomicU64::new(0),
            pending_calls: AtomicU64::new(0),
            calls_last_round: AtomicU64::new(0),
            leased: AtomicU64::new(0),
            calls_sent: AtomicU64::new(0),
        });
        refill::spawn(&shared)?;
        Ok(FleetLink { shared })
    }

    /// The options the link was started with.
    pub(crate) fn options(&self) -> &FleetOptions {
        &self.shared.health.options
    }

    /// Records one call, to be sent with the next round trip.
    pub(crate) fn record_call(&self) {
        self.shared.pending_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The fleet's verdict on one retry: `Some(granted)` while the fleet
    /// decides, `None` when the local budget must (no round trip has
    /// succeeded yet, or Redis failed). Never waits.
    pub(crate) fn try_take(&self) -> Option<bool> {
        if self.shared.health.state() != FleetState::Fleet {
            return None;
        }
        let taken = self
            .shared
            .lease
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        if !taken {
            // Ask for a top-up now rather than at the next refresh.
            self.shared.health.wake.notify_one();
        }
        Some(taken)
    }

    /// The link's counters and state.
    pub(crate) fn status(&self) -> FleetStatus {
        let s = &self.shared;
        let (fallbacks, recoveries) = s.health.counts();
        FleetStatus {
            state: s.health.state(),
            fallbacks,
            recoveries,
            leased: s.leased.load(Ordering::Relaxed),
            calls_sent: s.calls_sent.load(Ordering::Relaxed),
            lease: s.lease.load(Ordering::Relaxed),
        }
    }
}

/// The budget's round trip (`sync.lua`): sends the calls recorded since the
/// last one and tops the lease up.
impl refill::Round for Shared {
    type Taken = u64;
    type Reply = (u64, u64, u64);
    const SCRIPT: &'static str = include_str!("sync.lua");
    const WHAT: &'static str = "budget";

    fn health(&self) -> &Health {
        &self.health
    }

    fn key(&self) -> String {
        self.health.options.key()
    }

    fn take(&self, invocation: &mut redis::ScriptInvocation<'_>) -> u64 {
        let calls = self.pending_calls.swap(0, Ordering::AcqRel);
        let last = self.calls_last_round.swap(calls, Ordering::AcqRel);
        let wanted = self
            .lease_target(calls.max(last))
            .saturating_sub(self.lease.load(Ordering::Acquire));
        invocation
            .arg(calls)
            .arg(wanted)
            .arg(self.ratio)
            .arg(self.min_per_sec * self.window.as_secs_f64())
            .arg(u64::try_from(self.window.as_micros()).unwrap_or(u64::MAX));
        calls
    }

    fn answered(&self, calls: u64, (granted, _, _): (u64, u64, u64)) {
        self.lease.fetch_add(granted, Ordering::AcqRel);
        self.leased.fetch_add(granted, Ordering::Relaxed);
        self.calls_sent.fetch_add(calls, Ordering::Relaxed);
    }

    fn unanswered(&self, calls: u64) {
        // The calls stay pending for the next round trip; the lease is kept
        // too (it was granted), the local budget decides.
        self.pending_calls.fetch_add(calls, Ordering::AcqRel);
    }

    fn said(&self, failing: bool, message: &str) {
        crate::observe::emit(crate::observe::Event::FleetFailingOpen {
            budget: self.health.options.name(),
            failing,
        });
        say_warning!(
            message,
            budget = self.health.options.name(),
            state = (if failing { "failing_open" } else { "fleet" })
        );
    }
}

impl Shared {
    /// The lease to hold: `clamp(ceil(ratio × calls per refresh + min_per_sec ×
    /// refresh), 1, max_lease)` (the module doc's bound rests on it).
    fn lease_target(&self, calls_per_refresh: u64) -> u64 {
        let refresh = self.health.options.refresh().as_secs_f64();
        let want = self.ratio * calls_per_refresh as f64 + self.min_per_sec * refresh;
        let cap = u64::from(self.health.options.max_lease());
        // `as` saturates a huge or NaN float; the clamp then bounds it.
        (want.ceil() as u64).clamp(1, cap)
    }
}
