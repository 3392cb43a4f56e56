//! The herd during the outage, when every call fails whoever else calls.
//!
//! With no coupling between clients there is no need to interleave them tick
//! by tick: each client runs on its own through a window of ticks (all its
//! calls that fall in the window) and is then parked for a later window or
//! handed to the recovery phase. Clients move through memory in order, and
//! per-tick counts are kept for one window at a time, so memory does not grow
//! with time. Only windows with calls are visited, and a window costs what
//! its calls cost, not its width: with 1 ns ticks nearly every call has a
//! window of its own.
//!
//! The fleet is split into a fixed number of shards that run a window each
//! on their own thread and are merged in shard order, so the result is the
//! same on one core or many.

use super::Ctx;
use super::recovery::Recovery;
use super::tally::Tally;
use retrykit_core::Class;
use retrykit_core::kernel::{Decider, Failure, Step};
use std::collections::BTreeMap;

/// Ticks per window.
const WINDOW: u64 = 4096;
// Offsets within a window are kept as u16.
const _: () = assert!(WINDOW <= 1 << 16);
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
    /// Calls per tick of the window being run.
    counts: TickCounts,
}

/// Calls per tick of one window, with the ticks that have any, so that a
/// window with few calls is read and cleared in as many steps, not `WINDOW`.
struct TickCounts {
    per_tick: Vec<u64>,
    /// Offsets of the ticks with calls, in the order first counted.
    busy: Vec<u16>,
}

impl Default for TickCounts {
    fn default() -> Self {
        TickCounts {
            per_tick: vec![0; WINDOW as usize],
            busy: Vec::new(),
        }
    }
}

impl TickCounts {
    /// Counts `calls` at `offset` (below `WINDOW`) into the window.
    fn add(&mut self, offset: usize, calls: u64) {
        if self.per_tick[offset] == 0 {
            // WINDOW fits in u16, and so does every offset below it.
            self.busy.push(offset as u16);
        }
        self.per_tick[offset] += calls;
    }

    /// Moves every count into `into`, leaving `self` empty.
    fn drain_into(&mut self, into: &mut TickCounts) {
        for &offset in &self.busy {
            let offset = usize::from(offset);
            into.add(offset, std::mem::take(&mut self.per_tick[offset]));
        }
        self.busy.clear();
    }

    /// Each busy tick's offset and calls, in tick order, leaving `self` empty.
    fn drain_sorted(&mut self, mut each: impl FnMut(u64, u64)) {
        if self.busy.len() < WINDOW as usize / 16 {
            self.busy.sort_unstable();
            for &offset in &self.busy {
                let calls = std::mem::take(&mut self.per_tick[usize::from(offset)]);
                each(u64::from(offset), calls);
            }
        } else {
            // A busy window: one pass over it beats sorting its ticks.
            for (offset, calls) in self.per_tick.iter_mut().enumerate() {
                if *calls > 0 {
                    each(offset as u64, std::mem::take(calls));
                }
            }
        }
        self.busy.clear();
    }
}

/// What one shard did in one window (its calls per tick are in the shard's `counts`).
struct WindowTally {
    calls: u64,
    give_ups: u64,
    last_give_up: Option<u64>,
    unfinished: u64,
    /// Whether the shard ran out of its share of the call limit.
    hit_call_limit: bool,
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
    let mut merged = TickCounts::default();
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
        merge(w, results, &mut shards, &mut merged, tally, recovery);
        window = shards
            .iter()
            .filter_map(|s| s.later.first_key_value().map(|(k, _)| *k))
            .min();
    }
}

/// Adds the shards' window into the run's tally, in shard order.
fn merge(
    window: u64,
    results: Vec<WindowTally>,
    shards: &mut [Shard],
    merged: &mut TickCounts,
    tally: &mut Tally,
    recovery: &mut Recovery,
) {
    for (r, shard) in results.into_iter().zip(shards) {
        shard.counts.drain_into(merged);
        tally.calls += r.calls;
        tally.unfinished += r.unfinished;
        tally.hit_call_limit |= r.hit_call_limit;
        if let Some(last) = r.last_give_up {
            tally.give_ups(r.give_ups, last);
        }
        for (tick, decider) in r.handoffs {
            recovery.add(tick, decider);
        }
    }
    let first = window.saturating_mul(WINDOW);
    merged.drain_sorted(|offset, calls| tally.outage_tick(first + offset, calls));
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
            calls: 0,
            give_ups: 0,
            last_give_up: None,
            unfinished: 0,
            hit_call_limit: false,
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
                t.hit_call_limit |= t.calls >= budget;
                t.unfinished += 1;
                return;
            }
            if p.next >= ctx.outage_ticks {
                t.handoffs.push((p.next, p.decider));
                return;
            }
            if p.next >= end {
                // Most windows of a fine tick hold one client: start small.
                self.later
                    .entry(p.next / WINDOW)
                    .or_insert_with(|| Vec::with_capacity(1))
                    .push(p);
                return;
            }
            // p.next is inside the window, so the offset is below WINDOW.
            self.counts.add((p.next - first) as usize, 1);
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
