//! Write contention under optimistic concurrency, the model of the
//! "Exponential Backoff and Jitter" study.
//!
//! Every client starts at time 0: it reads one shared row, then writes it
//! back on condition that nobody wrote since its read. Each network hop (to
//! the store or back) takes |Normal(mean, sd)|. A client whose write lost
//! learns so one hop later, asks its [`Decider`] how long to back off, and
//! starts again with a fresh read. Exactly one write can win per version, so
//! the work a policy costs is the calls that lost.

use super::error::SimulateError;
use super::seed::client_seed;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Normal};
use retrykit_core::Class;
use retrykit_core::Policy;
use retrykit_core::Problems;
use retrykit_core::kernel::{Decider, Failure, Step};
use retrykit_core::{Backoff, Jitter};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// An optimistic-concurrency contention scenario.
///
/// ```
/// use retrykit_sim::Contention;
/// let policies = Contention::study_policies();
/// let r = Contention { clients: 50, ..Contention::default() }.run(&policies[1]).unwrap();
/// assert_eq!(r.successes, 50);
/// assert!(r.writes >= 50);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contention {
    /// Clients writing the same row.
    pub clients: u32,
    /// Mean latency of one network hop.
    pub latency: Duration,
    /// Standard deviation of one hop's latency.
    pub latency_sd: Duration,
    /// Seeds the network and every client's jitter stream.
    pub seed: u64,
    /// Simulated time after which clients still retrying are left unfinished.
    pub horizon: Duration,
}

impl Default for Contention {
    /// 100 clients, hops of |Normal(10 ms, 2 ms)|, seed 0, a one-hour horizon.
    fn default() -> Self {
        Contention {
            clients: 100,
            latency: Duration::from_millis(10),
            latency_sd: Duration::from_millis(2),
            seed: 0,
            horizon: Duration::from_secs(3600),
        }
    }
}

/// What one policy cost in a [`Contention`] scenario.
///
/// ```
/// use retrykit_sim::Contention;
/// let r = Contention { clients: 1, ..Contention::default() }
///     .run(&retrykit_core::Policy::default())
///     .unwrap();
/// assert_eq!((r.reads, r.writes, r.calls(), r.conflicts), (1, 1, 2, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentionReport {
    /// Clients simulated.
    pub clients: u32,
    /// Reads made (one per attempt).
    pub reads: u64,
    /// Conditional writes made (one per attempt).
    pub writes: u64,
    /// Writes that lost to another write.
    pub conflicts: u64,
    /// Clients whose write landed.
    pub successes: u64,
    /// Clients whose policy gave up.
    pub give_ups: u64,
    /// Clients still retrying at the horizon.
    pub unfinished: u64,
    /// Time until the last client learnt it had succeeded or given up.
    pub finished_after: Duration,
}

impl ContentionReport {
    /// Every call to the store: reads plus writes.
    ///
    /// ```
    /// let r = retrykit_sim::Contention::default()
    ///     .run(&retrykit_core::Policy::default())
    ///     .unwrap();
    /// assert_eq!(r.calls(), r.reads + r.writes);
    /// ```
    pub fn calls(&self) -> u64 {
        self.reads.saturating_add(self.writes)
    }
}

/// Pending hops by time, then by the order they were scheduled.
type Events = BinaryHeap<Reverse<(u64, u64, u32, Hop)>>;

/// What happens next to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Hop {
    /// It sends a read (a new attempt begins).
    Start,
    /// Its read reaches the store.
    Read,
    /// Its write reaches the store.
    Write,
    /// It learns its write landed.
    Won,
    /// It learns its write lost.
    Lost,
}

impl Contention {
    /// The clients of the study's sweep: 10 to 190 in steps of 10.
    ///
    /// ```
    /// let n: Vec<u32> = retrykit_sim::Contention::study_clients().collect();
    /// assert_eq!((n[0], n.len(), n[n.len() - 1]), (10, 19, 190));
    /// ```
    pub fn study_clients() -> impl Iterator<Item = u32> {
        (10..=190).step_by(10)
    }

    /// The study's policies: capped exponential backoff from 5 ms to 2 s, no
    /// attempt limit (a one-hour deadline instead), one per jitter mode, named
    /// `none`, `full`, `equal` and `decorrelated`.
    ///
    /// ```
    /// let p = retrykit_sim::Contention::study_policies();
    /// assert_eq!(p.len(), 4);
    /// assert_eq!(p[3].name(), Some("decorrelated"));
    /// ```
    pub fn study_policies() -> Vec<Policy> {
        [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ]
        .into_iter()
        .filter_map(|jitter| {
            Policy::builder()
                .name(jitter.name())
                .backoff(Backoff::Exponential { factor: 2.0 })
                .base(Duration::from_millis(5))
                .cap(Duration::from_secs(2))
                .jitter(jitter)
                .max_attempts(0)
                .deadline(Some(Duration::from_secs(3600)))
                .build()
                .ok()
        })
        .collect()
    }

