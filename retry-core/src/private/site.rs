//! A `#[retry]` call site: what the expansion registers ([`CallSite`]) and
//! where its calls get their policy ([`PolicyCache`]).

pub use crate::registry::linked::CallSite;
pub use crate::site::PolicyCache;
