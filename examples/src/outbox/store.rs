//! The SQLite side: orders, their outbox events, and each event's retry state.

use retry_core::OracleState;
use rusqlite::{Connection, OptionalExtension, Row, params};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS orders (
    id          INTEGER PRIMARY KEY,
    item        TEXT NOT NULL,
    created_ms  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    event_id         TEXT PRIMARY KEY,
    payload          TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'published', 'dead')),
    attempts         INTEGER NOT NULL DEFAULT 0,  -- publish calls, short retries included
    failures         INTEGER NOT NULL DEFAULT 0,  -- the oracle's state, column by column
    last_delay_ms    INTEGER NOT NULL DEFAULT 0,
    first_failure_ms INTEGER,
    due_ms           INTEGER,
    next_attempt_ms  INTEGER NOT NULL,
    total_wait_ms    INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    created_ms       INTEGER NOT NULL,
    done_ms          INTEGER
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (state, next_attempt_ms);
-- One row per relay delivery, written in the same transaction as the event's
-- new state: the history a crash test reads to prove counts never go back.
-- Its row count per event is the event's scheduled attempts.
CREATE TABLE IF NOT EXISTS attempt_log (
    event_id  TEXT NOT NULL,
    attempts  INTEGER NOT NULL,  -- publish calls so far, as in outbox.attempts
    at_ms     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS attempt_log_event ON attempt_log (event_id);
";

/// An event's row with its scheduled attempts: how many times the relay
/// took it up on the `outbox` schedule, one `attempt_log` row each. Counted,
/// not stored, so a database written before the count existed reads right.
const SELECT_EVENTS: &str = "SELECT outbox.*,
    (SELECT COUNT(*) FROM attempt_log WHERE attempt_log.event_id = outbox.event_id)
        AS scheduled_attempts
    FROM outbox";

/// Milliseconds since the Unix epoch, now.
///
/// ```
/// assert!(examples::outbox::now_ms() > 1_600_000_000_000);
/// ```
pub fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

fn to_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
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

    fn parse(s: &str) -> Self {
        match s {
            "published" => EventState::Published,
            "dead" => EventState::Dead,
            _ => EventState::Pending,
        }
    }
}

/// One outbox event and its retry state.
///
/// ```
/// let store = examples::outbox::Store::open_in_memory().unwrap();
/// let id = store.place_order("book").unwrap();
/// let row = store.event(&id).unwrap().unwrap();
/// assert_eq!((row.scheduled_attempts, row.publish_calls), (0, 0));
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
}

