//! Fleet budgets and fleet breakers: one [`RetryBudget`](crate::RetryBudget)
//! or [`CircuitBreaker`](crate::CircuitBreaker) shared by every host, kept
//! in Redis (feature `redis`). A background thread per budget or breaker
//! runs its script every `refresh`, and falls back to the host's local
//! control when a round trip fails or takes longer than `timeout` (said
//! once, and again when the fleet resumes). A call never waits on Redis.
//!
//! ## Fleet budgets
//!
//! Each budget is one Redis hash, `{retry-budget:NAME}` (a hash tag:
//! Redis-Cluster-safe). `sync.lua` records a host's calls and leases it
//! retries in one round trip, on Redis's clock (`TIME`), over the local
//! budget's window (ten slots), allowing `ratio × calls + min_per_sec ×
//! window` retries. A host's lease is topped up every `refresh` (sooner
//! when a retry finds it empty) to
//!
//! ```text
//! L = clamp(ceil(ratio × calls per refresh + min_per_sec × refresh), 1, max_lease)
//! ```
//!
//! Leased retries count in the window they were leased in, so only retries
//! leased in an earlier window overshoot: at most one lease per host. With
//! `H` hosts, over any window `W` while Redis answers:
//!
//! ```text
//! retries(W) ≤ ratio × calls(W) + min_per_sec × W + H × max_lease
//! ```
//!
//! When Redis fails, the host's local budget (same settings, counted all
//! along) decides, the fall-back is counted in [`FleetStatus`], and the
//! fleet allows up to `H ×` the floor.
//!
//! ## Fleet breakers
//!
//! Each breaker is one hash, `{retry-breaker:NAME}`, changed only by
//! `breaker.lua`, whose transitions mirror the local breaker's (one set of
//! scenario vectors checks both), counted over the window on Redis's clock.
//! Each round trip sends the host's attempts and probe answers and brings
//! back the fleet's state and any probes leased to the host. A call reads
//! the last state brought: closed sends; open refuses; half-open sends only
//! on a probe lease this host holds, else is refused and asks for one (the
//! thread runs at once). Leases unasked for in two rounds go back. The
//! local breaker counts all along but makes no transition while the fleet
//! decides; each host says each fleet change it sees, once.
//!
//! **Probes.** The script leases at most `probes − out` places; a place is
//! leased again only when given back (unused, or a cancelled probe, which
//! may have been sent) or unanswered for `open_for` (a new half-open
//! period). While Redis answers, whatever `H`:
//!
//! ```text
//! probes sent per half-open period ≤ probes (+ probes cancelled in flight)
//! ```
//!
//! **Attempts while open.** A host whose failures, added to the fleet's
//! window as it last saw it, meet the opening rule syncs at once, so the
//! fleet opens within a round trip of the evidence. A host sends plain
//! attempts only while its view is closed, and its view updates within
//! `refresh + timeout`:
//!
//! ```text
//! attempts(open period) ≤ Σ_h (in_flight_h + rate_h × (refresh + timeout))
//! ```
//!
//! **The release.** On a close the script starts one fleet release (the
//! rules of `breaker/release.rs`, on one rate in the hash), raised by every
//! host's successes and cut by their throttled answers. Places fill a
//! bucket of at most a `refresh`'s worth and are leased to hosts whose calls
//! asked; a call without one is refused and returns after the next round
//! trip, spread over a `release_ramp`. Over any time `T` of the release:
//!
//! ```text
//! calls released(T) ≤ rate × T + 1 + H × max(1, rate × refresh)
//! ```
//!
//! It ends once every host's ask was met in full for four `release_ramp`s.
//!
//! **When Redis fails.** Each host's local breaker takes the fleet's last
//! state (open until the same time; half-open with its own probes; closed
//! with its own counts), so up to `H × probes` probes go per half-open
//! period. A failed round trip's counts and answers are dropped (the local
//! window has them; an unanswered place returns after `open_for`). A host
//! that falls back during the fleet's release runs a release of its own,
//! from its first step, and says so.
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
pub use link::{FleetState, FleetStatus};
pub use options::FleetOptions;
pub(crate) use refill::{Round, spawn, unstarted};
