//! The clients' own machine as a bottleneck: each client process sends at
//! most so many calls per millisecond, and calls due beyond that wait in a
//! queue, first come, first served.
//!
//! A real fleet measured this (`examples/src/bin/fleet.rs`): 10,000 calls
//! due at one instant reached the server over 50 to 110 ms on a 2-vCPU
//! machine, so the first wave was spread over several ticks and the first
//! retries queued behind it. [`SendRate`] is that limit as the herd
//! simulation models it.

use std::collections::VecDeque;

/// Fixed-point time: nanoseconds × 2³². Sends a fraction of a nanosecond
/// apart (up to [`SendRate::MAX_PER_MS`]) keep their spacing exactly enough,
/// and a 100-year horizon still fits in a `u128`.
const FRACTION_BITS: u32 = 32;

/// How fast the clients' machine delivers calls, for a [`Herd`](crate::Herd):
/// each of `processes` client processes (contiguous shares of the fleet, as
/// the `fleet` harness lays them out) sends at most `per_ms` calls per
/// millisecond, one every `1/per_ms` ms, in the order the calls fell due.
/// With one process, `per_ms` is the whole fleet's rate.
///
/// A call sent later than it was due is made, answered and timed from the
/// tick it is sent in: its client's next wait starts from there, as a real
/// client's does.
///
/// ```
/// use retrykit_sim::{Herd, SendRate};
/// use retrykit_core::{Jitter, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::builder().jitter(Jitter::None).max_attempts(3).build()?;
/// // 1000 clients, a machine that sends 100 calls per 1 ms tick.
/// let herd = Herd {
///     clients: 1000,
///     send: Some(SendRate { per_ms: 100.0, processes: 1 }),
///     ..Herd::default()
/// };
/// let r = herd.run(&policy)?;
/// assert_eq!(r.first_wave, 1000);
/// assert_eq!(r.first_wave_ticks, 10); // 100 first calls a tick
/// assert!(r.peak_retries <= 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendRate {
    /// Calls per millisecond one client process sends, at most
    /// ([`MIN_PER_MS`](Self::MIN_PER_MS) to [`MAX_PER_MS`](Self::MAX_PER_MS)).
    pub per_ms: f64,
    /// Client processes, each with its own queue and rate (1 to
    /// [`MAX_PROCESSES`](Self::MAX_PROCESSES), and at most the clients).
    pub processes: u32,
}

impl SendRate {
    /// The slowest rate a [`Herd`](crate::Herd) accepts: one call per 1000 s.
    ///
    /// ```
    /// assert!(retrykit_sim::SendRate::MIN_PER_MS > 0.0);
    /// ```
    pub const MIN_PER_MS: f64 = 1e-6;
    /// The fastest rate a [`Herd`](crate::Herd) accepts: a call per picosecond.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::SendRate::MAX_PER_MS, 1e9);
    /// ```
    pub const MAX_PER_MS: f64 = 1e9;
    /// The most client processes a [`Herd`](crate::Herd) accepts: each tick
    /// with calls waiting visits every process.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::SendRate::MAX_PROCESSES, 1024);
    /// ```
    pub const MAX_PROCESSES: u32 = 1024;

    /// Whether `per_ms` is a rate the simulation accepts (finite, within
    /// [`MIN_PER_MS`](Self::MIN_PER_MS)..=[`MAX_PER_MS`](Self::MAX_PER_MS)).
    ///
    /// ```
    /// use retrykit_sim::SendRate;
    /// assert!(SendRate::accepts(90.0));
    /// assert!(!SendRate::accepts(0.0) && !SendRate::accepts(f64::NAN) && !SendRate::accepts(-1.0));
    /// ```
    pub fn accepts(per_ms: f64) -> bool {
        (Self::MIN_PER_MS..=Self::MAX_PER_MS).contains(&per_ms)
    }
}

/// The process (below `processes`, at least 1) of fleet client `client`
/// of `clients` (at least 1): process `p` holds clients
/// `clients·p/P .. clients·(p+1)/P`, as the fleet's plan cuts them.
pub(crate) fn process_of(client: u32, clients: u64, processes: usize) -> usize {
    // The last p with clients·p/P <= client; (client + 1)·P fits in u128.
    let p = processes.max(1) as u128;
    let process = ((u128::from(client) + 1) * p - 1) / u128::from(clients.max(1));
    (process as usize).min(processes.max(1) - 1)
}

