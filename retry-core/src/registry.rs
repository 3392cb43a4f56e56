//! The process-wide registry of named policies and budgets.
//!
//! A [`Registry`] is an immutable snapshot; [`install`] swaps the current one
//! atomically (`arc-swap`). A lookup is a lock-free load plus a hash lookup by
//! `&str`: no lock, no allocation. A running call holds the `Arc<Policy>` it
//! started with, so a reload is seen by the next call only.
//!
//! If nothing was installed when the first lookup happens, the registry runs
//! the loaders that linked crates registered with [`inventory`] (retry-config
//! registers one that reads `retry.toml`), once.

use crate::budget::RetryBudget;
use crate::policy::Policy;
use arc_swap::ArcSwap;
use arc_swap::cache::Cache;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Once, PoisonError};

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
static LAZY_LOAD: Once = Once::new();
/// What the current registry was loaded from (or why nothing was), as the
/// loader that installed it described it: the first call of a site whose
/// policy is missing quotes it.
static ORIGIN: Mutex<Option<String>> = Mutex::new(None);
/// Strict mode, set by a loader (`RETRY_STRICT=1`, or retry-config's `Setup::strict`).
static STRICT: AtomicBool = AtomicBool::new(false);

/// Records what the current registry was loaded from, or why nothing was
/// ("no retry.toml found; searched ..."). Loaders call it; the warning a call
/// site gives when its policy is missing quotes it.
///
/// ```
/// retry_core::registry::set_origin("policies from /etc/app/retry.toml");
/// assert_eq!(retry_core::registry::origin().as_deref(), Some("policies from /etc/app/retry.toml"));
/// ```
pub fn set_origin(text: impl Into<String>) {
    *ORIGIN.lock().unwrap_or_else(PoisonError::into_inner) = Some(text.into());
}

/// What [`set_origin`] last recorded.
///
/// ```
/// let _ = retry_core::registry::origin();
/// ```
pub fn origin() -> Option<String> {
    ORIGIN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Turns strict mode on or off. In strict mode a call whose policy is
/// missing ends the process (exit code 1) after saying why, instead of
/// running once without retry; `RETRY_STRICT=1` turns it on too.
///
/// ```
/// retry_core::registry::set_strict(false);
/// assert!(!retry_core::registry::is_strict() || std::env::var("RETRY_STRICT").is_ok());
/// ```
pub fn set_strict(strict: bool) {
    STRICT.store(strict, Ordering::Relaxed);
}

/// Whether strict mode is on: [`set_strict`], or `RETRY_STRICT` set to `1`,
/// `true`, `yes` or `on`.
///
/// ```
/// retry_core::registry::set_strict(true);
/// assert!(retry_core::registry::is_strict());
/// retry_core::registry::set_strict(false);
/// ```
pub fn is_strict() -> bool {
    STRICT.load(Ordering::Relaxed) || strict_from_env()
}

/// `RETRY_STRICT` read once: `1`, `true`, `yes` or `on` (any case) turn it on.
fn strict_from_env() -> bool {
    static FROM_ENV: LazyLock<bool> = LazyLock::new(|| {
        std::env::var("RETRY_STRICT").is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    });
    *FROM_ENV
}

/// Whether anything was ever installed into the process-wide registry.
///
/// ```
/// retry_core::registry::install(retry_core::Registry::default());
/// assert!(retry_core::registry::is_installed());
/// ```
pub fn is_installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// A loader run on the first lookup when nothing was installed yet.
/// Crates register one with `inventory::submit!`.
///
/// ```
/// fn load() { /* read a file, then retry_core::registry::install(...) */ }
/// retry_core::inventory::submit! { retry_core::registry::LazyLoader { name: "doc-example", load } }
/// ```
#[derive(Debug)]
pub struct LazyLoader {
    /// Who registered it, for diagnostics.
    pub name: &'static str,
    /// Loads and installs a registry; reports its own errors.
    pub load: fn(),
}

inventory::collect!(LazyLoader);

/// Where a `#[retry(policy = "...")]` sits in the code, registered by the
/// macro so that start-up checks can list names the config lacks and the
/// first call can say why it will not retry.
///
/// ```
/// const SITE: retry_core::registry::CallSite =
///     retry_core::registry::CallSite::new("outbox", file!(), line!(), "publish");
/// retry_core::inventory::submit! { SITE }
/// assert!(retry_core::registry::call_sites().any(|c| c.policy == "outbox"));
/// ```
#[derive(Debug)]
pub struct CallSite {
    /// The policy name it uses.
    pub policy: &'static str,
    /// Its source file.
    pub file: &'static str,
    /// Its line.
    pub line: u32,
    /// The annotated function.
    pub function: &'static str,
    /// The policy file the build checked this name against (an absolute
    /// path), if any: the last place run-time discovery looks.
    pub config: Option<&'static str>,
    /// A loader for the configuration, set by `#[retry]` when the crate
    /// depends on retry-config: naming it here links it into the program
    /// whatever else the program names, so the lazy load cannot be dropped
    /// by the linker.
    pub loader: Option<fn()>,
    /// Whether the function's error type can stand for a timed-out attempt
    /// (`Classify::from_timeout` gives a value); `None` when the build could
    /// not tell (a generic error type).
    pub carries_timeout: Option<fn() -> bool>,
}

impl CallSite {
    /// A call site with nothing known beyond where it is.
    ///
    /// ```
    /// let site = retry_core::registry::CallSite::new("db", "src/db.rs", 3, "query");
    /// assert_eq!((site.policy, site.line, site.config), ("db", 3, None));
    /// ```
    pub const fn new(
        policy: &'static str,
        file: &'static str,
        line: u32,
        function: &'static str,
    ) -> Self {
        CallSite {
            policy,
            file,
            line,
            function,
            config: None,
            loader: None,
            carries_timeout: None,
        }
    }

    /// Whether the function's error type is known to be unable to stand for a
    /// timed-out attempt, so a policy's `attempt_timeout` cannot be enforced there.
    ///
    /// ```
    /// let mut site = retry_core::registry::CallSite::new("db", "src/db.rs", 3, "query");
    /// assert!(!site.cannot_time_out()); // unknown
    /// site.carries_timeout = Some(|| false);
    /// assert!(site.cannot_time_out());
    /// ```
    pub fn cannot_time_out(&self) -> bool {
        self.carries_timeout.is_some_and(|carries| !carries())
    }
}

inventory::collect!(CallSite);

/// An error class some code in the program can produce, registered (by
/// `#[derive(Classify)]`, or by hand) so that configuration checks can warn
/// about a `retry_on` that names a class nothing produces.
///
/// ```
/// retry_core::inventory::submit! {
///     retry_core::registry::DeclaredClass { name: "conflict", by: "OrderError" }
/// }
/// assert!(retry_core::registry::declared_classes().any(|c| c.name == "conflict"));
/// ```
#[derive(Debug)]
pub struct DeclaredClass {
    /// The class name, as `retry_on` would list it.
    pub name: &'static str,
    /// The type (or module) that produces it, for diagnostics.
    pub by: &'static str,
}

inventory::collect!(DeclaredClass);

/// Every declared error class.
///
/// ```
/// let _ = retry_core::registry::declared_classes().count();
/// ```
pub fn declared_classes() -> impl Iterator<Item = &'static DeclaredClass> {
    inventory::iter::<DeclaredClass>.into_iter()
}

