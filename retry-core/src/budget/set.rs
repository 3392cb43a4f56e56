//! The budgets one policy uses (`budget = ["broker", "aws"]`): every window
//! budget must allow a retry, every adaptive budget paces every attempt.

use super::RetryBudget;
use std::sync::Arc;
use std::time::Instant;

/// A policy's budgets, in the order given, each one once.
#[derive(Debug, Clone)]
pub(crate) struct Budgets(Option<Arc<[Arc<RetryBudget>]>>);

impl Budgets {
    pub(crate) const NONE: Budgets = Budgets(None);

    pub(crate) fn new(list: Vec<Arc<RetryBudget>>) -> Budgets {
        Budgets((!list.is_empty()).then(|| list.into()))
    }

    pub(crate) fn as_slice(&self) -> &[Arc<RetryBudget>] {
        self.0.as_deref().unwrap_or_default()
    }

    pub(crate) const fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Whether an adaptive budget paces the policy's attempts.
    pub(crate) fn paces(&self) -> bool {
        self.as_slice().iter().any(|b| b.limiter().is_some())
    }

    /// Tells every `grpc_throttling` bucket how an attempt went: once per
    /// success, and once per failure its policy would retry.
    pub(crate) fn throttle(&self, failed: bool) {
        self.as_slice()
            .iter()
            .filter_map(|b| b.throttling())
            .for_each(|t| t.record(failed));
    }

    /// A call succeeded: every `grpc_throttling` bucket and every adaptive
    /// budget hears of it (`now` is read only for an adaptive budget).
    pub(crate) fn succeeded(&self, now: impl FnOnce() -> Instant) {
        if self.is_empty() {
            return;
        }
        self.throttle(false);
        if self.paces() {
            self.record(now(), false);
        }
    }

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