/// One process's queue: calls due and not yet sent, and when its sender is
/// next free.
#[derive(Debug, Default)]
struct Lane {
    backlog: VecDeque<u32>,
    /// Fixed-point time of the lane's next send, at the earliest.
    free_at: u128,
}

/// Every client process's queue. Clients are the recovery table's indices,
/// which in a send-rate run are the fleet's own (every client is added at
/// tick 0, in order).
#[derive(Debug)]
pub(crate) struct Senders {
    lanes: Vec<Lane>,
    /// Fixed-point time between two sends of one lane (at least 1).
    interval: u128,
    /// Fixed-point length of a tick.
    tick: u128,
    clients: u64,
    /// Calls waiting over all lanes.
    waiting: usize,
    /// This tick's sends, with their fixed-point send times, before sorting.
    sent: Vec<(u128, u32)>,
}

impl Senders {
    /// Senders for `clients` clients in ticks of `tick_ns`; `rate` is
    /// validated by the herd (a rate and process count within bounds).
    pub(crate) fn new(rate: SendRate, clients: u32, tick_ns: u64) -> Self {
        let per_ns = rate
            .per_ms
            .clamp(SendRate::MIN_PER_MS, SendRate::MAX_PER_MS)
            / 1e6;
        // 2^32 / per_ns is at most 2^32 · 10^12 < 2^73: within u128 and f64's range.
        let interval = ((1u128 << FRACTION_BITS) as f64 / per_ns).round() as u128;
        let processes = rate.processes.clamp(1, clients.max(1));
        Senders {
            lanes: (0..processes).map(|_| Lane::default()).collect(),
            interval: interval.max(1),
            tick: u128::from(tick_ns.max(1)) << FRACTION_BITS,
            clients: u64::from(clients.max(1)),
            waiting: 0,
            sent: Vec::new(),
        }
    }

    /// Calls waiting to be sent.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// The process of fleet client `client`: process `p` holds clients
    /// `clients·p/P .. clients·(p+1)/P`, as the fleet's plan cuts them.
    fn lane_of(&self, client: u32) -> usize {
        process_of(client, self.clients, self.lanes.len())
    }

    /// Queues a call of `client` that fell due, behind every call its
    /// process has waiting.
    pub(crate) fn due(&mut self, client: u32) {
        let lane = self.lane_of(client);
        self.lanes[lane].backlog.push_back(client);
        self.waiting += 1;
    }

    /// The first tick after `tick` in which a waiting call will be sent,
    /// if any are waiting.
    pub(crate) fn next_tick(&self, tick: u64) -> Option<u64> {
        if self.waiting == 0 {
            return None;
        }
        self.lanes
            .iter()
            .filter(|l| !l.backlog.is_empty())
            .map(|l| u64::try_from(l.free_at / self.tick).unwrap_or(u64::MAX))
            .min()
            .map(|t| t.max(tick.saturating_add(1)))
    }

    /// Sends what each process can within `tick`, oldest calls first, into
    /// `out` (cleared first) in the order they leave: by send time, ties
    /// by process.
    pub(crate) fn send(&mut self, tick: u64, out: &mut Vec<u32>) {
        out.clear();
        let start = u128::from(tick) * self.tick;
        let end = start + self.tick;
        let one_lane = self.lanes.len() == 1;
        self.sent.clear();
        for lane in &mut self.lanes {
            // An idle sender starts with the tick: calls are due at its start.
            let mut at = lane.free_at.max(start);
            while at < end {
                let Some(client) = lane.backlog.pop_front() else {
                    break;
                };
                if one_lane {
                    out.push(client);
                } else {
                    self.sent.push((at, client));
                }
                at += self.interval;
            }
            // Past the tick's end when calls are still waiting; one interval
            // after the last send when the queue emptied.
            lane.free_at = at;
        }
        if !one_lane {
            // Stable: equal times keep the lanes' order.
            self.sent.sort_by_key(|&(at, _)| at);
            out.extend(self.sent.iter().map(|&(_, c)| c));
        }
        self.waiting -= out.len();
    }
}
