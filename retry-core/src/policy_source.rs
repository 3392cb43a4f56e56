//! Where an integration's policy (the tower layer's, the reqwest
//! middleware's) comes from: a value, or a name looked up in the registry
//! on each call through the same checks as a `#[retry]` call site (a
//! missing name warns once and runs one attempt; a reload is picked up).

use crate::policy::Policy;
use crate::registry::linked::CallSite;
use crate::site::PolicyCache;
use std::panic::Location;
use std::sync::Arc;

/// A layer's policy and the place in the code that set it up.
#[derive(Debug, Clone)]
pub(crate) struct PolicySource(Arc<Source>);

#[derive(Debug)]
enum Source {
    /// A policy value, and where the layer was built (named in warnings:
    /// only the tower layer's error types may lack what a policy needs).
    Fixed(
        #[cfg_attr(not(feature = "tower"), expect(dead_code))] CallSite,
        Arc<Policy>,
    ),
    /// A policy name, through the same cache as a `#[retry]` call site.
    Named(PolicyCache),
    /// A policy per gRPC method, by name from the request's path (gRFC A6:
    /// the method's, its service's, every method's), looked up in the
    /// registry on each call; where the layer was built.
    #[cfg(feature = "grpc")]
    ByMethod(CallSite),
}

impl PolicySource {
    /// The policy `name`, for the integration `function` built `at`.
    pub(crate) fn named(
        name: &'static str,
        at: &'static Location<'static>,
        function: &'static str,
    ) -> Self {
        // The integrations hedge (each attempt on its own clones).
        let site = CallSite {
            hedged: true,
            ..CallSite::new(name, at.file(), at.line(), function)
        };
        PolicySource(Arc::new(Source::Named(PolicyCache::new(site))))
    }

    /// `policy`, for the integration `function` built `at`.
    pub(crate) fn fixed(
        policy: Arc<Policy>,
        at: &'static Location<'static>,
        function: &'static str,
    ) -> Self {
        let site = CallSite {
            hedged: true,
            ..CallSite::new("<a Policy value>", at.file(), at.line(), function)
        };
        PolicySource(Arc::new(Source::Fixed(site, policy)))
    }

    /// A policy per gRPC method, for the integration `function` built `at`.
    #[cfg(feature = "grpc")]
    pub(crate) fn by_method(at: &'static Location<'static>, function: &'static str) -> Self {
        let site = CallSite {
            hedged: true,
            ..CallSite::new("<by gRPC method>", at.file(), at.line(), function)
        };
        PolicySource(Arc::new(Source::ByMethod(site)))
    }

    /// The policy for the call starting now.
    pub(crate) fn current(&self) -> Arc<Policy> {
        match &*self.0 {
            Source::Fixed(_, policy) => Arc::clone(policy),
            Source::Named(cache) => cache.policy(),
            #[cfg(feature = "grpc")]
            Source::ByMethod(site) => crate::site::by_method(site, ""),
        }
    }

    /// The policy for a call to `path` (a request's path) starting now: a
    /// per-method source chooses by it, any other has one policy.
    #[cfg(feature = "grpc")]
    pub(crate) fn for_path(&self, path: &str) -> Arc<Policy> {
        match &*self.0 {
            Source::ByMethod(site) => crate::site::by_method(site, path),
            _ => self.current(),
        }
    }

    #[cfg(feature = "tower")]
    /// Warns once when `policy` sets an `attempt_timeout` that error type
    /// `E` cannot stand for (so it is not enforced), or names a circuit
    /// breaker whose refusal `E` cannot stand for (so it cannot hold
    /// attempts back).
    pub(crate) fn check_carried<E: crate::Classify>(&self, policy: &Policy) {
        let site = || match &*self.0 {
            Source::Fixed(site, _) => site,
            Source::Named(cache) => cache.site(),
            #[cfg(feature = "grpc")]
            Source::ByMethod(site) => site,
        };
        let probe = crate::AttemptTimeout::new(1, std::time::Duration::ZERO);
        if crate::site::limits(policy).is_some() && E::from_timeout(probe).is_none() {
            crate::site::warn_timeout_not_carried(site(), policy);
        }
        if let Some(breaker) = policy.breaker() {
            let state = crate::breaker::BreakerState::Open;
            let refusal =
                crate::breaker::BreakerOpen::new(breaker.name(), state, Default::default());
            if E::from_breaker_open(refusal).is_none() {
                crate::site::warn_breaker_not_carried(site(), policy);
            }
        }
    }
}
