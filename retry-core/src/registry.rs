//! The process-wide registry of named policies, budgets and circuit breakers.
//!
//! A [`Registry`] is an immutable snapshot; [`install`] swaps the current
//! one atomically. A lookup takes no lock and allocates nothing. A running
//! call holds the policy it started with, so a reload is seen by the next
//! call. If nothing was installed at the first lookup, the loader a linked
//! crate registered (retrykit-config's reads `retry.toml`) runs, once.
//!
//! ```
//! use retrykit_core::{registry, Policy, Registry};
//! registry::install(Registry::builder().policy("doc-module", Policy::default()).build());
//! assert_eq!(registry::policy("doc-module").unwrap().name(), Some("doc-module"));
//! assert!(registry::current().policy("doc-module").is_some());
//! ```

// Named by retrykit-config through `__private::loader`, not public API.
pub(crate) mod linked;
pub(crate) mod loading;

pub use loading::{is_strict, set_strict};
mod snapshot;

use crate::breaker::CircuitBreaker;
use crate::budget::RetryBudget;
use crate::policy::Policy;
#[cfg(not(loom))]
use arc_swap::ArcSwap;
use indexmap::IndexMap;
use loading::ensure_loaded;
pub(crate) use snapshot::with_current;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Entries by name, in insertion order, each also at an index.
type ByName<V> = IndexMap<Box<str>, V, foldhash::fast::FixedState>;

/// An immutable set of named policies, budgets and circuit breakers.
///
/// # Examples
///
/// ```
/// use retrykit_core::{breaker::CircuitBreaker, limit::ConcurrencyLimit, Policy, Registry, RetryBudget};
/// use std::sync::Arc;
/// let renamed = Policy::builder().name("old").build().unwrap();
/// let budget = Arc::new(RetryBudget::builder().ratio(0.3).build().unwrap());
/// let breaker = Arc::new(CircuitBreaker::builder().name("broker").build().unwrap());
/// let limit = Arc::new(ConcurrencyLimit::named("db", 4, None, 8).unwrap());
/// let reg = Registry::builder()
///     .policy("db", renamed).policy("b", Policy::default()).policy("b", Policy::default()) // replaced
///     .budget("own", RetryBudget::builder().build().unwrap()).shared_budget("api", budget.clone())
///     .shared_breaker("broker", breaker.clone()).shared_limit("db", limit.clone())
///     .build();
/// assert_eq!(reg.policy("db").unwrap().name(), Some("db")); // renamed to its entry
/// assert_eq!(reg.policy_names().collect::<Vec<_>>(), ["b", "db"]); // sorted, once each
/// assert_eq!(reg.budget_names().collect::<Vec<_>>(), ["api", "own"]);
/// assert_eq!(reg.breaker_names().collect::<Vec<_>>(), ["broker"]);
/// assert!(Arc::ptr_eq(reg.budget("api").unwrap(), &budget)); // shared: the same counts
/// assert!(Arc::ptr_eq(reg.breaker("broker").unwrap(), &breaker) && Arc::ptr_eq(reg.limit("db").unwrap(), &limit));
/// assert!(reg.policy("nope").is_none() && reg.budget("nope").is_none() && reg.breaker("nope").is_none() && reg.limit("nope").is_none());
/// assert_eq!(Registry::builder().build().policy_names().count(), 0);
/// ```
#[derive(Debug, Default, Clone)]
pub struct Registry {
    policies: ByName<Arc<Policy>>,
    budgets: ByName<Arc<RetryBudget>>,
    breakers: ByName<Arc<CircuitBreaker>>,
    limits: ByName<Arc<crate::limit::ConcurrencyLimit>>,
    /// The install generation it is current for (0 until installed).
    generation: u64,
}

impl Registry {
    /// An empty builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The policy named `name`.
    pub fn policy(&self, name: &str) -> Option<&Arc<Policy>> {
        self.policies.get(name)
    }

    /// Where policy `name` sits, for a call site's cache.
    pub(crate) fn policy_index(&self, name: &str) -> Option<usize> {
        self.policies.get_index_of(name)
    }

    /// The policy at `index` (see [`policy_index`](Self::policy_index)).
    pub(crate) fn policy_at(&self, index: usize) -> Option<&Arc<Policy>> {
        self.policies.get_index(index).map(|(_, policy)| policy)
    }

    /// The install generation this registry is current for (0 until installed).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The budget named `name`.
    pub fn budget(&self, name: &str) -> Option<&Arc<RetryBudget>> {
        self.budgets.get(name)
    }

    /// The circuit breaker named `name`.
    pub fn breaker(&self, name: &str) -> Option<&Arc<CircuitBreaker>> {
        self.breakers.get(name)
    }

    /// The concurrency limit named `name`.
    pub fn limit(&self, name: &str) -> Option<&Arc<crate::limit::ConcurrencyLimit>> {
        self.limits.get(name)
    }

    /// Every policy name, sorted.
    pub fn policy_names(&self) -> impl Iterator<Item = &str> {
        sorted_names(&self.policies)
    }

