//! The budgets one policy uses (`budget = ["broker", "aws"]`): every window
//! budget must allow a retry, every adaptive budget paces every attempt.

use super::RetryBudget;
use std::sync::Arc;
use std::time::Instant;

/// A policy's budgets, in the order given, each one once.
#[derive(Debug, Clone)]
pub(crate) struct Budgets {
    all: Option<Arc<[Arc<RetryBudget>]>>,
    /// Whether any budget is adaptive.
    paces: bool,
    /// Whether any budget is a `grpc_throttling` bucket.
    throttles: bool,
}

impl Budgets {
    /// No budget.
    pub(crate) const NONE: Budgets = Budgets {
        all: None,
        paces: false,
        throttles: false,
    };

    /// The budgets in `list`.
    pub(crate) fn new(list: Vec<Arc<RetryBudget>>) -> Budgets {
        if list.is_empty() {
            return Budgets::NONE;
        }
        let paces = list.iter().any(|b| b.limiter().is_some());
        let throttles = list.iter().any(|b| b.throttling().is_some());
        Budgets {
            all: Some(list.into()),
            paces,
            throttles,
        }
    }

    /// Every budget, in the order given.
    pub(crate) fn as_slice(&self) -> &[Arc<RetryBudget>] {
        self.all.as_deref().unwrap_or_default()
    }

    /// Whether there is no budget at all.
    pub(crate) const fn is_empty(&self) -> bool {
        self.all.is_none()
    }

    /// Whether an adaptive budget paces the policy's attempts.
    pub(crate) const fn paces(&self) -> bool {
        self.paces
    }

    /// Tells every `grpc_throttling` bucket how an attempt went: once per
    /// success, and once per failure its policy would retry.
    pub(crate) fn throttle(&self, failed: bool) {
        if self.throttles {
            self.as_slice()
                .iter()
                .filter_map(|b| b.throttling())
                .for_each(|t| t.record(failed));
        }
    }

    /// The window budgets.
    fn windows(&self) -> impl Iterator<Item = &RetryBudget> {
        self.as_slice()
            .iter()
            .map(|b| &**b)
            .filter(|b| b.limiter().is_none())
    }

    /// Counts a call (a first attempt) in every window budget.
    pub(crate) fn deposit(&self, now: Instant) {
        self.windows().for_each(|b| b.deposit(now));
    }

    /// Takes a retry from every window budget; `false` as soon as one is
    /// empty (the budgets before it keep the retry they gave).
    pub(crate) fn try_withdraw(&self, now: Instant) -> bool {
        self.windows().all(|b| b.try_withdraw(now))
    }

    /// Whether a fleet budget among them is failing open.
    pub(crate) fn failing_open(&self) -> bool {
        self.windows().any(RetryBudget::failing_open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn window(min_per_sec: f64) -> Arc<RetryBudget> {
        let b = RetryBudget::builder()
            .ratio(0.0)
            .min_per_sec(min_per_sec)
            .window(Duration::from_secs(1))
            .build()
            .unwrap();
        Arc::new(b)
    }

    #[test]
    fn every_window_budget_must_allow_a_retry() {
        let (roomy, tight) = (window(5.0), window(1.0));
        let set = Budgets::new(vec![
            roomy.clone(),
            tight.clone(),
            Arc::new(RetryBudget::adaptive()),
        ]);
        assert!(set.paces());
        let now = Instant::now();
        assert!(set.try_withdraw(now));
        assert!(!set.try_withdraw(now), "the tight budget has no retry left");
        assert_eq!(roomy.totals(now).1, 2);
        assert_eq!(tight.totals(now).1, 1);
    }

    #[test]
    fn window_budgets_alone_do_not_pace() {
        assert!(!Budgets::new(vec![window(1.0)]).paces());
        assert!(Budgets::new(Vec::new()).is_empty());
    }
}
