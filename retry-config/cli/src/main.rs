//! `retry-policy`: check, show, explain, list and simulate the retry policies
//! of a `retry.toml`. Exit codes follow cargo and ripgrep: 0 success, 1 the
//! configuration has errors, 2 the command itself could not run.
//!
//! The command line: one module per subcommand, each with its clap `Args`
//! and a `run(args, &Context)`. The loading, checking and rendering are
//! retrykit-config's public API; the simulation is retrykit-sim's.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};
use retrykit_config::{Config, Env, FileOrigin, Options};
use std::path::PathBuf;
use std::process::ExitCode;

/// `print!` for the tool's output: a reader that closed stdout (`| head`)
/// ends the tool quietly with status 0, as `head` expects of the command
/// before it, instead of a panic (see [`emit`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::emit(&format!($($arg)*)) };
}

/// `println!` for the tool's output (see [`out!`]).
macro_rules! outln {
    ($($arg:tt)*) => { $crate::emit(&format!("{}\n", format_args!($($arg)*))) };
}

mod check;
mod explain;
mod import;
mod list;
mod show;
mod simulate;

/// Check, list, explain, show and simulate the retry policies of a retry.toml.
// The doc comment above is the tool's `--help` summary (clap's bare `about`
// would print the crate's description instead).
#[derive(Debug, Parser)]
#[command(
    name = "retry-policy",
    version,
    after_help = "The file is --config, else $RETRY_CONFIG, else ./retry.toml; the profile is --profile, else $RETRY_PROFILE.\n\
                  RETRY_POLICY__<NAME>__<KEY>, RETRY_BUDGET__<NAME>__<KEY> and RETRY_BREAKER__<NAME>__<KEY> variables override the file unless --no-env.\n\n\
                  Exit status: 0 success (warnings allowed), 1 the configuration has errors,\n\
                  2 the command could not run (bad arguments, an unknown policy, a file that cannot be read)."
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    look: Look,
    #[command(subcommand)]
    command: Command,
}

/// Options every subcommand accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// The configuration file [default: $RETRY_CONFIG, else ./retry.toml]
    #[arg(long, short = 'c', global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The profile whose overlays apply [default: $RETRY_PROFILE]
    #[arg(long, short = 'p', global = true, value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Ignore RETRY_POLICY__*, RETRY_BUDGET__* and RETRY_BREAKER__* environment overrides
    #[arg(long, global = true)]
    pub no_env: bool,
}

/// How output looks (kept apart from [`Global`], which subcommands build in tests).
#[derive(Debug, Clone, clap::Args)]
struct Look {
    /// When to colour diagnostics
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    color: Color,
}

/// The `--color` choice, set once in [`main`]; `auto` when unset (in tests).
static COLOR: std::sync::OnceLock<Color> = std::sync::OnceLock::new();

/// When to colour diagnostics, as in cargo and ripgrep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When the output is a terminal and NO_COLOR is not set
    Auto,
    /// Always
    Always,
    /// Never
    Never,
}

/// Where output goes, to decide on colour.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a configuration file and report every problem
    Check(check::Args),
    /// Show a policy's schedule: envelope, sampled wait and time of each attempt
    Show(show::Args),
    /// Show every setting of a policy, budget or breaker and the layer it came from
    Explain(explain::Args),
    /// List every policy, budget and breaker with a one-line summary
    List(list::Args),
    /// Simulate a fleet of clients against a failing or slow server (herd, contention, tail)
    Simulate(Box<simulate::Args>),
    /// Turn a gRPC service config (JSON) into retry.toml policies, printed to stdout
    Import(import::Args),
}

/// What every subcommand receives: the global options and how to load the file.
#[derive(Debug, Clone)]
pub struct Context {
    /// The global options as given.
    pub global: Global,
}

impl Context {
    /// The file to read and how it was chosen: `--config`, else
    /// `$RETRY_CONFIG`, else `./retry.toml`.
    pub fn path(&self) -> (PathBuf, FileOrigin) {
        if let Some(path) = &self.global.config {
            return (path.clone(), FileOrigin::Given);
        }
        match std::env::var_os("RETRY_CONFIG").filter(|p| !p.is_empty()) {
            Some(path) => (PathBuf::from(path), FileOrigin::Env),
            None => (
                PathBuf::from(retrykit_config::DEFAULT_FILE),
                FileOrigin::Default,
            ),
        }
    }

