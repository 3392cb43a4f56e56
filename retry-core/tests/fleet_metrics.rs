//! With the `metrics` and `redis` features: a fleet budget whose store goes
//! away says so in a metric (a counter of fall-backs and a gauge that is 1
//! while it falls back), and the gauge returns to 0 when the store answers
//! again. The refill thread records them, so the debugging recorder is
//! installed for the whole process: this file holds this one test.
#![cfg(all(feature = "metrics", feature = "redis"))]

mod support;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use retrykit_core::RetryBudget;
use retrykit_core::fleet::{FleetOptions, FleetState};
use retrykit_core::metrics::{BUDGET_FAIL_OPEN, BUDGET_FAILING_OPEN};
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;

/// Polls `done` until it holds (the refill thread runs on real time; this
/// bounds the test, it does not pace it).
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// One snapshot's (name, budget label, value) triples: taking a snapshot
/// drains the debugging recorder, so each step takes one and reads it.
type Seen = Vec<(String, String, DebugValue)>;

fn take(snapshotter: &Snapshotter) -> Seen {
    let snapshot = snapshotter.snapshot().into_vec().into_iter();
    snapshot
        .filter_map(|(key, _, _, value)| {
            let key = key.key();
            let budget = key.labels().find(|l| l.key() == "retry.budget")?;
            Some((key.name().to_owned(), budget.value().to_owned(), value))
        })
        .collect()
}

fn value<'s>(seen: &'s Seen, name: &str, budget: &str) -> Option<&'s DebugValue> {
    let mut found = seen.iter().filter(|(n, b, _)| n == name && b == budget);
    found.next().map(|(_, _, v)| v)
}

#[test]
fn a_fleet_budget_failing_open_is_counted_and_shown_by_a_gauge() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");

    let mut server = RedisServer::start();
    let budget = RetryBudget::builder()
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new("watched", server.url())
                .with_timeout(Duration::from_millis(500))
                .with_refresh(Duration::from_millis(2)),
        )
        .unwrap();
    let state = || budget.fleet_status().unwrap().state;
    wait_until("the fleet answers", || state() == FleetState::Fleet);

    server.kill();
    wait_until("the link fails open", || state() == FleetState::FailingOpen);
    // Many failed round trips, one fall-back: counted once.
    std::thread::sleep(Duration::from_millis(50));
    let seen = take(&snapshotter);
    assert_eq!(
        value(&seen, BUDGET_FAIL_OPEN, "watched"),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value(&seen, BUDGET_FAILING_OPEN, "watched"),
        Some(&DebugValue::Gauge(1.0.into()))
    );

    server.restart();
    wait_until("the fleet resumes", || state() == FleetState::Fleet);
    let seen = take(&snapshotter);
    assert_eq!(
        value(&seen, BUDGET_FAILING_OPEN, "watched"),
        Some(&DebugValue::Gauge(0.0.into()))
    );
}