    /// Every budget name, sorted.
    pub fn budget_names(&self) -> impl Iterator<Item = &str> {
        sorted_names(&self.budgets)
    }

    /// Every circuit breaker name, sorted.
    pub fn breaker_names(&self) -> impl Iterator<Item = &str> {
        sorted_names(&self.breakers)
    }
}

fn sorted_names<V>(entries: &ByName<V>) -> impl Iterator<Item = &str> {
    let mut names: Vec<&str> = entries.keys().map(|k| &**k).collect();
    names.sort_unstable();
    names.into_iter()
}

/// Collects policies, budgets, breakers and limits into a [`Registry`]
/// (see its example); a name added twice keeps the last.
#[derive(Debug, Default)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct RegistryBuilder {
    inner: Registry,
}

impl RegistryBuilder {
    /// Adds (or replaces) a policy; it is renamed to `name`.
    pub fn policy(mut self, name: &str, policy: Policy) -> Self {
        let named = if policy.name() == Some(name) {
            policy
        } else {
            // Renaming cannot fail validation: only the name changes.
            policy.to_builder().name(name).build().unwrap_or(policy)
        };
        self.inner.policies.insert(name.into(), Arc::new(named));
        self
    }

    /// Adds (or replaces) a budget.
    pub fn budget(self, name: &str, budget: RetryBudget) -> Self {
        self.shared_budget(name, Arc::new(budget))
    }

    /// Adds a budget that is already shared (kept across a reload, say).
    pub fn shared_budget(mut self, name: &str, budget: Arc<RetryBudget>) -> Self {
        self.inner.budgets.insert(name.into(), budget);
        self
    }

    /// Adds (or replaces) a circuit breaker, shared with the policies that
    /// name it (kept across a reload, say).
    pub fn shared_breaker(mut self, name: &str, breaker: Arc<CircuitBreaker>) -> Self {
        self.inner.breakers.insert(name.into(), breaker);
        self
    }

    /// Adds (or replaces) a concurrency limit, shared with the policies
    /// that name it (kept across a reload, so its permits stay counted).
    pub fn shared_limit(mut self, name: &str, limit: Arc<crate::limit::ConcurrencyLimit>) -> Self {
        self.inner.limits.insert(name.into(), limit);
        self
    }

    /// The finished registry.
    pub fn build(self) -> Registry {
        self.inner
    }
}

#[cfg(not(loom))]
static CURRENT: std::sync::LazyLock<ArcSwap<Registry>> = std::sync::LazyLock::new(ArcSwap::default);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Counts installs: a cache holding a registry of this generation is current.
#[cfg(not(loom))]
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// Under `--cfg loom` (tests/loom.rs models a reload racing a call), a lock
// stands for arc-swap's pointer.
#[cfg(loom)]
loom::lazy_static! {
    static ref CURRENT: modelled::Current = modelled::Current::default();
    static ref GENERATION: loom::sync::atomic::AtomicU64 = loom::sync::atomic::AtomicU64::new(0);
}

/// What stands for `ArcSwap<Registry>` under loom: its calls, on a lock.
#[cfg(loom)]
mod modelled {
    use super::Registry;
    use std::sync::Arc;

    #[derive(Default)]
    pub(super) struct Current(loom::sync::Mutex<Arc<Registry>>);

    impl Current {
        pub(super) fn load(&self) -> Arc<Registry> {
            self.load_full()
        }

        pub(super) fn load_full(&self) -> Arc<Registry> {
            Arc::clone(&self.0.lock().unwrap())
        }

        pub(super) fn swap(&self, registry: Arc<Registry>) -> Arc<Registry> {
            std::mem::replace(&mut *self.0.lock().unwrap(), registry)
        }
    }
}

pub(crate) fn is_installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// Replaces the process-wide registry; returns the one it replaced. Calls
/// already running keep the policy they started with.
pub fn install(mut registry: Registry) -> Arc<Registry> {
    // One install at a time, so each registry knows its generation.
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(PoisonError::into_inner);
    INSTALLED.store(true, Ordering::Release);
    // Counted before the swap, so a thread that has seen the new registry
    // finds its generation counted and never goes back (see `snapshot`).
    registry.generation = GENERATION.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
    CURRENT.swap(Arc::new(registry))
}

/// The current registry snapshot.
pub fn current() -> Arc<Registry> {
    ensure_loaded();
    CURRENT.load_full()
}

/// Looks up a policy by name in the current registry. [`with_policy`]
/// borrows it instead.
pub fn policy(name: &str) -> Option<Arc<Policy>> {
    with_current(|current| current.policy(name).cloned())
}

/// Runs `read` on the policy named `name` in the current registry,
/// borrowed: [`policy`] without the reference count. The registry stays
/// alive until `read` returns, whatever is installed meanwhile, and a lookup
/// inside `read` works.
pub fn with_policy<R>(name: &str, read: impl FnOnce(Option<&Policy>) -> R) -> R {
    with_current(|current| read(current.policy(name).map(|policy| &**policy)))
}