    fn validate(&self) -> Result<Normal<f64>, SimulateError> {
        let mut c = Problems::default();
        c.durations([
            ("latency", Some(self.latency)),
            ("latency_sd", Some(self.latency_sd)),
            ("horizon", Some(self.horizon)),
        ]);
        c.require(
            !self.horizon.is_zero(),
            "horizon",
            "must be greater than zero",
            "use a horizon such as 1h".into(),
        );
        SimulateError::check("contention", c.into_vec())?;
        let normal = Normal::new(
            self.latency.as_nanos() as f64,
            self.latency_sd.as_nanos() as f64,
        );
        // Both are finite and non-negative after the checks above.
        normal.map_err(|e| {
            let problem = retrykit_core::Problem::new(
                "latency_sd",
                "must give a valid normal distribution",
                format!("use a standard deviation such as 2ms ({e})"),
            );
            SimulateError::check("contention", vec![problem]).unwrap_err()
        })
    }

    /// Runs every client under `policy` until each has written or given up.
    /// Deterministic for a given seed.
    ///
    /// # Errors
    ///
    /// A [`SimulateError`] naming each setting out of range (`latency`,
    /// `latency_sd`, `horizon`), with the fix.
    ///
    /// ```
    /// use retrykit_sim::Contention;
    /// let c = Contention { clients: 30, ..Contention::default() };
    /// let p = &Contention::study_policies()[2];
    /// assert_eq!(c.run(p).unwrap(), c.run(p).unwrap());
    /// ```
    pub fn run(&self, policy: &Policy) -> Result<ContentionReport, SimulateError> {
        let latency = self.validate()?;
        let unbudgeted;
        let policy = if policy.budget().is_some() {
            unbudgeted = policy.to_builder().budget(None).build().map_err(|e| {
                SimulateError::check("contention", e.problems().to_vec()).unwrap_err()
            })?;
            &unbudgeted
        } else {
            policy
        };
        let mut network = SmallRng::seed_from_u64(client_seed(self.seed, u64::MAX));
        let mut hop = || latency.sample(&mut network).abs().round() as u64;
        let origin = Instant::now();
        let at = |ns: u64| {
            origin
                .checked_add(Duration::from_nanos(ns))
                .unwrap_or(origin)
        };
        let horizon_ns = u64::try_from(self.horizon.as_nanos()).unwrap_or(u64::MAX);

        let n = self.clients as usize;
        let mut deciders: Vec<Decider> = (0..self.clients)
            .map(|i| Decider::new(Some(client_seed(self.seed, u64::from(i)))))
            .collect();
        let mut seen_version = vec![0u64; n];
        let mut version = 0u64;
        let mut events = Events::new();
        let mut seq = 0u64;
        let mut schedule = |events: &mut Events, time: u64, client: u32, what: Hop| {
            events.push(Reverse((time, seq, client, what)));
            seq += 1;
        };
        for client in 0..self.clients {
            schedule(&mut events, 0, client, Hop::Start);
        }
        let mut r = ContentionReport {
            clients: self.clients,
            reads: 0,
            writes: 0,
            conflicts: 0,
            successes: 0,
            give_ups: 0,
            unfinished: 0,
            finished_after: Duration::ZERO,
        };
        let mut last_ns = 0;
        while let Some(Reverse((now, _, client, what))) = events.pop() {
            if now > horizon_ns {
                break;
            }
            let c = client as usize;
            match what {
                Hop::Start => {
                    deciders[c].begin_attempt(policy, at(now));
                    r.reads += 1;
                    schedule(&mut events, now.saturating_add(hop()), client, Hop::Read);
                }
                Hop::Read => {
                    seen_version[c] = version;
                    let back_and_out = hop().saturating_add(hop());
                    schedule(
                        &mut events,
                        now.saturating_add(back_and_out),
                        client,
                        Hop::Write,
                    );
                }
                Hop::Write => {
                    r.writes += 1;
                    let outcome = if seen_version[c] == version {
                        version += 1;
                        Hop::Won
                    } else {
                        r.conflicts += 1;
                        Hop::Lost
                    };
                    schedule(&mut events, now.saturating_add(hop()), client, outcome);
                }
                Hop::Won => {
                    r.successes += 1;
                    last_ns = now;
                }
                Hop::Lost => {
                    let conflict = Failure {
                        class: Class::TRANSIENT,
                        hint: None,
                        allowed: true,
                    };
                    match deciders[c].after_failure(policy, conflict, at(now)) {
                        Step::Retry { wait, .. } => {
                            let wait_ns = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
                            schedule(&mut events, now.saturating_add(wait_ns), client, Hop::Start);
                        }
                        Step::GiveUp(_) => {
                            r.give_ups += 1;
                            last_ns = now;
                        }
                    }
                }
            }
        }
        r.unfinished = u64::from(self.clients) - r.successes - r.give_ups;
        r.finished_after = if r.unfinished > 0 {
            self.horizon
        } else {
            Duration::from_nanos(last_ns)
        };
        Ok(r)
    }
}