    /// The load options: the profile from `--profile` or `$RETRY_PROFILE`,
    /// and the environment overrides unless `--no-env`.
    pub fn options(&self) -> Options {
        let mut options = Options::new();
        if !self.global.no_env {
            options = options.env(Env::from_process());
        }
        let profile = self.global.profile.clone().or_else(|| {
            std::env::var("RETRY_PROFILE")
                .ok()
                .filter(|p| !p.is_empty())
        });
        if let Some(p) = profile {
            options = options.profile(p);
        }
        options
    }

    /// Loads the file; warnings go to stderr. A file that cannot be read is
    /// a [`CliError`] with exit status 2, a file with errors one with 1.
    pub fn load(&self) -> Result<Config, CliError> {
        let (path, origin) = self.path();
        let text = read(&path, origin)
            .map_err(|diags| CliError::unreadable(self.render(&diags, Stream::Stderr)))?;
        match Config::load_str(&text, &path.display().to_string(), &self.options()) {
            Ok(config) => {
                if !config.warnings().is_empty() {
                    eprint!("{}", self.render(config.warnings(), Stream::Stderr));
                }
                Ok(config)
            }
            Err(diags) => Err(CliError::config(self.render(&diags, Stream::Stderr))),
        }
    }

    /// Diagnostics rendered for `stream`, coloured when `--color` says so.
    pub fn render(&self, diags: &retrykit_config::Diagnostics, stream: Stream) -> String {
        if self.color(stream) {
            diags.render_ansi()
        } else {
            diags.render()
        }
    }

    /// Whether output to `stream` is coloured (`--color`, else a terminal
    /// without NO_COLOR or TERM=dumb).
    pub fn color(&self, stream: Stream) -> bool {
        use std::io::IsTerminal;
        match COLOR.get().copied().unwrap_or(Color::Auto) {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                let terminal = match stream {
                    Stream::Stdout => std::io::stdout().is_terminal(),
                    Stream::Stderr => std::io::stderr().is_terminal(),
                };
                terminal
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

/// [`retrykit_config::read_file`], whose hint for a missing default file also
/// names this tool's own way to name one.
pub fn read(
    path: &std::path::Path,
    origin: FileOrigin,
) -> Result<String, retrykit_config::Diagnostics> {
    retrykit_config::read_file(path, origin).map_err(|diags| match origin {
        FileOrigin::Default => diags
            .iter()
            .map(|d| d.clone().note("or name the file with --config FILE"))
            .collect(),
        _ => diags,
    })
}

/// A failed command: the message for stderr and the exit status.
#[derive(Debug)]
pub struct CliError {
    /// Printed to stderr (prefixed with `error: ` for usage errors).
    pub message: String,
    /// 1 for configuration errors, 2 when the command could not run.
    pub code: u8,
}

impl CliError {
    /// The configuration has errors (already rendered): exit status 1.
    pub fn config(rendered: String) -> Self {
        CliError {
            message: rendered,
            code: 1,
        }
    }

    /// The file could not be read (already rendered): the command could not
    /// run, exit status 2.
    pub fn unreadable(rendered: String) -> Self {
        CliError {
            message: rendered,
            code: 2,
        }
    }

    /// The command could not run (bad argument, unknown name): exit status 2.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: format!("error: {}\n", message.into()),
            code: 2,
        }
    }
}

/// Writes `text` to stdout. A closed stdout (a reader such as `head` that
/// has read enough) ends the tool with status 0; any other write error is
/// said on stderr and ends it with status 2 (the command could not run).
pub fn emit(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(2);
    }
}

