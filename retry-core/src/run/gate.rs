//! The policy's circuit breaker in a call: what it said of the attempt in
//! flight ([`Gate`]), the closed breaker's fast path for a first attempt,
//! and telling it how an attempt it let through went. (Asking it for any
//! other attempt is part of `Run::begin_attempt_slowly`.)

use super::{CallPolicy, Run};
use crate::breaker::Ticket;
use crate::clock::{Clock, Sleeper};
use std::time::Duration;

/// What the policy's circuit breaker said of the attempt in flight (see
/// [`crate::breaker`]); `Idle` under a policy without one.
#[derive(Debug)]
pub(crate) enum Gate {
    /// No breaker asked, or the attempt's outcome was recorded.
    Idle,
    /// Let through by a closed local breaker with no ticket and no clock
    /// read (`Run::let_through_closed`).
    Closed,
    /// Let through: its outcome is recorded as it is settled (a race
    /// records each of its attempts itself).
    Sent(Ticket),
    /// Refused: the breaker lets attempts through again in this long.
    Refused(Duration),
}

impl<P: CallPolicy, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// A first attempt under a policy that needs nothing but its local
    /// circuit breaker (`Policy::starts_guarded`), in a call that reads no
    /// clock for its report or a give-up hook: let through with no clock
    /// read when the breaker is closed; `false` (nothing done) for
    /// [`begin_attempt_slowly`](Self::begin_attempt_slowly) to ask it
    /// otherwise. In line: a plain call skips it on `plain`, the test
    /// before it.
    #[inline]
    pub(super) fn let_through_closed(&mut self) -> bool {
        let closed = (self.policy.borrow().breaker.as_ref()).is_some_and(|b| b.closed());
        if closed {
            self.gate = Gate::Closed;
        }
        closed
    }

    /// Takes back a hedge the breaker refused: it was never sent, so it is
    /// not an attempt (a refused hedge is simply not sent).
    pub(crate) fn unrefuse(&mut self) {
        self.tally.attempts = self.tally.attempts.saturating_sub(1);
        self.gate = Gate::Idle;
    }

    /// A success of a first attempt [`let_through_closed`](Self::let_through_closed)
    /// let through: counted by the breaker, reading no clock (see
    /// [`crate::breaker`]), the gate `Idle` after; `false`, doing nothing,
    /// for any other gate. Its policy has nothing else to hear of it.
    #[inline]
    pub(super) fn record_closed_success(&mut self) -> bool {
        if !matches!(self.gate, Gate::Closed) {
            return false;
        }
        self.gate = Gate::Idle;
        if let Some(breaker) = &self.policy.borrow().breaker {
            breaker.count_success(|| self.clock.now());
        }
        true
    }

    /// Tells the policy's breaker that the attempt in flight, if it let it
    /// through, succeeded; the gate is `Idle` after. A closed-state
    /// success is counted in place (the ticket is not moved); any other
    /// goes to [`record`](Self::record). Without a breaker it does nothing:
    /// only a breaker sets the gate, so it is `Idle` already.
    #[inline]
    pub(crate) fn record_success(&mut self) {
        let Some(breaker) = &self.policy.borrow().breaker else {
            return;
        };
        if let Gate::Sent(ticket) = &self.gate
            && breaker.record_success_alone(ticket)
        {
            self.gate = Gate::Idle;
            return;
        }
        let gate = std::mem::replace(&mut self.gate, Gate::Idle);
        self.record(gate, None);
    }

    /// Tells the policy's breaker how the attempt `gate` let through went:
    /// `failed` when its error's class is one the breaker counts (or it
    /// was slow). A success of a breaker without `slow_call` reads no clock.
    #[inline]
    pub(crate) fn record(&self, gate: Gate, class: Option<crate::Class>) {
        let Some(breaker) = &self.policy.borrow().breaker else {
            return;
        };
        let failed = class.is_some_and(|c| breaker.counts_class(c));
        let ticket = match gate {
            Gate::Sent(ticket) => ticket,
            // Counted when it is answered: it began no earlier.
            Gate::Closed if failed => Ticket::closed(self.clock.now()),
            Gate::Closed => return breaker.count_success(|| self.clock.now()),
            Gate::Idle | Gate::Refused(_) => return,
        };
        let now = if failed || breaker.slow_call().is_some() {
            self.clock.now()
        } else {
            ticket.began()
        };
        breaker.record(ticket, now, failed);
    }
}
