//! The herd once the service is back: calls compete for `capacity` per
//! tick, so clients must be run tick by tick, in the order they were
//! scheduled, the first `capacity` of each tick getting through.
//!
//! With a send rate the clients compete from the start, for their machine
//! ([`crate::SendRate`]), so a send-rate run is this phase from tick 0, the
//! outage included: calls made before the service is back fail as transient.
//!
//! With a circuit breaker ([`super::breakers`]) every attempt asks its
//! client's breaker at the start of its tick, before any of the tick's
//! calls is answered at its end; a refused attempt is not sent and its
//! client waits as the kernel's `after_refusal` says.
//!
//! With injected latency ([`super::chaos`]) an attempt begins (asks its
//! breaker, draws its chaos) in the tick it falls due and is held back: its
//! client is queued again for the tick its delay ends in, and then is sent
//! (with a send rate, straight away: its turn was taken when it began), or
//! fails with the fault or the timeout it was held with.
//!
//! Clients stay in one table and the queue holds their 4-byte indices:
//! moving whole deciders from bucket to bucket would scatter copies of them
//! over thousands of growing vectors.

use super::Ctx;
use super::breakers::record;
use super::tally::Tally;
use crate::queue::TickQueue;
use crate::send::{SendRate, Senders};
use retrykit_core::Class;
use retrykit_core::Policy;
use retrykit_core::breaker::Ticket;
use retrykit_core::kernel::{Decider, Failure, Step};
use std::collections::HashMap;
use std::time::Duration;

/// The clients still retrying once the service is back, keyed by their next call.
pub(super) struct Recovery {
    queue: TickQueue<u32>,
    clients: Vec<Decider>,
    /// One tick's calls that were sent, with their breaker tickets.
    sent: Vec<(u32, Option<Ticket>)>,
    /// The attempts chaos holds back, by client: what each does when its
    /// delay is over.
    held: HashMap<u32, Held>,
}

/// What an attempt chaos delayed does once its delay is over.
enum Held {
    /// It is sent.
    Send(Option<Ticket>),
    /// It fails, unsent: with the fault drawn with the delay, or as a
    /// timeout when the delay reached its time limit.
    Fail(Failure, Option<Ticket>),
}

