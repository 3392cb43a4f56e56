//! Fleet breakers against a private redis-server, two "hosts" in one
//! process: a breaker opened by one host's failures refuses on the other;
//! when Redis dies each host falls back to its local breaker, which takes
//! the fleet's last state, without a call waiting; when Redis is back the
//! fleet breaker resumes; each change of link is said once on stderr. Bad
//! options are refused naming the field.
#![cfg(feature = "redis")]

mod support;

use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::fleet::{FleetOptions, FleetState};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;
use support::wait_until;

fn host(store: &str) -> Arc<CircuitBreaker> {
    host_syncing(store, "shared", Duration::from_millis(2))
}

/// A host of breaker `name` whose link syncs every `refresh`.
fn host_syncing(store: &str, name: &str, refresh: Duration) -> Arc<CircuitBreaker> {
    let breaker = CircuitBreaker::builder()
        .name(name)
        .min_calls(4)
        .failure_ratio(0.5)
        .open_for(Duration::from_secs(60))
        .max_open_for(Duration::from_secs(60))
        .probe_every(Duration::from_secs(60))
        .open_jitter(0.0)
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new(name, store)
                .with_refresh(refresh)
                .with_timeout(Duration::from_millis(500)),
        )
        .unwrap();
    let breaker = Arc::new(breaker);
    wait_until(Duration::from_secs(5), "the fleet answers", || {
        breaker.fleet_status().unwrap().link == FleetState::Fleet
    });
    breaker
}

