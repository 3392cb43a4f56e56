//! `retry-policy simulate`: a PLACEHOLDER until the fleet-simulator engineer
//! replaces this file (they own it; overwrite freely).
//!
//! The contract `cli/mod.rs` relies on, and nothing more:
//!
//! ```text
//! #[derive(Debug, clap::Args)]
//! pub struct Args { /* your flags: POLICY, --clients, --seed, ... */ }
//!
//! pub fn run(args: Args, cx: &super::Context) -> Result<std::process::ExitCode, super::CliError>
//! ```
//!
//! `cx.load()` loads the configuration (honouring --config/--profile/--no-env,
//! $RETRY_CONFIG, $RETRY_PROFILE, printing warnings) and returns a
//! `retry_config::Config`; `super::find_policy(&config, name)` gives the named
//! `Arc<retry_core::Policy>` or a usage error with a did-you-mean.
//! `CliError::usage(msg)` exits 2, `CliError::config(rendered)` exits 1.

use super::{CliError, Context};
use std::process::ExitCode;

/// Options of `simulate` (none yet).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Not implemented yet: says so and exits with status 2.
pub fn run(_args: Args, _cx: &Context) -> Result<ExitCode, CliError> {
    eprintln!("retry-policy simulate: not yet implemented");
    Ok(ExitCode::from(2))
}
