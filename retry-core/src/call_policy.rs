//! The policy a call runs under, as the loop holds it: borrowed for the
//! whole call (`Retry::new(&policy)`), or a `#[retry]` call site's, which a
//! call takes only when it fails.
//!
//! A `#[retry]` call that succeeds at once needs nothing from its policy
//! beyond what its start read through the site's per-thread cache, so it
//! takes no reference count (two locked instructions, a third of such a
//! call's cost). One that fails takes its policy at that moment *as of the
//! registry generation it started in* (`registry::policy_as_of`), so a reload
//! during its first attempt still does not change it.

use crate::policy::Policy;
use crate::registry::linked::CallSite;
use std::sync::Arc;

/// Where a running call finds its policy.
///
/// ```
/// use retry_core::Policy;
/// use retry_core::__private::kernel::CallPolicy;
/// let policy = Policy::default();
/// let mut borrowed = &policy;
/// assert_eq!(borrowed.at_hand().map(|p| p.max_attempts()), Some(Some(3)));
/// assert_eq!(borrowed.get().max_attempts(), Some(3));
/// ```
pub trait CallPolicy {
    /// The policy when reaching it costs nothing; `None` for a call site's
    /// call that has not needed it yet.
    fn at_hand(&self) -> Option<&Policy>;
    /// The policy, taken now if it is not at hand.
    fn get(&mut self) -> &Policy;
}

impl CallPolicy for &Policy {
    fn at_hand(&self) -> Option<&Policy> {
        Some(self)
    }

    fn get(&mut self) -> &Policy {
        self
    }
}

/// A `#[retry]` call site's policy for one call: held from the start when
/// the first attempt needs it (a deadline, a timeout, a budget, metrics),
/// otherwise taken at the first failure, as of the registry generation the
/// call started in.
///
/// ```
/// use retry_core::__private::kernel::CallPolicy;
/// use retry_core::__private::site::{CallSite, SiteCache};
/// use retry_core::{registry, Policy, Registry};
/// thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
/// const CALL: CallSite = CallSite::new("doc-call-policy", file!(), line!(), "doc");
/// let two = Policy::builder().max_attempts(2).build().unwrap();
/// registry::install(Registry::builder().policy("doc-call-policy", two).build());
/// let mut policy = SiteCache::policy_for_call(&SITE, &CALL);
/// // Nothing taken yet (with the `metrics` feature, held from the start).
/// assert_eq!(policy.at_hand().is_none(), !retry_core::__private::RECORDS_METRICS);
/// // A reload before the call needs its policy does not change it.
/// let three = Policy::builder().max_attempts(3).build().unwrap();
/// registry::install(Registry::builder().policy("doc-call-policy", three).build());
/// assert_eq!(policy.get().max_attempts(), Some(2));
/// ```
#[derive(Debug)]
pub struct SitePolicy {
    call: &'static CallSite,
    generation: u64,
    held: Option<Arc<Policy>>,
}

impl SitePolicy {
    /// `call`'s policy, held from the start.
    pub(crate) fn held(call: &'static CallSite, policy: Arc<Policy>) -> Self {
        SitePolicy {
            call,
            generation: 0,
            held: Some(policy),
        }
    }

    /// `call`'s policy as of install `generation`, taken when first needed.
    pub(crate) fn deferred(call: &'static CallSite, generation: u64) -> Self {
        SitePolicy {
            call,
            generation,
            held: None,
        }
    }
}

impl SitePolicy {
    /// The name the call site uses.
    #[cfg(feature = "tokio")]
    pub(crate) fn name(&self) -> &'static str {
        self.call.policy
    }
}

impl CallPolicy for SitePolicy {
    fn at_hand(&self) -> Option<&Policy> {
        self.held.as_deref()
    }

    fn get(&mut self) -> &Policy {
        let (call, generation) = (self.call, self.generation);
        self.held
            .get_or_insert_with(|| crate::site::as_of(call, generation))
    }
}
