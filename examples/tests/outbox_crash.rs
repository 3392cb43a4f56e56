//! Kills the relay with SIGKILL at 20 random moments, restarting it each
//! time, then checks that nothing was lost and no count went backwards.

use examples::outbox::{EventState, FakeBroker, Store};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const EVENTS: u32 = 80;
const KILLS: usize = 20;

fn outbox() -> Command {
    Command::new(env!("CARGO_BIN_EXE_outbox"))
}

fn relay(db: &Path, broker_db: &Path, seed: u64) -> Command {
    let mut cmd = outbox();
    cmd.args(["relay", "--db"])
        .arg(db)
        .arg("--broker-db")
        .arg(broker_db)
        .args([
            "--profile",
            "test",
            "--failure-rate",
            "0.3",
            "--throttle-rate",
            "0.05",
        ])
        .args([
            "--reject-rate",
            "0",
            "--outage",
            "0s",
            "--seed",
            &seed.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    cmd
}

fn attempts(db: &Path) -> HashMap<String, u32> {
    Store::open(db)
        .unwrap()
        .events()
        .unwrap()
        .into_iter()
        .map(|e| (e.event_id, e.publish_calls))
        .collect()
}

#[test]
fn sigkill_at_random_moments_loses_nothing_and_never_resets_a_count() {
    // Removed when dropped, whether the test passes or panics.
    let dir = tempfile::Builder::new()
        .prefix("outbox-crash-")
        .tempdir()
        .unwrap();
    let (db, broker_db) = (dir.path().join("outbox.db"), dir.path().join("broker.db"));

    let status = outbox()
        .args(["seed", "--events", &EVENTS.to_string(), "--db"])
        .arg(&db)
        .status()
        .unwrap();
    assert!(status.success());

    let mut dice = SmallRng::seed_from_u64(2026);
    let mut before = attempts(&db);
    let mut killed_mid_run = 0;
    for round in 0..KILLS {
        let mut child = relay(&db, &broker_db, round as u64).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(dice.random_range(2..40)));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let now = attempts(&db);
        assert_eq!(now.len(), EVENTS as usize, "an event row disappeared");
        for (id, n) in &now {
            let was = before[id];
            assert!(
                *n >= was,
                "{id}: attempts went from {was} back to {n} after a restart"
            );
        }
        before = now;
    }
    assert!(
        killed_mid_run > 0,
        "every relay finished before it could be killed"
    );

    // A last relay runs to the end.
    let status = relay(&db, &broker_db, 99).status().unwrap();
    assert!(status.success());

    let store = Store::open(&db).unwrap();
    let events = store.events().unwrap();
    let broker = FakeBroker::open(&broker_db, Default::default()).unwrap();
    let mut delivered: BTreeMap<String, u32> = BTreeMap::new();
    for id in broker.deliveries().unwrap() {
        *delivered.entry(id).or_default() += 1;
    }
    for e in &events {
        assert_eq!(
            e.state,
            EventState::Published,
            "{} ended {:?}",
            e.event_id,
            e.state
        );
        assert!(
            delivered.contains_key(&e.event_id),
            "{} was never delivered",
            e.event_id
        );
        // The attempt log is strictly increasing: no restart ever reset it.
        let log = store.attempt_log(&e.event_id).unwrap();
        assert!(
            log.windows(2).all(|w| w[0] < w[1]),
            "{}: {log:?}",
            e.event_id
        );
        assert_eq!(log.last().copied(), Some(e.publish_calls));
    }
    // Duplicates are possible (killed after the broker accepted, before the
    // row was marked) and identifiable by event id; every id is a real event.
    assert_eq!(delivered.len(), events.len());
    let duplicates: u32 = delivered.values().map(|n| n - 1).sum();
    eprintln!("{killed_mid_run} kills mid-run, {duplicates} duplicate deliveries");
}
