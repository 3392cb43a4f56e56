//! Pacing by a policy's adaptive budgets: what each attempt costs, what
//! each outcome tells the limiters, and how long an attempt must wait.

use super::Budgets;
use crate::adaptive::{FIRST_ATTEMPT_COST, RETRY_AFTER_THROTTLE_COST, RETRY_COST};
use crate::class::Class;
use std::time::{Duration, Instant};

/// What the adaptive budgets say about an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pacing {
    /// Send after this wait (zero: at once); the tokens are taken.
    After(Duration),
    /// The wait would reach the limit given (what is left of the deadline).
    PastLimit(Duration),
}

/// The tokens the next attempt takes: a first attempt 1, a retry 5, a retry
/// after a throttle 10 (smithy-rs's costs).
pub(crate) fn retry_cost(failed_with: Class) -> f64 {
    if failed_with == Class::THROTTLED {
        RETRY_AFTER_THROTTLE_COST
    } else {
        RETRY_COST
    }
}

impl Budgets {
    /// Tells every adaptive budget whether an attempt ending at `now` was
    /// throttled (an error of class `throttled`).
    pub(crate) fn record(&self, now: Instant, throttled: bool) {
        for limiter in self.as_slice().iter().filter_map(|b| b.limiter()) {
            limiter.record(now, throttled);
        }
    }

    /// Takes the tokens for one attempt from every adaptive budget: the
    /// wait is the longest any asks for. `limit`: a wait that would reach it
    /// takes nothing from that budget and ends the pacing.
    pub(crate) fn pace(&self, now: Instant, cost: f64, limit: Option<Duration>) -> Pacing {
        let mut wait = Duration::ZERO;
        for limiter in self.as_slice().iter().filter_map(|b| b.limiter()) {
            match limiter.acquire_within(now, cost, limit) {
                Ok(w) => wait = wait.max(w),
                Err(w) => return Pacing::PastLimit(w),
            }
        }
        Pacing::After(wait)
    }

    /// [`pace`](Self::pace) for a call's first attempt, whatever the wait.
    pub(crate) fn pace_first(&self, now: Instant) -> Duration {
        match self.pace(now, FIRST_ATTEMPT_COST, None) {
            Pacing::After(wait) | Pacing::PastLimit(wait) => wait,
        }
    }

    /// Warns, once per budget, that a first attempt of `policy` went
    /// without the `wait` its adaptive budgets asked for, since it would
    /// have reached the deadline.
    pub(crate) fn unpaced_first_attempt(&self, policy: Option<&str>, wait: Duration) {
        // Every budget's flag is set (no short cut).
        let limiters = self.as_slice().iter().filter_map(|b| b.limiter());
        if limiters.filter(|l| l.first_warning()).count() == 0 {
            return;
        }
        let message = format!(
            "retry: policy `{}`: its adaptive budget asked a first attempt to wait {wait:?}, \
             which would reach the deadline: the attempt was sent at once (its tokens stay \
             taken, so later calls wait for them); raise the deadline, or lower the call rate \
             (said once per budget)",
            policy.unwrap_or("<unnamed>")
        );
        say_warning!(message, policy, wait_ms = wait.as_millis() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetryBudget;
    use std::sync::Arc;

    #[test]
    fn the_longest_wait_of_several_adaptive_budgets_applies() {
        let (calm, throttled) = (
            Arc::new(RetryBudget::adaptive()),
            Arc::new(RetryBudget::adaptive()),
        );
        let now = Instant::now();
        throttled.limiter().unwrap().record(now, true); // 0.5 tokens/s, empty
        let set = Budgets::new(vec![calm, throttled]);
        assert_eq!(set.pace_first(now), Duration::from_secs(2));
        assert_eq!(
            set.pace(
                now,
                retry_cost(Class::THROTTLED),
                Some(Duration::from_secs(5))
            ),
            Pacing::PastLimit(Duration::from_secs(22)),
        );
    }
}
