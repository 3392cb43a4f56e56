//! The lease rules every outbox store keeps, checked on both backends with
//! the same code: SQLite in memory, PostgreSQL in a private cluster. Times
//! are passed to the store, not read from a clock, so no test sleeps.

use examples::outbox::{
    Delivery, EventState, OutboxStore, PostgresStore, PrivatePostgres, SqliteStore, now_ms,
};
use retrykit_core::OracleState;
use std::time::Duration;

const LEASE: Duration = Duration::from_millis(100);

/// Two relays claiming at the same moment never get the same event, and
/// between them get every due one.
async fn claims_are_exclusive(store: &impl OutboxStore, other: &impl OutboxStore) {
    for i in 0..20 {
        store.place_order(&format!("item-{i}")).await.unwrap();
    }
    let now = now_ms();
    let (a, b) = tokio::join!(
        store.claim("a", now, LEASE, 12),
        other.claim("b", now, LEASE, 12)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut ids: Vec<&str> = a.iter().chain(&b).map(|e| e.event_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        20,
        "a: {}, b: {}, distinct: {}",
        a.len(),
        b.len(),
        ids.len()
    );
    assert!(a.iter().all(|e| e.lease_owner.as_deref() == Some("a")));
    // Nothing is left to claim while the leases hold.
    assert!(
        store
            .claim("c", now + 99, LEASE, 50)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Once a lease has ended and another relay claimed the event, the first
/// relay's write-back is refused and changes nothing; the new holder's goes
/// through; and the attempt count continues from the stored one.
async fn a_taken_over_claim_cannot_write(store: &impl OutboxStore) {
    let id = store.place_order("kettle").await.unwrap();
    let now = now_ms();
    let first = store.claim("a", now, LEASE, 1).await.unwrap().remove(0);
    let failed = Delivery {
        state: EventState::Pending,
        calls: 3,
        oracle: OracleState {
            failures: 1,
            ..OracleState::default()
        },
        next_attempt_ms: now,
        waited_ms: 0,
        error: Some("connection reset".into()),
    };
    assert!(store.record(&first, &failed).await.unwrap());

    let second = store.claim("a", now, LEASE, 1).await.unwrap().remove(0);
    assert_eq!((second.publish_calls, second.oracle.failures), (3, 1));
    // "a" dies; its lease ends at now + 100; "b" takes over after it.
    assert!(
        store
            .claim("b", now + 50, LEASE, 1)
            .await
            .unwrap()
            .is_empty()
    );
    let third = store
        .claim("b", now + 100, LEASE, 1)
        .await
        .unwrap()
        .remove(0);
    assert_eq!((third.event_id.as_str(), third.claims), (id.as_str(), 3));
    assert_eq!(
        third.oracle.failures, 1,
        "the schedule continues from the stored state"
    );

    let late = Delivery::published(1, OracleState::default(), now);
    assert!(
        !store.record(&second, &late).await.unwrap(),
        "a stale claim wrote"
    );
    let done = Delivery::published(2, OracleState::default(), now);
    assert!(store.record(&third, &done).await.unwrap());
    // Written once: the same claim cannot write twice.
    assert!(!store.record(&third, &done).await.unwrap());
    let events = store.events().await.unwrap();
    let row = events.iter().find(|e| e.event_id == id).unwrap();
    assert_eq!(
        (row.state, row.publish_calls, row.scheduled_attempts),
        (EventState::Published, 5, 2)
    );
}

/// A released claim can be taken at once, without waiting for its lease.
async fn a_released_claim_is_free_at_once(store: &impl OutboxStore) {
    store.place_order("lamp").await.unwrap();
    let now = now_ms();
    let claimed = store.claim("a", now, LEASE, 1).await.unwrap().remove(0);
    store.release(&claimed).await.unwrap();
    let again = store.claim("b", now, LEASE, 1).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].event_id, claimed.event_id);
}

#[tokio::test]
async fn sqlite_claims_are_exclusive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outbox.db");
    let (a, b) = (
        SqliteStore::open(&path).unwrap(),
        SqliteStore::open(&path).unwrap(),
    );
    claims_are_exclusive(&a, &b).await;
}

