//! `retry-policy import grpc FILE.json`: a gRPC service config's
//! `methodConfig` entries as retry.toml policies (see [`grpc`] for the
//! rules), printed to stdout; warnings go to stderr, and invalid input is an
//! error naming the JSON path and gRFC A6's rule.

pub mod grpc;

use super::{CliError, Context};
use retrykit_config::MAX_SHOWN_DIAGNOSTICS;
use std::path::PathBuf;
use std::process::ExitCode;

/// What to import from.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum From {
    /// A gRPC service config (JSON): methodConfig's retryPolicy,
    /// hedgingPolicy and timeout, and retryThrottling
    Grpc,
}

/// Options of `import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The kind of file
    #[arg(value_enum)]
    from: From,
    /// The file to import
    file: PathBuf,
}

/// The most bytes of input read: a service config is a few KiB.
const MAX_INPUT: u64 = 4 << 20;

/// Prints the policies the file describes.
pub fn run(args: Args, _cx: &Context) -> Result<ExitCode, CliError> {
    let From::Grpc = args.from;
    let shown = args.file.display().to_string();
    let text = read(&args.file).map_err(|e| CliError {
        message: format!("error: cannot read {shown}: {e}\n"),
        code: 2,
    })?;
    match grpc::import(&text) {
        Ok(imported) => {
            eprint!("{}", bounded("warning", &shown, &imported.warnings));
            out!("{}", imported.toml);
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => {
            let message = bounded("error", &shown, &errors);
            Err(CliError { message, code: 1 })
        }
    }
}

/// The first [`MAX_SHOWN_DIAGNOSTICS`] of `lines`, one a line, then how
/// many more there are: the output is bounded whatever the input.
fn bounded(severity: &str, file: &str, lines: &[String]) -> String {
    let mut out: String = lines
        .iter()
        .take(MAX_SHOWN_DIAGNOSTICS)
        .map(|line| format!("{severity}: {file}: {line}\n"))
        .collect();
    if let Some(more) = lines
        .len()
        .checked_sub(MAX_SHOWN_DIAGNOSTICS)
        .filter(|n| *n > 0)
    {
        out.push_str(&format!(
            "{severity}: {file}: and {more} more {severity}s, not shown (fix these first)\n"
        ));
    }
    out
}

/// The file's text, refused past [`MAX_INPUT`] bytes.
fn read(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path)?;
    file.take(MAX_INPUT + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_INPUT {
        let too_big = format!("larger than {} MiB: not a service config", MAX_INPUT >> 20);
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            too_big,
        ));
    }
    Ok(text)
}
