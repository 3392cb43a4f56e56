//! A fleet of three processes sharing one circuit breaker in a private
//! redis-server (this test binary runs itself as the hosts). Each host runs
//! client threads that ask the breaker before every attempt and send the
//! attempts it lets through to a "server": a script in the same Redis that
//! counts each arrival under the fleet breaker's phase and period at that
//! moment, so the counts are the server's, not the hosts' own.
//!
//! The parent takes the dependency down until the fleet breaker has opened
//! twice, then brings it back and waits until the breaker closes. Checked
//! against the bounds derived in the `fleet` module docs:
//! - every half-open period lets at most `probes` probes reach the server,
//!   and the one that closes the breaker exactly `probes`, although every
//!   host's clients keep asking (three local breakers would send 3 × probes);
//! - no plain attempt reaches the server while the fleet is half-open;
//! - attempts reaching it during each open period stay within
//!   H × (in-flight + rate × (refresh + timeout));
//! - each host says each fleet state change once (one opening, one closing).
#![cfg(feature = "redis")]

mod support;

use retrykit_core::breaker::CircuitBreaker;
use retrykit_core::fleet::{FleetOptions, FleetState};
use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;

const HOSTS: u64 = 3;
const CLIENTS: u64 = 8;
const PROBES: u32 = 3;
/// Each client's pause after an attempt or a refusal: its rate is at most
/// one attempt per PACE.
const PACE: Duration = Duration::from_millis(20);
/// How long the dependency takes to answer an attempt.
const LATENCY: Duration = Duration::from_millis(40);
const REFRESH: Duration = Duration::from_millis(5);
const TIMEOUT: Duration = Duration::from_millis(100);
const OPEN_FOR: Duration = Duration::from_millis(300);
const NAME: &str = "fleet-breaker-test";
/// Nothing in the test may take longer (a hang fails it).
const LIMIT: Duration = Duration::from_secs(60);

/// The server: counts an arrival under the breaker's phase and period now,
/// and answers whether the dependency is up and whether to stop.
const SERVER: &str = r"
local phase = redis.call('HGET', KEYS[1], 'phase') or '0'
local period = redis.call('HGET', KEYS[1], 'period') or '0'
redis.call('HINCRBY', KEYS[2], ARGV[1] .. ':' .. phase .. ':' .. period, 1)
return { tonumber(redis.call('GET', KEYS[3]) or '0'), tonumber(redis.call('GET', KEYS[4]) or '0') }
";

fn breaker_key() -> String {
    FleetOptions::new(NAME, "").breaker_key()
}

