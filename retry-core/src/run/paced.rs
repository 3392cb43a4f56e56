//! An adaptive budget's part in a call: pacing its first attempt, and
//! hearing of its success.

use super::Run;
use crate::clock::{Clock, Sleeper};
use crate::policy::Policy;
use std::borrow::Borrow;

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether an adaptive budget makes the call's first attempt wait,
    /// asked once, before it begins (which starts the call); the wait is
    /// then armed on the call's timer. `false` when it may go at once. A
    /// wait that would reach
    /// the deadline is not taken: there is no error yet to end the call
    /// with, so the attempt goes at once (its tokens stay taken, so the
    /// calls that follow wait for them) and the budget says so, once.
    pub(crate) fn pace_first_attempt(&mut self) -> bool {
        let policy: &Policy = self.policy.borrow();
        if !policy.budgets.paces() || self.started.is_some() {
            return false;
        }
        let now = self.clock.now();
        self.started = Some(now);
        policy.budgets.deposit(now);
        let wait = policy.budgets.pace_first(now);
        if policy.deadline().is_some_and(|deadline| wait >= deadline) {
            policy.budgets.unpaced_first_attempt(policy.name(), wait);
            return false;
        }
        if wait.is_zero() {
            return false;
        }
        self.timer.arm(self.sleeper.sleep(wait));
        true
    }
}

/// Tells `policy`'s adaptive budgets that a call succeeded.
pub(super) fn record_success(policy: &Policy, clock: &impl Clock) {
    policy.budgets.record(clock.now(), false);
}
