//! What the code `#[retry]` and `#[derive(Classify)]` generate names, and
//! nothing else. Not public API: anything here may change in any release.
//!
//! - [`site`]: a `#[retry]` call site's registration and its policy cache;
//! - [`run`]: a call's state and the one loop over it;
//! - [`classify`]: how `#[retry]` classifies its function's error type;
//! - [`hooks`]: `#[retry(retry_if = ..., on_retry = ...)]`'s adapters;
//! - [`derive`]: what `#[derive(Classify)]` expands to;
//! - [`loader`]: what a configuration loader (retrykit-config) names to
//!   fill the registry;
//! - [`inventory`]: link-time registration of call sites and classes.

pub mod classify;
pub mod derive;
pub mod hooks;
pub mod loader;
pub mod run;
pub mod site;

pub use inventory;
