//! The crash-test harness shared by the SQLite and PostgreSQL crash tests:
//! relay processes, kills that land mid-work, and the checks that nothing
//! was lost, no count went backwards and no dead relay kept an event past
//! its lease.
//!
//! A kill lands mid-work by construction, not by luck: the harness waits
//! until the relay has recorded an outcome since it (re)started, then kills
//! it at a seeded random point within its next few publishes, while events
//! are still pending; each kill is then checked to have found the relay
//! alive with work left. The broker answers 6 ms after it logs a delivery,
//! so some kills fall between the broker's log and the relay's write-back:
//! those are the duplicates an at-least-once relay cannot avoid.

#![allow(dead_code)] // each test binary uses its own part

use examples::outbox::{ClaimRecord, EventRow, EventState, FakeBroker, now_ms};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How many relays are killed, one at a time.
pub const KILLS: usize = 20;
/// The relays' lease: twice the test profile's `publish` deadline (1 s), and a little more.
pub const LEASE_MS: i64 = 2500;
/// How long after a lease ends another relay may take to claim the event:
/// it may be in the middle of a pass, or waiting for the database to come back.
pub const TAKEOVER_SLACK_MS: i64 = 3000;
/// Events claimed per pass: small, so a relay's progress shows often.
const BATCH: &str = "4";
/// The kill comes at a seeded random point in this window after the relay
/// recorded progress: about four publishes (2 ms to accept, 6 ms to answer).
const KILL_WINDOW_US: u64 = 36_000;
/// The seed of the kill points and of the choice of relay.
const SEED: u64 = 2026;

/// The `outbox` binary.
pub fn outbox() -> Command {
    Command::new(env!("CARGO_BIN_EXE_outbox"))
}

/// Places `events` orders in `database` with `outbox seed`.
pub fn seed(database: &str, events: usize) {
    let status = outbox()
        .args(["seed", "--events", &events.to_string()])
        .arg(format!("--database={database}"))
        .status()
        .unwrap();
    assert!(status.success(), "outbox seed failed");
}

/// A relay process and the lines it prints, one per pass.
pub struct RelayProcess {
    pub name: String,
    child: Child,
    passes: Receiver<String>,
    progressed: bool,
}

