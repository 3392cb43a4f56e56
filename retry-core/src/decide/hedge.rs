//! The hedging decision: pure, no clock read and no I/O of its own. The
//! loop (and the simulator) describe the call as it stands ([`HedgeView`]),
//! and [`next_hedge`] says whether to start a hedge now, to ask again after
//! a wait, or to send no more hedges. Only when a hedge is due does it ask
//! the caller's `admit` (the cap and the budgets: [`Policy::admit_hedge`]).

use super::Failure;
use super::in_policy;
use crate::class::Class;
use crate::policy::Policy;
use crate::report::Ending;
use std::time::{Duration, Instant};

/// The call as it stands when the loop asks about the next hedge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HedgeView {
    /// Attempts started, the first included.
    pub started: u32,
    /// Attempts started and not finished.
    pub in_flight: u32,
    /// Whether an attempt failed non-fatally since the last attempt
    /// started: the next hedge is then due at once.
    pub failed_since_last_start: bool,
    /// Whether an attempt's answer carried server pushback (a `Retry-After`
    /// or `grpc-retry-pushback-ms` hint).
    pub pushback: bool,
    /// Time since the first attempt started (the deadline's clock).
    pub elapsed: Duration,
    /// Time since the last attempt started.
    pub since_last_start: Duration,
    /// The hedge delay now ([`Hedging::delay`](crate::hedge::Hedging::delay)),
    /// read by the caller so that this function stays pure.
    pub delay: Duration,
}

impl HedgeView {
    /// The view just after the first attempt started, with hedge delay `delay`.
    pub const fn first(delay: Duration) -> Self {
        HedgeView {
            started: 1,
            in_flight: 1,
            failed_since_last_start: false,
            pushback: false,
            elapsed: Duration::ZERO,
            since_last_start: Duration::ZERO,
            delay,
        }
    }
}

/// What the cap and the budgets answer when a hedge is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The hedge may start: one was taken from the cap and every budget.
    Admitted,
    /// The share of hedges (`hedge_share`) is spent.
    CapSpent,
    /// A retry budget refused.
    BudgetEmpty,
}

/// Why no more hedges are sent in this call. Reasons may be added in minor
/// releases (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HedgeStop {
    /// The policy does not hedge.
    NotHedging,
    /// `max_attempts` attempts have started.
    Attempts,
    /// The next hedge would start at or past the deadline.
    Deadline,
    /// A server asked for less load.
    Pushback,
    /// The share of calls that may send hedges is spent.
    CapSpent,
    /// A retry budget refused.
    BudgetEmpty,
}

impl HedgeStop {
    /// How the call ends when it stops hedging with nothing left in flight
    /// (every attempt failed non-fatally): the call returns the last error
    /// with this ending.
    pub const fn ending(self) -> Ending {
        match self {
            HedgeStop::NotHedging | HedgeStop::Attempts => Ending::Exhausted,
            HedgeStop::Deadline => Ending::Deadline,
            HedgeStop::Pushback => Ending::NotRetryable,
            HedgeStop::CapSpent | HedgeStop::BudgetEmpty => Ending::BudgetEmpty,
        }
    }
}

/// The verdict of [`next_hedge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HedgeStep {
    /// Start a hedge now (it was admitted).
    Start,
    /// Ask again after this long, or as soon as an attempt finishes.
    Wait(Duration),
    /// Send no more hedges; the attempts in flight run on.
    Stop(HedgeStop),
}

/// The hedging decision, gRPC A6's rules (see [the module](crate::hedge)):
/// in this order, no hedging, pushback, `max_attempts`, then the time the
/// next hedge is due (at once after a non-fatal failure, else `delay` after
/// the last start), the deadline (a hedge due at or past it is not sent),
/// and when it is due now, `admit` (called at most once, only then). A
/// success or a fatal error ends the call before this is asked.
pub fn next_hedge(
    policy: &Policy,
    view: &HedgeView,
    admit: impl FnOnce() -> Admission,
) -> HedgeStep {
    if policy.hedging().is_none() {
        return HedgeStep::Stop(HedgeStop::NotHedging);
    }
    if view.pushback {
        return HedgeStep::Stop(HedgeStop::Pushback);
    }
    if policy.max_attempts().is_none_or(|max| view.started >= max) {
        return HedgeStep::Stop(HedgeStop::Attempts);
    }
    let due_in = if view.failed_since_last_start || view.in_flight == 0 {
        Duration::ZERO
    } else {
        view.delay.saturating_sub(view.since_last_start)
    };
    if let Some(deadline) = policy.deadline()
        && view.elapsed.saturating_add(due_in) >= deadline
    {
        return HedgeStep::Stop(HedgeStop::Deadline);
    }
    if !due_in.is_zero() {
        return HedgeStep::Wait(due_in);
    }
    match admit() {
        Admission::Admitted => HedgeStep::Start,
        Admission::CapSpent => HedgeStep::Stop(HedgeStop::CapSpent),
        Admission::BudgetEmpty => HedgeStep::Stop(HedgeStop::BudgetEmpty),
    }
}

/// Whether a failed attempt ends a hedged call (fatal) rather than letting
/// the other attempts run on: what a retry would not follow, a permanent
/// error, a class outside `retry_on`, or the site's predicate refusing.
pub fn is_fatal(policy: &Policy, failure: Failure) -> bool {
    failure.class == Class::Permanent || !failure.allowed || !in_policy(policy, failure.class)
}

impl Policy {
    /// Takes one hedge at `now` from the cap on hedges, then from every
    /// window budget of the policy (a refusal by the cap costs the budgets
    /// nothing). The `admit` of [`next_hedge`] for a real loop.
    pub fn admit_hedge(&self, now: Instant) -> Admission {
        let Some(hedging) = self.hedging() else {
            return Admission::CapSpent;
        };
        if !hedging.take(now) {
            return Admission::CapSpent;
        }
        if !self.budgets.try_withdraw(now) {
            return Admission::BudgetEmpty;
        }
        Admission::Admitted
    }
}

#[cfg(test)]
mod tests;