#[test]
fn one_hosts_failures_open_the_breaker_on_every_host_and_a_dead_redis_leaves_it_open() {
    let mut server = RedisServer::start();
    let (a, b) = (host(&server.url()), host(&server.url()));
    let now = Instant::now();
    let count = |host: &Arc<CircuitBreaker>, failed: bool, n: usize| {
        for _ in 0..n {
            let ticket = host.try_acquire(now).unwrap();
            host.record(ticket, now, failed);
        }
    };
    count(&b, false, 5);
    wait_until(Duration::from_secs(5), "host a sees b's successes", || {
        a.fleet_status().unwrap().attempts == 5
    });
    // 4 of 4 failed would open host a's own breaker; 4 of the fleet's 9
    // (44% < failure_ratio 50%) leaves the fleet, and so host a, closed.
    count(&a, true, 4);
    wait_until(
        Duration::from_secs(5),
        "host a's failures reach the fleet",
        || a.fleet_status().unwrap().attempts == 9,
    );
    let status = a.fleet_status().unwrap();
    assert_eq!((status.state, status.failures), (BreakerState::Closed, 4));
    assert_eq!(
        a.state(),
        BreakerState::Closed,
        "the fleet judges, not host a alone"
    );
    // The fifth failure makes 5 of 10: the fleet opens.
    count(&a, true, 1);
    wait_until(Duration::from_secs(5), "host b sees the fleet open", || {
        b.state() == BreakerState::Open
    });
    let status = b.fleet_status().unwrap();
    assert_eq!(
        (status.state, status.trips, status.attempts_sent),
        (BreakerState::Open, 1, 5)
    );
    let refused = b.try_acquire(Instant::now()).unwrap_err();
    assert!(refused.retry_in() > Duration::from_secs(50), "{refused}");
    assert_eq!(server.command("HGET {retry-breaker:shared} phase"), "$1");

    server.kill();
    wait_until(Duration::from_secs(5), "host b falls back", || {
        b.fleet_status().unwrap().link == FleetState::FailingOpen
    });
    // The local breaker took the fleet's state: still open, and no wait.
    let since = Instant::now();
    let refused = b.try_acquire(Instant::now()).unwrap_err();
    assert!(since.elapsed() < Duration::from_millis(50));
    assert_eq!(refused.state(), BreakerState::Open);
    assert!(refused.retry_in() > Duration::from_secs(50), "{refused}");
    assert_eq!(b.status(Instant::now()).state, BreakerState::Open);

    server.restart();
    wait_until(Duration::from_secs(5), "the fleet breaker resumes", || {
        b.fleet_status().unwrap().link == FleetState::Fleet
    });
    let status = b.fleet_status().unwrap();
    assert_eq!((status.fallbacks, status.recoveries), (1, 1), "{status:?}");
    // A restarted Redis forgot the breaker: the fleet is closed again.
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn failures_that_open_the_fleet_send_their_round_trip_at_once() {
    let server = RedisServer::start();
    // A refresh of 10 s: a round trip that waited for it would leave the
    // fleet closed for the whole test.
    let a = host_syncing(&server.url(), "prompt", Duration::from_secs(10));
    let now = Instant::now();
    // Three failures do not meet min_calls: nothing is sent before the
    // refresh, and the fleet stays closed.
    for _ in 0..3 {
        let ticket = a.try_acquire(now).unwrap();
        a.record(ticket, now, true);
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(a.state(), BreakerState::Closed);
    // The fourth meets the rule: its round trip goes now.
    let ticket = a.try_acquire(now).unwrap();
    a.record(ticket, now, true);
    let sent = Instant::now();
    wait_until(Duration::from_secs(5), "the fleet opens", || {
        a.state() == BreakerState::Open
    });
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "well before the 10 s refresh"
    );
    assert_eq!(server.command("HGET {retry-breaker:prompt} phase"), "$1");
}

/// One host through a Redis outage, kept a few refresh rounds (2 ms
/// each) in each link state, so that a line said every round would show.
/// Run alone as a child by the test below, which reads its stderr.
#[test]
fn one_host_through_a_redis_outage() {
    let mut server = RedisServer::start();
    let b = host(&server.url());
    server.kill();
    wait_until(Duration::from_secs(5), "the host falls back", || {
        b.fleet_status().unwrap().link == FleetState::FailingOpen
    });
    std::thread::sleep(Duration::from_millis(10));
    server.restart();
    wait_until(Duration::from_secs(5), "the fleet breaker resumes", || {
        b.fleet_status().unwrap().link == FleetState::Fleet
    });
    std::thread::sleep(Duration::from_millis(10));
    let status = b.fleet_status().unwrap();
    assert_eq!((status.fallbacks, status.recoveries), (1, 1), "{status:?}");
    // What follows (the server stopped as the test ends) is not the outage.
    eprintln!("{OUTAGE_OVER}");
}

/// What the outage's child says once the outage is over.
const OUTAGE_OVER: &str = "one_host_through_a_redis_outage: over";

#[test]
fn the_fall_back_and_the_resume_are_each_said_once_naming_the_breaker_and_redis() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "one_host_through_a_redis_outage"])
        .args(["--nocapture", "--test-threads", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (outage, _) = stderr.split_once(OUTAGE_OVER).expect("the outage ended");
    let said = |what: &str| {
        let lines = outage.lines();
        lines
            .filter(|l| l.starts_with("retry: fleet breaker `shared`: Redis at redis://127.0.0.1:"))
            .filter(|l| l.contains(what))
            .count()
    };
    let fell = "failing open to this process's local breaker until it answers";
    let resumed = "answers again: the fleet breaker resumes (the fleet's state: closed)";
    assert_eq!((said(fell), said(resumed)), (1, 1), "{stderr}");
}

#[test]
fn a_fleet_breaker_without_a_redis_store_is_refused_naming_the_field() {
    for store in ["", "postgres://db/"] {
        let err = CircuitBreaker::builder()
            .name("db")
            .build()
            .unwrap()
            .with_fleet(FleetOptions::new("db", store))
            .unwrap_err();
        let problem = &err.problems()[0];
        assert_eq!(problem.field, "store");
        assert!(problem.fix.contains("redis://"), "{}", problem.fix);
        assert!(err.to_string().contains("circuit breaker `db`"), "{err}");
    }
}
