//! Kills the relay with SIGKILL 20 times, each time mid-work (after it
//! recorded progress since its restart, at a seeded random point in its next
//! few publishes), restarting it each time; then checks that nothing was
//! lost, no count went backwards, every event a dead relay held was taken
//! over when its lease ended, and that the test saw the duplicates such
//! kills make. See `crash/mod.rs` for the harness.

mod crash;

use crash::{CrashRun, KILLS, Outbox, check_outcome, crash_run, seed};
use examples::outbox::{ClaimRecord, EventRow, SqliteStore};
use std::path::{Path, PathBuf};

/// Enough events that work is left at the last kill (a relay handles a few
/// per life before it is killed).
const EVENTS: usize = 300;

/// The outbox file, opened afresh for each read.
struct SqliteFile(PathBuf);

impl SqliteFile {
    fn store(&self) -> SqliteStore {
        SqliteStore::open(&self.0).unwrap()
    }
}

impl Outbox for SqliteFile {
    fn events(&self) -> Vec<EventRow> {
        self.store().events().unwrap()
    }
    fn attempt_log(&self, event_id: &str) -> Vec<u32> {
        self.store().attempt_log(event_id).unwrap()
    }
    fn claim_log(&self, event_id: &str) -> Vec<ClaimRecord> {
        self.store().claim_log(event_id).unwrap()
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn sigkill_mid_work_loses_nothing_and_never_resets_a_count() {
    // Removed when dropped, whether the test passes or panics.
    let dir = tempfile::Builder::new()
        .prefix("outbox-crash-")
        .tempdir()
        .unwrap();
    let (db, broker_db) = (dir.path().join("outbox.db"), dir.path().join("broker.db"));
    seed(path_str(&db), EVENTS);
    let outbox = SqliteFile(db.clone());

    let run: CrashRun = crash_run(&outbox, path_str(&db), &broker_db, 1, |_| {});
    let duplicates = check_outcome(&outbox, &broker_db, &run);
    eprintln!(
        "{} of {KILLS} kills mid-work, {duplicates} duplicate deliveries, {} events taken over after a lease ended",
        run.kills_mid_work,
        run.held.len()
    );
    assert_eq!(run.kills_mid_work, KILLS, "every kill must land mid-work");
    // A kill between the broker's log and the relay's write-back makes a
    // duplicate; with 20 kills inside publishes, some must have: if none
    // did, the test could not see one.
    assert!(duplicates >= 1, "no duplicate in {KILLS} kills mid-publish");
    assert!(
        duplicates as usize <= KILLS,
        "{duplicates} duplicates from {KILLS} kills: more than one per kill"
    );
}