#[tokio::test]
async fn sqlite_a_taken_over_claim_cannot_write() {
    a_taken_over_claim_cannot_write(&SqliteStore::open_in_memory().unwrap()).await;
}

#[tokio::test]
async fn sqlite_a_released_claim_is_free_at_once() {
    a_released_claim_is_free_at_once(&SqliteStore::open_in_memory().unwrap()).await;
}

/// An outbox written before schema versions existed (the version-1 tables,
/// no `schema_version`) opens, gains the lease columns and keeps its events.
#[test]
fn sqlite_a_database_from_before_leases_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let old = rusqlite::Connection::open(&path).unwrap();
    old.execute_batch(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL, created_ms INTEGER NOT NULL);
         CREATE TABLE outbox (event_id TEXT PRIMARY KEY, payload TEXT NOT NULL,
             state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
             failures INTEGER NOT NULL DEFAULT 0, last_delay_ms INTEGER NOT NULL DEFAULT 0,
             first_failure_ms INTEGER, due_ms INTEGER, next_attempt_ms INTEGER NOT NULL,
             total_wait_ms INTEGER NOT NULL DEFAULT 0, last_error TEXT,
             created_ms INTEGER NOT NULL, done_ms INTEGER);
         CREATE TABLE attempt_log (event_id TEXT NOT NULL, attempts INTEGER NOT NULL, at_ms INTEGER NOT NULL);
         INSERT INTO outbox (event_id, payload, attempts, next_attempt_ms, created_ms)
             VALUES ('order-1', '{}', 2, 0, 0);
         INSERT INTO attempt_log VALUES ('order-1', 2, 0);",
    )
    .unwrap();
    drop(old);
    let store = SqliteStore::open(&path).unwrap();
    let claimed = store.claim("a", now_ms(), LEASE, 10).unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (
            claimed[0].publish_calls,
            claimed[0].scheduled_attempts,
            claimed[0].claims
        ),
        (2, 1, 1)
    );
    // Opening again finds nothing to migrate.
    assert_eq!(SqliteStore::open(&path).unwrap().events().unwrap().len(), 1);
}

/// The same rules on PostgreSQL, one private cluster for all of them (it
/// takes a second or two to start). Each rule gets a fresh database.
#[test]
fn postgres_keeps_the_same_lease_rules_and_rides_out_a_restart() {
    let mut cluster = PrivatePostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (admin, connection) = tokio_postgres::connect(&cluster.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        for db in ["exclusive", "takeover", "release"] {
            admin
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .await
                .unwrap();
        }
        let url = |db: &str| format!("postgres://postgres@127.0.0.1:{}/{db}", cluster.port());
        // Two connections, each migrating at start: the second finds nothing to do.
        let exclusive = url("exclusive");
        let (a, b) = tokio::join!(
            PostgresStore::connect(&exclusive),
            PostgresStore::connect(&exclusive)
        );
        claims_are_exclusive(&a.unwrap(), &b.unwrap()).await;
        a_taken_over_claim_cannot_write(&PostgresStore::connect(&url("takeover")).await.unwrap())
            .await;
        a_released_claim_is_free_at_once(&PostgresStore::connect(&url("release")).await.unwrap())
            .await;
    });

    // A restart cuts the connection; the store opens a new one on the next call.
    let store = runtime
        .block_on(PostgresStore::connect(&cluster.url()))
        .unwrap();
    cluster.crash_and_restart().unwrap();
    let first = runtime.block_on(store.counts(0));
    let second = runtime.block_on(store.counts(0));
    assert!(
        second.is_ok(),
        "after a restart: {first:?}, then {second:?}"
    );
}
