//! Fleet budgets against a private redis-server: hosts sharing a budget stay
//! within ratio × calls + floor + one lease per host; an unreachable store
//! fails open to the local budget without making a call wait; a store that
//! comes back is used again.
#![cfg(feature = "redis")]

mod support;

use retrykit_core::{
    RetryBudget,
    fleet::{FleetOptions, FleetState},
};
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;
use support::wait_until;

/// Polls `done` until it holds, failing after `limit` (the background thread
/// runs on real time; this bounds the test, it does not pace it).
fn fleet_budget(name: &str, store: &str, ratio: f64, max_lease: u32) -> RetryBudget {
    RetryBudget::builder()
        .ratio(ratio)
        .min_per_sec(0.0)
        .window(Duration::from_secs(60))
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new(name, store)
                .with_timeout(Duration::from_millis(500))
                .with_refresh(Duration::from_millis(2))
                .with_max_lease(max_lease),
        )
        .unwrap()
}

fn state(budget: &RetryBudget) -> FleetState {
    budget.fleet_status().unwrap().state
}

#[test]
fn hosts_sharing_a_budget_stay_within_the_ratio_plus_one_lease_each() {
    let server = RedisServer::start();
    let (ratio, max_lease, hosts) = (0.1, 4u32, 3usize);
    let budgets: Vec<RetryBudget> = (0..hosts)
        .map(|_| fleet_budget("shared", &server.url(), ratio, max_lease))
        .collect();
    let now = Instant::now();
    for b in &budgets {
        wait_until(Duration::from_secs(5), "the fleet answers", || {
            state(b) == FleetState::Fleet
        });
    }
    // Each host records 100 calls; all of them reach Redis.
    for b in &budgets {
        for _ in 0..100 {
            b.deposit(now);
        }
    }
    wait_until(Duration::from_secs(5), "every call reached Redis", || {
        budgets
            .iter()
            .map(|b| b.fleet_status().unwrap().calls_sent)
            .sum::<u64>()
            == 300
    });
    // Then every host retries until refused many times over.
    let mut granted = 0u64;
    let since = Instant::now();
    while since.elapsed() < Duration::from_millis(300) {
        for b in &budgets {
            granted += u64::from(b.try_withdraw(now));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let bound = (ratio * 300.0) as u64 + hosts as u64 * u64::from(max_lease);
    assert!(granted <= bound, "{granted} retries granted, bound {bound}");
    // The fleet, not each host, decided: three local budgets would grant 30 each.
    assert!(
        granted >= 30 - 1,
        "{granted} retries granted of the fleet's 30"
    );
    assert!(
        granted < 3 * 30,
        "{granted}: as many as three local budgets"
    );
    assert_eq!(server.command("EXISTS {retry-budget:shared}"), ":1");
}

#[test]
fn an_unreachable_store_fails_open_to_the_local_budget_without_waiting() {
    let mut server = RedisServer::start();
    let url = server.url();
    server.kill();
    let budget = fleet_budget("gone", &url, 0.5, 4);
    let now = Instant::now();
    for _ in 0..10 {
        budget.deposit(now);
    }
    wait_until(Duration::from_secs(5), "the link fails open", || {
        state(&budget) == FleetState::FailingOpen
    });
    let since = Instant::now();
    let granted = (0..20).filter(|_| budget.try_withdraw(now)).count();
    assert!(
        since.elapsed() < Duration::from_millis(50),
        "{:?}",
        since.elapsed()
    );
    assert_eq!(granted, 5, "the local budget: half of 10 calls");
    assert_eq!(budget.fleet_status().unwrap().fallbacks, 1);
}

#[test]
fn a_store_that_comes_back_is_used_again() {
    let mut server = RedisServer::start();
    let budget = fleet_budget("back", &server.url(), 0.1, 4);
    wait_until(Duration::from_secs(5), "the fleet answers", || {
        state(&budget) == FleetState::Fleet
    });
    server.kill();
    wait_until(Duration::from_secs(5), "the link fails open", || {
        state(&budget) == FleetState::FailingOpen
    });
    server.restart();
    wait_until(Duration::from_secs(5), "the fleet resumes", || {
        state(&budget) == FleetState::Fleet
    });
    let status = budget.fleet_status().unwrap();
    assert_eq!((status.fallbacks, status.recoveries), (1, 1), "{status:?}");
}

#[test]
fn a_store_that_is_not_a_redis_url_is_refused_naming_the_field() {
    let err = RetryBudget::builder()
        .build()
        .unwrap()
        .with_fleet(FleetOptions::new("x", "postgres://db/"))
        .unwrap_err();
    let problem = &err.problems()[0];
    assert_eq!(problem.field, "store");
    assert!(problem.fix.contains("redis://"), "{}", problem.fix);
}

#[test]
fn a_calls_report_says_when_its_fleet_budget_failed_open() {
    let mut server = RedisServer::start();
    let url = server.url();
    server.kill();
    let budget = std::sync::Arc::new(fleet_budget("report", &url, 0.5, 4));
    wait_until(Duration::from_secs(5), "the link fails open", || {
        state(&budget) == FleetState::FailingOpen
    });
    let policy = retrykit_core::Policy::builder()
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(1))
        .max_attempts(2)
        .budget(Some(budget))
        .build()
        .unwrap();
    let (result, report) =
        retrykit_core::Retry::blocking(&policy).call_blocking_with_report(|| {
            Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
        });
    assert!(result.is_err());
    assert!(report.budget_failing_open, "{report:?}");

    let local = retrykit_core::Policy::builder()
        .max_attempts(1)
        .build()
        .unwrap();
    let (_, report) = retrykit_core::Retry::blocking(&local)
        .call_blocking_with_report(|| Ok::<_, std::io::Error>(()));
    assert!(!report.budget_failing_open);
}
