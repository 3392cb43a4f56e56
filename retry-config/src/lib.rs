//! # retrykit-config
//!
//! Named retry policies from a TOML file, one profile per environment,
//! checked at load: every problem reported in one pass with the line, the
//! key, a caret under the text and a did-you-mean.
//!
//! ```
//! use retrykit_config::{Config, Env, Options};
//! use std::time::Duration;
//!
//! let text = r#"
//! [defaults]
//! jitter = "full"
//! max_attempts = 5
//!
//! [policies.outbox]
//! backoff = "exponential"
//! base = "100ms"
//! cap = "30s"
//! deadline = "2m"
//! budget = "broker"
//!
//! [policies.outbox-fast]
//! extends = "outbox"
//! cap = "2s"
//!
//! [budgets.broker]
//! ratio = 0.1
//!
//! [profiles.test.policies.outbox]
//! base = "1ms"
//! cap = "5ms"
//! "#;
//! let env = Env::new().with("RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS", "3");
//! let config = Config::load_str(text, "retry.toml", &Options::new().profile("test").env(env))?;
//! let fast = config.policy("outbox-fast").unwrap();
//! assert_eq!(fast.base(), Duration::from_millis(1)); // the test profile's outbox, inherited
//! assert_eq!(fast.cap(), Duration::from_millis(5)); // a profile beats the file
//! assert_eq!(fast.max_attempts(), Some(3)); // the environment beats both
//! # Ok::<(), retrykit_config::Diagnostics>(())
//! ```
//!
//! ## Layers
//! A policy's effective settings resolve in this fixed order, a later layer
//! winning: retrykit-core's built-in defaults, `[defaults]`, the `extends` chain
//! (the farthest ancestor first, the policy's own table last), the selected
//! profile's overlays of that chain, then environment variables
//! `RETRY_POLICY__<NAME>__<KEY>` for that chain (`RETRY_BUDGET__<NAME>__<KEY>`
//! for budgets). [`Config::explain`] says which layer each value came from.
//!
//! ## In a program
//! Call [`init`] at start-up (it discovers `RETRY_CONFIG` or `./retry.toml`
//! and `RETRY_PROFILE`), or let retrykit-core's registry load the same way on its
//! first lookup. [`reload`] and [`Setup::watch`] swap the policies atomically,
//! and a bad file keeps the last good ones.
//!
//! ## Features
//! `redis` (off by default): budgets with `scope = "fleet"`, shared through
//! Redis (retrykit-core's `redis` feature). Without it such a budget is an error
//! that names the feature.
//!
//! ## The `retry-policy` tool
//! Checking, listing, explaining and simulating a file from the command line
//! is the separate `retry-policy` crate (`cargo run -p retrykit-policy -- check
//! retry.toml`), built on this crate's public API, so a program that only
//! loads its policies builds no command line.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod config;
mod diagnostic;
mod document;
mod env;
mod layers;
mod limits;
mod lint;
mod number;
mod read;
mod resolve;
mod runtime;
mod schema;
mod section;

pub use config::{Config, Explained, Options, check_file, check_str};
pub use diagnostic::{Diagnostic, Diagnostics, Severity, Source, Span};
pub use env::Env;
pub use layers::Layer;
pub use limits::{
    MAX_BREAKERS, MAX_BUDGETS, MAX_CLASSES, MAX_EXTENDS_DEPTH, MAX_LIMITS, MAX_POLICIES,
    MAX_PROFILES, MAX_SHOWN_DIAGNOSTICS,
};
pub use number::show_number;
pub use read::{FileOrigin, MAX_FILE_BYTES, read_file};
pub use retrykit_schema::duration::{parse_duration, show_duration};
pub use runtime::{DEFAULT_FILE, Setup, Watcher, init, reload};

/// Plumbing for the code `#[retry]` generates. Not public API.
#[doc(hidden)]
pub mod __private {
    /// The lazy loader a `#[retry]` call site names when its crate depends on
    /// retrykit-config, so the loader is linked whatever the program names.
    ///
    /// ```
    /// let load: fn() = retrykit_config::__private::lazy_load;
    /// let _ = load;
    /// ```
    pub fn lazy_load() {
        crate::runtime::lazy_load();
    }
}
