//! The PostgreSQL backend: several relays, on one host or many, share one
//! outbox (`--database postgres://...`).
//!
//! **The driver is [tokio-postgres]**, the asynchronous client of the
//! rust-postgres project, maintained since 2013 and the base of `postgres`,
//! `deadpool-postgres` and `bb8-postgres`. It runs on the tokio runtime the
//! relay already uses and speaks the wire protocol itself (no libpq). It was
//! chosen over sqlx because the relay needs a handful of hand-written
//! statements, not a query builder or compile-time checked queries: sqlx
//! brings proc-macros and a much larger dependency tree, which costs CI
//! build time for features this demo would not use. No TLS: the private
//! cluster listens on the loopback interface only; a remote server on an
//! untrusted network would need `postgres-native-tls` or `tokio-postgres-rustls`.
//!
//! Claims are one statement: `SELECT ... FOR UPDATE SKIP LOCKED` picks due
//! events that no relay holds (relays claiming together skip each other's
//! rows instead of queueing behind them), and the same statement stamps
//! their lease and logs the claim. Nothing stays open while the relay
//! publishes. A write-back is one statement too, fenced by the lease.
//!
//! Lease times are the relays' clocks: relays on several hosts need their
//! clocks in sync (NTP) to within a small part of the lease.
//!
//! [tokio-postgres]: https://docs.rs/tokio-postgres

use super::event::{ClaimRecord, Counts, Delivery, EventRow, EventState, count, duration_ms};
use super::event::{now_ms, to_ms};
use super::schema::{self, Dialect};
use super::store::{OutboxStore, StoreError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// Claims due events nobody holds, stamps their lease, logs the claim and
/// returns their rows, in one statement.
const CLAIM: &str = "
WITH picked AS (
    SELECT event_id FROM outbox
    WHERE state = 'pending' AND next_attempt_ms <= $2
      AND (lease_until_ms IS NULL OR lease_until_ms <= $2)
    ORDER BY next_attempt_ms, event_id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE outbox SET lease_owner = $1, lease_until_ms = $3, claims = outbox.claims + 1
    FROM picked WHERE outbox.event_id = picked.event_id
    RETURNING outbox.*
), logged AS (
    INSERT INTO claim_log (event_id, relay, claim, claimed_ms, lease_until_ms)
    SELECT event_id, $1, claims, $2, $3 FROM claimed
)
SELECT claimed.*,
    (SELECT COUNT(*) FROM attempt_log a WHERE a.event_id = claimed.event_id) AS scheduled_attempts
FROM claimed
ORDER BY next_attempt_ms, event_id";

/// Only the claim that holds the lease may write: the same relay, the same
/// claim number, and a lease not yet ended by a record or a release.
const HOLDS_LEASE: &str = "event_id = $1 AND lease_owner = $2 AND claims = $3
    AND lease_until_ms IS NOT NULL";

/// Writes back one scheduled attempt and ends the lease; the attempt log
/// line is inserted by the same statement, so both happen or neither.
fn record_sql() -> String {
    format!(
        "WITH updated AS (
            UPDATE outbox SET state = $4, attempts = attempts + $5, failures = $6,
                last_delay_ms = $7, first_failure_ms = $8, due_ms = $9,
                next_attempt_ms = $10, total_wait_ms = total_wait_ms + $11,
                last_error = COALESCE($12, last_error),
                done_ms = CASE WHEN $4 = 'pending' THEN NULL ELSE $13::BIGINT END,
                lease_until_ms = NULL
            WHERE {HOLDS_LEASE}
            RETURNING event_id, attempts
        )
        INSERT INTO attempt_log (event_id, attempts, at_ms)
        SELECT event_id, attempts, $13 FROM updated"
    )
}

const SELECT_EVENTS: &str = "SELECT outbox.*,
    (SELECT COUNT(*) FROM attempt_log a WHERE a.event_id = outbox.event_id) AS scheduled_attempts
    FROM outbox";

/// A connection with the relay's hot statements prepared on it.
struct Connection {
    client: Client,
    claim: Statement,
    record: Statement,
    /// Hands an event back (released, or held back by the breaker).
    postpone: Statement,
}

