//! A fleet breaker's release against a private redis-server, two "hosts"
//! in one process: when the fleet closes, the hosts release the calls they
//! held back at the fleet's one rate, kept in Redis (not one rate each);
//! one host's success raises the rate the other sees, one host's throttled
//! answer cuts it; when Redis goes away a host's release goes on locally.
#![cfg(feature = "redis")]

mod support;

use retrykit_core::Class;
use retrykit_core::breaker::{BreakerState, CircuitBreaker, Ticket};
use retrykit_core::fleet::{FleetOptions, FleetState};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;
use support::wait_until;

/// A host whose release starts at one call per second: a place is a rare
/// event, so the test can count them on a real clock.
fn host(store: &str) -> Arc<CircuitBreaker> {
    host_ramping(store, Duration::from_secs(1))
}

fn host_ramping(store: &str, ramp: Duration) -> Arc<CircuitBreaker> {
    let breaker = CircuitBreaker::builder()
        .name("released")
        .min_calls(4)
        .failure_ratio(0.5)
        .open_for(Duration::from_millis(30))
        .max_open_for(Duration::from_millis(30))
        .probe_every(Duration::from_millis(30))
        .open_jitter(0.0)
        .release_ramp(ramp)
        .seed(7)
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new("released", store)
                .with_refresh(Duration::from_millis(2))
                .with_timeout(Duration::from_millis(500)),
        )
        .unwrap();
    let breaker = Arc::new(breaker);
    wait_until(Duration::from_secs(5), "the fleet answers", || {
        breaker.fleet_status().unwrap().link == FleetState::Fleet
    });
    breaker
}

/// Asks `b` until it lets an attempt through.
fn let_through(b: &Arc<CircuitBreaker>, what: &str) -> Ticket {
    let mut got = None;
    wait_until(Duration::from_secs(5), what, || {
        got = b.try_acquire(Instant::now()).ok();
        got.is_some()
    });
    got.unwrap()
}

fn rate(b: &CircuitBreaker) -> u64 {
    b.fleet_status().unwrap().release_per_sec
}

#[test]
fn two_hosts_release_at_the_fleets_one_rate_and_each_ones_answers_move_it() {
    let mut server = RedisServer::start();
    let (a, b) = (host(&server.url()), host(&server.url()));
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = a.try_acquire(now).unwrap();
        a.record(ticket, now, true);
    }
    wait_until(Duration::from_secs(5), "host b sees the fleet open", || {
        b.state() == BreakerState::Open
    });
    let probe = let_through(&a, "host a holds the fleet's probe");
    assert!(probe.is_probe());
    a.record(probe, Instant::now(), false);
    for host in [&a, &b] {
        wait_until(Duration::from_secs(5), "the hosts see the release", || {
            let status = host.fleet_status().unwrap();
            status.state == BreakerState::Closed && status.releasing
        });
        assert_eq!(rate(host), 1, "one call per release_ramp (1 s)");
    }

    // Both hosts ask for 200 ms: the fleet's first place goes to one of
    // them and the next comes a second later. With a rate per host, each
    // would have sent its first call at once.
    let started = Instant::now();
    let mut sent = Vec::new();
    while started.elapsed() < Duration::from_millis(200) {
        for host in [&a, &b] {
            match host.try_acquire(Instant::now()) {
                Ok(ticket) => sent.push((Arc::clone(host), ticket)),
                Err(refused) => {
                    assert_eq!(refused.state(), BreakerState::Closed);
                    assert!(refused.retry_in() >= Duration::from_millis(2), "{refused}");
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let places = 1 + started.elapsed().as_millis() / 1000;
    assert!(!sent.is_empty(), "the fleet's first place is free");
    assert!(sent.len() as u128 <= places, "{} sent", sent.len());

    // One host's success raises the rate every host sees.
    let (first, ticket) = sent.remove(0);
    first.record(ticket, Instant::now(), false);
    for host in [&a, &b] {
        wait_until(
            Duration::from_secs(5),
            "the raised rate reaches both",
            || rate(host) == 2,
        );
    }
    // Host b's throttled answer cuts it for host a too, and opens nothing.
    let ticket = let_through(&b, "host b gets a place at 2 a second");
    b.record_class(ticket, Instant::now(), Some(Class::THROTTLED));
    wait_until(
        Duration::from_secs(5),
        "the cut rate reaches host a",
        || rate(&a) == 1,
    );
    assert_eq!(a.state(), BreakerState::Closed);
    assert_eq!(b.fleet_status().unwrap().state, BreakerState::Closed);

    // Redis goes away: host b releases alone, from its first step.
    server.kill();
    wait_until(Duration::from_secs(5), "host b falls back", || {
        b.fleet_status().unwrap().link == FleetState::FailingOpen
    });
    let now = Instant::now();
    let alone = b.try_acquire(now).expect("the local release's first place");
    assert!(b.releasing(), "the local release goes on");
    let refused = b.try_acquire(now).unwrap_err();
    assert_eq!(refused.state(), BreakerState::Closed, "{refused}");
    b.record(alone, now, false);
}

/// Opens the fleet through `a`'s failures and closes it through its probe.
fn open_and_close(a: &Arc<CircuitBreaker>) {
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = a.try_acquire(now).unwrap();
        a.record(ticket, now, true);
    }
    wait_until(Duration::from_secs(5), "the fleet opens", || {
        a.state() == BreakerState::Open
    });
    let probe = let_through(a, "host a holds the fleet's probe");
    assert!(probe.is_probe());
    a.record(probe, Instant::now(), false);
    wait_until(Duration::from_secs(5), "the release starts", || {
        a.fleet_status().unwrap().releasing
    });
}

#[test]
fn the_fleets_release_ends_under_steady_traffic_once_every_ask_is_met() {
    let server = RedisServer::start();
    let a = host_ramping(&server.url(), Duration::from_millis(5));
    open_and_close(&a);
    // One call every 3 ms, each succeeding: the rate soon exceeds what is
    // asked, and four ramp steps (20 ms) later the release is over.
    wait_until(Duration::from_secs(5), "the release ends", || {
        if let Ok(ticket) = a.try_acquire(Instant::now()) {
            a.record(ticket, Instant::now(), false);
        }
        std::thread::sleep(Duration::from_millis(1));
        !a.fleet_status().unwrap().releasing
    });
    assert!(a.try_acquire(Instant::now()).is_ok(), "calls go freely");
    assert_eq!(a.state(), BreakerState::Closed);
}

#[test]
fn a_host_that_falls_back_during_the_release_says_it_releases_alone() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "two_hosts_release_at_the_fleets_one_rate_and_each_ones_answers_move_it",
        ])
        .args(["--nocapture", "--test-threads", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let said = stderr
        .lines()
        .filter(|l| l.starts_with("retry: fleet breaker `released`: Redis at redis://127.0.0.1:"))
        .filter(|l| l.contains("failing open"))
        .filter(|l| {
            l.contains("the release after the fleet's close goes on at this host's own rate")
        })
        .count();
    // Host b falls back mid-release; host a too, once Redis is gone.
    assert!((1..=2).contains(&said), "{stderr}");
}
