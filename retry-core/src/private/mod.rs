//! What the code `#[retry]` and `#[derive(Classify)]` generate names, and
//! what retrykit-config's loader needs. Not public API: anything here may
//! change in any release.

pub mod classify;
pub mod derive;
pub mod hooks;
pub mod loader;
pub mod run;
pub mod site;

pub use inventory;
