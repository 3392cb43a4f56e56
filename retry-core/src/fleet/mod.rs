//! Fleet budgets and fleet breakers: one [`RetryBudget`](crate::RetryBudget)
//! or one [`CircuitBreaker`](crate::CircuitBreaker) shared by every host,
//! kept in Redis (feature `redis`). Both use one link: a background thread
//! per budget or breaker runs its script every `refresh`, and falls back to
//! the host's local control when a round trip fails or takes longer than
//! `timeout` (said once, and said again when the fleet resumes). A call
//! never waits on Redis.
//!
//! **The store.** Each budget is one Redis hash, `{retry-budget:NAME}` (the
//! braces are a hash tag, so the key is Redis-Cluster-safe). One Lua script
//! (`sync.lua`) records a host's calls and leases it retries in a single
//! round trip, on Redis's own clock (`TIME`), over the local budget's sliding
//! window: ten slots of `window / 10`, allowing `ratio × calls + min_per_sec
//! × window` retries.
//!
//! **Leasing.** Each host holds a lease of retries that a background thread
//! tops up every `refresh` (sooner when a retry finds the lease empty) and
//! uses to send the calls recorded since. The lease a host asks for is
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
//!
//! ## Fleet breakers
//!
//! **The store.** Each breaker is one hash, `{retry-breaker:NAME}`, changed
//! only by `breaker.lua`, whose transitions mirror the local breaker's (the
//! same rules on the same fields; one set of scenario vectors checks both):
//! attempts and failures are counted over the breaker's window on Redis's
//! clock, and the state (closed; open until a time; half-open with `out`
//! probes leased and `ok` answered well) is kept there, so every host sees
//! the same one. Each round trip sends the host's attempts and probe
//! answers since the last one and brings back the fleet's state (the end of
//! its break turned into the host's clock) and any probes leased to it. A
//! call reads the last state a round trip brought: closed sends; open refuses;
//! half-open sends only on a probe lease this host holds, and otherwise is
//! refused and asks for one (the thread runs at once). Leases no call asked
//! for in two rounds go back. The local breaker keeps counting all along,
//! and while the fleet decides makes no transition of its own; each host
//! says each change of the fleet's state it sees, once.
//!
//! **The bound on probes.** The script leases at most `probes − out` places
//! and counts each in `out`. A place is leased again only when given back (a
//! lease unused, or a probe cancelled — which may have been sent, as a local
//! breaker's cancelled probe is), or when unanswered for `open_for` (its host
//! may have died), which starts a new half-open period. So while Redis
//! answers, whatever the number of hosts `H`:
//!
//! ```text
//! probes sent per half-open period ≤ probes (+ probes cancelled in flight)
//! ```
//!
//! where `H` local breakers would send `H × probes`.
//!
//! **The bound on attempts during an open period.** The script opens the
//! breaker in the round trip that brings the tripping failure. A host whose
//! failures, added to the fleet's window as it last saw it, meet the opening
//! rule starts that round trip at once instead of at its next `refresh`, so
//! the fleet opens within a round trip of the evidence. A host sends
//! plain attempts only while its view is closed, and its next round trip
//! starts within `refresh` and ends within `timeout` (or it falls back). So
//! after the opening, host `h` sends at most the attempts it already had in
//! flight and those it begins in `refresh + timeout`:
//!
//! ```text
//! attempts(open period) ≤ Σ_h (in_flight_h + rate_h × (refresh + timeout))
//! ```
//!
//! and none once every host has seen the opening, until the probes of the
//! half-open period. Local breakers send until each host's own window
//! trips, and each host's half-open sends its own probes.
//!
//! **The release.** When the script closes the breaker it starts the
//! fleet's release (the local breaker's rules, `breaker/release.rs`, on one
//! rate kept in the hash): one place per `release_ramp` at first, raised by
//! every host's release successes and cut by their throttled answers, sent
//! with each round trip. Places fill a bucket at the rate, holding at most
//! a `refresh`'s worth, and are leased to the hosts whose calls asked for
//! one; a call without a place is refused, asks for places, and comes back
//! after the next round trip, spread over a `release_ramp`. So while Redis
//! answers, over any time `T` of the release:
//!
//! ```text
//! calls released(T) ≤ rate × T + 1 + H × max(1, rate × refresh)
//! ```
//!
//! (the last term: places leased and not yet used, one round's per host),
//! where `H` local releases would each send at their own rate. The release
//! ends once every host's ask was met in full for four `release_ramp`s (as
//! a local release ends once no call was refused for four).
//!
//! **When Redis fails.** Each host falls back to its local breaker, which
//! takes the fleet's last state (open until the same time; half-open becomes
//! a local half-open with its own probes; closed keeps its own counts). While
//! failing open the fleet may send up to `H × probes` probes per half-open
//! period, and each host judges only its own attempts. The counts and probe
//! answers of a failed round trip are dropped (the local window has the
//! counts; an unanswered place comes back after `open_for`). A host that
//! falls back while the fleet releases goes on with a release of its own,
//! from its first step, and says so in the fall-back's warning.
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
