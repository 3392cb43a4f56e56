//! Issue 41 point 12: a copy of a fleet breaker made by `to_builder()` is a
//! fleet breaker on the same store, key and options (it used to be silently
//! local), against a private redis-server: what the original's failures
//! teach the fleet, the copy refuses. A copy asked to be local, or
//! simulated, never reaches the store.
#![cfg(feature = "redis")]

mod support;

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::fleet::{FleetOptions, FleetState};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;
use support::wait_until;

fn fleet_answers(b: &CircuitBreaker) -> bool {
    b.fleet_status()
        .is_some_and(|s| s.link == FleetState::Fleet)
}

/// A fleet breaker that opens for a minute on 2 failures of 4 attempts.
fn original(store: &str) -> CircuitBreaker {
    CircuitBreaker::builder()
        .name("copied")
        .min_calls(4)
        .failure_ratio(0.5)
        .open_for(Duration::from_secs(60))
        .max_open_for(Duration::from_secs(60))
        .probe_every(Duration::from_secs(60))
        .open_jitter(0.0)
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new("copied", store)
                .with_refresh(Duration::from_millis(3))
                .with_timeout(Duration::from_millis(400)),
        )
        .unwrap()
}

#[test]
fn a_copy_of_a_fleet_breaker_shares_its_store_and_refuses_what_the_original_opened() {
    let server = RedisServer::start();
    let a = Arc::new(original(&server.url()));
    let copy = Arc::new(a.to_builder().build().unwrap());
    let options = copy.fleet_options().expect("the copy kept the Redis link");
    assert_eq!(Some(options), a.fleet_options());
    assert_eq!(options.breaker_key(), "{retry-breaker:copied}");
    assert_eq!(options.refresh(), Duration::from_millis(3));
    assert!(a.same_settings(&copy), "same settings, name and fleet");
    // The copy can be changed and stays on the fleet.
    let changed = a.to_builder().probes(2).build().unwrap();
    assert_eq!(changed.fleet_options(), a.fleet_options());
    assert!(!a.same_settings(&changed));
    drop(changed);

    wait_until(Duration::from_secs(5), "both links answer", || {
        fleet_answers(&a) && fleet_answers(&copy)
    });
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = a.try_acquire(now).unwrap();
        a.record(ticket, now, true);
    }
    wait_until(
        Duration::from_secs(5),
        "the copy sees the fleet open",
        || copy.state() == BreakerState::Open,
    );
    let refused = copy.try_acquire(Instant::now()).unwrap_err();
    assert_eq!(refused.state(), BreakerState::Open);
    assert!(refused.retry_in() > Duration::from_secs(50), "{refused}");
    assert_eq!(copy.fleet_status().unwrap().trips, 1);
}

#[test]
fn a_copy_asked_to_be_local_or_simulated_never_reaches_the_store() {
    let server = RedisServer::start();
    let a = original(&server.url());
    let local = a.to_builder().fleet(None).build().unwrap();
    assert!(local.fleet_options().is_none() && local.fleet_status().is_none());
    assert!(
        !a.same_settings(&local),
        "a local copy is not the fleet breaker"
    );
    let simulated = a.to_builder().simulated(Instant::now()).build().unwrap();
    assert!(simulated.fleet_options().is_none());
    // Opened locally, neither tells the fleet.
    let local = Arc::new(local);
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = local.try_acquire(now).unwrap();
        local.record(ticket, now, true);
    }
    assert_eq!(local.state(), BreakerState::Open);
    wait_until(
        Duration::from_secs(5),
        "the original's link answers",
        || fleet_answers(&a),
    );
    let fleet = a.fleet_status().unwrap();
    assert_eq!((fleet.state, fleet.trips), (BreakerState::Closed, 0));
    assert_eq!(a.state(), BreakerState::Closed);
}
