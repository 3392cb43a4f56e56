//! A hedged round: the attempt a round of `drive!` makes, for a policy with
//! `hedge_after`. It starts the round's first attempt, then more copies as
//! [`next_hedge`] says, and ends with the first success or fatal error
//! (every other attempt is cancelled by dropping it), or, once no hedge may
//! follow and every attempt has failed, with the last failure, which the
//! loop then settles as any failed attempt (a retry after a wait when the
//! policy allows one, as after server pushback).
//!
//! gRFC A6's commit: when the hooks say the call is
//! [`Committed`](Unrepeatable::Committed) just after an attempt was polled
//! (its response began: the gRPC layer's attempts say so as their first
//! message comes), the round is committed to that attempt: every other
//! one is cancelled at once, no hedge follows, and the round ends with the
//! committed attempt's result (a failure then ends the call).
//!
//! Each attempt is raced against its own `attempt_timeout` and runs in an
//! `attempt` span inside the call's span. The call's timer waits for the
//! next hedge.

use crate::attempt::{Own, Timed};
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::decide::hedge::{HedgeStep, HedgeView, is_fatal, next_hedge};
use crate::decide::{drains_throttling, time_limit};
use crate::hooks::{HookSet, Unrepeatable};
use crate::policy::Policy;
use crate::run::{Gate, Run};
use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// This round's attempts under a hedging policy, each made by `make`.
    /// A policy without `hedge_after` gets a single attempt, as
    /// [`attempt`](Self::attempt) makes it.
    pub fn race<M, Fut, T, E>(&mut self, make: M) -> Race<'_, P, C, S, H, M, Fut>
    where
        M: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        let now = self.now();
        if self.tally.attempts == 0
            && let Some(hedging) = self.policy().hedging()
        {
            hedging.count_call(now);
        }
        let mut race = Race {
            run: self,
            make,
            running: Vec::new(),
            last_start: now,
            failed_since_last_start: false,
            pushback: false,
            last: None,
            last_drains: false,
            first_attempt: 0,
            first_began: now,
            refused: false,
            committed: false,
            cancelled: 0,
        };
        race.start(now, false);
        race
    }
}

/// One attempt in a race: its number, what the breaker said of it, and
/// the attempt raced against its own timeout.
struct Running<Fut, Sl> {
    attempt: u32,
    gate: Gate,
    fut: Pin<Box<Timed<Fut, Own<Sl>>>>,
}

/// The attempts of one hedged round (see [`Run::race`]).
#[must_use = "a race does nothing until awaited"]
pub struct Race<'r, P, C, S: Sleeper, H, M, Fut: Future> {
    run: &'r mut Run<P, C, S, H>,
    make: M,
    running: Vec<Running<Fut, S::Sleep>>,
    last_start: Instant,
    failed_since_last_start: bool,
    pushback: bool,
    /// The last non-fatal failure, returned when no attempt is left.
    last: Option<Fut::Output>,
    /// Whether `last` drains gRFC A6's throttling buckets
    /// ([`drains_throttling`]): the kernel drains for the failure it is
    /// given; one another result supersedes drains here, so that every
    /// failed attempt drains once, as grpc-java's hedging counts them.
    last_drains: bool,
    /// The round's first attempt (the ones after it are hedges), and when it began.
    first_attempt: u32,
    first_began: Instant,
    /// Whether the breaker refused an attempt of this round: no hedge
    /// follows (a refused first attempt ends the round at once).
    refused: bool,
    /// Whether an attempt committed (see the module docs): it alone is left
    /// running, and no hedge follows.
    committed: bool,
    /// Attempts cancelled when one committed.
    cancelled: u32,
}

