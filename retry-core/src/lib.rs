//! # retrykit-core
//!
//! The engine behind `#[retry(policy = "...")]`: validated [`Policy`] values,
//! [`Backoff`] shapes, [`Jitter`] modes, error classification ([`Classify`]),
//! server hints, the async and blocking loops ([`Retry`]), hooks and tracing,
//! shared [`RetryBudget`]s (windows, and [`AdaptiveLimiter`]s pacing
//! attempts), shared [`CircuitBreaker`]s (see [`breaker`]), the process-wide [`registry`] of named policies,
//! the stateful [`Oracle`] for callers that schedule retries themselves, and
//! the decision [`kernel`] stepped by hand, for simulators, and [`hedge`]d
//! requests' settings, latency estimate and decision.
//! The [`clock`] module holds the clock and sleepers, for callers that inject
//! their own.
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
//! ## One meaning of "attempts"
//! `max_attempts` counts calls, the first included: 1 means no retry.
//!
//! ## Features
//! - `tokio` (default): the async loop on tokio's timer and (pausable) clock.
//! - `tracing`: a span per call and an event per retry.
//! - `serde`: serialisable [`OracleState`].
//! - `redis`: fleet-wide retry budgets kept in Redis (`RetryBudget::with_fleet`).
//! - `http`: HTTP semantics (status classes, `Retry-After` and gRPC pushback
//!   hints, idempotency, body replay).
//! - `tower`: a `tower::Layer` over the same loop; `reqwest-middleware`: a
//!   `reqwest_middleware::Middleware` over it.
//! - `metrics`: per-policy calls, attempts, retries, waits, budget refusals
//!   and hints through the `metrics` facade.
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
mod builder;
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
#[cfg(feature = "metrics")]
pub mod metrics;
mod oracle;
mod policy;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
mod policy_source;
mod problem;
pub mod registry;
mod report;
mod request_rules;
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
mod waits;
mod window;

// The public API is what a user names, and nothing else (pinned by
// tests/public_api.rs); `__private` holds only what generated code names.
pub use adaptive::AdaptiveLimiter;
pub use backoff::Backoff;
pub use breaker::CircuitBreaker;
pub use budget::{BudgetMode, BudgetScope, GrpcThrottling, RetryBudget, RetryBudgetBuilder};
pub use builder::PolicyBuilder;
pub use classify::{AttemptTimeout, CarriesBreakerOpen, CarriesTimeout, Class, Classify};
pub use hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent};
pub use jitter::Jitter;
pub use oracle::{Oracle, OracleState, Verdict};
pub use policy::Policy;
pub use problem::{PolicyError, Problem, Problems};
pub use registry::Registry;
pub use report::{Ending, Report};
pub use retry::Retry;

/// `#[retry(policy = "...")]`: see [`retrykit_macros::retry`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::retry;
///
/// #[retry(policy = "doc-fetch")]
/// async fn fetch(id: u32) -> Result<u32, std::io::Error> {
///     Ok(id * 2)
/// }
/// assert_eq!(fetch(21).await.unwrap(), 42);
/// # }
/// ```
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

/// Whether this build records per-policy metrics (retrykit-core's `metrics`
/// feature, perhaps turned on by another crate in the build): their labels
/// allocate on every call, so a success path that allocates nothing holds
/// only without it.
pub const RECORDS_METRICS: bool = cfg!(feature = "metrics");
