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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FleetState {
    /// No round trip has finished yet: the local budget decides meanwhile.
    Connecting,
    /// Redis answers: retries come from the fleet's lease.
    Fleet,
    /// Redis failed or was too slow: the local budget decides until it answers.
    FailingOpen,
}

impl FleetState {
    /// A short name, for messages and metrics.
    ///
    /// ```
    /// assert_eq!(retrykit_core::fleet::FleetState::Fleet.as_str(), "fleet");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            FleetState::Connecting => "connecting",
            FleetState::Fleet => "fleet",
            FleetState::FailingOpen => "failing_open",
        }
    }

    const fn from_u8(n: u8) -> FleetState {
        match n {
            1 => FleetState::Fleet,
            2 => FleetState::FailingOpen,
            _ => FleetState::Connecting,
        }
    }
}

/// What a fleet budget's link has done so far.
///
/// ```
/// let s = retrykit_core::fleet::FleetStatus::default();
/// assert_eq!(s.state, retrykit_core::fleet::FleetState::Connecting);
/// assert_eq!(s.fallbacks, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

impl Default for FleetStatus {
    fn default() -> Self {
        FleetStatus {
            state: FleetState::Connecting,
            fallbacks: 0,
            recoveries: 0,
            leased: 0,
            calls_sent: 0,
            lease: 0,
        }
    }
}

/// The state shared by a budget's calls and its refill thread.
pub(super) struct Shared {
    pub(super) options: FleetOptions,
    pub(super) ratio: f64,
    pub(super) min_per_sec: f64,
    pub(super) window: std::time::Duration,
    pub(super) lease: AtomicU64,
    pub(super) pending_calls: AtomicU64,
    pub(super) state: AtomicU8,
    pub(super) fallbacks: AtomicU64,
    pub(super) recoveries: AtomicU64,
    pub(super) leased: AtomicU64,
    pub(super) calls_sent: AtomicU64,
    /// Wakes the refill thread early when a retry found the lease empty.
    pub(super) wake: tokio::sync::Notify,
}

impl Shared {
    pub(super) fn state(&self) -> FleetState {
        FleetState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub(super) fn set_state(&self, state: FleetState) -> FleetState {
        let code = match state {
            FleetState::Connecting => 0,
            FleetState::Fleet => 1,
            FleetState::FailingOpen => 2,
        };
        FleetState::from_u8(self.state.swap(code, Ordering::AcqRel))
    }
}

/// A host's link to its fleet budget. Dropping it stops the refill thread.
pub(crate) struct FleetLink {
    shared: Arc<Shared>,
}

impl fmt::Debug for FleetLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetLink")
            .field("name", &self.shared.options.name())
            .field("store", &self.shared.options.store_shown())
            .field("state", &self.shared.state())
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
            options,
            ratio,
            min_per_sec,
            window,
            lease: AtomicU64::new(0),
            pending_calls: AtomicU64::new(0),
            state: AtomicU8::new(0),
            fallbacks: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            leased: AtomicU64::new(0),
            calls_sent: AtomicU64::new(0),
            wake: tokio::sync::Notify::new(),
        });
        refill::spawn(Arc::downgrade(&shared))?;
        Ok(FleetLink { shared })
    }

    /// The options the link was started with.
    pub(crate) fn options(&self) -> &FleetOptions {
        &self.shared.options
    }

    /// Records one call, to be sent with the next round trip.
    pub(crate) fn record_call(&self) {
        self.shared.pending_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The fleet's verdict on one retry: `Some(granted)` while the fleet
    /// decides, `None` when the local budget must (no round trip has
    /// succeeded yet, or Redis failed). Never waits.
    pub(crate) fn try_take(&self) -> Option<bool> {
        if self.shared.state() != FleetState::Fleet {
            return None;
        }
        let taken = self
            .shared
            .lease
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        if !taken {
            // Ask for a top-up now rather than at the next refresh.
            self.shared.wake.notify_one();
        }
        Some(taken)
    }

    /// The link's counters and state.
    pub(crate) fn status(&self) -> FleetStatus {
        let s = &self.shared;
        FleetStatus {
            state: s.state(),
            fallbacks: s.fallbacks.load(Ordering::Relaxed),
            recoveries: s.recoveries.load(Ordering::Relaxed),
            leased: s.leased.load(Ordering::Relaxed),
            calls_sent: s.calls_sent.load(Ordering::Relaxed),
            lease: s.lease.load(Ordering::Relaxed),
        }
    }
}
