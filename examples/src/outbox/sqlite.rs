//! The embedded backend: one SQLite file (the demo's default). Several
//! relay processes may share the file; SQLite serialises their writes.

use super::event::{ClaimRecord, Counts, Delivery, EventRow, EventState, count, duration_ms};
use super::event::{now_ms, to_ms};
use super::schema::{self, Dialect};
use super::store::{OutboxStore, StoreError};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};
use std::path::Path;
use std::time::Duration;

/// An event's row with its scheduled attempts: how many times a relay
/// took it up on the `outbox` schedule, one `attempt_log` row each. Counted,
/// not stored, so a database written before the count existed reads right.
const SELECT_EVENTS: &str = "SELECT outbox.*,
    (SELECT COUNT(*) FROM attempt_log WHERE attempt_log.event_id = outbox.event_id)
        AS scheduled_attempts
    FROM outbox";

/// Only the claim that holds the lease may write: the same relay, the same
/// claim number, and a lease not yet ended by a record or a release.
const HOLDS_LEASE: &str = "event_id = ?1 AND lease_owner = ?2 AND claims = ?3
    AND lease_until_ms IS NOT NULL";

fn event_from_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    let total_wait_ms: i64 = r.get("total_wait_ms")?;
    Ok(EventRow {
        event_id: r.get("event_id")?,
        payload: r.get("payload")?,
        state: EventState::parse(&r.get::<_, String>("state")?),
        scheduled_attempts: count(r.get("scheduled_attempts")?),
        publish_calls: count(r.get("attempts")?),
        oracle: EventRow::oracle_state(
            r.get("failures")?,
            r.get("last_delay_ms")?,
            total_wait_ms,
            r.get("first_failure_ms")?,
            r.get("due_ms")?,
        ),
        next_attempt_ms: r.get("next_attempt_ms")?,
        total_wait_ms,
        last_error: r.get("last_error")?,
        claims: count(r.get("claims")?),
        lease_owner: r.get("lease_owner")?,
        lease_until_ms: r.get("lease_until_ms")?,
    })
}

