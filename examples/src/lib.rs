//! Runnable demos of the retry framework.
//!
//! - [`outbox`]: a crash-safe transactional-outbox relay over embedded SQLite.
//! - [`http`]: an HTTP client that honours `Retry-After`, against a scripted
//!   local server.
#![warn(missing_docs)]

pub mod http;
pub mod outbox;

/// The examples' policy file: `RETRY_CONFIG` if set, else `examples/retry.toml`.
///
/// ```
/// assert!(examples::policy_file().ends_with("retry.toml"));
/// ```
pub fn policy_file() -> std::path::PathBuf {
    std::env::var_os("RETRY_CONFIG")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("retry.toml"),
            Into::into,
        )
}

/// Loads [`policy_file`] with `profile` (and `RETRY_POLICY__*` overrides from
/// the environment) and installs it in the registry; returns every problem.
///
/// ```
/// examples::install_policies("test").unwrap();
/// assert!(retry_core::registry::policy("outbox").is_some());
/// ```
pub fn install_policies(profile: &str) -> Result<retry_config::Config, retry_config::Diagnostics> {
    let options = retry_config::Options::new()
        .profile(profile)
        .env(retry_config::Env::from_process());
    retry_config::Setup::new(policy_file())
        .options(options)
        .install()
}
