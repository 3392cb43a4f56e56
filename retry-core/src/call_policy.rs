//! The policy a call runs under, as the loop holds it: borrowed for the
//! whole call (`Retry::new(&policy)`), or a `#[retry]` call site's, which a
//! call takes only when it fails.
//!
//! A `#[retry]` call that succeeds at once needs nothing from its policy
//! beyond the registry generation it started in and its site's shared word
//! saying the policy needs nothing at a start (`SiteState`), so it takes no
//! reference count (two locked instructions, a third of such a call's cost)
//! and reads no thread-local. One that fails takes its policy at that moment
//! *as of the registry generation it started in* (from the site's cache
//! while that generation is current, else `registry::policy_as_of`), so a
//! reload during its first attempt still does not change it, and holds it
//! to its end. What it holds from the site's cache is the cache's spare
//! reference, lent whole and given back when the call ends, so calls one
//! after another on a thread move no reference count either; only calls
//! that overlap take counted ones.

use crate::policy::Policy;
use crate::registry::linked::CallSite;
use crate::site::{SiteCache, SiteState};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::thread::LocalKey;

/// Where a running call finds its policy.
///
/// ```
/// use retry_core::Policy;
/// use retry_core::__private::kernel::{CallPolicy, Lent};
/// let policy = Policy::default();
/// let mut lent = Lent::new(&policy, None);
/// assert_eq!(lent.at_hand().map(|p| p.max_attempts()), Some(Some(3)));
/// assert_eq!(lent.get().max_attempts(), Some(3));
/// assert_eq!(lent.seed(), None);
/// ```
pub trait CallPolicy {
    /// The policy when reaching it costs nothing; `None` for a call site's
    /// call that has not needed it yet.
    fn at_hand(&self) -> Option<&Policy>;
    /// The policy, taken now if it is not at hand.
    fn get(&mut self) -> &Policy;
    /// The jitter's seed the caller chose, if any.
    fn seed(&self) -> Option<u64> {
        None
    }
}

/// A policy the caller lends for the whole call (`Retry::new(&policy)`),
/// with the seed it asked for (`Retry::seed`). The seed travels with the
/// policy, not in the loop's state, so a `#[retry]` call (never seeded)
/// does not carry it.
///
/// ```
/// use retry_core::__private::kernel::{CallPolicy, Lent};
/// let policy = retry_core::Policy::default();
/// let lent = Lent::new(&policy, Some(7));
/// assert_eq!((lent.seed(), lent.at_hand().and_then(|p| p.max_attempts())), (Some(7), Some(3)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Lent<'p> {
    policy: &'p Policy,
    seed: Option<u64>,
}

impl<'p> Lent<'p> {
    /// `policy`, lent with jitter `seed`.
    ///
    /// ```
    /// use retry_core::__private::kernel::{CallPolicy, Lent};
    /// let policy = retry_core::Policy::default();
    /// assert_eq!(Lent::new(&policy, None).seed(), None);
    /// ```
    pub fn new(policy: &'p Policy, seed: Option<u64>) -> Self {
        Lent { policy, seed }
    }
}

impl CallPolicy for Lent<'_> {
    fn at_hand(&self) -> Option<&Policy> {
        Some(self.policy)
    }

    fn get(&mut self) -> &Policy {
        self.policy
    }

    fn seed(&self) -> Option<u64> {
        self.seed
    }
}

/// A `#[retry]` call site, as a type: each expansion declares a unit type
/// naming its [`CallSite`] and its per-thread [`SiteCache`], so a call's
/// state need not hold a pointer to either.
///
/// ```
/// use retry_core::__private::kernel::Site;
/// use retry_core::__private::site::{CallSite, SiteCache, SiteState};
/// thread_local! { static CACHE: SiteCache = const { SiteCache::new() }; }
/// static STATE: SiteState = SiteState::new();
/// const CALL: CallSite = CallSite::new("doc-site-type", file!(), line!(), "doc");
/// struct Here;
/// impl Site for Here {
///     const CALL: &'static CallSite = &CALL;
///     fn cache() -> &'static std::thread::LocalKey<SiteCache> { &CACHE }
///     fn state() -> &'static SiteState { &STATE }
/// }
/// assert_eq!(Here::CALL.policy, "doc-site-type");
/// ```
pub trait Site: 'static {
    /// The call site.
    const CALL: &'static CallSite;
    /// The site's per-thread cache of its policy.
    fn cache() -> &'static LocalKey<SiteCache>;
    /// What the site's calls on every thread share.
    fn state() -> &'static SiteState;
}