impl RelayProcess {
    /// Starts `outbox relay` on `database`, with a flaky broker that answers
    /// after logging a delivery, and the test profile's millisecond waits.
    pub fn start(database: &str, broker_db: &Path, name: &str, seed: u64) -> Self {
        let mut child = outbox()
            .arg("relay")
            .arg(format!("--database={database}"))
            .arg("--broker-db")
            .arg(broker_db)
            .args(["--name", name, "--batch", BATCH])
            .arg(format!("--lease={LEASE_MS}ms"))
            .args(["--profile", "test", "--seed", &seed.to_string()])
            .args(["--failure-rate", "0.3", "--throttle-rate", "0.05"])
            .args(["--reject-rate", "0", "--outage", "0s"])
            .args(["--latency", "2ms", "--ack-latency", "6ms"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (tx, passes) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        RelayProcess {
            name: name.to_owned(),
            child,
            passes,
            progressed: false,
        }
    }

    /// Waits until the relay has recorded an outcome since it started (a
    /// pass line with something published, rescheduled or dead-lettered).
    pub fn wait_for_progress(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while !self.progressed {
            let left = end.saturating_duration_since(Instant::now());
            match self.passes.recv_timeout(left) {
                Ok(line) => self.progressed = recorded(&line),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Waits for the relay to finish by itself (no event left pending).
    pub fn finish(mut self) -> ExitStatus {
        self.child.wait().unwrap()
    }
}

/// A test that fails mid-run leaves no relay behind.
impl Drop for RelayProcess {
    fn drop(&mut self) {
        if self.is_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether a pass line (`relay-1: published 2 rescheduled 1 dead 0 ...`)
/// reports a recorded outcome.
fn recorded(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    ["published", "rescheduled", "dead"].iter().any(|label| {
        words
            .windows(2)
            .any(|w| w[0] == *label && w[1].parse::<u32>().is_ok_and(|n| n > 0))
    })
}

/// What the checks read from an outbox, whichever database holds it.
pub trait Outbox {
    /// Every event.
    fn events(&self) -> Vec<EventRow>;
    /// The event's publish calls after each recorded attempt, in order.
    fn attempt_log(&self, event_id: &str) -> Vec<u32>;
    /// The event's claims, in order.
    fn claim_log(&self, event_id: &str) -> Vec<ClaimRecord>;
}

/// An event a killed relay still held: its lease must end on time, and
/// another relay must take the event over soon after.
#[derive(Debug)]
pub struct Held {
    pub event_id: String,
    pub relay: String,
    pub claim: u32,
    pub lease_until_ms: i64,
    pub killed_ms: i64,
}

/// What a crash run saw.
pub struct CrashRun {
    /// Kills that found the relay running, after it had recorded progress,
    /// with events still pending.
    pub kills_mid_work: usize,
    /// Events the killed relays held when they died.
    pub held: Vec<Held>,
}

/// Runs `relays` relays until [`KILLS`] kills have landed, each on a seeded
/// random relay at a seeded random point mid-work; each killed relay is
/// restarted under a new name. `before_kill(k)` runs before the k-th kill
/// (the PostgreSQL test restarts the server there). Then lets the relays
/// finish, and checks after every kill that no count went backwards.
pub fn crash_run(
    outbox: &dyn Outbox,
    database: &str,
    broker_db: &Path,
    relays: usize,
    mut before_kill: impl FnMut(usize),
) -> CrashRun {
    let mut dice = SmallRng::seed_from_u64(SEED);
    let start = |i: usize, generation: u32| {
        let name = format!("relay-{i}-{generation}");
        let seed = (i as u64) << 16 | u64::from(generation);
        RelayProcess::start(database, broker_db, &name, seed)
    };
    let mut generations = vec![0u32; relays];
    let mut running: Vec<Option<RelayProcess>> = (0..relays).map(|i| Some(start(i, 0))).collect();
    let mut before = publish_calls(outbox);
    let mut run = CrashRun {
        kills_mid_work: 0,
        held: Vec::new(),
    };
    for kill in 0..KILLS {
        before_kill(kill);
        let i = dice.random_range(0..relays);
        let mut victim = running[i].take().unwrap();
        assert!(
            victim.wait_for_progress(Duration::from_secs(30)),
            "kill {kill}: {} recorded nothing in 30 s (or exited)",
            victim.name
        );
        std::thread::sleep(Duration::from_micros(dice.random_range(0..KILL_WINDOW_US)));
        let alive = victim.is_running();
        let name = victim.name.clone();
        victim.kill();
        let killed_ms = now_ms();

        let events = outbox.events();
        let pending = events
            .iter()
            .filter(|e| e.state == EventState::Pending)
            .count();
        if alive && pending > 0 {
            run.kills_mid_work += 1;
        } else {
            eprintln!(
                "kill {kill} of {name} was not mid-work: running {alive}, {pending} events pending"
            );
        }
        run.held.extend(held_by(&events, &name, killed_ms));
        let now = publish_calls(outbox);
        assert_eq!(now.len(), before.len(), "an event row disappeared");
        for (id, n) in &now {
            let was = before[id];
            assert!(
                *n >= was,
                "{id}: publish calls went from {was} back to {n} after a kill"
            );
        }
        before = now;

        generations[i] += 1;
        running[i] = Some(start(i, generations[i]));
    }
    for relay in running.into_iter().flatten() {
        let name = relay.name.clone();
        assert!(relay.finish().success(), "{name} failed");
    }
    run
}

/// Each event's publish calls.
fn publish_calls(outbox: &dyn Outbox) -> HashMap<String, u32> {
    outbox
        .events()
        .into_iter()
        .map(|e| (e.event_id, e.publish_calls))
        .collect()
}

/// The pending events whose lease `relay` held when it was killed.
fn held_by(events: &[EventRow], relay: &str, killed_ms: i64) -> Vec<Held> {
    events
        .iter()
        .filter(|e| e.state == EventState::Pending && e.lease_owner.as_deref() == Some(relay))
        .filter_map(|e| {
            let until = e.lease_until_ms.filter(|until| *until > killed_ms)?;
            Some(Held {
                event_id: e.event_id.clone(),
                relay: relay.to_owned(),
                claim: e.claims,
                lease_until_ms: until,
                killed_ms,
            })
        })
        .collect()
}

/// Checks the end state: every event published and delivered, attempt logs
/// strictly increasing and matching the counts, and every event a dead relay
/// held taken over by another relay once (not before) its lease ended.
/// Returns the duplicate deliveries.
pub fn check_outcome(outbox: &dyn Outbox, broker_db: &Path, run: &CrashRun) -> u32 {
    let events = outbox.events();
    let broker = FakeBroker::open(broker_db, Default::default()).unwrap();
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
        let log = outbox.attempt_log(&e.event_id);
        assert!(
            log.windows(2).all(|w| w[0] < w[1]),
            "{}: {log:?}",
            e.event_id
        );
        assert_eq!(log.last().copied(), Some(e.publish_calls), "{}", e.event_id);
    }
    // Every delivered id is a real event.
    assert_eq!(delivered.len(), events.len());

    for held in &run.held {
        let lease = held.lease_until_ms - held.killed_ms;
        assert!(
            lease <= LEASE_MS,
            "{held:?}: held {lease} ms after the kill, beyond the lease"
        );
        let claims = outbox.claim_log(&held.event_id);
        let next = claims
            .iter()
            .find(|c| c.claim == held.claim + 1)
            .unwrap_or_else(|| panic!("{held:?} was never claimed again: {claims:?}"));
        assert_ne!(next.relay, held.relay, "{held:?}");
        assert!(
            next.claimed_ms >= held.lease_until_ms,
            "{held:?} was claimed by {} before the lease ended: {next:?}",
            next.relay
        );
        assert!(
            next.claimed_ms <= held.lease_until_ms + TAKEOVER_SLACK_MS,
            "{held:?} waited {} ms past its lease: {next:?}",
            next.claimed_ms - held.lease_until_ms
        );
    }
    delivered.values().map(|n| n - 1).sum()
}
