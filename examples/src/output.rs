//! The demos' reports on stdout, which a reader such as `head -1` may close
//! before the demo is done. `println!` panics then; these writers return an
//! error instead, marked as a closed stdout so that `main` can stop quietly
//! (status 0, as `head` expects of the command before it) without mistaking
//! some other broken pipe, such as a lost connection, for it.

use std::error::Error;
use std::io::{self, Write};

/// How a harness (`fleet`, `tail`, `load`) prints its report: `--format`.
///
/// ```
/// use clap::Parser;
/// use examples::fleet::{FleetArgs, Format};
/// let args = FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p", "--format", "json"]).unwrap();
/// assert_eq!(args.format, Format::Json);
/// let args = FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p"]).unwrap();
/// assert_eq!(args.format, Format::Table);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people.
    Table,
    /// JSON with the same figures, for programs.
    Json,
}

/// The mark on the [`io::Error`] of a write to a closed stdout.
#[derive(Debug)]
pub struct ClosedStdout;

impl std::fmt::Display for ClosedStdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed")
    }
}

impl Error for ClosedStdout {}

/// Standard output, whose broken-pipe errors carry the [`ClosedStdout`] mark.
///
/// ```
/// use std::io::Write;
/// writeln!(examples::output::Stdout, "hello").unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

fn mark(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, ClosedStdout)
    } else {
        e
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().write(buf).map_err(mark)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush().map_err(mark)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout().write_all(buf).map_err(mark)
    }
}

/// Writes `text` to stdout and flushes it: `print!` that returns an error
/// instead of panicking.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = Stdout;
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// [`print`] of `text` and a newline.
pub fn println(text: &str) -> io::Result<()> {
    print(&format!("{text}\n"))
}

/// Whether `error`, or an error it wraps, is a write to a closed stdout
/// (from [`Stdout`], [`print`] or [`println`]).
///
/// ```
/// use examples::output::{ClosedStdout, is_closed_stdout};
/// let closed = std::io::Error::new(std::io::ErrorKind::BrokenPipe, ClosedStdout);
/// assert!(is_closed_stdout(&closed));
/// // A broken connection is a failure, not a reader that had enough.
/// assert!(!is_closed_stdout(&std::io::Error::from(std::io::ErrorKind::BrokenPipe)));
/// ```
pub fn is_closed_stdout(error: &(dyn Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.is::<ClosedStdout>()
            || e.downcast_ref::<io::Error>()
                .and_then(io::Error::get_ref)
                .is_some_and(|inner| inner.is::<ClosedStdout>())
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// Ends a demo that failed with `error`: quietly with status 0 when stdout
/// was closed (the reader had what it wanted), else with the error on stderr
/// and `status`.
pub fn exit_with(error: &(dyn Error + 'static), status: i32) -> ! {
    if is_closed_stdout(error) {
        std::process::exit(0);
    }
    eprint!("{}", crate::policies::error_report(error));
    std::process::exit(status)
}
