//! What the outbox holds, whichever database it lives in: an event's row,
//! its state, the outcome of one delivery, and counts per state.

use retrykit_core::OracleState;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
///
/// ```
/// assert!(examples::outbox::now_ms() > 1_600_000_000_000);
/// ```
pub fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

/// `t` in Unix milliseconds (0 before the epoch, `i64::MAX` far after it).
pub(crate) fn to_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The time `ms` Unix milliseconds name (the epoch for a negative value).
pub(crate) fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `d` in whole milliseconds, saturating.
pub(crate) fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Where an event is in its life.
///
/// ```
/// assert_eq!(examples::outbox::EventState::Dead.as_str(), "dead");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventState {
    /// Waiting to be published (now or at `next_attempt_ms`).
    Pending,
    /// The broker has it.
    Published,
    /// Its policy gave up; `last_error` says why.
    Dead,
}

impl EventState {
    /// The name stored in the table.
    ///
    /// ```
    /// assert_eq!(examples::outbox::EventState::Pending.as_str(), "pending");
    /// ```
    pub const fn as_str(&self) -> &'static str {
        match self {
            EventState::Pending => "pending",
            EventState::Published => "published",
            EventState::Dead => "dead",
        }
    }

    /// The state a stored name stands for (the schema's CHECK allows no other).
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "published" => EventState::Published,
            "dead" => EventState::Dead,
            _ => EventState::Pending,
        }
    }
}

/// One outbox event, its retry state and its lease.
///
/// ```
/// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
/// let id = store.place_order("book").unwrap();
/// let row = store.event(&id).unwrap().unwrap();
/// assert_eq!((row.scheduled_attempts, row.publish_calls, row.claims), (0, 0, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// The event's id; the broker sees it, so duplicates are identifiable.
    pub event_id: String,
    /// What is published.
    pub payload: String,
    /// Pending, published or dead.
    pub state: EventState,
    /// Times the relay took the event up on the `outbox` policy's schedule
    /// (at most that policy's `max_attempts`).
    pub scheduled_attempts: u32,
    /// Publish calls made so far: each scheduled attempt makes up to the
    /// `publish` policy's `max_attempts` calls.
    pub publish_calls: u32,
    /// The long-backoff schedule's state.
    pub oracle: OracleState,
    /// When the relay may try again (Unix ms).
    pub next_attempt_ms: i64,
    /// Time spent waiting between deliveries, in ms.
    pub total_wait_ms: i64,
    /// The last error, for dead letters and diagnostics.
    pub last_error: Option<String>,
    /// Times a relay claimed the event. With `lease_owner` it names one
    /// claim, so a relay whose lease was taken over cannot write.
    pub claims: u32,
    /// The relay holding (or that last held) the event's lease.
    pub lease_owner: Option<String>,
    /// When that lease ends (Unix ms); after it, any relay may claim the event.
    pub lease_until_ms: Option<i64>,
}

impl EventRow {
    /// The oracle's state as stored column by column.
    pub(crate) fn oracle_state(
        failures: i64,
        last_delay_ms: i64,
        total_wait_ms: i64,
        first_failure_ms: Option<i64>,
        due_ms: Option<i64>,
    ) -> OracleState {
        OracleState {
            failures: count(failures),
            last_delay: Duration::from_millis(u64::try_from(last_delay_ms).unwrap_or(0)),
            // One run per event (a success ends it): its waits so far.
            waited: Duration::from_millis(u64::try_from(total_wait_ms).unwrap_or(0)),
            first_failure: first_failure_ms.map(from_ms),
            due: due_ms.map(from_ms),
        }
    }
}

/// A stored counter as a `u32` (the schema keeps them non-negative).
pub(crate) fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// What one scheduled attempt came to, as the relay writes it back: the
/// event's new state, the publish calls it took, the oracle's new state and
/// when to try next.
///
/// ```
/// use examples::outbox::{Delivery, EventState};
/// let d = Delivery::published(1, retrykit_core::OracleState::default(), 0);
/// assert_eq!((d.state, d.calls, d.error), (EventState::Published, 1, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The event's state from now on.
    pub state: EventState,
    /// Publish calls this attempt made (short retries included).
    pub calls: u32,
    /// The oracle's state after the attempt.
    pub oracle: OracleState,
    /// When the event is next due (Unix ms).
    pub next_attempt_ms: i64,
    /// The wait this attempt scheduled, in ms (added to the event's total).
    pub waited_ms: i64,
    /// Why the attempt failed, if it did.
    pub error: Option<String>,
}

impl Delivery {
    /// The broker took the event at `now_ms`.
    ///
    /// ```
    /// let d = examples::outbox::Delivery::published(2, Default::default(), 5);
    /// assert_eq!((d.calls, d.next_attempt_ms, d.waited_ms), (2, 5, 0));
    /// ```
    pub fn published(calls: u32, oracle: OracleState, now_ms: i64) -> Self {
        Delivery {
            state: EventState::Published,
            calls,
            oracle,
            next_attempt_ms: now_ms,
            waited_ms: 0,
            error: None,
        }
    }
}

/// How many events are in each state.
///
/// ```
/// let c = examples::outbox::Counts::default();
/// assert_eq!(c.total(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Published.
    pub published: u64,
    /// Pending and due now.
    pub due: u64,
    /// Pending, waiting for their next attempt.
    pub waiting: u64,
    /// Dead-lettered.
    pub dead: u64,
}

impl Counts {
    /// All events.
    ///
    /// ```
    /// let c = examples::outbox::Counts { published: 1, due: 2, waiting: 3, dead: 4 };
    /// assert_eq!(c.total(), 10);
    /// ```
    pub const fn total(&self) -> u64 {
        self.published + self.due + self.waiting + self.dead
    }

    /// Events not yet finished (due or waiting).
    ///
    /// ```
    /// let c = examples::outbox::Counts { published: 1, due: 2, waiting: 3, dead: 4 };
    /// assert_eq!(c.unfinished(), 5);
    /// ```
    pub const fn unfinished(&self) -> u64 {
        self.due + self.waiting
    }
}

/// One line of an event's claim history: which relay claimed it, when, and
/// until when its lease ran.
///
/// ```
/// let c = examples::outbox::ClaimRecord { relay: "r1".into(), claim: 1, claimed_ms: 10, lease_until_ms: 20 };
/// assert_eq!(c.lease_until_ms - c.claimed_ms, 10);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    /// The relay that claimed the event.
    pub relay: String,
    /// The claim's number for this event (1 for the first).
    pub claim: u32,
    /// When it was claimed (Unix ms).
    pub claimed_ms: i64,
    /// When the lease ended unless the relay recorded an outcome first.
    pub lease_until_ms: i64,
}
