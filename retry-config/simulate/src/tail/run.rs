//! The tail scenario's event loop: closed-loop clients, one call each at a
//! time, attempts answered by the [`TailServer`] model, hedges decided by
//! retrykit-core's `next_hedge`. Time is whole nanoseconds from the run's
//! start; events at the same instant are taken answers first, then timers,
//! each in the order they were scheduled, so a run is a function of its
//! inputs.

use super::{Tail, TailOutcome, TailReport};
use crate::error::SimulateError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retrykit_core::kernel::Decider;
use retrykit_core::kernel::{HedgeStep, HedgeView, next_hedge};
use retrykit_core::{BudgetMode, Policy, RetryBudget};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What an event is, in the order events at one instant are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// An attempt's answer arrives.
    Answer,
    /// A client asks `next_hedge` again.
    Timer,
}

/// (time, kind, sequence, client, call generation, whether the answer is a hedge's)
type Event = Reverse<(u64, Kind, u64, usize, u64, bool)>;

/// One client's open call.
#[derive(Debug, Clone, Copy, Default)]
struct Call {
    /// Bumped when a call ends: events of an ended call are stale.
    generation: u64,
    start: u64,
    last_start: u64,
    started: u32,
    in_flight: u32,
    decider_started: bool,
}

impl Tail {
    /// Runs the policy as it is and without hedging, on the same server and
    /// seed. Shared state is not touched: the runs use a fresh latency
    /// estimate, cap and copies of the policy's budgets (a fleet budget is
    /// simulated as a local one).
    ///
    /// # Errors
    ///
    /// A [`SimulateError`] naming each setting out of range (`calls`,
    /// `concurrency`, the server's `slow_share`, `slow`, `fast`,
    /// `load_slowdown`), with the fix.
    ///
    /// ```
    /// use retrykit_core::{Policy, hedge::{HedgeAfter, HedgeSettings, Percentile}};
    /// use retrykit_sim::Tail;
    /// let p95 = HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse("p95").unwrap()));
    /// let policy = Policy::builder().hedge(Some(p95)).build()?;
    /// let r = Tail { calls: 2_000, ..Tail::default() }.run(&policy)?;
    /// assert!(r.hedged.p999 * 10 <= r.unhedged.p999); // 1% of calls slow: the p99.9
    /// assert!(r.hedged.extra_share < 0.1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run(&self, policy: &Policy) -> Result<TailReport, SimulateError> {
        self.check()?;
        let unhedged = fresh(policy, false)?;
        let hedged = fresh(policy, true)?;
        Ok(TailReport {
            hedged: self.outcome(&hedged),
            unhedged: self.outcome(&unhedged),
            settings: policy.hedge_settings(),
            calls: self.calls,
        })
    }

    /// One run of `policy` (checked settings).
    fn outcome(&self, policy: &Policy) -> TailOutcome {
        let origin = Instant::now();
        let at = |t: u64| {
            origin
                .checked_add(Duration::from_nanos(t))
                .unwrap_or(origin)
        };
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let clients = self
            .concurrency
            .min(u32::try_from(self.calls).unwrap_or(u32::MAX)) as usize;
        let mut calls = vec![Call::default(); clients];
        let mut deciders: Vec<Decider> = (0..clients)
            .map(|_| Decider::new(Some(self.seed)))
            .collect();
        let mut events: BinaryHeap<Event> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut server_busy = 0u64;
        let mut made = 0u64;
        let mut latencies: Vec<u64> = Vec::with_capacity(self.calls as usize);
        let mut out = TailOutcome::default();
        let mut attempts = 0u64;

        // Starts an attempt of `client`'s call at `now`.
        let mut start_attempt = |client: usize,
                                 call: &mut Call,
                                 now: u64,
                                 hedge: bool,
                                 events: &mut BinaryHeap<Event>,
                                 server_busy: &mut u64,
                                 seq: &mut u64| {
            let latency = self
                .server
                .latency(rng.random(), rng.random(), *server_busy);
            *server_busy += 1;
            call.started += 1;
            call.in_flight += 1;
            call.last_start = now;
            *seq += 1;
            let done = now.saturating_add(latency.as_nanos() as u64);
            let done = self.timer.map_or(done, |t| t.fires_at(done, self.seed));
            events.push(Reverse((
                done,
                Kind::Answer,
                *seq,
                client,
                call.generation,
                hedge,
            )));
        };

        // Asks the kernel about the next hedge of `client`'s call at `now`.
        let ask = |client: usize,
                   call: &mut Call,
                   now: u64,
                   events: &mut BinaryHeap<Event>,
                   seq: &mut u64,
                   out: &mut TailOutcome|
         -> bool {
            let Some(hedging) = policy.hedging() else {
                return false;
            };
            let view = HedgeView {
                started: call.started,
                in_flight: call.in_flight,
                failed_since_last_start: false,
                pushback: false,
                elapsed: Duration::from_nanos(now - call.start),
                since_last_start: Duration::from_nanos(now - call.last_start),
                delay: hedging.delay(),
            };
            match next_hedge(policy, &view, || policy.admit_hedge(at(now))) {
                HedgeStep::Start => true,
                HedgeStep::Wait(d) => {
                    *seq += 1;
                    let when = now.saturating_add(d.as_nanos() as u64);
                    let when = self.timer.map_or(when, |t| t.fires_at(when, self.seed));
                    events.push(Reverse((
                        when,
                        Kind::Timer,
                        *seq,
                        client,
                        call.generation,
                        false,
                    )));
                    false
                }
                HedgeStep::Stop(why) => {
                    use retrykit_core::kernel::HedgeStop;
                    if matches!(why, HedgeStop::CapSpent | HedgeStop::BudgetEmpty) {
                        out.hedges_refused += 1;
                    }
                    false
                }
            }
        };

        // Every client starts a call at time 0.
        for client in 0..clients {
            made += 1;
            let call = &mut calls[client];
            deciders[client].begin_attempt(policy, at(0));
            call.decider_started = true;
            start_attempt(
                client,
                call,
                0,
                false,
                &mut events,
                &mut server_busy,
                &mut seq,
            );
            attempts += 1;
            ask(client, call, 0, &mut events, &mut seq, &mut out);
        }
        while let Some(Reverse((now, kind, _, client, generation, hedge))) = events.pop() {
            let call = &mut calls[client];
            if call.generation != generation {
                continue; // an answer or timer of a call that has ended
            }
            match kind {
                Kind::Timer => {
                    // Start as many hedges as are due now (at most max_attempts).
                    while ask(client, call, now, &mut events, &mut seq, &mut out) {
                        start_attempt(
                            client,
                            call,
                            now,
                            true,
                            &mut events,
                            &mut server_busy,
                            &mut seq,
                        );
                        attempts += 1;
                        out.hedges += 1;
                    }
                }
                Kind::Answer => {
                    // The first answer ends the call; the others are cancelled.
                    server_busy = server_busy.saturating_sub(u64::from(call.in_flight));
                    let latency = now - call.start;
                    latencies.push(latency);
                    out.hedges_won += u64::from(hedge);
                    if let Some(hedging) = policy.hedging() {
                        hedging.estimate().record(Duration::from_nanos(latency));
                    }
                    call.generation += 1;
                    if made < self.calls {
                        made += 1;
                        *call = Call {
                            generation: call.generation,
                            start: now,
                            ..Call::default()
                        };
                        deciders[client] = Decider::new(Some(self.seed));
                        deciders[client].begin_attempt(policy, at(now));
                        start_attempt(
                            client,
                            call,
                            now,
                            false,
                            &mut events,
                            &mut server_busy,
                            &mut seq,
                        );
                        attempts += 1;
                        ask(client, call, now, &mut events, &mut seq, &mut out);
                    }
                }
            }
        }
        latencies.sort_unstable();
        let pick = |q: f64| {
            let n = latencies.len();
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n.max(1));
            Duration::from_nanos(latencies.get(rank - 1).copied().unwrap_or(0))
        };
        out.p50 = pick(0.5);
        out.p99 = pick(0.99);
        out.p999 = pick(0.999);
        let done = latencies.len().max(1) as f64;
        out.extra_share = attempts.saturating_sub(latencies.len() as u64) as f64 / done;
        out
    }
}

