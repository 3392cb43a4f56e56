//! Four relays on one PostgreSQL outbox: 20 seeded SIGKILLs of random
//! relays, each mid-work and each followed by a restart, and one crash and
//! restart of the server itself mid-run. Checks that every event is
//! published and none lost, that duplicates stay within one per kill, that
//! no count goes backwards, and that no dead relay holds an event past its
//! lease. The server is a private cluster (see `PrivatePostgres`), installed
//! first if this machine lacks PostgreSQL. See `crash/mod.rs` for the harness.

mod crash;

use crash::{KILLS, Outbox, check_outcome, crash_run, seed};
use examples::outbox::{
    ClaimRecord, EventRow, OutboxStore, PostgresStore, PrivatePostgres, StoreError,
};
use std::cell::RefCell;
use tokio::runtime::Runtime;

/// Four relays get through events four times as fast as one: enough that
/// work is left at the last kill.
const EVENTS: usize = 1200;
const RELAYS: usize = 4;
/// The server crashes and restarts before this kill.
const SERVER_CRASH_BEFORE_KILL: usize = KILLS / 2;

/// The outbox through one connection, on a runtime of its own.
struct Postgres {
    runtime: Runtime,
    store: PostgresStore,
}

impl Postgres {
    fn connect(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let store = runtime.block_on(PostgresStore::connect(url)).unwrap();
        Postgres { runtime, store }
    }

    /// Runs a read; once more if the connection was cut (the server
    /// restarted since the last read: the store reconnects on the next call).
    fn read<T, F: Future<Output = Result<T, StoreError>>>(&self, read: impl Fn() -> F) -> T {
        match self.runtime.block_on(read()) {
            Ok(value) => value,
            Err(first) => self
                .runtime
                .block_on(read())
                .unwrap_or_else(|e| panic!("reading the outbox failed twice: {first}; {e}")),
        }
    }
}

impl Outbox for Postgres {
    fn events(&self) -> Vec<EventRow> {
        self.read(|| self.store.events())
    }
    fn attempt_log(&self, event_id: &str) -> Vec<u32> {
        self.read(|| self.store.attempt_log(event_id))
    }
    fn claim_log(&self, event_id: &str) -> Vec<ClaimRecord> {
        self.read(|| self.store.claim_log(event_id))
    }
}

#[test]
fn four_relays_sigkilled_mid_work_and_a_server_crash_lose_nothing() {
    // Stopped and removed when dropped, whether the test passes or panics.
    let cluster = RefCell::new(PrivatePostgres::start().unwrap_or_else(|e| panic!("{e}")));
    let url = cluster.borrow().url();
    let dir = tempfile::Builder::new()
        .prefix("outbox-crash-pg-")
        .tempdir()
        .unwrap();
    let broker_db = dir.path().join("broker.db");
    seed(&url, EVENTS);
    let outbox = Postgres::connect(&url);

    let mut server_crashes = 0;
    let run = crash_run(&outbox, &url, &broker_db, RELAYS, |kill| {
        if kill == SERVER_CRASH_BEFORE_KILL {
            cluster.borrow_mut().crash_and_restart().unwrap();
            server_crashes += 1;
        }
    });
    assert_eq!(server_crashes, 1);
    let duplicates = check_outcome(&outbox, &broker_db, &run);
    let published = outbox
        .read(|| outbox.store.counts(examples::outbox::now_ms()))
        .published;
    eprintln!(
        "{published} events published; {} of {KILLS} kills mid-work, {duplicates} duplicate deliveries, \
         {} events taken over after a lease ended, 1 server crash",
        run.kills_mid_work,
        run.held.len()
    );
    assert_eq!(published, EVENTS as u64);
    assert_eq!(run.kills_mid_work, KILLS, "every kill must land mid-work");
    // At most one publish is in flight per relay, so each kill can make at
    // most one duplicate; the server crash makes none (write-backs wait for
    // it to come back, within the lease).
    assert!(
        duplicates as usize <= KILLS,
        "{duplicates} duplicates from {KILLS} kills: more than one per kill"
    );
}