impl Recovery {
    /// An empty recovery phase whose wheel spans about `span` ticks, for at
    /// most `clients` clients.
    pub(super) fn new(span: u64, clients: u32) -> Self {
        Recovery {
            queue: TickQueue::new(span),
            clients: Vec::with_capacity(clients as usize),
            sent: Vec::new(),
            held: HashMap::new(),
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
        let mut back = Vec::new();
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
                    match self.held.contains_key(&client) {
                        true => back.push(client),
                        false => senders.due(client),
                    }
                }
                self.queue.recycle(due);
            }
            senders.send(tick, &mut sent);
            sent.append(&mut back);
            last = Some(tick);
            if !sent.is_empty() && !self.answer(ctx, tally, tick, &sent, senders.waiting()) {
                return;
            }
        }
    }

    /// Makes the calls due in `tick`, in order: each asks its breaker, if
    /// any, and a refused one waits or gives up; during the outage each
    /// call sent fails as transient; after it the first `capacity` succeed
    /// and the rest are throttled, and each client that retries is
    /// scheduled for the tick its wait ends in. Returns false when the
    /// horizon or call limit (which counts refused attempts too) stops the
    /// run, counting every client not yet done (`waiting` of them still in
    /// send queues) as unfinished.
    fn answer(
        &mut self,
        ctx: &Ctx<'_>,
        tally: &mut Tally,
        tick: u64,
        arrivals: &[u32],
        waiting: usize,
    ) -> bool {
        let count = arrivals.len() as u64;
        let made = tally.calls.saturating_add(tally.refused);
        if tick >= ctx.horizon_ticks || made.saturating_add(count) > ctx.max_calls {
            tally.hit_call_limit |= tick < ctx.horizon_ticks;
            tally.unfinished += count + self.queue.len() as u64 + waiting as u64;
            return false;
        }
        let (start, end) = (ctx.start(tick), ctx.end(tick));
        // First every attempt of the tick asks its breaker (at the tick's
        // start), then the calls sent are answered (at its end).
        let mut first_calls = 0;
        self.sent.clear();
        for &client in arrivals {
            if !self.held.is_empty()
                && let Some(held) = self.held.remove(&client)
            {
                self.release(ctx, tally, tick, client, held, &mut first_calls);
                continue;
            }
            let decider = &mut self.clients[client as usize];
            decider.begin_attempt(ctx.policy, start);
            let breaker = ctx.breakers.as_ref().and_then(|b| b.of(client));
            let ticket = match breaker.map(|b| b.try_acquire(start)) {
                None => None,
                Some(Ok(ticket)) => Some(ticket),
                Some(Err(open)) => {
                    tally.refused += 1;
                    match decider.after_refusal(ctx.policy, open.retry_in(), start) {
                        Step::Retry { wait, .. } => {
                            self.queue.push(ctx.refused_tick(tick, wait), client);
                        }
                        Step::GiveUp(_) => tally.breaker_give_up(tick),
                    }
                    continue;
                }
            };
            let Some(chaos) = ctx.chaos.as_ref() else {
                self.release(
                    ctx,
                    tally,
                    tick,
                    client,
                    Held::Send(ticket),
                    &mut first_calls,
                );
                continue;
            };
            // Chaos: a delay that reaches the attempt's time limit times it
            // out unsent; otherwise it is held its delay, then fails with
            // its fault (if it drew one) or is sent.
            let attempt = decider.attempts();
            let fault = chaos.fault(client, attempt);
            let delay = chaos.delay(client, attempt);
            let into_call = decider.elapsed(start);
            let limit = time_limit(ctx.policy, into_call);
            let (after, held) = match (delay, fault) {
                (Some(delay), _) if limit.is_some_and(|limit| delay >= limit) => {
                    tally.delay_timeouts += 1;
                    let timeout = Failure {
                        class: Class::TIMEOUT,
                        hint: None,
                        allowed: true,
                    };
                    (limit, Held::Fail(timeout, ticket))
                }
                (delay, Some(fault)) => {
                    tally.injected += 1;
                    (delay, Held::Fail(fault, ticket))
                }
                (delay, None) => (delay, Held::Send(ticket)),
            };
            if let Some(delay) = delay {
                tally.delayed += 1;
                tally.delayed_for = tally.delayed_for.saturating_add(delay);
            }
            match after.map_or(0, |after| ctx.ticks_of(after)) {
                0 => self.release(ctx, tally, tick, client, held, &mut first_calls),
                ticks => {
                    self.held.insert(client, held);
                    self.queue.push(tick.saturating_add(ticks), client);
                }
            }
        }
        let sent = self.sent.len() as u64;
        tally.calls += sent;
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
        let mut room = if tick < ctx.outage_ticks {
            0
        } else {
            ctx.capacity
        };
        for (client, ticket) in self.sent.drain(..) {
            let decider = &mut self.clients[client as usize];
            let breaker = ctx.breakers.as_ref().and_then(|b| b.of(client));
            if room > 0 {
                room -= 1;
                record(breaker, ticket, None, end);
                tally.succeed(tick);
                continue;
            }
            let failure = if tick < ctx.outage_ticks {
                down
            } else {
                throttled
            };
            record(breaker, ticket, Some(failure.class), end);
            match decider.after_failure(ctx.policy, failure, end) {
                Step::Retry { wait, .. } => self.queue.push(ctx.next_tick(tick, wait), client),
                Step::GiveUp(_) => tally.give_up(tick),
            }
        }
        if sent > 0 {
            tally.tick(tick, first_calls, sent - first_calls);
        }
        true
    }

    /// What an attempt begun (and let through by its breaker) does in
    /// `tick`: it is sent, counted as a first call if it is its client's
    /// first attempt, or fails at the tick's start, unsent.
    fn release(
        &mut self,
        ctx: &Ctx<'_>,
        tally: &mut Tally,
        tick: u64,
        client: u32,
        held: Held,
        first_calls: &mut u64,
    ) {
        let decider = &mut self.clients[client as usize];
        match held {
            Held::Send(ticket) => {
                *first_calls += u64::from(decider.attempts() == 1);
                self.sent.push((client, ticket));
            }
            Held::Fail(failure, ticket) => {
                let start = ctx.start(tick);
                let breaker = ctx.breakers.as_ref().and_then(|b| b.of(client));
                record(breaker, ticket, Some(failure.class), start);
                match decider.after_failure(ctx.policy, failure, start) {
                    Step::Retry { wait, .. } => self.queue.push(ctx.next_tick(tick, wait), client),
                    Step::GiveUp(_) => tally.give_up(tick),
                }
            }
        }
    }
}

/// How long an attempt begun `into_call` after its call's first may run, as
/// the engine's timer arms it: the nearer of the policy's `attempt_timeout`
/// and what is left of its `deadline` (`None` without either).
fn time_limit(policy: &Policy, into_call: Duration) -> Option<Duration> {
    let left = policy.deadline().map(|d| d.saturating_sub(into_call));
    match (policy.attempt_timeout(), left) {
        (Some(own), Some(left)) => Some(own.min(left)),
        (own, left) => own.or(left),
    }
}
