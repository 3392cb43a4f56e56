//! Fleet budgets: one [`RetryBudget`](crate::RetryBudget) shared by every
//! host, kept in Redis (feature `redis`).
//!
//! **The store.** Each budget is one Redis hash, `{retry-budget:NAME}` (the
//! braces are a hash tag, so the key is Redis-Cluster-safe). One Lua script
//! (`sync.lua`) records a host's calls and leases it retries in a single
//! round trip, on Redis's own clock (`TIME`), over the local budget's sliding
//! window: ten slots of `window / 10`, allowing `ratio × calls + min_per_sec
//! × window` retries.
//!
//! **Leasing.** A retry never waits for Redis. Each host holds a lease of
//! retries that a background thread tops up every `refresh` (sooner when a
//! retry finds the lease empty) and uses to send the calls recorded since.
//! The lease a host asks for is
//!
//! ```text
//! L = clamp(ceil(ratio × calls per refresh + min_per_sec × refresh), 1, max_lease)
//! ```
//!
//! **The overshoot bound.** Leased retries count as taken in the window they
//! were leased in, so within any window the fleet's retries stay below what
//! the script allows, except for retries leased in an earlier window and
//! spent in this one: at most one lease per host. With `H` hosts, over any
//! window `W` while Redis answers:
//!
//! ```text
//! retries(W) ≤ ratio × calls(W) + min_per_sec × W + H × max_lease
//! ```
//!
//! (calls not yet sent to Redis only lower the right-hand side's real value,
//! never raise what is granted).
//!
//! **When Redis fails.** A round trip that errs or takes longer than
//! `timeout` switches the host to its local budget (same ratio, floor and
//! window, counted all along), says so once on stderr and in tracing, and
//! counts the fall-back in [`FleetStatus`]; when Redis answers again the
//! fleet budget resumes and that is said too. While failing open each host
//! allows its own local budget: up to `H ×` the floor across the fleet.
//! A call never waits on Redis, whatever its state.
//!
//! ```no_run
//! use retrykit_core::{RetryBudget, fleet::FleetOptions};
//! let budget = RetryBudget::builder()
//!     .ratio(0.1)
//!     .build()?
//!     .with_fleet(FleetOptions::new("broker", "redis://127.0.0.1:6379/"))?;
//! assert!(budget.fleet_status().is_some());
//! # Ok::<(), retrykit_core::PolicyError>(())
//! ```

mod link;
mod options;
mod refill;

pub(crate) use link::{FleetLink, Health};
pub(crate) use refill::{Round, spawn};
pub use link::{FleetState, FleetStatus};
pub use options::FleetOptions;
