//! Where an integration's policy (the tower layer's, the reqwest
//! middleware's) comes from: a value, or a name looked up in the registry
//! on each call through the same checks as a `#[retry]` call site (a
//! missing name warns once and runs one attempt; a reload is picked up).

use crate::policy::Policy;
use crate::registry::{self, linked::CallSite};
use crate::site;
use std::panic::Location;
use std::sync::{Arc, Mutex, PoisonError};

/// A layer's policy and the place in the code that set it up.
#[derive(Debug, Clone)]
pub(crate) struct PolicySource(Arc<Source>);

#[derive(Debug)]
struct Source {
    /// Where the layer was built, named as a call site in warnings.
    site: CallSite,
    policy: Held,
}

#[derive(Debug)]
enum Held {
    Fixed(Arc<Policy>),
    /// The last lookup of the named policy, with the registry generation
    /// it was read at (none before the first call).
    Named(Mutex<Option<(u64, Arc<Policy>)>>),
}

impl PolicySource {
    /// The policy `name`, for the integration `function` built `at`.
    pub(crate) fn named(
        name: &'static str,
        at: &'static Location<'static>,
        function: &'static str,
    ) -> Self {
        PolicySource(Arc::new(Source {
            site: CallSite::new(name, at.file(), at.line(), function),
            policy: Held::Named(Mutex::new(None)),
        }))
    }

    /// `policy`, for the integration `function` built `at`.
    pub(crate) fn fixed(
        policy: Arc<Policy>,
        at: &'static Location<'static>,
        function: &'static str,
    ) -> Self {
        PolicySource(Arc::new(Source {
            site: CallSite::new("<a Policy value>", at.file(), at.line(), function),
            policy: Held::Fixed(policy),
        }))
    }

    /// The policy for the call starting now: one lock and one atomic load
    /// while the registry is unchanged, the checked lookup after a reload.
    pub(crate) fn current(&self) -> Arc<Policy> {
        let cache = match &self.0.policy {
            Held::Fixed(policy) => return Arc::clone(policy),
            Held::Named(cache) => cache,
        };
        let generation = registry::generation();
        let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
        match &*cache {
            Some((seen, policy)) if *seen == generation => Arc::clone(policy),
            _ => {
                let policy = site::checked(&self.0.site);
                *cache = Some((generation, Arc::clone(&policy)));
                policy
            }
        }
    }

    #[cfg(feature = "tower")]
    /// Warns once when `policy` sets an `attempt_timeout` that error type
    /// `E` cannot stand for (so it is not enforced).
    pub(crate) fn check_timeout<E: crate::Classify>(&self, policy: &Policy) {
        let probe = crate::AttemptTimeout {
            attempt: 1,
            timeout: std::time::Duration::ZERO,
        };
        if policy.attempt_timeout().is_some() && E::from_timeout(probe).is_none() {
            site::warn_timeout_not_carried(&self.0.site, policy);
        }
    }
}
