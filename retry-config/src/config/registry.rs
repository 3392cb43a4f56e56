//! The registry a loaded [`Config`] installs, keeping the budgets,
//! breakers and concurrency limits whose settings a reload left unchanged
//! (their counts, state and permits out).

use super::Config;
use retrykit_core::breaker::CircuitBreaker;
use retrykit_core::limit::ConcurrencyLimit;
use retrykit_core::{Registry, RetryBudget};
use std::sync::Arc;

impl Config {
    /// A registry of every policy, budget and breaker. Budgets and breakers
    /// whose settings match one of the same name in `previous` keep that one
    /// (a budget its counts, a breaker its state and counts), so a reload
    /// does not reset them.
    ///
    /// ```
    /// let text = "[budgets.b]\n[policies.a]\nbudget = \"b\"\n";
    /// let opts = Default::default();
    /// let first = retrykit_config::Config::load_str(text, "f", &opts).unwrap().registry(None);
    /// let second = retrykit_config::Config::load_str(text, "f", &opts).unwrap().registry(Some(&first));
    /// assert!(std::sync::Arc::ptr_eq(first.budget("b").unwrap(), second.budget("b").unwrap()));
    /// assert!(std::sync::Arc::ptr_eq(second.policy("a").unwrap().budget().unwrap(), second.budget("b").unwrap()));
    /// ```
    pub fn registry(&self, previous: Option<&Registry>) -> Registry {
        self.registry_without(previous, &[])
    }

    /// [`registry`](Self::registry) without the policies `left_out`.
    pub(crate) fn registry_without(
        &self,
        previous: Option<&Registry>,
        left_out: &[String],
    ) -> Registry {
        let mut builder = Registry::builder();
        let mut kept: Vec<(&Arc<RetryBudget>, Arc<RetryBudget>)> = Vec::new();
        for b in &self.budgets {
            let old = previous.and_then(|prev| prev.budget(&b.name));
            let shared = keep(&b.budget, old, RetryBudget::same_settings);
            kept.push((&b.budget, shared.clone()));
            builder = builder.shared_budget(&b.name, shared);
        }
        let mut kept_breakers: Vec<(&Arc<CircuitBreaker>, Arc<CircuitBreaker>)> = Vec::new();
        for b in &self.breakers {
            let old = previous.and_then(|prev| prev.breaker(&b.name));
            let shared = keep(&b.breaker, old, CircuitBreaker::same_settings);
            kept_breakers.push((&b.breaker, shared.clone()));
            builder = builder.shared_breaker(&b.name, shared);
        }
        let mut kept_limits: Vec<(&Arc<ConcurrencyLimit>, Arc<ConcurrencyLimit>)> = Vec::new();
        for l in &self.limits {
            let old = previous.and_then(|prev| prev.limit(&l.name));
            let shared = keep(&l.limit, old, ConcurrencyLimit::same_settings);
            kept_limits.push((&l.limit, shared.clone()));
            builder = builder.shared_limit(&l.name, shared);
        }
        for p in self.policies.iter().filter(|p| !left_out.contains(&p.name)) {
            // The policy's budgets and breaker, as the registry keeps them.
            let shared: Vec<Arc<RetryBudget>> = p
                .policy
                .budgets()
                .iter()
                .map(|own| as_kept(&kept, own))
                .collect();
            let breaker = p.policy.breaker().map(|own| as_kept(&kept_breakers, own));
            let limit = p.policy.limit().map(|own| as_kept(&kept_limits, own));
            let unchanged = shared
                .iter()
                .zip(p.policy.budgets())
                .all(|(a, b)| Arc::ptr_eq(a, b))
                && breaker
                    .iter()
                    .zip(p.policy.breaker())
                    .all(|(a, b)| Arc::ptr_eq(a, b))
                && limit
                    .iter()
                    .zip(p.policy.limit())
                    .all(|(a, b)| Arc::ptr_eq(a, b));
            let policy = if unchanged {
                (*p.policy).clone()
            } else {
                p.policy
                    .to_builder()
                    .budgets(shared)
                    .breaker(breaker)
                    .limit(limit)
                    .build()
                    .unwrap_or_else(|_| (*p.policy).clone())
            };
            builder = builder.policy(&p.name, policy);
        }
        builder.build()
    }
}

/// `new`, or `old` (the previous registry's of the same name) when its
/// settings are the same, so a reload keeps its state.
fn keep<T>(new: &Arc<T>, old: Option<&Arc<T>>, same: fn(&T, &T) -> bool) -> Arc<T> {
    match old {
        Some(old) if same(old, new) => old.clone(),
        _ => new.clone(),
    }
}

/// What the registry keeps in place of `own`, one of this load's (`kept`
/// pairs each with what [`keep`] chose).
fn as_kept<T>(kept: &[(&Arc<T>, Arc<T>)], own: &Arc<T>) -> Arc<T> {
    match kept.iter().find(|(new, _)| Arc::ptr_eq(new, own)) {
        Some((_, shared)) => shared.clone(),
        None => own.clone(),
    }
}
