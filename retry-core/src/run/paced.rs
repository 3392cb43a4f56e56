//! An adaptive budget's part in a call: pacing its first attempt.

use super::Run;
use crate::clock::{Clock, Sleeper};
use crate::policy::Policy;
use std::borrow::Borrow;

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether an adaptive budget makes the call's first attempt wait
    /// (asked once, before it begins; the wait is armed on the call's
    /// timer). A wait that would reach the deadline is not taken: with no
    /// error yet to end the call with, the attempt goes at once (its tokens
    /// stay taken, so later calls wait for them) and the budget says so, once.
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
