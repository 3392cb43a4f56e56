//! `retry-policy check [FILE]`: every problem of the file, under every
//! profile (or the one selected), in one pass.

use super::{CliError, Context, Stream};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file to check [default: --config, $RETRY_CONFIG, else ./retry.toml]
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    deny_warnings: bool,
}

/// Prints the diagnostics and a summary; exit status 1 when there are errors.
/// Without `--profile` (or `$RETRY_PROFILE`) the base file and every profile are checked.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let path = args.file.unwrap_or_else(|| cx.path());
    let options = cx.options().deny_warnings(args.deny_warnings);
    let diags = retry_config::check_file(&path, &options);
    let scope = match &options.profile {
        Some(p) => format!("profile `{p}`"),
        None => "the base settings and every profile".to_owned(),
    };
    if diags.is_empty() {
        println!("{}: ok ({scope})", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", cx.render(&diags, Stream::Stdout));
    if diags.has_errors() {
        Ok(ExitCode::from(1))
    } else {
        println!("{}: ok with warnings ({scope})", path.display());
        Ok(ExitCode::SUCCESS)
    }
}
