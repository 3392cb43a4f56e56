//! What a configuration loader (retrykit-config) names to fill the
//! registry: the call sites and declared classes linked code registered,
//! the [`LazyLoader`] it registers itself with, and where it records what
//! the registry came from ([`set_origin`]) and what it left out
//! ([`set_withheld`]). Strict mode is public API too
//! ([`registry::set_strict`](crate::registry::set_strict)); it is here so
//! a loader names one module.

pub use crate::registry::linked::{
    CallSite, DeclaredClass, call_sites, declared_classes, missing_policies,
};
pub use crate::registry::loading::{LazyLoader, origin, set_origin, set_withheld};
pub use crate::registry::{is_strict, set_strict};
