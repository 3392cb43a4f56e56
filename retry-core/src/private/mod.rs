//! Plumbing for our own crates: the code `#[retry]` and `#[derive(Classify)]`
//! generate, retry-config's loader and tools, and the fleet simulator. Not
//! public API: anything here may change in any release. Each module is one
//! job, so what a generated expansion needs stays apart from what a tool
//! needs, and none of it widens the public API.
//!
//! - [`site`]: a `#[retry]` call site's registration and policy lookup;
//! - [`classify`]: how `#[retry]` classifies its function's error type;
//! - [`hooks`]: the hook traits and `#[retry]`'s hook adapters;
//! - [`derive`]: what `#[derive(Classify)]` expands to;
//! - [`kernel`]: the decision kernel and loop state, for tools that must
//!   decide exactly as the loop does (the simulator, `retry-policy show`);
//! - [`registry`]: what a configuration loader needs beyond the public registry.
//!
//! ```
//! // What an expansion does first: look the policy up (lock-free), falling back
//! // to a single attempt when the name is unknown at run time.
//! use retry_core::__private::site::{CallSite, SiteCache};
//! thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
//! const CALL: CallSite = CallSite::new("no-such-policy-in-doc", file!(), line!(), "doc");
//! assert_eq!(SiteCache::lookup(&SITE, &CALL).max_attempts(), Some(1));
//! ```

pub mod classify;
pub mod derive;
pub mod hooks;
pub mod kernel;
pub mod registry;
pub mod site;

/// Registers call sites, declared classes and loaders at link time; the one
/// re-export, for generated code and retry-config.
pub use inventory;

/// Whether this build records metrics (whose labels allocate on every call):
/// tests that pin "the success path allocates nothing" skip themselves then.
pub const RECORDS_METRICS: bool = cfg!(feature = "metrics");