/// The host's side: runs only when the parent started this binary as a host.
#[test]
fn breaker_host() {
    let Ok(store) = std::env::var("BREAKER_HOST_STORE") else {
        return; // not a host: the parent test below starts the hosts
    };
    let breaker = CircuitBreaker::builder()
        .name(NAME)
        .min_calls(20)
        .failure_ratio(0.5)
        .window(Duration::from_secs(10))
        .open_for(OPEN_FOR)
        .max_open_for(OPEN_FOR)
        .open_jitter(0.0)
        .probes(PROBES)
        .build()
        .unwrap()
        .with_fleet(
            FleetOptions::new(NAME, store.clone())
                .with_refresh(REFRESH)
                .with_timeout(TIMEOUT),
        )
        .unwrap();
    let breaker = Arc::new(breaker);
    let since = Instant::now();
    while breaker.fleet_status().unwrap().link != FleetState::Fleet {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "Redis never answered"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let refused = Arc::new(AtomicU64::new(0));
    let client = redis::Client::open(store).unwrap();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (breaker, refused) = (breaker.clone(), refused.clone());
            let mut conn = client.get_connection().unwrap();
            let server = redis::Script::new(SERVER);
            std::thread::spawn(move || {
                loop {
                    assert!(since.elapsed() < LIMIT, "the host ran too long");
                    let ticket = match breaker.try_acquire(Instant::now()) {
                        Ok(ticket) => ticket,
                        Err(open) => {
                            // A refused call asks again when told to (a
                            // round trip, while the fleet leases probes).
                            refused.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(open.retry_in().min(PACE));
                            continue;
                        }
                    };
                    let kind = if ticket.is_probe() { "probe" } else { "plain" };
                    let (up, stop): (u64, u64) = server
                        .key(breaker_key())
                        .key("server")
                        .key("dependency_up")
                        .key("stop")
                        .arg(kind)
                        .invoke(&mut conn)
                        .unwrap();
                    // The dependency takes a while to answer, so every host's
                    // clients come asking while the probes are out.
                    std::thread::sleep(LATENCY);
                    breaker.record(ticket, Instant::now(), up == 0);
                    if stop == 1 {
                        return;
                    }
                    std::thread::sleep(PACE);
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let s = breaker.fleet_status().unwrap();
    println!(
        "BREAKER-RESULT refused={} fallbacks={} state={}",
        refused.load(Ordering::Relaxed),
        s.fallbacks,
        s.state
    );
}

fn start_host(store: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "breaker_host", "--nocapture", "--test-threads=1"])
        .env("BREAKER_HOST_STORE", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Polls `done` until it holds, failing after [`LIMIT`].
fn wait_until(since: Instant, what: &str, mut done: impl FnMut() -> bool) {
    while !done() {
        assert!(since.elapsed() < LIMIT, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The breaker hash's integer field `field` (0 while it is not there).
fn field(conn: &mut redis::Connection, field: &str) -> u64 {
    redis::cmd("HGET")
        .arg(breaker_key())
        .arg(field)
        .query::<Option<u64>>(conn)
        .unwrap()
        .unwrap_or(0)
}

#[test]
fn three_hosts_send_the_configured_probes_and_few_attempts_while_open() {
    let server = RedisServer::start();
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let since = Instant::now();
    assert_eq!(server.command("SET dependency_up 0"), "+OK");
    let hosts: Vec<Child> = (0..HOSTS).map(|_| start_host(&server.url())).collect();
    // The outage lasts until the fleet breaker has opened twice in a row
    // (its first probes failed), then the dependency comes back.
    wait_until(since, "the fleet breaker opened twice", || {
        field(&mut conn, "trips") >= 2
    });
    assert_eq!(server.command("SET dependency_up 1"), "+OK");
    wait_until(since, "the fleet breaker closed", || {
        field(&mut conn, "phase") == 0 && field(&mut conn, "trips") == 0
    });
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.command("SET stop 1"), "+OK");
    let mut outputs = Vec::new();
    for mut host in hosts {
        while host.try_wait().unwrap().is_none() {
            if since.elapsed() > LIMIT {
                let _ = host.kill();
                panic!("a host hung");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let out = host.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert!(out.status.success(), "a host failed:\n{stdout}\n{stderr}");
        outputs.push((stdout, stderr));
    }

    // The server's counts: "kind:phase:period" -> arrivals.
    let counts: HashMap<String, u64> = redis::cmd("HGETALL")
        .arg("server")
        .query(&mut conn)
        .unwrap();
    let final_period = field(&mut conn, "period");
    let at = |kind: &str, phase: u64, period: u64| {
        counts
            .get(&format!("{kind}:{phase}:{period}"))
            .copied()
            .unwrap_or(0)
    };
    let mut half_open_periods = 0;
    for period in 0..=final_period {
        let probes = at("probe", 2, period);
        assert!(
            probes <= u64::from(PROBES),
            "{probes} probes in half-open period {period}: {counts:?}"
        );
        half_open_periods += u64::from(probes > 0);
        assert_eq!(
            at("plain", 2, period),
            0,
            "plain attempts while half-open: {counts:?}"
        );
        // Per host: every client's attempt in flight, and one per PACE per
        // client until its next round trip (refresh + timeout).
        let rounds = (REFRESH + TIMEOUT).as_millis().div_ceil(PACE.as_millis()) as u64;
        let bound = HOSTS * CLIENTS * (1 + rounds);
        let open = at("plain", 1, period);
        assert!(
            open <= bound,
            "{open} attempts in open period {period}, bound {bound}: {counts:?}"
        );
    }
    assert!(half_open_periods >= 2, "{counts:?}");
    // The closing half-open period is the one before the last transition.
    let closing = (final_period + 255) % 256;
    assert_eq!(at("probe", 2, closing), u64::from(PROBES), "{counts:?}");

    let mut refused = 0;
    for (stdout, stderr) in &outputs {
        let result = stdout
            .lines()
            .find_map(|l| l.split_once("BREAKER-RESULT "))
            .map(|(_, r)| r);
        let result = result.unwrap_or_else(|| panic!("no result:\n{stdout}\n{stderr}"));
        assert!(
            result.contains("fallbacks=0") && result.contains("state=closed"),
            "{result}"
        );
        refused += result
            .split_whitespace()
            .find_map(|p| p.strip_prefix("refused="))
            .unwrap()
            .parse::<u64>()
            .unwrap();
        let said = |what: &str| stderr.lines().filter(|l| l.contains(what)).count();
        assert_eq!(said("(closed -> open)"), 1, "{stderr}");
        assert_eq!(said("-> closed"), 1, "{stderr}");
        assert!(
            said(&format!("fleet circuit breaker `{NAME}`")) >= 2,
            "{stderr}"
        );
    }
    // Many calls arrived at the open and half-open breaker and were held back.
    assert!(refused >= 100, "only {refused} refusals");
    eprintln!("server counts: {counts:?}; refused {refused}");
}
