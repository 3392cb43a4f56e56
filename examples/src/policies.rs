//! The demos' retry policies: which file and profile, loading them, and
//! reporting what is wrong in the same rendered form as `retry-policy check`
//! (source excerpt, did-you-mean, notes), never a one-line summary of it.

use retrykit_config::{Config, Diagnostics};
use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The profile when neither a `--profile` flag nor `RETRY_PROFILE` names one.
pub const DEFAULT_PROFILE: &str = "demo";

/// The examples' policy file: `RETRY_CONFIG` if set, else `examples/retry.toml`.
///
/// ```
/// assert!(examples::policy_file().ends_with("retry.toml"));
/// ```
pub fn policy_file() -> PathBuf {
    std::env::var_os("RETRY_CONFIG")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("retry.toml"),
            Into::into,
        )
}

/// The profile a demo runs with: `flag` (a `--profile` option) if given,
/// else `RETRY_PROFILE` if set and not empty, else [`DEFAULT_PROFILE`].
///
/// ```
/// assert_eq!(examples::policies::profile(Some("test")), "test");
/// ```
pub fn profile(flag: Option<&str>) -> String {
    flag.map(str::to_owned)
        .or_else(|| {
            std::env::var("RETRY_PROFILE")
                .ok()
                .filter(|p| !p.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_PROFILE.to_owned())
}

/// Loads [`policy_file`] with `profile` (and `RETRY_POLICY__*` overrides from
/// the environment) and installs it in the registry; returns every problem.
///
/// ```
/// examples::install_policies("test").unwrap();
/// assert!(retrykit_core::registry::policy("outbox").is_some());
/// ```
pub fn install_policies(profile: &str) -> Result<Config, Diagnostics> {
    let options = retrykit_config::Options::new()
        .profile(profile)
        .env(retrykit_config::Env::from_process());
    retrykit_config::Setup::new(policy_file())
        .options(options)
        .install()
}

/// [`install_policies`] for a demo's start-up: warnings are printed to
/// stderr, rendered, so that nothing the file says is lost; errors come back
/// as [`PolicyProblems`].
///
/// ```
/// let err = examples::policies::load_policies("no-such-profile").unwrap_err();
/// assert!(err.to_string().contains("defined profiles"));
/// ```
pub fn load_policies(profile: &str) -> Result<Config, PolicyProblems> {
    let config = install_policies(profile).map_err(PolicyProblems)?;
    if !config.warnings().is_empty() {
        eprint!("{}", render(config.warnings()));
    }
    Ok(config)
}

/// `path` loaded as a program would: with `RETRY_PROFILE` and the
/// `RETRY_POLICY__*` overrides from the environment (the harnesses check a
/// prediction against what the program itself would run).
pub fn load_as_program(path: &Path) -> Result<Config, PolicyProblems> {
    use retrykit_config::{Env, Options};
    let mut options = Options::new().env(Env::from_process());
    if let Some(p) = std::env::var("RETRY_PROFILE")
        .ok()
        .filter(|p| !p.is_empty())
    {
        options = options.profile(p);
    }
    Config::load_file(path, &options).map_err(PolicyProblems)
}

/// Why the policies could not be loaded. Its `Display` is the full
/// rendering: each problem starts with its own `error:` and brings its
/// source excerpt, did-you-mean and notes.
///
/// ```
/// let mut d = retrykit_config::Diagnostics::new();
/// d.push(retrykit_config::Diagnostic::error("profile", "no profile `x`").note("defined profiles: a"));
/// let text = examples::policies::PolicyProblems(d).to_string();
/// assert!(text.starts_with("error: no profile `x`"));
/// assert!(text.contains("defined profiles: a"));
/// ```
#[derive(Debug)]
pub struct PolicyProblems(pub Diagnostics);

impl fmt::Display for PolicyProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.render())
    }
}

impl std::error::Error for PolicyProblems {}

/// What a demo prints when it fails with `error`: [`PolicyProblems`] as
/// rendered (in colour on a terminal), anything else as one `error:` line.
///
/// ```
/// let e = std::io::Error::other("disk full");
/// assert_eq!(examples::policies::error_report(&e), "error: disk full\n");
/// ```
pub fn error_report(error: &(dyn std::error::Error + 'static)) -> String {
    match error.downcast_ref::<PolicyProblems>() {
        Some(problems) => render(&problems.0),
        None => format!("error: {error}\n"),
    }
}

/// Diagnostics for stderr: coloured when it is a terminal.
fn render(diagnostics: &Diagnostics) -> String {
    if std::io::stderr().is_terminal() {
        diagnostics.render_ansi()
    } else {
        diagnostics.render()
    }
}
