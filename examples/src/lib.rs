//! Runnable demos of the retry framework.
//!
//! - [`outbox`]: a crash-safe transactional-outbox relay over embedded SQLite.
//! - [`fleet`]: a real fleet of clients against a local server, beside the
//!   simulator's prediction.
//! - [`grpc`]: a tonic client whose channel the tower layer's gRPC mode
//!   wraps, against a scripted tonic server.
//! - [`http`]: an HTTP client that honours `Retry-After`, against a scripted
//!   local server.
//! - [`load`]: concurrency limits against a real server that serves C
//!   calls at once and queues the rest.
//! - [`tail`]: hedged requests against a real server with a heavy latency
//!   tail, beside the simulator's prediction.
//! - [`policies`]: how the demos find, load and report on their retry policies.
//! - [`output`]: their reports on a stdout that a reader may close early.
#![warn(missing_docs)]

pub mod fleet;
pub mod grpc;
pub mod http;
pub mod load;
pub mod outbox;
pub mod output;
pub mod policies;
pub mod tail;

pub use policies::{install_policies, policy_file};