/// The outbox in a PostgreSQL database. One connection, opened again on the
/// next call when the server closed it (a restart, a network cut).
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{OutboxStore, PostgresStore};
/// let store = PostgresStore::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
/// let id = store.place_order("lamp").await.unwrap();
/// assert!(id.starts_with("order-"));
/// # }
/// ```
pub struct PostgresStore {
    config: Config,
    connection: Mutex<Option<Arc<Connection>>>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`) and
    /// brings its schema up to date.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let err = examples::outbox::PostgresStore::connect("postgres://x@/?port=nope").await.err().unwrap();
    /// assert!(err.to_string().contains("PostgreSQL"));
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let mut config: Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let store = PostgresStore {
            config,
            connection: Mutex::new(None),
        };
        let mut client = store.open_client().await?;
        migrate(&mut client).await?;
        store.install(client).await?;
        Ok(store)
    }

    async fn open_client(&self) -> Result<Client, StoreError> {
        let (client, connection) = self.config.connect(NoTls).await?;
        // The connection drives the socket; it ends when the client is
        // dropped or the server goes away (the client then reports closed).
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(client)
    }

    async fn install(&self, client: Client) -> Result<Arc<Connection>, StoreError> {
        let connection = Arc::new(Connection {
            claim: client.prepare(CLAIM).await?,
            record: client.prepare(&record_sql()).await?,
            postpone: client
                .prepare(&format!(
                    "UPDATE outbox SET lease_until_ms = NULL,
                         next_attempt_ms = GREATEST(next_attempt_ms, $4)
                     WHERE {HOLDS_LEASE}"
                ))
                .await?,
            client,
        });
        *self.connection.lock().unwrap_or_else(|e| e.into_inner()) = Some(connection.clone());
        Ok(connection)
    }

    /// The open connection, or a new one if the server closed the last.
    async fn connection(&self) -> Result<Arc<Connection>, StoreError> {
        let open = self
            .connection
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|c| !c.client.is_closed());
        match open {
            Some(c) => Ok(c),
            None => {
                let client = self.open_client().await?;
                self.install(client).await
            }
        }
    }

    /// One event by id.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let store = examples::outbox::PostgresStore::connect("postgres://postgres@127.0.0.1/postgres").await.unwrap();
    /// assert!(store.event("nope").await.unwrap().is_none());
    /// # }
    /// ```
    pub async fn event(&self, event_id: &str) -> Result<Option<EventRow>, StoreError> {
        let c = self.connection().await?;
        let sql = format!("{SELECT_EVENTS} WHERE event_id = $1");
        let row = c.client.query_opt(&sql, &[&event_id]).await?;
        Ok(row.as_ref().map(event_from_row).transpose()?)
    }

    /// The event's publish calls as recorded after each scheduled attempt,
    /// in order (so its length is the event's scheduled attempts).
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let store = examples::outbox::PostgresStore::connect("postgres://postgres@127.0.0.1/postgres").await.unwrap();
    /// assert!(store.attempt_log("nope").await.unwrap().is_empty());
    /// # }
    /// ```
    pub async fn attempt_log(&self, event_id: &str) -> Result<Vec<u32>, StoreError> {
        let c = self.connection().await?;
        let rows = c
            .client
            .query(
                "SELECT attempts FROM attempt_log WHERE event_id = $1 ORDER BY seq",
                &[&event_id],
            )
            .await?;
        Ok(rows.iter().map(|r| count(r.get(0))).collect())
    }

    /// Every claim of the event, first to last.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let store = examples::outbox::PostgresStore::connect("postgres://postgres@127.0.0.1/postgres").await.unwrap();
    /// assert!(store.claim_log("nope").await.unwrap().is_empty());
    /// # }
    /// ```
    pub async fn claim_log(&self, event_id: &str) -> Result<Vec<ClaimRecord>, StoreError> {
        let c = self.connection().await?;
        let rows = c
            .client
            .query(
                "SELECT relay, claim, claimed_ms, lease_until_ms FROM claim_log
                 WHERE event_id = $1 ORDER BY claim",
                &[&event_id],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| ClaimRecord {
                relay: r.get(0),
                claim: count(r.get(1)),
                claimed_ms: r.get(2),
                lease_until_ms: r.get(3),
            })
            .collect())
    }
}

/// Brings the schema up to date in one transaction. The advisory lock makes
/// relays that start together take turns: the first migrates, the others
/// then find nothing to do (concurrent `CREATE TABLE IF NOT EXISTS` can
/// otherwise fail on PostgreSQL's catalog).
async fn migrate(client: &mut Client) -> Result<(), tokio_postgres::Error> {
    /// Any fixed number; it names this schema's lock.
    const MIGRATION_LOCK: i64 = 0x6f75_7462_6f78; // "outbox"
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(schema::VERSION_TABLE).await?;
    let current: i64 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
        .await?
        .get(0);
    for (version, sql) in schema::steps(Dialect::Postgres, current) {
        tx.batch_execute(&sql).await?;
        tx.execute("DELETE FROM schema_version", &[]).await?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&version],
        )
        .await?;
    }
    tx.commit().await
}

