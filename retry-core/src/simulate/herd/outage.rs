//! The herd during the outage, when every call fails whoever else calls.
//!
//! With no coupling between clients there is no need to interleave them tick
//! by tick: each client runs on its own through a window of ticks (all its
//! calls that fall in the window) and is then parked for a later window or
//! handed to the recovery phase. Clients move through memory in order, and
//! per-tick counts are kept for one window at a time, so memory does not grow
//! with time.
//!
//! The fleet is split into a fixed number of shards that run a window each
//! on their own thread and are merged in shard order, so the result is the
//! same on one core or many.

use super::Ctx;
use super::recovery::Recovery;
use super::tally::Tally;
use crate::classify::Class;
use crate::decide::{Decider, Failure, Step};
use std::collections::BTreeMap;

/// Ticks per window.
const WINDOW: u64 = 4096;
/// Shards of the fleet. Fixed, not the machine's core count, so that results
/// do not depend on the machine.
const SHARDS: u64 = 2;
/// Windows with fewer calls due than this run on the calling thread: a
/// thread costs more than it saves on small work.
pub(super) const PARALLEL_FROM: usize = 50_000;

/// A client and the tick of its next call.
struct Pending {
    next: u64,
    decider: Decider,
}

/// One shard's clients, by the window of their next call.
#[derive(Default)]
struct Shard {
    later: BTreeMap<u64, Vec<Pending>>,
}

/// What one shard did in one window.
struct WindowTally {
    /// Calls per tick of the window.
    per_tick: Vec<u64>,
    calls: u64,
    give_ups: u64,
    last_give_up: Option<u64>,
    unfinished: u64,
    /// Clients whose next call falls after the outage.
    handoffs: Vec<(u64, Decider)>,
}

/// Runs the fleet (`clients` clients, client `i` deciding with `make(i)`, all
/// calling first at tick 0) until the outage ends, leaving the clients still
/// retrying in `recovery`, keyed by their next call. Windows with at least
/// `parallel_from` calls due run their shards on threads.
pub(super) fn run(
    ctx: &Ctx<'_>,
    clients: u32,
    make: impl Fn(u32) -> Decider + Sync,
    tally: &mut Tally,
    recovery: &mut Recovery,
    parallel_from: usize,
) {
    let mut shards: Vec<Shard> = (0..SHARDS).map(|_| Shard::default()).collect();
    let bounds = |shard: u64| {
        let cut = |s: u64| (u64::from(clients) * s / SHARDS) as u32;
        cut(shard)..cut(shard + 1)
    };
    let mut window = Some(0);
    while let Some(w) = window {
        let due: usize = if w == 0 {
            clients as usize
        } else {
            shards
                .iter()
                .map(|s| s.later.get(&w).map_or(0, Vec::len))
                .sum()
        };
        // The call limit, shared out between the shards (the first gets the remainder).
        let left = ctx.max_calls.saturating_sub(tally.calls);
        let budget = |i: u64| left / SHARDS + if i == 0 { left % SHARDS } else { 0 };
        let work = |i: u64, shard: &mut Shard| {
            let fresh = (w == 0).then(|| bounds(i).map(&make));
            shard.run_window(ctx, w, budget(i), fresh)
        };
        let results: Vec<WindowTally> = if due >= parallel_from {
            std::thread::scope(|scope| {
                let work = &work;
                let handles: Vec<_> = (0..SHARDS)
                    .zip(shards.iter_mut())
                    .map(|(i, shard)| scope.spawn(move || work(i, shard)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        } else {
            (0..SHARDS)
                .zip(shards.iter_mut())
                .map(|(i, shard)| work(i, shard))
                .collect()
        };
        merge(w, results, tally, recovery);
        window = shards
            .iter()
            .filter_map(|s| s.later.first_key_value().map(|(k, _)| *k))
            .min();
    }
}

/// Adds the shards' window into the run's tally, in shard order.
fn merge(window: u64, results: Vec<WindowTally>, tally: &mut Tally, recovery: &mut Recovery) {
    let mut per_tick = vec![0u64; WINDOW as usize];
    for r in results {
        for (sum, n) in per_tick.iter_mut().zip(&r.per_tick) {
            *sum += n;
        }
        tally.calls += r.calls;
        tally.unfinished += r.unfinished;
        if let Some(last) = r.last_give_up {
            tally.give_ups(r.give_ups, last);
        }
        for (tick, decider) in r.handoffs {
            recovery.add(tick, decider);
        }
    }
    let first = window.saturating_mul(WINDOW);
    for (offset, &calls) in per_tick.iter().enumerate() {
        if calls > 0 {
            tally.tick(first + offset as u64, calls);
        }
    }
}

impl Shard {
    /// Runs the clients due in `window` (and the `fresh` ones, in window 0),
    /// making at most `budget` calls.
    fn run_window(
        &mut self,
        ctx: &Ctx<'_>,
        window: u64,
        budget: u64,
        fresh: Option<impl Iterator<Item = Decider>>,
    ) -> WindowTally {
        let mut t = WindowTally {
            per_tick: vec![0; WINDOW as usize],
            calls: 0,
            give_ups: 0,
            last_give_up: None,
            unfinished: 0,
            handoffs: Vec::new(),
        };
        let due = self.later.remove(&window).unwrap_or_default();
        for decider in fresh.into_iter().flatten() {
            self.advance(ctx, window, budget, &mut t, Pending { next: 0, decider });
        }
        for pending in due {
            self.advance(ctx, window, budget, &mut t, pending);
        }
        t
    }

    /// Runs one client's calls until its next falls past the window.
    fn advance(
        &mut self,
        ctx: &Ctx<'_>,
        window: u64,
        budget: u64,
        t: &mut WindowTally,
        mut p: Pending,
    ) {
        let first = window.saturating_mul(WINDOW);
        let end = first.saturating_add(WINDOW);
        let failure = Failure {
            class: Class::TRANSIENT,
            hint: None,
            allowed: true,
        };
        loop {
            if p.next >= ctx.horizon_ticks || t.calls >= budget {
                t.unfinished += 1;
                return;
            }
            if p.next >= ctx.outage_ticks {
                t.handoffs.push((p.next, p.decider));
                return;
            }
            if p.next >= end {
                self.later.entry(p.next / WINDOW).or_default().push(p);
                return;
            }
            // p.next is inside the window, so the index is below WINDOW.
            t.per_tick[(p.next - first) as usize] += 1;
            t.calls += 1;
            p.decider.begin_attempt(ctx.policy, ctx.start(p.next));
            match p
                .decider
                .after_failure(ctx.policy, failure, ctx.end(p.next))
            {
                Step::Retry { wait, .. } => p.next = ctx.next_tick(p.next, wait),
                Step::GiveUp(_) => {
                    t.give_ups += 1;
                    t.last_give_up = Some(t.last_give_up.map_or(p.next, |l| l.max(p.next)));
                    return;
                }
            }
        }
    }
}
