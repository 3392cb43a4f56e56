//! The process-wide registry of named policies and budgets.
//!
//! A [`Registry`] is an immutable snapshot; [`install`] swaps the current one
//! atomically (`arc-swap`). A lookup is a lock-free load plus a hash lookup by
//! `&str`: no lock, no allocation. A running call runs under the policy it
//! started with, so a reload is seen by the next call only: `Retry::call`
//! borrows it, and a `#[retry]` call takes it at its first failure as of the
//! install generation it started in (the last few replaced registries are
//! kept for that; a call that succeeds at once takes no reference count).
//!
//! If nothing was installed when the first lookup happens, the registry runs
//! the loader a linked crate registered (retry-config registers one that
//! reads `retry.toml`), once.
//!
//! ```
//! use retry_core::{registry, Policy, Registry};
//! registry::install(Registry::builder().policy("doc-module", Policy::default()).build());
//! assert_eq!(registry::policy("doc-module").unwrap().name(), Some("doc-module"));
//! assert!(registry::current().policy("doc-module").is_some());
//! ```

// What linked code registers (call sites, declared classes) and how a loader
// is found and run: plumbing for our own crates, re-exported hidden from
// `__private`, not part of this module's public face.
pub(crate) mod linked;
pub(crate) mod loading;

use crate::budget::RetryBudget;
use crate::policy::Policy;
use arc_swap::ArcSwap;
use arc_swap::cache::Cache;
use loading::ensure_loaded;
use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

/// An immutable set of named policies and budgets.
///
/// ```
/// use retry_core::{Policy, Registry};
/// let reg = Registry::builder().policy("db", Policy::default()).build();
/// assert!(reg.policy("db").is_some());
/// assert_eq!(reg.policy("db").unwrap().name(), Some("db"));
/// ```
#[derive(Debug, Default, Clone)]
pub struct Registry {
    policies: HashMap<Box<str>, Arc<Policy>, NameHash>,
    budgets: HashMap<Box<str>, Arc<RetryBudget>, NameHash>,
    /// The install generation it is current for (0 until installed).
    generation: u64,
}

/// The names' hash: FNV-1a. Every lookup of a `#[retry]` call hashes its
/// policy name, and SipHash (the default) was a third of a lookup. The keys
/// are the program's own policy names, never an attacker's, so a keyed
/// DoS-resistant hash buys nothing here.
type NameHash = BuildHasherDefault<Fnv1a>;

/// The FNV-1a hasher (64-bit).
#[derive(Debug)]
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Registry {
    /// An empty builder.
    ///
    /// ```
    /// let reg = retry_core::Registry::builder().build();
    /// assert_eq!(reg.policy_names().count(), 0);
    /// ```
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The policy named `name`.
    ///
    /// ```
    /// assert!(retry_core::Registry::default().policy("nope").is_none());
    /// ```
    pub fn policy(&self, name: &str) -> Option<&Arc<Policy>> {
        self.policies.get(name)
    }

    /// The budget named `name`.
    ///
    /// ```
    /// assert!(retry_core::Registry::default().budget("nope").is_none());
    /// ```
    pub fn budget(&self, name: &str) -> Option<&Arc<RetryBudget>> {
        self.budgets.get(name)
    }

    /// Every policy name, sorted.
    ///
    /// ```
    /// use retry_core::{Policy, Registry};
    /// let reg = Registry::builder().policy("b", Policy::default()).policy("a", Policy::default()).build();
    /// assert_eq!(reg.policy_names().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn policy_names(&self) -> impl Iterator<Item = &str> {
        let mut names: Vec<&str> = self.policies.keys().map(|k| &**k).collect();
        names.sort_unstable();
        names.into_iter()
    }

    /// Every budget name, sorted.
    ///
    /// ```
    /// assert_eq!(retry_core::Registry::default().budget_names().count(), 0);
    /// ```
    pub fn budget_names(&self) -> impl Iterator<Item = &str> {
        let mut names: Vec<&str> = self.budgets.keys().map(|k| &**k).collect();
        names.sort_unstable();
        names.into_iter()
    }
}

/// Collects policies and budgets into a [`Registry`].
///
/// ```
/// use retry_core::{Registry, RetryBudget};
/// let reg = Registry::builder().budget("broker", RetryBudget::builder().build().unwrap()).build();
/// assert!(reg.budget("broker").is_some());
/// ```
#[derive(Debug, Default)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct RegistryBuilder {
    inner: Registry,
}

impl RegistryBuilder {
    /// Adds (or replaces) a policy; it is renamed to `name`.
    ///
    /// ```
    /// let _ = retry_core::Registry::builder().policy("db", retry_core::Policy::default());
    /// ```
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
    ///
    /// ```
    /// let b = retry_core::RetryBudget::builder().build().unwrap();
    /// let _ = retry_core::Registry::builder().budget("api", b);
    /// ```
    pub fn budget(self, name: &str, budget: RetryBudget) -> Self {
        self.shared_budget(name, Arc::new(budget))
    }

    /// Adds a budget that is already shared (for example, kept from the
    /// previous registry across a reload so its counts carry over).
    ///
    /// ```
    /// use std::sync::Arc;
    /// let b = Arc::new(retry_core::RetryBudget::builder().build().unwrap());
    /// let _ = retry_core::Registry::builder().shared_budget("api", b);
    /// ```
    pub fn shared_budget(mut self, name: &str, budget: Arc<RetryBudget>) -> Self {
        self.inner.budgets.insert(name.into(), budget);
        self
    }

