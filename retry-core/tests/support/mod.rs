//! Helpers shared by retrykit-core's integration tests.

pub mod redis_server;
