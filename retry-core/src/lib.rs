//! # retrykit-core
//!
//! Retries as configuration: each call site names a policy, and a
//! `retry.toml` file says what the policy does (attempts, backoff and
//! jitter, which errors, the deadline, the budget it draws on). This crate
//! is the engine: validated [`Policy`] values, [`Backoff`] shapes, [`Jitter`]
//! modes, error classification ([`Classify`]), the async and blocking loops
//! ([`Retry`]), hooks, shared [`RetryBudget`]s and [`AdaptiveLimiter`]s,
//! shared [`CircuitBreaker`]s ([`breaker`]), hedged requests ([`hedge`]),
//! and the process-wide [`registry`] of named policies.
//!
//! ## Start here
//!
//! 1. Write the policies in a `retry.toml` next to the program:
//!
//!    ```toml
//!    [defaults]
//!    jitter = "full"
//!    max_attempts = 4
//!
//!    [policies.fetch]
//!    backoff = "exponential"
//!    base = "100ms"
//!    cap = "5s"
//!    deadline = "10s"
//!    ```
//!
//! 2. Mark each function to retry with `#[retry(policy = "fetch")]` (the
//!    `macros` feature). Its errors are classified by [`Classify`]
//!    (`#[derive(Classify)]` writes it), or all count as transient.
//!
//! 3. Load the file at start-up with
//!    [retrykit-config](https://docs.rs/retrykit-config)'s `init()` (file,
//!    profile and environment overrides, every problem with its line), which
//!    installs the policies in the [`registry`]; without it, the first
//!    retried call does the same load.
//!
//! ```toml
//! [dependencies]
//! retrykit-core = { version = "0.1", features = ["macros"] }
//! retrykit-config = "0.1"
//! ```
//!
//! A call site whose policy is missing at run time runs once, without
//! retry, and says why on its first call (strict mode,
//! [`registry::set_strict`], ends the program instead).
//!
//! ## Without a file
//!
//! A policy can be built in code and run with [`Retry`]:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use retrykit_core::{Jitter, Policy, Retry};
//! use std::time::Duration;
//!
//! let policy = Policy::builder()
//!     .base(Duration::from_millis(100))
//!     .cap(Duration::from_secs(5))
//!     .jitter(Jitter::Full)
//!     .max_attempts(4)
//!     .deadline(Some(Duration::from_secs(10)))
//!     .build()?;
//!
//! let mut failures_left = 2;
//! let value = Retry::new(&policy)
//!     .call(|| {
//!         let fail = failures_left > 0;
//!         failures_left -= 1;
//!         async move {
//!             if fail { Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) } else { Ok("done") }
//!         }
//!     })
//!     .await?;
//! assert_eq!(value, "done");
//! # Ok(()) }
//! ```
//!
//! and named in a [`Registry`] for `#[retry]` sites ([`registry::install`]).
//! The [`Oracle`] serves callers that schedule retries themselves, the
//! decision [`kernel`] simulators, and [`clock`] callers that inject time.
//!
//! ## One meaning of "attempts"
//! `max_attempts` counts calls, the first included: 1 means no retry.
//!
//! ## Cancel safety
//! Dropping a retried call stops it where it is: every attempt in flight
//! is dropped, none runs on in the background or starts after, and no hook
//! is called. Whatever a dropped attempt had already sent may still take
//! effect. See [`Retry::call`].
//!
//! ## Features
//! - `tokio` (default): the async loop on tokio's timer and clock.
//! - `macros`: re-exports `#[retry]` and `#[derive(Classify)]` from
//!   retrykit-macros (`use retrykit_core::{retry, Classify};`).
//! - `tracing`: a span per call and an event per retry.
//! - `serde`: serialisable [`OracleState`].
//! - `http`: status classes, `Retry-After` and gRPC pushback hints,
//!   idempotency, body replay (the `http` module).
//! - `tower`, `reqwest-middleware`: a `tower::Layer` and a
//!   `reqwest_middleware::Middleware` over the same loop (both turn on
//!   `http` and `tokio`).
//! - `metrics`: per-policy counters through the `metrics` facade.
//! - `redis`: fleet-wide budgets and breakers kept in Redis (`fleet`).
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

#[macro_use]
mod say;
#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;
mod adaptive;
mod attempt;
mod backoff;
pub mod breaker;
mod budget;
pub mod chaos;
mod class;
mod classify;
pub mod clock;
mod decide;
#[cfg(feature = "redis")]
pub mod fleet;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod hedge;
pub mod hooks;
#[cfg(feature = "http")]
pub mod http;
mod jitter;
pub mod kernel;
pub mod limit;
#[cfg(feature = "metrics")]
pub mod metrics;
mod observe;
mod oracle;
mod policy;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
mod policy_source;
mod problem;
mod race;
pub mod registry;
mod report;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest;
mod retry;
mod rng;
mod round;
mod run;
mod schedule;
mod site;
mod timer;
#[cfg(feature = "tower")]
pub mod tower;
mod window;

// The public API is what a user names, and nothing else (pinned by
// tests/public_api.rs); `__private` holds only what generated code names.
pub use adaptive::AdaptiveLimiter;
pub use backoff::Backoff;
pub use breaker::CircuitBreaker;
pub use budget::{BudgetMode, BudgetScope, GrpcThrottling, RetryBudget, RetryBudgetBuilder};
pub use class::Class;
pub use classify::{AttemptTimeout, CarriesBreakerOpen, CarriesTimeout, Classify};
pub use hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent};
pub use jitter::Jitter;
pub use oracle::{Oracle, OracleState, Verdict};
pub use policy::Policy;
pub use policy::PolicyBuilder;
pub use problem::{PolicyError, PolicyErrorKind, Problem, Problems};
pub use registry::Registry;
pub use report::{Ending, Report};
pub use retry::Retry;

/// `#[retry(policy = "...")]`: see [`retrykit_macros::retry`].
#[cfg(feature = "macros")]
pub use retrykit_macros::retry;

/// `#[derive(Classify)]`: see [`retrykit_macros::Classify`].
///
/// ```
/// use retrykit_core::{Class, Classify};
///
/// #[derive(Debug, Classify)]
/// enum FetchError {
///     #[classify(transient)]
///     Unavailable,
///     #[classify(permanent)]
///     NotFound,
/// }
/// assert_eq!(FetchError::Unavailable.class(), Class::TRANSIENT);
/// assert_eq!(FetchError::NotFound.class(), Class::Permanent);
/// ```
#[cfg(feature = "macros")]
pub use retrykit_macros::Classify;

/// Whether this build records per-policy metrics (the `metrics` feature):
/// their labels allocate on every call.
pub const RECORDS_METRICS: bool = cfg!(feature = "metrics");