    /// The finished registry.
    ///
    /// ```
    /// let _ = retry_core::Registry::builder().build();
    /// ```
    pub fn build(self) -> Registry {
        self.inner
    }
}

static CURRENT: LazyLock<ArcSwap<Registry>> = LazyLock::new(ArcSwap::default);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Counts installs, so a per-call-site cache can tell with one load that the
/// policy it holds is still current.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Whether anything was ever installed into the process-wide registry.
pub(crate) fn is_installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// Replaces the process-wide registry; returns the one it replaced. Calls
/// already running keep the policy they started with.
///
/// ```
/// use retry_core::{registry, Policy, Registry};
/// registry::install(Registry::builder().policy("doc-install", Policy::default()).build());
/// assert!(registry::policy("doc-install").is_some());
/// ```
pub fn install(mut registry: Registry) -> Arc<Registry> {
    // One install at a time, so that each registry knows its generation.
    let mut retired = RETIRED.lock().unwrap_or_else(PoisonError::into_inner);
    INSTALLED.store(true, Ordering::Release);
    registry.generation = GENERATION.load(Ordering::Acquire).wrapping_add(1);
    let previous = CURRENT.swap(Arc::new(registry));
    // After the swap: a reader that sees the new generation sees the new registry.
    GENERATION.fetch_add(1, Ordering::Release);
    if retired.len() == KEPT_GENERATIONS {
        retired.pop_front();
    }
    retired.push_back(Arc::clone(&previous));
    previous
}

/// How many replaced registries are kept for calls still in their first
/// attempt (see [`policy_as_of`]).
const KEPT_GENERATIONS: usize = 8;

/// The registries the last installs replaced, oldest first.
static RETIRED: Mutex<VecDeque<Arc<Registry>>> = Mutex::new(VecDeque::new());

/// Policy `name` of the registry that was current at install generation
/// `generation` (`Some(None)` if that registry lacks it): the current
/// registry if no install came since, one of the last few replaced ones
/// otherwise; `None` when that one is no longer kept. A `#[retry]` call that
/// succeeds at once never takes its policy's reference count; one that
/// fails takes its policy then, as of the generation it started in, so a
/// reload during its first attempt does not change it.
pub(crate) fn policy_as_of(name: &str, generation: u64) -> Option<Option<Arc<Policy>>> {
    ensure_loaded();
    // The current registry through this thread's snapshot: no reference
    // count on the registry, one on the policy found.
    let current = SNAPSHOT
        .try_with(|snapshot| {
            let mut snapshot = snapshot.borrow_mut();
            let current = snapshot.get_or_insert_with(|| Cache::new(&*CURRENT)).load();
            (current.generation == generation).then(|| current.policy(name).cloned())
        })
        .unwrap_or_else(|_| {
            let current = CURRENT.load();
            (current.generation == generation).then(|| current.policy(name).cloned())
        });
    if current.is_some() {
        return current;
    }
    let retired = RETIRED.lock().unwrap_or_else(PoisonError::into_inner);
    retired
        .iter()
        .find(|registry| registry.generation == generation)
        .map(|registry| registry.policy(name).cloned())
}

/// How many times a registry has been installed: it changes with every
/// [`install`], so a cached lookup made under one generation is current
/// exactly while the generation is unchanged.
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// The current registry snapshot.
///
/// ```
/// let snapshot = retry_core::registry::current();
/// let _ = snapshot.policy_names().count();
/// ```
pub fn current() -> Arc<Registry> {
    ensure_loaded();
    CURRENT.load_full()
}

/// Looks up a policy by name: one atomic load (is this thread's snapshot
/// still current?), a hash lookup, and one reference-count increment.
///
/// ```
/// assert!(retry_core::registry::policy("no-such-policy").is_none());
/// ```
pub fn policy(name: &str) -> Option<Arc<Policy>> {
    ensure_loaded();
    SNAPSHOT
        .try_with(|snapshot| {
            let mut snapshot = snapshot.borrow_mut();
            let current = snapshot.get_or_insert_with(|| Cache::new(&*CURRENT));
            current.load().policy(name).cloned()
        })
        // During thread teardown the thread-local is gone: load directly.
        .unwrap_or_else(|_| CURRENT.load().policy(name).cloned())
}

thread_local! {
    /// This thread's view of the current registry. Checking that it is still
    /// current is one relaxed load of `CURRENT`'s pointer; a plain
    /// `ArcSwap::load` costs two read-modify-writes on its debt list, which
    /// was most of a lookup (see examples/benches). The snapshot keeps the
    /// registry it last saw alive until this thread's next lookup.
    static SNAPSHOT: RefCell<Option<Cache<&'static ArcSwap<Registry>, Arc<Registry>>>> =
        const { RefCell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempts(n: u32) -> Policy {
        Policy::builder().max_attempts(n).build().unwrap()
    }

    #[test]
    fn a_thread_sees_another_threads_install_on_its_next_lookup() {
        let name = "registry-snapshot-test";
        install(Registry::builder().policy(name, attempts(2)).build());
        // This thread's snapshot now holds the first registry.
        assert_eq!(policy(name).unwrap().max_attempts(), Some(2));
        std::thread::spawn(move || {
            install(Registry::builder().policy(name, attempts(3)).build());
        })
        .join()
        .unwrap();
        assert_eq!(policy(name).unwrap().max_attempts(), Some(3));
    }
}
