//! # retry-core
//!
//! The engine behind `#[retry(policy = "...")]`: validated [`Policy`] values,
//! [`Backoff`] shapes, [`Jitter`] modes, error classification ([`Classify`]),
//! server hints, the async and blocking loops ([`Retry`]), hooks and tracing,
//! shared [`RetryBudget`]s, the process-wide [`registry`] of named policies,
//! and the stateful [`Oracle`] for callers that schedule retries themselves.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use retry_core::{Jitter, Policy, Retry};
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
//! - `redis`: fleet-wide retry budgets kept in Redis ([`RetryBudget::with_fleet`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod adaptive;
mod backoff;
mod budget;
mod builder;
mod classify;
mod clock;
mod decide;
#[cfg(feature = "redis")]
mod fleet;
mod hooks;
mod jitter;
mod oracle;
mod policy;
mod problem;
pub mod registry;
mod report;
mod retry;
mod rng;
mod round;
mod schedule;
pub mod simulate;
mod site;

pub use adaptive::AdaptiveLimiter;
pub use backoff::Backoff;
pub use budget::{RetryBudget, RetryBudgetBuilder};
pub use builder::PolicyBuilder;
pub use classify::{AttemptTimeout, CarriesTimeout, Class, Classify};
pub use clock::{BlockingSleeper, Clock, DefaultClock, Sleeper, SystemClock, ThreadSleeper};
#[cfg(feature = "tokio")]
pub use clock::{TokioClock, TokioSleeper};
#[cfg(feature = "redis")]
pub use fleet::{FleetOptions, FleetState, FleetStatus};
pub use hooks::{Callback, GiveUpEvent, HookSet, Hooks, RetryEvent, RetryIfSlot, Unset};
pub use jitter::Jitter;
pub use oracle::{Oracle, OracleState, Verdict};
pub use policy::Policy;
pub use problem::{PolicyError, Problem};
pub use registry::Registry;
pub use report::{Ending, Report};
#[doc(hidden)]
pub use retry::Run;
pub use retry::{DefaultSleeper, Retry};
#[doc(hidden)]
pub use round::Round;
pub use schedule::Schedule;

/// `#[retry(policy = "...")]`: see [`retry_macros::retry`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::retry;
///
/// #[retry(policy = "doc-fetch")]
/// async fn fetch(id: u32) -> Result<u32, std::io::Error> {
///     Ok(id * 2)
/// }
/// assert_eq!(fetch(21).await.unwrap(), 42);
/// # }
/// ```
#[cfg(feature = "macros")]
pub use retry_macros::retry;

/// `#[derive(Classify)]`: see [`retry_macros::Classify`].
///
/// ```
/// use retry_core::{Class, Classify};
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
pub use retry_macros::Classify;

/// Re-exported so generated code and loaders can register call sites.
pub use inventory;
