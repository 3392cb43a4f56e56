//! A hedged round, for a policy with `hedge_after`: the round's first
//! attempt, then more copies as [`next_hedge`] says. It ends with the first
//! success or fatal error (the other attempts are dropped), or, once no
//! hedge may follow and every attempt failed, with the last failure, which
//! the loop settles as any failed attempt.
//!
//! gRFC A6's commit: when the hooks say the call is
//! [`Committed`](Unrepeatable::Committed) just after an attempt was polled
//! (the gRPC layer's attempts say so as their first message comes), every
//! other attempt is dropped, no hedge follows, and the round ends with that
//! attempt's result.
//!
//! Each attempt has its own `attempt_timeout` and `attempt` span; the
//! call's timer waits for the next hedge.

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::decide::hedge::{HedgeStep, HedgeView, is_fatal, next_hedge};
use crate::decide::{in_policy, time_limit};
use crate::hooks::{HookSet, Unrepeatable};
use crate::policy::Policy;
use crate::run::{Gate, Run};
use crate::timer::poll_sleep;
use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// This round's attempts under a hedging policy, each made by `make`.
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

/// One attempt in a race.
struct Running<Fut, Sl> {
    attempt: u32,
    /// The breaker's ticket, if it let the attempt through.
    ticket: Option<crate::breaker::Ticket>,
    /// The attempt's permit of the policy's concurrency limit, if it has one.
    permit: Option<crate::limit::Permit>,
    fut: Pin<Box<Hedged<Fut, Sl>>>,
}

pin_project_lite::pin_project! {
    /// An attempt of a race, raced against its own time limit (no sleep
    /// without a [`time_limit`]) and polled in its own `attempt` span. A
    /// timeout the error type cannot stand for (`Classify::from_timeout`
    /// gives `None`) lets it run on.
    struct Hedged<Fut, Sl> {
        #[pin]
        fut: Fut,
        #[pin]
        sleep: Option<Sl>,
        timeout: Option<AttemptTimeout>,
        span: AttemptSpan,
    }
}

/// An attempt's span (nothing without the `tracing` feature).
#[cfg(feature = "tracing")]
type AttemptSpan = tracing::Span;
#[cfg(not(feature = "tracing"))]
type AttemptSpan = ();

impl<Fut, Sl, T, E> Future for Hedged<Fut, Sl>
where
    Fut: Future<Output = Result<T, E>>,
    Sl: Future<Output = ()>,
    E: Classify,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let mut this = self.project();
        #[cfg(feature = "tracing")]
        let _span = this.span.clone().entered();
        if let Poll::Ready(result) = this.fut.poll(cx) {
            return Poll::Ready(result);
        }
        let Some(sleep) = this.sleep.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        if poll_sleep(sleep, cx).is_pending() {
            return Poll::Pending;
        }
        this.sleep.set(None);
        match (*this.timeout).and_then(E::from_timeout) {
            Some(timed_out) => Poll::Ready(Err(timed_out)),
            None => Poll::Pending,
        }
    }
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
    /// Whether `last` drains gRFC A6's throttling buckets: the kernel
    /// drains for the failure it is given, one superseded drains here, so
    /// every failed attempt drains once, as grpc-java counts them.
    last_drains: bool,
    /// The round's first attempt (the ones after it are hedges), and when it began.
    first_attempt: u32,
    first_began: Instant,
    /// The breaker refused an attempt of this round: no hedge follows.
    refused: bool,
    /// An attempt committed: it alone is left running.
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
    /// Begins an attempt (a hedge when `hedge`). One the breaker refuses is
    /// not sent: a refused hedge is not an attempt at all; a refused first
    /// attempt ends the round with the refusal.
    fn start(&mut self, now: Instant, hedge: bool) {
        let run = &mut *self.run;
        // The round's first attempt holds the permit `admit` got; a hedge
        // takes one only if one is free now, or is not sent and no hedge follows.
        let permit = match (hedge, &run.policy().limit) {
            (false, _) => run.permit.take(),
            (true, None) => None,
            (true, Some(limit)) => match limit.try_acquire() {
                Some(mut permit) => {
                    if permit.adapts() {
                        permit.stamp(now);
                    }
                    Some(permit)
                }
                None => {
                    self.refused = true;
                    return;
                }
            },
        };
        // A race reads the call's clock whatever the policy needs.
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
        let ticket = match std::mem::replace(&mut run.gate, Gate::Idle) {
            Gate::Sent(ticket) => Some(ticket),
            _ => None,
        };
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
            ticket,
            permit,
            fut: Box::pin(Hedged {
                fut,
                sleep,
                timeout: limit.map(|(_, t)| t),
                span,
            }),
        });
        self.last_start = now;
        self.failed_since_last_start = false;
    }

    /// `last` will not reach the kernel: it drains the buckets here, if it drains.
    fn supersede_last(&mut self) {
        if std::mem::take(&mut self.last_drains) {
            self.run.policy().budgets.throttle(true);
        }
    }

    /// The race is over: `winner`'s result ends it (0: the last failure);
    /// the rest are dropped. The latency estimate records the time since
    /// the first attempt began, as the simulator does.
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
    /// so: the others are dropped, and `i` is left alone at index 0.
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
                let failure = result.as_ref().err().map(|e| this.run.failure_of(e).0);
                let class = failure.map(|f| f.class);
                if let Some(ticket) = done.ticket {
                    this.run.record(ticket, class);
                }
                this.run.give_back(done.permit, class);
                this.supersede_last();
                match (result, failure) {
                    (Err(error), Some(failure)) if !is_fatal(this.run.policy(), failure) => {
                        this.pushback |= failure.hint.is_some();
                        this.failed_since_last_start = true;
                        this.last_drains = in_policy(this.run.policy(), failure.class);
                        this.last = Some(Err(error));
                    }
                    // A success or a fatal error ends the race.
                    (result, _) => return this.finish(done.attempt, result),
                }
            }
            // A refused or committed round sends no hedge.
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

// Its attempts are boxed: nothing in a race is pinned.
impl<P, C, S: Sleeper, H, M, Fut: Future> Unpin for Race<'_, P, C, S, H, M, Fut> {}
