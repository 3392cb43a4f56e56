//! The herd during the outage, when every call fails whoever else calls.
//!
//! With no coupling between clients, there is no need to interleave them
//! tick by tick: each client is run on its own through a window of ticks
//! (all its calls that fall in the window), and parked for a later window or
//! handed to the recovery phase. Clients move through memory in order, which
//! is what makes a million of them take about a second; per-tick counts are
//! kept for one window at a time, so memory does not grow with time.

use super::tally::Tally;
use super::{Ctx, TickQueue};
use crate::classify::Class;
use crate::decide::{Decider, Failure, Step};
use std::collections::BTreeMap;

/// Ticks per window.
const WINDOW: u64 = 4096;

/// A client and the tick of its next call.
struct Pending {
    next: u64,
    decider: Decider,
}

struct Outage<'a, 'p> {
    ctx: &'a Ctx<'p>,
    tally: &'a mut Tally,
    recovery: &'a mut TickQueue<Decider>,
    /// The window being run and its calls per tick.
    window: u64,
    calls: Vec<u64>,
    /// Clients parked for later windows, by window.
    later: BTreeMap<u64, Vec<Pending>>,
}

/// Runs `fleet` (every client calling first at tick 0) until the outage ends,
/// leaving the clients still retrying in `recovery`, keyed by their next call.
pub(super) fn run(
    ctx: &Ctx<'_>,
    fleet: impl Iterator<Item = Decider>,
    tally: &mut Tally,
    recovery: &mut TickQueue<Decider>,
) {
    let mut outage = Outage {
        ctx,
        tally,
        recovery,
        window: 0,
        calls: vec![0; WINDOW as usize],
        later: BTreeMap::new(),
    };
    for decider in fleet {
        outage.advance(Pending { next: 0, decider });
    }
    outage.close_window();
    while let Some((window, clients)) = outage.later.pop_first() {
        outage.window = window;
        for pending in clients {
            outage.advance(pending);
        }
        outage.close_window();
    }
}

impl Outage<'_, '_> {
    /// Runs one client's calls until its next falls past the current window.
    fn advance(&mut self, mut p: Pending) {
        let ctx = self.ctx;
        let window_end = self.window.saturating_add(1).saturating_mul(WINDOW);
        let failure = Failure {
            class: Class::TRANSIENT,
            hint: None,
            allowed: true,
        };
        loop {
            if p.next >= ctx.horizon_ticks || self.tally.calls >= ctx.max_calls {
                self.tally.unfinished += 1;
                return;
            }
            if p.next >= ctx.outage_ticks {
                self.recovery.push(p.next, p.decider);
                return;
            }
            if p.next >= window_end {
                self.later.entry(p.next / WINDOW).or_default().push(p);
                return;
            }
            // p.next is inside the window, so the index is below WINDOW.
            self.calls[(p.next - self.window * WINDOW) as usize] += 1;
            self.tally.calls += 1;
            p.decider.begin_attempt(ctx.policy, ctx.start(p.next));
            match p
                .decider
                .after_failure(ctx.policy, failure, ctx.end(p.next))
            {
                Step::Retry { wait, .. } => p.next = ctx.next_tick(p.next, wait),
                Step::GiveUp(_) => {
                    self.tally.give_up(p.next);
                    return;
                }
            }
        }
    }

    /// Reports the window's busy ticks and clears its counts.
    fn close_window(&mut self) {
        let first = self.window.saturating_mul(WINDOW);
        for (offset, calls) in self.calls.iter_mut().enumerate() {
            if *calls > 0 {
                self.tally.tick(first + offset as u64, *calls);
                *calls = 0;
            }
        }
    }
}
