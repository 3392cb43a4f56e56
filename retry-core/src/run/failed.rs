//! What a call does after a failed attempt: the decision, with its hooks
//! and events.

use super::{Gate, Run, elapsed};
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::decide::{Failure, Owed, Step, decide, decide_refused, in_policy};
use crate::hooks::{GiveUpEvent, HookSet, RetryEvent, Unrepeatable};
use crate::observe::{self, Event, Hinted};
use crate::policy::Policy;
use crate::report::Ending;
use std::borrow::Borrow;
use std::time::Duration;

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// How `error` stands for the kernel, with what `retry_if` said and why
    /// the request cannot be sent again (if it cannot).
    pub(crate) fn failure_of<E>(&self, error: &E) -> (Failure, bool, Option<Unrepeatable>)
    where
        E: Classify,
        H: HookSet<E>,
    {
        let allowed = self.hooks.retry_if(error);
        let unrepeatable = HookSet::<E>::unrepeatable(&self.hooks);
        let failure = Failure {
            class: error.class(),
            hint: error.retry_after(),
            allowed: allowed && unrepeatable.is_none(),
        };
        (failure, allowed, unrepeatable)
    }

    /// The decision after a failed attempt, with its hooks and events: the
    /// wait before the next attempt, or the error to give up with.
    pub(crate) fn decide<E>(&mut self, error: E) -> Result<Duration, E>
    where
        E: Classify,
        H: HookSet<E>,
    {
        #[cfg(feature = "tracing")]
        let _span = self.span.clone().entered();
        let (failure, allowed, unrepeatable) = self.failure_of(&error);
        let limit_full = matches!(self.gate, Gate::LimitFull(_));
        let refused = match self.gate {
            Gate::Idle | Gate::Waiting(_) => None,
            // Not sent, so not the dependency's failure: the breaker hears nothing.
            Gate::LimitFull(_) => {
                self.gate = Gate::Idle;
                None
            }
            Gate::Refused(retry_in) => {
                self.gate = Gate::Idle;
                Some(retry_in)
            }
            Gate::Sent(_) => {
                if let Gate::Sent(ticket) = std::mem::replace(&mut self.gate, Gate::Idle) {
                    self.record(ticket, Some(failure.class));
                }
                None
            }
        };
        // The clock is read only if the verdict or the report needs it.
        let (clock, started) = (&self.clock, self.started);
        let mut read = None;
        let now = || {
            let now = *read.insert(clock.now());
            (elapsed(started, now), now)
        };
        let policy: &Policy = self.policy.borrow();
        let step = match refused {
            // The wait for a permit took what the call could give it.
            None if limit_full => Step::GiveUp(Ending::LimitFull),
            Some(retry_in) => decide_refused(policy, &mut self.tally, self.seed, retry_in, now),
            None => decide(
                policy,
                &mut self.tally,
                self.seed,
                failure,
                Owed::Nothing,
                now,
            ),
        };
        match step {
            Step::Retry { wait, hinted } => {
                let event = RetryEvent {
                    policy: policy.name(),
                    attempt: self.tally.attempts,
                    error: &error,
                    wait,
                    hinted,
                    injected: self.faulted,
                };
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    attempt = event.attempt,
                    class = failure.class.name(),
                    wait_ms = wait.as_millis() as u64,
                    hinted,
                    "retrying"
                );
                self.hooks.on_retry(&event);
                let clamped = failure
                    .hint
                    .zip(policy.max_retry_after())
                    .is_some_and(|(hint, max)| hint > max);
                observe::emit(Event::Retried {
                    policy: policy.name.as_ref(),
                    wait,
                    hint: hinted.then_some(if clamped {
                        Hinted::Clamped
                    } else {
                        Hinted::Honoured
                    }),
                });
                Ok(wait)
            }
            Step::GiveUp(ending) => {
                // The kernel sees an unrepeatable request as a disallowed
                // retry; the ending says which it was.
                let ending = match unrepeatable {
                    Some(why)
                        if refused.is_none()
                            && !limit_full
                            && allowed
                            && in_policy(policy, failure.class) =>
                    {
                        why.ending()
                    }
                    _ => ending,
                };
                self.ending = Some(ending);
                observe::emit(Event::Ended {
                    policy: policy.name.as_ref(),
                    ending: ending.as_str(),
                    budget_empty: ending == Ending::BudgetEmpty,
                    attempts: self.tally.attempts,
                });
                let now = read.unwrap_or_else(|| self.clock.now());
                let report = self.report_at(ending, now);
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    ending = ending.as_str(),
                    attempts = report.attempts,
                    waited_ms = report.waited.as_millis() as u64,
                    "giving up"
                );
                self.hooks.on_give_up(&GiveUpEvent {
                    policy: policy.name(),
                    error: &error,
                    report: &report,
                });
                Err(error)
            }
        }
    }
}
