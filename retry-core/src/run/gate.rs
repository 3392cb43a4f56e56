//! The policy's circuit breaker in a call: what it said of the attempt in
//! flight ([`Gate`]) and how that attempt went. `Run::begin_attempt` asks it.

use super::Run;
use crate::clock::{Clock, Sleeper};
use crate::policy::Policy;
use std::borrow::Borrow;
use std::time::Duration;

/// What the policy's circuit breaker said of the attempt in flight (see
/// [`crate::breaker`]); `Idle` under a policy without one.
#[derive(Debug)]
pub(crate) enum Gate {
    /// No breaker asked, or the attempt's outcome was recorded.
    Idle,
    /// Let through: its outcome is recorded as it is settled (a race
    /// records each of its attempts itself).
    Sent(crate::breaker::Ticket),
    /// Refused: the breaker lets attempts through again in this long.
    Refused(Duration),
    /// The first attempt is waiting for a permit of the policy's
    /// concurrency limit since then: the call's clock starts there.
    Waiting(std::time::Instant),
    /// Not sent: the policy's concurrency limit gave no permit in time
    /// (waiting since then, for a first attempt that waited).
    LimitFull(Option<std::time::Instant>),
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Takes back a hedge the breaker refused: it was never sent, so it is
    /// not an attempt (a refused hedge is simply not sent).
    pub(crate) fn unrefuse(&mut self) {
        self.tally.attempts = self.tally.attempts.saturating_sub(1);
        self.gate = Gate::Idle;
    }

    /// Tells the breaker how the attempt it let through with `ticket` went:
    /// failed when its error's `class` is one the breaker counts; `None`
    /// for a success.
    pub(crate) fn record(
        &self,
        ticket: crate::breaker::Ticket,
        class: Option<crate::class::Class>,
    ) {
        let Some(breaker) = &self.policy.borrow().breaker else {
            return;
        };
        // A success is counted where the attempt began; the clock is read
        // only to judge a failure, a slow call or a release's answer.
        let now = if class.is_some() || breaker.slow_call().is_some() || breaker.releasing() {
            self.clock.now()
        } else {
            ticket.began()
        };
        breaker.record_class(ticket, now, class);
    }
}

/// Why an attempt was not sent: the breaker refused it, a concurrency
/// limit gave it no permit in time, or chaos injected a fault in its place.
#[derive(Debug)]
pub enum Refusal {
    /// The breaker refused the attempt.
    Breaker(crate::breaker::BreakerOpen),
    /// The limit gave no permit in time.
    Limit(crate::limit::LimitFull),
    /// Chaos failed the attempt in place of its closure.
    Chaos(crate::chaos::InjectedFault),
}
