//! What a configuration loader (retrykit-config) names to fill the
//! registry: the linked call sites and classes, [`LazyLoader`], where the
//! registry came from ([`set_origin`]), what was left out
//! ([`set_withheld`]), and strict mode (public too, here so a loader names
//! one module).

pub use crate::registry::linked::{
    CallSite, DeclaredClass, call_sites, declared_classes, missing_policies,
};
pub use crate::registry::loading::{LazyLoader, origin, set_origin, set_withheld};
pub use crate::registry::{is_strict, set_strict};