/// Every registered call site.
///
/// ```
/// let _ = retry_core::registry::call_sites().count();
/// ```
pub fn call_sites() -> impl Iterator<Item = &'static CallSite> {
    inventory::iter::<CallSite>.into_iter()
}

/// Call sites whose policy name `registry` does not define.
///
/// ```
/// let missing = retry_core::registry::missing_policies(&retry_core::Registry::default());
/// let _ = missing.len();
/// ```
pub fn missing_policies(registry: &Registry) -> Vec<&'static CallSite> {
    call_sites()
        .filter(|site| registry.policy(site.policy).is_none())
        .collect()
}

/// Replaces the process-wide registry; returns the one it replaced. Calls
/// already running keep the policy they started with.
///
/// ```
/// use retry_core::{registry, Policy, Registry};
/// registry::install(Registry::builder().policy("doc-install", Policy::default()).build());
/// assert!(registry::policy("doc-install").is_some());
/// ```
pub fn install(registry: Registry) -> Arc<Registry> {
    INSTALLED.store(true, Ordering::Release);
    let previous = CURRENT.swap(Arc::new(registry));
    // After the swap: a reader that sees the new generation sees the new registry.
    GENERATION.fetch_add(1, Ordering::Release);
    previous
}

/// How many times a registry has been installed: it changes with every
/// [`install`], so a cached lookup made under one generation is current
/// exactly while the generation is unchanged.
///
/// ```
/// use retry_core::{registry, Registry};
/// let before = registry::generation();
/// registry::install(Registry::default());
/// assert!(registry::generation() > before);
/// ```
pub fn generation() -> u64 {
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

fn ensure_loaded() {
    if INSTALLED.load(Ordering::Acquire) || LAZY_LOAD.is_completed() {
        return;
    }
    LAZY_LOAD.call_once(|| {
        // Loaders registered by linked crates, then those the call sites name
        // (which are linked because the program's own code names them).
        let registered = inventory::iter::<LazyLoader>.into_iter().map(|l| l.load);
        let named = call_sites().filter_map(|site| site.loader);
        // Every loader is retry-config's one reader of the same discovery, so
        // the first one that runs is enough, whether it installed or not.
        if let Some(load) = registered.chain(named).next() {
            load();
        }
    });
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