/// A `#[retry]` call site's policy for one call: held from the start when
/// the first attempt needs it (a deadline, a timeout, a budget, metrics),
/// otherwise taken at the first failure, as of the registry generation the
/// call started in. Two words, so it comes back in registers.
///
/// ```
/// use retry_core::__private::kernel::{CallPolicy, Site, SitePolicy};
/// use retry_core::__private::site::{CallSite, SiteCache, SiteState};
/// use retry_core::{registry, Policy, Registry};
/// thread_local! { static CACHE: SiteCache = const { SiteCache::new() }; }
/// static STATE: SiteState = SiteState::new();
/// const CALL: CallSite = CallSite::new("doc-call-policy", file!(), line!(), "doc");
/// struct Here;
/// impl Site for Here {
///     const CALL: &'static CallSite = &CALL;
///     fn cache() -> &'static std::thread::LocalKey<SiteCache> { &CACHE }
///     fn state() -> &'static SiteState { &STATE }
/// }
/// let two = Policy::builder().max_attempts(2).build().unwrap();
/// registry::install(Registry::builder().policy("doc-call-policy", two).build());
/// let mut policy = SitePolicy::<Here>::for_call();
/// // Nothing taken yet (with the `metrics` feature, held from the start).
/// assert_eq!(policy.at_hand().is_none(), !retry_core::__private::RECORDS_METRICS);
/// // A reload before the call needs its policy does not change it.
/// let three = Policy::builder().max_attempts(3).build().unwrap();
/// registry::install(Registry::builder().policy("doc-call-policy", three).build());
/// assert_eq!(policy.get().max_attempts(), Some(2));
/// assert_eq!(size_of::<SitePolicy<Here>>(), 16);
/// ```
pub struct SitePolicy<K: Site> {
    generation: u64,
    held: Option<Arc<Policy>>,
    site: PhantomData<fn() -> K>,
}

impl<K: Site> SitePolicy<K> {
    /// The policy of one call at site `K`: when the site's shared state
    /// says its policy needs nothing at a call's start as of the current
    /// registry generation, just that generation; otherwise through this
    /// thread's cache (see `SiteCache::policy_for_call`).
    ///
    /// ```
    /// use retry_core::__private::kernel::{CallPolicy, Site, SitePolicy};
    /// use retry_core::__private::site::{CallSite, SiteCache, SiteState};
    /// use retry_core::{registry, Policy, Registry};
    /// use std::time::Duration;
    /// thread_local! { static CACHE: SiteCache = const { SiteCache::new() }; }
    /// static STATE: SiteState = SiteState::new();
    /// const CALL: CallSite = CallSite::new("doc-for-call-site", file!(), line!(), "doc");
    /// struct Here;
    /// impl Site for Here {
    ///     const CALL: &'static CallSite = &CALL;
    ///     fn cache() -> &'static std::thread::LocalKey<SiteCache> { &CACHE }
    ///     fn state() -> &'static SiteState { &STATE }
    /// }
    /// let timed = Policy::builder().deadline(Some(Duration::from_secs(5))).build().unwrap();
    /// registry::install(Registry::builder().policy("doc-for-call-site", timed).build());
    /// // A deadline starts with the call: the policy is held from the start.
    /// assert!(SitePolicy::<Here>::for_call().at_hand().is_some());
    /// ```
    #[inline]
    pub fn for_call() -> Self {
        let generation = crate::registry::generation();
        if K::state().defers_at(generation) {
            return SitePolicy {
                generation,
                held: None,
                site: PhantomData,
            };
        }
        Self::for_call_slowly()
    }

    /// [`for_call`](Self::for_call) when the site's shared state is not
    /// current, or the policy is held from the start: through the thread's
    /// cache, which also makes the first-use checks.
    #[cold]
    #[inline(never)]
    fn for_call_slowly() -> Self {
        let (generation, held) = SiteCache::policy_for_call(K::cache(), K::CALL);
        K::state().record(generation, held.is_none());
        SitePolicy {
            generation,
            held,
            site: PhantomData,
        }
    }

    /// The name the call site uses.
    #[cfg(feature = "tokio")]
    pub(crate) fn name(&self) -> &'static str {
        K::CALL.policy
    }
}

impl<K: Site> fmt::Debug for SitePolicy<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SitePolicy")
            .field("policy", &K::CALL.policy)
            .field("generation", &self.generation)
            .field("held", &self.held.is_some())
            .finish()
    }
}

/// A held policy goes back to the thread's site cache as its spare, so the
/// next call that holds it takes no reference count (see
/// `SiteCache::give_back`); a call that never held it has nothing to do.
impl<K: Site> Drop for SitePolicy<K> {
    #[inline]
    fn drop(&mut self) {
        if let Some(policy) = self.held.take() {
            SiteCache::give_back(K::cache(), self.generation, policy);
        }
    }
}

impl<K: Site> CallPolicy for SitePolicy<K> {
    fn at_hand(&self) -> Option<&Policy> {
        self.held.as_deref()
    }

    fn get(&mut self) -> &Policy {
        let generation = self.generation;
        self.held
            .get_or_insert_with(|| SiteCache::policy_as_of(K::cache(), K::CALL, generation))
    }
}