fn event_from_row(r: &Row) -> Result<EventRow, tokio_postgres::Error> {
    let total_wait_ms: i64 = r.try_get("total_wait_ms")?;
    Ok(EventRow {
        event_id: r.try_get("event_id")?,
        payload: r.try_get("payload")?,
        state: EventState::parse(r.try_get("state")?),
        scheduled_attempts: count(r.try_get("scheduled_attempts")?),
        publish_calls: count(r.try_get("attempts")?),
        oracle: EventRow::oracle_state(
            r.try_get("failures")?,
            r.try_get("last_delay_ms")?,
            total_wait_ms,
            r.try_get("first_failure_ms")?,
            r.try_get("due_ms")?,
        ),
        next_attempt_ms: r.try_get("next_attempt_ms")?,
        total_wait_ms,
        last_error: r.try_get("last_error")?,
        claims: count(r.try_get("claims")?),
        lease_owner: r.try_get("lease_owner")?,
        lease_until_ms: r.try_get("lease_until_ms")?,
    })
}

impl OutboxStore for PostgresStore {
    async fn place_order(&self, item: &str) -> Result<String, StoreError> {
        let c = self.connection().await?;
        let payload = format!(r#"{{"type":"order_placed","item":{item:?}}}"#);
        // One statement: the order and its event commit together.
        let row = c
            .client
            .query_one(
                "WITH placed AS (
                     INSERT INTO orders (item, created_ms) VALUES ($1, $2) RETURNING id
                 )
                 INSERT INTO outbox (event_id, payload, next_attempt_ms, created_ms)
                 SELECT 'order-' || id, $3, $2, $2 FROM placed
                 RETURNING event_id",
                &[&item, &now_ms(), &payload],
            )
            .await?;
        Ok(row.get(0))
    }

    async fn claim(
        &self,
        relay: &str,
        now_ms: i64,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<EventRow>, StoreError> {
        let c = self.connection().await?;
        let until = now_ms.saturating_add(duration_ms(lease));
        let rows = c
            .client
            .query(&c.claim, &[&relay, &now_ms, &until, &i64::from(limit)])
            .await?;
        Ok(rows.iter().map(event_from_row).collect::<Result<_, _>>()?)
    }

    async fn record(&self, claimed: &EventRow, delivery: &Delivery) -> Result<bool, StoreError> {
        let Some(owner) = &claimed.lease_owner else {
            return Ok(false);
        };
        let c = self.connection().await?;
        let d = delivery;
        let written = c
            .client
            .execute(
                &c.record,
                &[
                    &claimed.event_id,
                    owner,
                    &i64::from(claimed.claims),
                    &d.state.as_str(),
                    &i64::from(d.calls),
                    &i64::from(d.oracle.failures),
                    &duration_ms(d.oracle.last_delay),
                    &d.oracle.first_failure.map(to_ms),
                    &d.oracle.due.map(to_ms),
                    &d.next_attempt_ms,
                    &d.waited_ms,
                    &d.error,
                    &now_ms(),
                ],
            )
            .await?;
        Ok(written == 1)
    }

    async fn release(&self, claimed: &EventRow) -> Result<(), StoreError> {
        self.postpone(claimed, i64::MIN).await.map(drop)
    }

    async fn postpone(&self, claimed: &EventRow, until_ms: i64) -> Result<bool, StoreError> {
        let c = self.connection().await?;
        let written = c
            .client
            .execute(
                &c.postpone,
                &[
                    &claimed.event_id,
                    &claimed.lease_owner,
                    &i64::from(claimed.claims),
                    &until_ms,
                ],
            )
            .await?;
        Ok(written == 1)
    }

    async fn next_due(&self) -> Result<Option<i64>, StoreError> {
        let c = self.connection().await?;
        let row = c
            .client
            .query_one(
                "SELECT MIN(next_attempt_ms) FROM outbox WHERE state = 'pending'",
                &[],
            )
            .await?;
        Ok(row.get(0))
    }

    async fn counts(&self, now_ms: i64) -> Result<Counts, StoreError> {
        let c = self.connection().await?;
        let r = c
            .client
            .query_one(
                "SELECT
                    COUNT(*) FILTER (WHERE state = 'published'),
                    COUNT(*) FILTER (WHERE state = 'pending' AND next_attempt_ms <= $1),
                    COUNT(*) FILTER (WHERE state = 'pending' AND next_attempt_ms > $1),
                    COUNT(*) FILTER (WHERE state = 'dead')
                 FROM outbox",
                &[&now_ms],
            )
            .await?;
        let n = |i: usize| u64::try_from(r.get::<_, i64>(i)).unwrap_or(0);
        Ok(Counts {
            published: n(0),
            due: n(1),
            waiting: n(2),
            dead: n(3),
        })
    }

    async fn events(&self) -> Result<Vec<EventRow>, StoreError> {
        let c = self.connection().await?;
        let sql = format!("{SELECT_EVENTS} ORDER BY created_ms, event_id");
        let rows = c.client.query(&sql, &[]).await?;
        Ok(rows.iter().map(event_from_row).collect::<Result<_, _>>()?)
    }
}
