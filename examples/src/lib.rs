//! Runnable demos of the retry framework.
//!
//! - [`outbox`]: a crash-safe transactional-outbox relay over embedded SQLite.
#![warn(missing_docs)]

pub mod outbox;