impl EventRow {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(EventRow {
            event_id: r.get("event_id")?,
            payload: r.get("payload")?,
            state: EventState::parse(&r.get::<_, String>("state")?),
            scheduled_attempts: r.get("scheduled_attempts")?,
            publish_calls: r.get("attempts")?,
            oracle: OracleState {
                failures: r.get("failures")?,
                last_delay: Duration::from_millis(r.get::<_, i64>("last_delay_ms")?.max(0) as u64),
                // One run per event (a success ends it): its waits so far.
                waited: Duration::from_millis(r.get::<_, i64>("total_wait_ms")?.max(0) as u64),
                first_failure: r.get::<_, Option<i64>>("first_failure_ms")?.map(from_ms),
                due: r.get::<_, Option<i64>>("due_ms")?.map(from_ms),
            },
            next_attempt_ms: r.get("next_attempt_ms")?,
            total_wait_ms: r.get("total_wait_ms")?,
            last_error: r.get("last_error")?,
        })
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

/// The outbox database.
///
/// ```
/// let store = examples::outbox::Store::open_in_memory().unwrap();
/// store.place_order("lamp").unwrap();
/// assert_eq!(store.counts(examples::outbox::now_ms()).unwrap().due, 1);
/// ```
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (and if needed creates) the database at `path`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = examples::outbox::Store::open(&dir.path().join("outbox.db")).unwrap();
    /// assert_eq!(store.counts(0).unwrap().total(), 0);
    /// ```
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn })
    }

    /// A private in-memory database (for tests and examples).
    ///
    /// ```
    /// let _ = examples::outbox::Store::open_in_memory().unwrap();
    /// ```
    pub fn open_in_memory() -> rusqlite::Result<Self> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn })
    }

    /// The business transaction: the order row and its outbox event commit
    /// together or not at all. Returns the event id.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert_eq!(store.place_order("pen").unwrap(), "order-1");
    /// ```
    pub fn place_order(&self, item: &str) -> rusqlite::Result<String> {
        let tx = self.conn.unchecked_transaction()?;
        let now = now_ms();
        tx.execute(
            "INSERT INTO orders (item, created_ms) VALUES (?1, ?2)",
            params![item, now],
        )?;
        let event_id = format!("order-{}", tx.last_insert_rowid());
        let payload = format!(r#"{{"type":"order_placed","item":{item:?}}}"#);
        tx.execute(
            "INSERT INTO outbox (event_id, payload, next_attempt_ms, created_ms)
             VALUES (?1, ?2, ?3, ?3)",
            params![event_id, payload, now],
        )?;
        tx.commit()?;
        Ok(event_id)
    }

    /// Up to `limit` pending events due at `now_ms`, oldest first.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// store.place_order("cup").unwrap();
    /// assert_eq!(store.due(examples::outbox::now_ms(), 10).unwrap().len(), 1);
    /// ```
    pub fn due(&self, now_ms: i64, limit: u32) -> rusqlite::Result<Vec<EventRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "{SELECT_EVENTS} WHERE state = 'pending' AND next_attempt_ms <= ?1
             ORDER BY next_attempt_ms, event_id LIMIT ?2"
        ))?;
        stmt.query_map(params![now_ms, limit], EventRow::from_row)?
            .collect()
    }

    /// One event by id.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert!(store.event("nope").unwrap().is_none());
    /// ```
    pub fn event(&self, event_id: &str) -> rusqlite::Result<Option<EventRow>> {
        self.conn
            .query_row(
                &format!("{SELECT_EVENTS} WHERE event_id = ?1"),
                [event_id],
                EventRow::from_row,
            )
            .optional()
    }

    /// Every event, by id.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert!(store.events().unwrap().is_empty());
    /// ```
    pub fn events(&self) -> rusqlite::Result<Vec<EventRow>> {
        let mut stmt = self
            .conn
            .prepare(&format!("{SELECT_EVENTS} ORDER BY created_ms, event_id"))?;
        stmt.query_map([], EventRow::from_row)?.collect()
    }

    /// Records the outcome of one delivery: the new state, the calls it
    /// took, the oracle's new state and the next attempt time, plus a line
    /// in the attempt log, all in one transaction.
    ///
    /// ```
    /// use examples::outbox::{EventState, Store, now_ms};
    /// let store = Store::open_in_memory().unwrap();
    /// let id = store.place_order("mug").unwrap();
    /// let row = store.event(&id).unwrap().unwrap();
    /// store.record(&row, EventState::Published, 1, row.oracle, now_ms(), 0, None).unwrap();
    /// assert_eq!(store.event(&id).unwrap().unwrap().state, EventState::Published);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        row: &EventRow,
        state: EventState,
        calls: u32,
        oracle: OracleState,
        next_attempt_ms: i64,
        waited_ms: i64,
        error: Option<&str>,
    ) -> rusqlite::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        let now = now_ms();
        let attempts = row.publish_calls.saturating_add(calls);
        tx.execute(
            "UPDATE outbox SET state = ?2, attempts = ?3, failures = ?4, last_delay_ms = ?5,
                 first_failure_ms = ?6, due_ms = ?7, next_attempt_ms = ?8,
                 total_wait_ms = total_wait_ms + ?9, last_error = COALESCE(?10, last_error),
                 done_ms = CASE WHEN ?2 = 'pending' THEN NULL ELSE ?11 END
             WHERE event_id = ?1",
            params![
                row.event_id,
                state.as_str(),
                attempts,
                oracle.failures,
                i64::try_from(oracle.last_delay.as_millis()).unwrap_or(i64::MAX),
                oracle.first_failure.map(to_ms),
                oracle.due.map(to_ms),
                next_attempt_ms,
                waited_ms,
                error,
                now,
            ],
        )?;
        tx.execute(
            "INSERT INTO attempt_log (event_id, attempts, at_ms) VALUES (?1, ?2, ?3)",
            params![row.event_id, attempts, now],
        )?;
        tx.commit()
    }

    /// The event's publish calls as recorded after each scheduled attempt,
    /// in order (so its length is the event's scheduled attempts).
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert!(store.attempt_log("order-1").unwrap().is_empty());
    /// ```
    pub fn attempt_log(&self, event_id: &str) -> rusqlite::Result<Vec<u32>> {
        let mut stmt = self
            .conn
            .prepare("SELECT attempts FROM attempt_log WHERE event_id = ?1 ORDER BY rowid")?;
        stmt.query_map([event_id], |r| r.get(0))?.collect()
    }

    /// Events per state at `now_ms`.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert_eq!(store.counts(0).unwrap().total(), 0);
    /// ```
    pub fn counts(&self, now_ms: i64) -> rusqlite::Result<Counts> {
        self.conn.query_row(
            "SELECT
                COALESCE(SUM(state = 'published'), 0),
                COALESCE(SUM(state = 'pending' AND next_attempt_ms <= ?1), 0),
                COALESCE(SUM(state = 'pending' AND next_attempt_ms > ?1), 0),
                COALESCE(SUM(state = 'dead'), 0)
             FROM outbox",
            [now_ms],
            |r| {
                Ok(Counts {
                    published: r.get(0)?,
                    due: r.get(1)?,
                    waiting: r.get(2)?,
                    dead: r.get(3)?,
                })
            },
        )
    }

    /// The earliest next attempt among pending events, if any.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// assert_eq!(store.next_due().unwrap(), None);
    /// ```
    pub fn next_due(&self) -> rusqlite::Result<Option<i64>> {
        self.conn.query_row(
            "SELECT MIN(next_attempt_ms) FROM outbox WHERE state = 'pending'",
            [],
            |r| r.get(0),
        )
    }
}
