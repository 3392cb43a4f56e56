//! Helpers shared by retry-core's integration tests.

pub mod redis_server;
