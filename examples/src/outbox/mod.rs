//! The transactional outbox: a business transaction writes its row and its
//! event in one SQLite transaction; a relay publishes due events to a broker.
//!
//! Two layers of retry, each where it belongs:
//! - **short** retries around one publish (policy `publish`): a few quick
//!   attempts ride out a dropped connection;
//! - **long** backoff lives in the table (policy `outbox`, through the core's
//!   stateful [`Oracle`](retry_core::Oracle)): the relay stores the attempt
//!   count and the next attempt time in the event's row and moves on, so no
//!   connection, lock or worker is held during a pause, and a restarted relay
//!   resumes every event's schedule where it was.
//!
//! Events that exhaust `outbox` are dead-lettered with their last error.

mod broker;
mod relay;
mod store;
mod summary;

pub use broker::{BrokerError, BrokerSettings, FakeBroker};
pub use relay::{PassStats, Relay, RelayError};
pub use store::{Counts, EventRow, EventState, Store, now_ms};
pub use summary::Summary;