/// `policy` with fresh shared state for a simulated run: a new latency
/// estimate and cap (or no hedging), and local copies of its budgets.
fn fresh(policy: &Policy, hedging: bool) -> Result<Policy, SimulateError> {
    let budgets: Vec<Arc<RetryBudget>> = policy
        .budgets()
        .iter()
        .map(|b| match b.mode() {
            BudgetMode::Adaptive => Ok(Arc::new(RetryBudget::adaptive())),
            BudgetMode::GrpcThrottling => {
                let t = b
                    .throttling()
                    .expect("a grpc_throttling budget has its bucket");
                RetryBudget::grpc_throttling(t.max_tokens(), t.token_ratio()).map(Arc::new)
            }
            _ => RetryBudget::builder()
                .ratio(b.ratio())
                .min_per_sec(b.min_per_sec())
                .window(b.window())
                .build()
                .map(Arc::new),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| rebuild_error(&e))?;
    policy
        .to_builder()
        .budgets(budgets)
        .hedge(policy.hedge_settings().filter(|_| hedging))
        .build()
        .map_err(|e| rebuild_error(&e))
}

/// A policy that could not be rebuilt for the run (its settings passed
/// once, so this is not expected).
fn rebuild_error(e: &retrykit_core::PolicyError) -> SimulateError {
    SimulateError::new("tail", e.problems().to_vec())
}
