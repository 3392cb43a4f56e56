//! The herd once the service is back: calls compete for `capacity` per
//! tick, so clients must be run tick by tick, in the order they were
//! scheduled, the first `capacity` of each tick getting through.
//!
//! Clients stay in one table and the queue holds their 4-byte indices:
//! moving whole deciders from bucket to bucket would scatter copies of them
//! over thousands of growing vectors.

use super::Ctx;
use super::tally::Tally;
use crate::queue::TickQueue;
use retrykit_core::Class;
use retrykit_core::kernel::{Decider, Failure, Step};

/// The clients still retrying once the service is back, keyed by their next call.
pub(super) struct Recovery {
    queue: TickQueue<u32>,
    clients: Vec<Decider>,
}

impl Recovery {
    /// An empty recovery phase whose wheel spans about `span` ticks, for at
    /// most `clients` clients.
    pub(super) fn new(span: u64, clients: u32) -> Self {
        Recovery {
            queue: TickQueue::new(span),
            clients: Vec::with_capacity(clients as usize),
        }
    }

    /// Schedules a client's next call at `tick`.
    pub(super) fn add(&mut self, tick: u64, decider: Decider) {
        // At most `clients` (a u32) are ever added, so the index fits.
        let index = self.clients.len() as u32;
        self.clients.push(decider);
        self.queue.push(tick, index);
    }

    /// Runs the clients until each has succeeded or given up, or the
    /// horizon or call limit stops the run.
    pub(super) fn run(mut self, ctx: &Ctx<'_>, tally: &mut Tally) {
        // Calls over capacity are turned away as throttled (a 429, or a 503
        // with no hint); calls during the outage never reach here.
        let throttled = Failure {
            class: Class::THROTTLED,
            hint: None,
            allowed: true,
        };
        while let Some((tick, due)) = self.queue.pop() {
            let arrivals = due.len() as u64;
            if tick >= ctx.horizon_ticks || tally.calls.saturating_add(arrivals) > ctx.max_calls {
                tally.hit_call_limit |= tick < ctx.horizon_ticks;
                tally.unfinished += arrivals + self.queue.len() as u64;
                return;
            }
            tally.calls += arrivals;
            tally.tick(tick, arrivals);
            let (start, end) = (ctx.start(tick), ctx.end(tick));
            let mut room = ctx.capacity;
            for &client in &due {
                let decider = &mut self.clients[client as usize];
                decider.begin_attempt(ctx.policy, start);
                if room > 0 {
                    room -= 1;
                    tally.succeed(tick);
                    continue;
                }
                match decider.after_failure(ctx.policy, throttled, end) {
                    Step::Retry { wait, .. } => self.queue.push(ctx.next_tick(tick, wait), client),
                    Step::GiveUp(_) => tally.give_up(tick),
                }
            }
            self.queue.recycle(due);
        }
    }
}
