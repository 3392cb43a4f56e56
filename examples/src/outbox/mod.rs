//! The transactional outbox: a business transaction writes its row and its
//! event in one transaction; relays publish due events to a broker.
//!
//! Two layers of retry, each where it belongs:
//! - **short** retries around one publish (policy `publish`): a few quick
//!   attempts ride out a dropped connection;
//! - **long** backoff lives in the table (policy `outbox`, through the core's
//!   stateful [`Oracle`](retrykit_core::Oracle)): the relay stores the attempt
//!   count and the next attempt time in the event's row and moves on, so no
//!   connection, lock or worker is held during a pause, and a restarted relay
//!   resumes every event's schedule where it was.
//!
//! The outbox lives in SQLite ([`SqliteStore`], embedded, the default) or
//! PostgreSQL ([`PostgresStore`], several relays on several hosts), behind
//! one small trait, [`OutboxStore`]; both run the same schema migration at
//! start-up. Relays share the work through leases (see [`OutboxStore`]).
//!
//! Events that exhaust `outbox` are dead-lettered with their last error.

mod broker;
mod database;
mod event;
mod postgres;
mod private_postgres;
mod relay;
mod schema;
mod sqlite;
mod stats;
mod store;
mod summary;

pub use broker::{BrokerError, BrokerSettings, FakeBroker};
pub use database::{RelayError, while_database_unavailable};
pub use event::{ClaimRecord, Counts, Delivery, EventRow, EventState, now_ms};
pub use postgres::PostgresStore;
pub use private_postgres::{ClusterError, PrivatePostgres};
pub use relay::{CHAOS_FAULTS, DEFAULT_LEASE, Relay};
pub use sqlite::SqliteStore;
pub use stats::PassStats;
pub use store::{OutboxStore, StoreError};
pub use summary::{Summary, lost};
