//! Fleet simulation: what a whole fleet of clients following one policy does
//! to the service they share, before production finds out.
//!
//! Four scenarios, each driven by the engine's own decision kernel (retrykit-core's
//! `Decider`, the code behind every [`Retry`](retrykit_core::Retry) loop, not a
//! copy), so a simulated client waits exactly as a real loop under the same
//! policy would:
//!
//! - [`Herd`]: the thundering herd. Every client fails at time 0 against a
//!   service that is down for a while and then accepts a limited number of
//!   calls per tick. Without jitter, backoff spreads retries out in time but
//!   not away from each other, and the whole fleet arrives in the same tick.
//!   Optionally the clients' own machine is a bottleneck too ([`SendRate`]),
//!   and a policy's circuit breaker is the engine's own, one per client
//!   process or one for the fleet ([`BreakerScope`]).
//! - [`Contention`]: optimistic-concurrency writes to one row, the model of
//!   the well-known "Exponential Backoff and Jitter" study.
//! - [`Slow`]: a dependency whose latency grows with its load (a few
//!   slots, a queue for the rest), and client processes each holding a
//!   concurrency limit when the policy names one.
//! - [`Tail`]: a server with a heavy latency tail, and clients hedging as
//!   the policy says (retrykit-core's `next_hedge` and latency estimate),
//!   against the same policy unhedged.
//!
//! Results are plain data; rendering them (tables, plots, JSON) is the
//! `retry-policy simulate` command's job. This crate is apart from the engine
//! so that applications using retrykit-core do not build the simulator or its
//! random-distribution dependency.
//!
//! ```
//! use retrykit_sim::Herd;
//! use retrykit_core::{Jitter, Policy};
//! use std::time::Duration;
//!
//! let herd = Herd { clients: 10_000, outage: Duration::from_secs(2), capacity: 500, ..Herd::default() };
//! let policy = Policy::builder().jitter(Jitter::None).max_attempts(6).build()?;
//! let report = herd.run(&policy)?;
//! assert_eq!(report.peak_retries, 10_000); // the whole fleet, every time
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod contention;
mod error;
mod herd;
mod histogram;
mod occupied;
mod queue;
mod seed;
mod send;
mod slow;
mod tail;
mod timer;

pub use contention::{Contention, ContentionReport};
pub use error::SimulateError;
pub use herd::{BreakerScope, Herd, HerdReport, StoppedBy};
pub use histogram::{ArrivalHistogram, Bin};
pub use seed::client_seed;
pub use send::SendRate;
pub use slow::{Slow, SlowReport};
pub use tail::{Tail, TailOutcome, TailReport, TailServer};
pub use timer::TimerModel;
