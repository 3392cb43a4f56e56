//! A `#[retry]` call site: what the expansion registers ([`CallSite`]) and
//! how it finds its policy ([`SiteCache`]: the registry's policy, or a single
//! attempt with a warning when the registry lacks it).
//!
//! ```
//! use retry_core::__private::site::{CallSite, SiteCache};
//! thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
//! const CALL: CallSite = CallSite::new("no-such-policy-in-site-doc", file!(), line!(), "doc");
//! assert_eq!(SiteCache::lookup(&SITE, &CALL).max_attempts(), Some(1));
//! ```

pub use crate::registry::linked::CallSite;
pub use crate::site::{SiteCache, SiteState};
