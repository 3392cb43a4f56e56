//! Where an integration's policy (the tower layer's, the reqwest
//! middleware's) comes from: a value, or a name looked up on each call
//! through the same [`PolicyCache`] and checks as a `#[retry]` call site.

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
    /// A policy value, and where the layer was built (for warnings).
    Fixed(
        #[cfg_attr(not(feature = "tower"), expect(dead_code))] CallSite,
        Arc<Policy>,
    ),
    /// A policy name, through the same cache as a `#[retry]` call site.
    Named(PolicyCache),
    /// A policy per gRPC method, looked up by the request's path on each
    /// call (`site::by_method`); where the layer was built.
    #[cfg(feature = "grpc")]
    ByMethod(CallSite),
}

impl PolicySource {
    /// The policy `name`, for the integration `function` built at the
    /// caller's line (as is every source: `#[track_caller]` all the way).
    #[track_caller]
    pub(crate) fn named(name: &'static str, function: &'static str) -> Self {
        let cache = PolicyCache::new(site(name, function));
        PolicySource(Arc::new(Source::Named(cache)))
    }

    /// `policy`, for the integration `function`.
    #[track_caller]
    pub(crate) fn fixed(policy: Arc<Policy>, function: &'static str) -> Self {
        let site = site("<a Policy value>", function);
        PolicySource(Arc::new(Source::Fixed(site, policy)))
    }

    /// A policy per gRPC method, for the integration `function`.
    #[cfg(feature = "grpc")]
    #[track_caller]
    pub(crate) fn by_method(function: &'static str) -> Self {
        let site = site("<by gRPC method>", function);
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

    /// Warns once when `E` cannot carry what `policy` needs
    /// ([`check_carried`](crate::site::check_carried)).
    #[cfg(feature = "tower")]
    pub(crate) fn check_carried<E: crate::Classify>(&self, policy: &Policy) {
        let site = match &*self.0 {
            Source::Fixed(site, _) => site,
            Source::Named(cache) => cache.site(),
            #[cfg(feature = "grpc")]
            Source::ByMethod(site) => site,
        };
        crate::site::check_carried::<E>(site, policy);
    }
}

/// An integration's call site: it hedges (each attempt on its own clones).
#[track_caller]
fn site(policy: &'static str, function: &'static str) -> CallSite {
    let at = Location::caller();
    CallSite {
        hedged: true,
        ..CallSite::new(policy, at.file(), at.line(), function)
    }
}
