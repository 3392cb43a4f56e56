//! The herd once the service is back: calls compete for `capacity` per
//! tick, so clients must be run tick by tick, in the order they were
//! scheduled, the first `capacity` of each tick getting through.
//!
//! With a send rate the clients compete from the start, for their machine
//! ([`crate::SendRate`]), so a send-rate run is this phase from tick 0, the
//! outage included: calls made before the service is back fail as transient.
//!
//! Clients stay in one table and the queue holds their 4-byte indices:
//! moving whole deciders from bucket to bucket would scatter copies of them
//! over thousands of growing vectors.

use super::Ctx;
use super::tally::Tally;
use crate::queue::TickQueue;
use crate::send::{SendRate, Senders};
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
    /// horizon or call limit stops the run. Each call is sent in the tick
    /// it falls due, or with a send rate ([`Ctx::send`]) when its client
    /// process gets to it.
    pub(super) fn run(self, ctx: &Ctx<'_>, tally: &mut Tally) {
        match ctx.send {
            None => self.run_plain(ctx, tally),
            Some(rate) => self.run_sending(ctx, tally, rate),
        }
    }

    /// Every call due in a tick is made in that tick.
    fn run_plain(mut self, ctx: &Ctx<'_>, tally: &mut Tally) {
        while let Some((tick, due)) = self.queue.pop() {
            if !self.answer(ctx, tally, tick, &due, 0) {
                return;
            }
            self.queue.recycle(due);
        }
    }

    /// Calls due join their process's queue; each tick, each process sends
    /// what its rate allows, oldest first, and the rest wait. Time visits
    /// the ticks with calls due or sent, so it follows calls, not ticks.
    fn run_sending(mut self, ctx: &Ctx<'_>, tally: &mut Tally, rate: SendRate) {
        let clients = u32::try_from(self.clients.len()).unwrap_or(u32::MAX);
        let mut senders = Senders::new(rate, clients, ctx.tick_ns);
        let mut sent = Vec::new();
        let mut last: Option<u64> = None;
        loop {
            let due_at = self.queue.peek_tick();
            let send_at = last.and_then(|t| senders.next_tick(t));
            let Some(tick) = due_at.into_iter().chain(send_at).min() else {
                return;
            };
            if due_at == Some(tick)
                && let Some((_, due)) = self.queue.pop()
            {
                for &client in &due {
                    senders.due(client);
                }
                self.queue.recycle(due);
            }
            senders.send(tick, &mut sent);
            last = Some(tick);
            if !sent.is_empty() && !self.answer(ctx, tally, tick, &sent, senders.waiting()) {
                return;
            }
        }
    }

    /// Makes the calls that reach the server in `tick`, in order: during
    /// the outage each fails as transient; after it the first `capacity`
    /// succeed and the rest are throttled, and each client that retries is
    /// scheduled for the tick its wait ends in. Returns false when the
    /// horizon or call limit stops the run, counting every client not yet
    /// done (`waiting` of them still in send queues) as unfinished.
    fn answer(
        &mut self,
        ctx: &Ctx<'_>,
        tally: &mut Tally,
        tick: u64,
        arrivals: &[u32],
        waiting: usize,
    ) -> bool {
        let count = arrivals.len() as u64;
        if tick >= ctx.horizon_ticks || tally.calls.saturating_add(count) > ctx.max_calls {
            tally.hit_call_limit |= tick < ctx.horizon_ticks;
            tally.unfinished += count + self.queue.len() as u64 + waiting as u64;
            return false;
        }
        tally.calls += count;
        // Calls over capacity are turned away as throttled (a 429, or a 503
        // with no hint).
        let throttled = Failure {
            class: Class::THROTTLED,
            hint: None,
            allowed: true,
        };
        let down = Failure {
            class: Class::TRANSIENT,
            hint: None,
            allowed: true,
        };
        let (start, end) = (ctx.start(tick), ctx.end(tick));
        let mut room = if tick < ctx.outage_ticks {
            0
        } else {
            ctx.capacity
        };
        let mut first_calls = 0;
        for &client in arrivals {
            let decider = &mut self.clients[client as usize];
            first_calls += u64::from(decider.attempts() == 0);
            decider.begin_attempt(ctx.policy, start);
            if room > 0 {
                room -= 1;
                tally.succeed(tick);
                continue;
            }
            let failure = if tick < ctx.outage_ticks {
                down
            } else {
                throttled
            };
            match decider.after_failure(ctx.policy, failure, end) {
                Step::Retry { wait, .. } => self.queue.push(ctx.next_tick(tick, wait), client),
                Step::GiveUp(_) => tally.give_up(tick),
            }
        }
        tally.tick(tick, first_calls, count - first_calls);
        true
    }
}