/// Parses the arguments, runs the subcommand, and maps the outcome to an exit status.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let _ = COLOR.set(cli.look.color);
    let cx = Context { global: cli.global };
    let outcome = match cli.command {
        Command::Check(args) => check::run(args, &cx),
        Command::Show(args) => show::run(args, &cx),
        Command::Explain(args) => explain::run(args, &cx),
        Command::List(args) => list::run(args, &cx),
        Command::Simulate(args) => simulate::run(*args, &cx),
        Command::Import(args) => import::run(args, &cx),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprint!("{}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// `name` as a policy of `config`, or a usage error with a did-you-mean.
pub fn find_policy<'c>(
    config: &'c Config,
    name: &str,
) -> Result<&'c std::sync::Arc<retrykit_core::Policy>, CliError> {
    config.policy(name).ok_or_else(|| {
        let names: Vec<&str> = config.policy_names().collect();
        let close = retrykit_schema::suggest::did_you_mean(name, names.iter().copied())
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        CliError::usage(format!(
            "no policy `{}` in {}{close}; defined: {}",
            shown(name),
            config.source().name(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ))
    })
}

/// The most characters of a name a table or a note shows.
pub const MAX_NAME: usize = 48;

/// A name as tables and notes show it: control characters escaped, and a
/// name longer than [`MAX_NAME`] characters cut to that length, ending in `…`
/// (names can be as long as a TOML key; the output stays readable and bounded).
pub fn shown(name: &str) -> String {
    let clipped = name.chars().nth(MAX_NAME).is_some();
    let keep = if clipped { MAX_NAME - 1 } else { MAX_NAME };
    let mut out = String::new();
    for c in name.chars().take(keep) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if clipped {
        out.push('…');
    }
    out
}

/// Milliseconds, to the microsecond: how every JSON output gives a duration.
pub fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// A sampled duration for tables: three significant digits (`81.2ms`, `1.49s`),
/// whole seconds past a minute (`2m 5s`).
pub fn short(d: std::time::Duration) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    let nanos = d.as_nanos();
    let sig = |v: f64| -> String {
        let decimals = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        trim(format!("{v:.decimals$}"))
    };
    if nanos == 0 {
        "0s".to_owned()
    } else if nanos < 1_000 {
        format!("{nanos}ns")
    } else if nanos < 1_000_000 {
        format!("{}us", sig(nanos as f64 / 1e3))
    } else if nanos < 1_000_000_000 {
        format!("{}ms", sig(nanos as f64 / 1e6))
    } else if d.as_secs() < 60 {
        format!("{}s", sig(d.as_secs_f64()))
    } else {
        retrykit_config::show_duration(std::time::Duration::from_secs(
            d.as_secs_f64().round() as u64
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{ms, short};
    use std::time::Duration;

    #[test]
    fn json_milliseconds_keep_the_microseconds() {
        assert_eq!(ms(Duration::from_nanos(1_234_567)), 1.235);
        assert_eq!(ms(Duration::from_secs(2)), 2000.0);
    }

    #[test]
    fn short_durations_keep_three_significant_digits() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(999), "999ns"),
            (Duration::from_nanos(81_161), "81.2us"),
            (Duration::from_micros(81_161), "81.2ms"),
            (Duration::from_millis(149_420), "2m 29s"),
            (Duration::from_millis(1_490), "1.49s"),
            (Duration::from_millis(1_000), "1s"),
            (Duration::from_millis(125_400), "2m 5s"),
        ];
        for (d, expected) in cases {
            assert_eq!(short(d), expected, "{d:?}");
        }
        // The largest duration formats without overflow.
        assert!(!short(Duration::MAX).is_empty());
    }

    #[test]
    fn long_names_are_cut_with_an_ellipsis_and_controls_escaped() {
        use super::{MAX_NAME, shown};
        let exact = "a".repeat(MAX_NAME);
        assert_eq!(shown(&exact), exact);
        let long = shown(&"a".repeat(MAX_NAME + 1));
        assert_eq!(long.chars().count(), MAX_NAME);
        assert!(long.ends_with("a…"), "{long}");
        assert_eq!(shown("a\u{1b}[31mb"), "a\\u{1b}[31mb");
    }

    #[test]
    fn columns_align_on_the_widest_cell() {
        let rows = [
            ["a".to_owned(), "1".to_owned()],
            ["long".to_owned(), "2".to_owned()],
        ];
        assert_eq!(
            super::list::columns(&["K", "V"], &rows),
            "K     V\na     1\nlong  2\n"
        );
    }
}
