//! The store the relay works against, and its two implementations:
//! [`SqliteStore`](super::SqliteStore) (embedded, one file, the default) and
//! [`PostgresStore`](super::PostgresStore) (several relays on several hosts).
//!
//! Several relays share the outbox through **leases**: [`OutboxStore::claim`]
//! marks due events as held by one relay until a time, in one short
//! statement; the relay then publishes with no transaction or lock open, and
//! [`OutboxStore::record`] writes the outcome back only if the lease is still
//! that relay's. A relay that dies holds its events until the lease ends;
//! then any relay claims them and carries on from the stored oracle state.

use super::event::{Counts, Delivery, EventRow};
use retrykit_core::{Class, Classify};
use std::fmt;
use std::future::Future;
use std::time::Duration;

/// An outbox database, as the relay and the demo use it.
///
/// The futures need not be `Send`: a relay runs its passes one after the
/// other on one task, and the SQLite connection is not `Sync`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{Delivery, OutboxStore, SqliteStore, now_ms};
/// use std::time::Duration;
/// // Any backend: this runs the same on PostgresStore.
/// async fn place_claim_publish(store: &impl OutboxStore) {
///     store.place_order("pen").await.unwrap();
///     let now = now_ms();
///     let claimed = store.claim("relay-1", now, Duration::from_secs(5), 10).await.unwrap();
///     assert_eq!(claimed.len(), 1);
///     // A second relay finds nothing to claim while the lease holds.
///     assert!(store.claim("relay-2", now, Duration::from_secs(5), 10).await.unwrap().is_empty());
///     let done = Delivery::published(1, claimed[0].oracle, now);
///     assert!(store.record(&claimed[0], &done).await.unwrap());
///     assert_eq!(store.counts(now).await.unwrap().published, 1);
/// }
/// place_claim_publish(&SqliteStore::open_in_memory().unwrap()).await;
/// # }
/// ```
pub trait OutboxStore {
    /// The business transaction: an order row and its outbox event, committed
    /// together. Returns the event id.
    fn place_order(&self, item: &str) -> impl Future<Output = Result<String, StoreError>>;

    /// Claims up to `limit` pending events due at `now_ms` whose lease (if
    /// any) has ended, oldest due first, for `relay` until `now_ms + lease`.
    /// Each returned row carries its new lease: pass it to [`record`](Self::record).
    fn claim(
        &self,
        relay: &str,
        now_ms: i64,
        lease: Duration,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<EventRow>, StoreError>>;

    /// Writes back one scheduled attempt of a claimed event (the oracle's
    /// state, the calls, a line in the attempt log) and ends the lease, all
    /// at once. `Ok(false)`: the lease was no longer this claim's (it ran
    /// out and another relay claimed the event), so nothing was written.
    fn record(
        &self,
        claimed: &EventRow,
        delivery: &Delivery,
    ) -> impl Future<Output = Result<bool, StoreError>>;

    /// Hands back a claimed event that was not attempted, so that any relay
    /// may claim it now rather than when the lease ends.
    fn release(&self, claimed: &EventRow) -> impl Future<Output = Result<(), StoreError>>;

    /// Hands back a claimed event the circuit breaker held back (no call
    /// was sent): its schedule (the oracle's state, the attempt log) and
    /// counts are untouched, and it is due again no earlier than `until_ms`.
    /// `Ok(false)`: the lease was no longer this claim's, so nothing was
    /// written.
    fn postpone(
        &self,
        claimed: &EventRow,
        until_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>>;

    /// The earliest next attempt among pending events, if any.
    fn next_due(&self) -> impl Future<Output = Result<Option<i64>, StoreError>>;

    /// Events per state at `now_ms`.
    fn counts(&self, now_ms: i64) -> impl Future<Output = Result<Counts, StoreError>>;

    /// Every event, oldest first.
    fn events(&self) -> impl Future<Output = Result<Vec<EventRow>, StoreError>>;
}

/// Why a store operation failed.
///
/// ```
/// use retrykit_core::Classify;
/// let busy = rusqlite::Error::SqliteFailure(
///     rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
/// assert!(examples::outbox::StoreError::Sqlite(busy).class().is_retryable());
/// ```
#[derive(Debug)]
pub enum StoreError {
    /// The SQLite database failed.
    Sqlite(rusqlite::Error),
    /// The PostgreSQL server failed or could not be reached.
    Postgres(tokio_postgres::Error),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Sqlite(e) => write!(f, "SQLite: {e}"),
            // tokio-postgres says "db error" and keeps the server's words in
            // its source; show them.
            StoreError::Postgres(e) => {
                use std::error::Error;
                match (e.as_db_error(), e.source()) {
                    (Some(db), _) => write!(f, "PostgreSQL: {}: {}", db.severity(), db.message()),
                    // "error connecting to server" alone does not say why.
                    (None, Some(cause)) => write!(f, "PostgreSQL: {e}: {cause}"),
                    (None, None) => write!(f, "PostgreSQL: {e}"),
                }
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Sqlite(e) => Some(e),
            StoreError::Postgres(e) => Some(e),
        }
    }
}

/// Worth retrying: the database is busy, restarting or unreachable (the
/// statement can be run again as it is); anything else (a broken query, a
/// full disk, a constraint) is permanent.
impl Classify for StoreError {
    fn class(&self) -> Class {
        let transient = match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            StoreError::Sqlite(_) => false,
            StoreError::Postgres(e) => match e.code() {
                // No SQLSTATE: the connection failed or closed.
                None => true,
                Some(code) => {
                    let code = code.code();
                    // 08: connection exception; 57P01-57P03: the server is
                    // shutting down or starting; 40001/40P01: serialization
                    // failure, deadlock.
                    code.starts_with("08")
                        || ["57P01", "57P02", "57P03", "40001", "40P01"].contains(&code)
                }
            },
        };
        if transient {
            Class::TRANSIENT
        } else {
            Class::Permanent
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        StoreError::Postgres(e)
    }
}