/// The outbox in a SQLite database.
///
/// ```
/// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
/// store.place_order("lamp").unwrap();
/// assert_eq!(store.counts(examples::outbox::now_ms()).unwrap().due, 1);
/// ```
pub struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Opens (and if needed creates and migrates) the database at `path`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = examples::outbox::SqliteStore::open(&dir.path().join("outbox.db")).unwrap();
    /// assert_eq!(store.counts(0).unwrap().total(), 0);
    /// ```
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        Self::migrated(conn)
    }

    /// A private in-memory database (for tests and examples).
    ///
    /// ```
    /// let _ = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// ```
    pub fn open_in_memory() -> rusqlite::Result<Self> {
        Self::migrated(Connection::open_in_memory()?)
    }

    /// Brings the schema up to date: the steps this database lacks, in one
    /// transaction that takes the write lock first, so that relays opening
    /// the file together apply each step once.
    fn migrated(conn: Connection) -> rusqlite::Result<Self> {
        // WAL lets readers (progress, tests) run beside the writer; NORMAL
        // syncs at checkpoints: a commit survives a crash of the process,
        // which is what the relay's guarantees are about.
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")?;
        let tx = Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
        tx.execute_batch(schema::VERSION_TABLE)?;
        let current: i64 = tx.query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            [],
            |r| r.get(0),
        )?;
        for (version, sql) in schema::steps(Dialect::Sqlite, current) {
            tx.execute_batch(&sql)?;
            tx.execute("DELETE FROM schema_version", [])?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [version],
            )?;
        }
        tx.commit()?;
        Ok(SqliteStore { conn })
    }

    /// The business transaction: the order row and its outbox event commit
    /// together or not at all. Returns the event id.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
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

    /// See [`OutboxStore::claim`].
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// store.place_order("cup").unwrap();
    /// let now = examples::outbox::now_ms();
    /// let claimed = store.claim("r1", now, std::time::Duration::from_secs(1), 10).unwrap();
    /// assert_eq!(claimed[0].lease_until_ms, Some(now + 1000));
    /// ```
    pub fn claim(
        &self,
        relay: &str,
        now_ms: i64,
        lease: Duration,
        limit: u32,
    ) -> rusqlite::Result<Vec<EventRow>> {
        let until = now_ms.saturating_add(duration_ms(lease));
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let ids = {
            let mut claim = tx.prepare_cached(
                "UPDATE outbox SET lease_owner = ?1, lease_until_ms = ?3, claims = claims + 1
                 WHERE event_id IN (
                     SELECT event_id FROM outbox
                     WHERE state = 'pending' AND next_attempt_ms <= ?2
                       AND (lease_until_ms IS NULL OR lease_until_ms <= ?2)
                     ORDER BY next_attempt_ms, event_id LIMIT ?4)
                 RETURNING event_id",
            )?;
            claim
                .query_map(params![relay, now_ms, until, limit], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?
        };
        let mut rows = Vec::with_capacity(ids.len());
        for id in &ids {
            tx.execute(
                "INSERT INTO claim_log (event_id, relay, claim, claimed_ms, lease_until_ms)
                 SELECT event_id, lease_owner, claims, ?2, lease_until_ms
                 FROM outbox WHERE event_id = ?1",
                params![id, now_ms],
            )?;
            let row = tx.query_row(
                &format!("{SELECT_EVENTS} WHERE event_id = ?1"),
                [id],
                event_from_row,
            )?;
            rows.push(row);
        }
        tx.commit()?;
        rows.sort_by(|a, b| {
            (a.next_attempt_ms, &a.event_id).cmp(&(b.next_attempt_ms, &b.event_id))
        });
        Ok(rows)
    }

    /// See [`OutboxStore::record`].
    ///
    /// ```
    /// use examples::outbox::{Delivery, EventState, SqliteStore, now_ms};
    /// let store = SqliteStore::open_in_memory().unwrap();
    /// let id = store.place_order("mug").unwrap();
    /// let row = store.claim("r1", now_ms(), std::time::Duration::from_secs(5), 1).unwrap().remove(0);
    /// assert!(store.record(&row, &Delivery::published(1, row.oracle, now_ms())).unwrap());
    /// assert_eq!(store.event(&id).unwrap().unwrap().state, EventState::Published);
    /// // The lease ended with the record: the same claim cannot write twice.
    /// assert!(!store.record(&row, &Delivery::published(1, row.oracle, now_ms())).unwrap());
    /// ```
    pub fn record(&self, claimed: &EventRow, delivery: &Delivery) -> rusqlite::Result<bool> {
        let Some(owner) = &claimed.lease_owner else {
            return Ok(false);
        };
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let now = now_ms();
        let d = delivery;
        let attempts: Option<i64> = tx
            .query_row(
                &format!(
                    "UPDATE outbox SET state = ?4, attempts = attempts + ?5, failures = ?6,
                         last_delay_ms = ?7, first_failure_ms = ?8, due_ms = ?9,
                         next_attempt_ms = ?10, total_wait_ms = total_wait_ms + ?11,
                         last_error = COALESCE(?12, last_error),
                         done_ms = CASE WHEN ?4 = 'pending' THEN NULL ELSE ?13 END,
                         lease_until_ms = NULL
                     WHERE {HOLDS_LEASE}
                     RETURNING attempts"
                ),
                params![
                    claimed.event_id,
                    owner,
                    claimed.claims,
                    d.state.as_str(),
                    d.calls,
                    d.oracle.failures,
                    duration_ms(d.oracle.last_delay),
                    d.oracle.first_failure.map(to_ms),
                    d.oracle.due.map(to_ms),
                    d.next_attempt_ms,
                    d.waited_ms,
                    d.error,
                    now,
                ],
                |r| r.get(0),
            )
            .optional()?;
        let Some(attempts) = attempts else {
            return Ok(false);
        };
        tx.execute(
            "INSERT INTO attempt_log (event_id, attempts, at_ms) VALUES (?1, ?2, ?3)",
            params![claimed.event_id, attempts, now],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// See [`OutboxStore::release`].
    ///
    /// ```
    /// use examples::outbox::{SqliteStore, now_ms};
    /// let store = SqliteStore::open_in_memory().unwrap();
    /// store.place_order("hat").unwrap();
    /// let lease = std::time::Duration::from_secs(60);
    /// let row = store.claim("r1", now_ms(), lease, 1).unwrap().remove(0);
    /// store.release(&row).unwrap();
    /// assert_eq!(store.claim("r2", now_ms(), lease, 1).unwrap().len(), 1);
    /// ```
    pub fn release(&self, claimed: &EventRow) -> rusqlite::Result<()> {
        self.postpone(claimed, i64::MIN).map(drop)
    }

    /// See [`OutboxStore::postpone`].
    ///
    /// ```
    /// use examples::outbox::{SqliteStore, now_ms};
    /// let store = SqliteStore::open_in_memory().unwrap();
    /// let id = store.place_order("hat").unwrap();
    /// let lease = std::time::Duration::from_secs(60);
    /// let row = store.claim("r1", now_ms(), lease, 1).unwrap().remove(0);
    /// let later = now_ms() + 60_000;
    /// assert!(store.postpone(&row, later).unwrap());
    /// let row = store.event(&id).unwrap().unwrap();
    /// assert_eq!((row.next_attempt_ms, row.publish_calls, row.scheduled_attempts), (later, 0, 0));
    /// assert!(store.claim("r2", now_ms(), lease, 1).unwrap().is_empty());
    /// ```
    pub fn postpone(&self, claimed: &EventRow, until_ms: i64) -> rusqlite::Result<bool> {
        let changed = self.conn.execute(
            &format!(
                "UPDATE outbox SET lease_until_ms = NULL, next_attempt_ms = MAX(next_attempt_ms, ?4)
                 WHERE {HOLDS_LEASE}"
            ),
            params![
                claimed.event_id,
                claimed.lease_owner,
                claimed.claims,
                until_ms
            ],
        )?;
        Ok(changed == 1)
    }

    /// One event by id.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// assert!(store.event("nope").unwrap().is_none());
    /// ```
    pub fn event(&self, event_id: &str) -> rusqlite::Result<Option<EventRow>> {
        self.conn
            .query_row(
                &format!("{SELECT_EVENTS} WHERE event_id = ?1"),
                [event_id],
                event_from_row,
            )
            .optional()
    }

    /// Every event, by id.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// assert!(store.events().unwrap().is_empty());
    /// ```
    pub fn events(&self) -> rusqlite::Result<Vec<EventRow>> {
        let mut stmt = self
            .conn
            .prepare(&format!("{SELECT_EVENTS} ORDER BY created_ms, event_id"))?;
        stmt.query_map([], event_from_row)?.collect()
    }

    /// The event's publish calls as recorded after each scheduled attempt,
    /// in order (so its length is the event's scheduled attempts).
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// assert!(store.attempt_log("order-1").unwrap().is_empty());
    /// ```
    pub fn attempt_log(&self, event_id: &str) -> rusqlite::Result<Vec<u32>> {
        let mut stmt = self
            .conn
            .prepare("SELECT attempts FROM attempt_log WHERE event_id = ?1 ORDER BY rowid")?;
        stmt.query_map([event_id], |r| r.get(0).map(count))?
            .collect()
    }

    /// Every claim of the event, first to last.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// let id = store.place_order("cap").unwrap();
    /// store.claim("r1", examples::outbox::now_ms(), std::time::Duration::from_secs(1), 1).unwrap();
    /// assert_eq!(store.claim_log(&id).unwrap()[0].relay, "r1");
    /// ```
    pub fn claim_log(&self, event_id: &str) -> rusqlite::Result<Vec<ClaimRecord>> {
        let mut stmt = self.conn.prepare(
            "SELECT relay, claim, claimed_ms, lease_until_ms FROM claim_log
             WHERE event_id = ?1 ORDER BY claim",
        )?;
        stmt.query_map([event_id], |r| {
            Ok(ClaimRecord {
                relay: r.get(0)?,
                claim: count(r.get(1)?),
                claimed_ms: r.get(2)?,
                lease_until_ms: r.get(3)?,
            })
        })?
        .collect()
    }

    /// Events per state at `now_ms`.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
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
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
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

/// The async face of the methods above: SQLite answers in microseconds, so
/// each runs on the relay's task.
impl OutboxStore for SqliteStore {
    async fn place_order(&self, item: &str) -> Result<String, StoreError> {
        Ok(SqliteStore::place_order(self, item)?)
    }

    async fn claim(
        &self,
        relay: &str,
        now_ms: i64,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<EventRow>, StoreError> {
        Ok(SqliteStore::claim(self, relay, now_ms, lease, limit)?)
    }

    async fn record(&self, claimed: &EventRow, delivery: &Delivery) -> Result<bool, StoreError> {
        Ok(SqliteStore::record(self, claimed, delivery)?)
    }

    async fn release(&self, claimed: &EventRow) -> Result<(), StoreError> {
        Ok(SqliteStore::release(self, claimed)?)
    }

    async fn postpone(&self, claimed: &EventRow, until_ms: i64) -> Result<bool, StoreError> {
        Ok(SqliteStore::postpone(self, claimed, until_ms)?)
    }

    async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        Ok(SqliteStore::next_due(self)?)
    }

    async fn counts(&self, now_ms: i64) -> Result<Counts, StoreError> {
        Ok(SqliteStore::counts(self, now_ms)?)
    }

    async fn events(&self) -> Result<Vec<EventRow>, StoreError> {
        Ok(SqliteStore::events(self)?)
    }
}
