//! What a configuration loader (retry-config) needs beyond the public
//! [`registry`](crate::registry): registering itself, checking the program's
//! call sites and declared classes against a file, saying where the policies
//! came from, and strict mode.
//!
//! ```
//! use retry_core::__private::registry::{missing_policies, set_origin, origin};
//! set_origin("policies from doc.toml");
//! assert_eq!(origin().as_deref(), Some("policies from doc.toml"));
//! let _ = missing_policies(&retry_core::Registry::default());
//! ```

pub use crate::registry::linked::{call_sites, declared_classes, missing_policies};
pub use crate::registry::loading::{LazyLoader, is_strict, origin, set_origin, set_strict};