impl<P, C, S, H, M, Fut, T, E> Race<'_, P, C, S, H, M, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    M: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    /// Begins an attempt (a hedge when `hedge`): counted by the call, raced
    /// against its own timeout, in its own span. One the breaker refuses is
    /// not sent: a refused hedge is not an attempt at all; a refused first
    /// attempt ends the round with the refusal, which the loop settles (the
    /// call's gate says it was refused).
    fn start(&mut self, now: Instant, hedge: bool) {
        let run = &mut *self.run;
        // The first attempt starts the call (counting it in the budgets)
        // and its clock, which a race reads whatever the policy needs.
        let refusal = run.begin_attempt::<E>();
        run.start_clock(now);
        if let Some(open) = refusal {
            self.refused = true;
            match hedge {
                true => run.unrefuse(),
                false => self.last = Some(Err(crate::attempt::refusal(*open))),
            }
            return;
        }
        // Each attempt of a race keeps what the breaker said of it.
        let gate = std::mem::replace(&mut run.gate, Gate::Idle);
        // The call's timer waits for hedges here: each attempt has its own timeout.
        run.timer.disarm();
        let attempt = run.tally.attempts;
        if hedge {
            run.tally.hedges = run.tally.hedges.saturating_add(1);
        } else {
            self.first_attempt = attempt;
        }
        let limit = time_limit(run.policy(), attempt, run.elapsed(now));
        let sleep = limit.map(|(d, _)| run.sleep(d));
        #[cfg(feature = "tracing")]
        let span = tracing::debug_span!(parent: run.span(), "attempt", attempt, hedge);
        #[cfg(feature = "tracing")]
        let fut = { span.in_scope(&mut self.make) };
        #[cfg(not(feature = "tracing"))]
        let (fut, span) = ((self.make)(), ());
        self.running.push(Running {
            attempt,
            gate,
            fut: Box::pin(Timed::new(
                fut,
                Own::new(sleep, limit.map(|(_, t)| t), span),
            )),
        });
        self.last_start = now;
        self.failed_since_last_start = false;
    }

    /// `last` will not reach the kernel (another result came): it drains
    /// the throttling buckets here, if it drains them.
    fn supersede_last(&mut self) {
        if std::mem::take(&mut self.last_drains) {
            self.run.policy().budgets.throttle(true);
        }
    }

    /// The race is over: `winner`'s result ends it (0: the last failure,
    /// when no attempt is left); the rest are cancelled. The policy's
    /// latency estimate records the time since the race's first attempt
    /// began, as the simulator does.
    fn finish(&mut self, winner: u32, result: Result<T, E>) -> Poll<Result<T, E>> {
        let run = &mut *self.run;
        let sent = self.first_attempt != 0;
        if let Some(hedging) = run.policy().hedging().filter(|_| sent) {
            let latency = run.now().saturating_duration_since(self.first_began);
            hedging.record_call(latency, run.policy().name());
        }
        run.tally.winner = u16::try_from(winner).unwrap_or(u16::MAX);
        if sent {
            crate::observe::emit(crate::observe::Event::Hedged {
                policy: run.policy().name.as_ref(),
                started: run.tally.attempts - self.first_attempt,
                won: winner != self.first_attempt,
                cancelled: self.running.len() as u32 + self.cancelled,
            });
        }
        self.running.clear();
        Poll::Ready(result)
    }

    /// Commits the round to attempt `i`, just polled, if the hooks now say
    /// the call is committed (see the module docs): the others are
    /// cancelled (dropped), and `i` is left alone at index 0.
    fn commit_to(&mut self, i: usize) -> bool {
        if self.committed
            || HookSet::<E>::unrepeatable(&self.run.hooks) != Some(Unrepeatable::Committed)
        {
            return false;
        }
        self.committed = true;
        self.running.swap(0, i);
        self.cancelled = self.running.len() as u32 - 1;
        self.running.truncate(1);
        true
    }
}

impl<P, C, S, H, M, Fut, T, E> Future for Race<'_, P, C, S, H, M, Fut>
where
    P: Borrow<Policy>,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    M: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let this = self.get_mut();
        loop {
            let mut i = 0;
            while i < this.running.len() {
                let Poll::Ready(result) = this.running[i].fut.as_mut().poll(cx) else {
                    i = if this.commit_to(i) { 1 } else { i + 1 };
                    continue;
                };
                let done = this.running.swap_remove(i);
                match result {
                    Ok(value) => {
                        this.run.record(done.gate, None);
                        this.supersede_last();
                        return this.finish(done.attempt, Ok(value));
                    }
                    Err(error) => {
                        let (failure, ..) = this.run.failure_of(&error);
                        this.run.record(done.gate, Some(failure.class));
                        this.supersede_last();
                        if is_fatal(this.run.policy(), failure) {
                            return this.finish(done.attempt, Err(error));
                        }
                        this.pushback |= failure.hint.is_some();
                        this.failed_since_last_start = true;
                        this.last_drains = drains_throttling(this.run.policy(), failure);
                        this.last = Some(Err(error));
                    }
                }
            }
            // A refused or committed round sends no hedge: it waits for the
            // attempts it has (a committed one's failure is fatal: it ends
            // the round as it comes).
            if this.refused || this.committed {
                if this.running.is_empty() {
                    let last = this.last.take().expect("a refused round holds its refusal");
                    return this.finish(0, last);
                }
                this.run.timer.disarm();
                return Poll::Pending;
            }
            let now = this.run.now();
            let policy = this.run.policy();
            let view = HedgeView {
                started: this.run.tally.attempts,
                in_flight: this.running.len() as u32,
                failed_since_last_start: this.failed_since_last_start,
                pushback: this.pushback,
                elapsed: this.run.elapsed(now),
                since_last_start: now.saturating_duration_since(this.last_start),
                delay: policy.hedging().map_or(Duration::ZERO, |h| h.delay()),
            };
            match next_hedge(policy, &view, || policy.admit_hedge(now)) {
                HedgeStep::Start => this.start(now, true),
                HedgeStep::Wait(due_in) => {
                    let fired = match this.run.timer.poll(cx) {
                        None => {
                            let sleep = this.run.sleep(due_in);
                            this.run.timer.arm(sleep);
                            this.run.timer.poll(cx)
                        }
                        armed => armed,
                    };
                    match fired {
                        Some(Poll::Pending) => return Poll::Pending,
                        // Fired: ask again (the estimate may have moved).
                        _ => continue,
                    }
                }
                HedgeStep::Stop(_) if this.running.is_empty() => {
                    let last = this.last.take().expect("every attempt of the race failed");
                    return this.finish(0, last);
                }
                HedgeStep::Stop(_) => {
                    this.run.timer.disarm();
                    return Poll::Pending;
                }
            }
        }
    }
}

// Nothing in a race is ever pinned (its attempts are boxed), so moving it is fine.
impl<P, C, S: Sleeper, H, M, Fut: Future> Unpin for Race<'_, P, C, S, H, M, Fut> {}
