//! Installing a configuration into retrykit-core's process-wide registry:
//! discovery, `init`, `reload`, the opt-in file watcher, and the lazy loader
//! the registry runs on its first lookup when `init` was never called.

use crate::config::{Config, Options};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::env::Env;
use crate::read::{FileOrigin, read_file};
use retrykit_core::__private::loader;
use retrykit_core::Registry;
use retrykit_core::registry;
use retrykit_schema::discover::{Discovery, Found, How};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

mod lazy;
mod lenient;
mod sites;
mod watch;

pub(crate) use lazy::lazy_load;
use sites::{CallSites, call_site_problems};
pub use watch::Watcher;

/// The file `init` reads when `RETRY_CONFIG` is not set.
///
/// ```
/// assert_eq!(retrykit_config::DEFAULT_FILE, "retry.toml");
/// ```
pub const DEFAULT_FILE: &str = "retry.toml";

/// Where the configuration comes from and how to read it; `init` is
/// `Setup::from_env().install()`.
///
/// ```
/// use retrykit_config::{Options, Setup};
/// let setup = Setup::new("retry.toml").options(Options::new().profile("test"));
/// assert_eq!(setup.path(), std::path::Path::new("retry.toml"));
/// ```
#[derive(Debug, Clone)]
pub struct Setup {
    path: PathBuf,
    options: Options,
    /// The discovery that chose `path`, when it was not given in code: says
    /// which paths were tried when none exists.
    search: Option<Found>,
    /// Strict mode: see [`Setup::strict`].
    strict: bool,
    /// Whether `install` prints the configuration's warnings.
    report_warnings: bool,
}

impl Setup {
    /// Reads the file at `path`, with the base settings and no environment.
    ///
    /// ```
    /// let _ = retrykit_config::Setup::new("config/retry.toml");
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Setup {
            path: path.into(),
            options: Options::default(),
            search: None,
            strict: false,
            report_warnings: true,
        }
    }

    /// Discovery, by the one rule the build-time check follows too
    /// ([`retrykit_schema::discover`]): the file `RETRY_CONFIG` names (relative
    /// to the working directory), else the nearest `retry.toml` walking up
    /// from the working directory, else the file each `#[retry]` call site
    /// was checked against at build time. The profile is `RETRY_PROFILE`;
    /// overrides come from `RETRY_POLICY__*` / `RETRY_BUDGET__*` / `RETRY_BREAKER__*`; strict mode
    /// from `RETRY_STRICT` (`1`, `true`, `yes`, `on` or `0`, `false`, `no`,
    /// `off`, any case; empty is unset; any other value makes
    /// [`load`](Self::load) and [`install`](Self::install) fail, naming it).
    ///
    /// ```
    /// let setup = retrykit_config::Setup::from_env();
    /// assert!(!setup.path().as_os_str().is_empty());
    /// ```
    pub fn from_env() -> Self {
        let checked_at_build = loader::call_sites()
            .filter_map(|site| site.config)
            .map(PathBuf::from);
        let found = Discovery::from_process().fallbacks(checked_at_build).run();
        let path = found
            .file
            .clone()
            .or_else(|| found.searched.first().cloned())
            .unwrap_or_else(|| PathBuf::from(DEFAULT_FILE));
        let mut options = Options::new().env(Env::from_process());
        if let Some(p) = std::env::var("RETRY_PROFILE")
            .ok()
            .filter(|p| !p.is_empty())
        {
            options = options.profile(p);
        }
        // A bad RETRY_STRICT stays in the environment, whose load reports it.
        let strict = options.env.strict();
        Setup {
            path,
            options,
            search: Some(found),
            // A bad RETRY_STRICT is this load's error: not asked of
            // retrykit-core too, which would warn about it a second time.
            strict: match strict {
                Ok(from_env) => from_env.unwrap_or(false) || loader::is_strict(),
                Err(_) => false,
            },
            report_warnings: true,
        }
    }

    /// Strict mode (also `RETRY_STRICT=1`): on install it turns on
    /// retrykit-core's strict mode, so that a call whose policy is missing at
    /// run time ends the process instead of running once; without `init`,
    /// the first lookup's lazy load ends the process when it finds no file,
    /// an invalid one, or a call site it cannot serve. (`init` itself always
    /// fails on those.)
    ///
    /// ```
    /// let _ = retrykit_config::Setup::new("retry.toml").strict(true);
    /// ```
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether [`install`](Setup::install) prints the configuration's
    /// warnings to stderr (the default), as `retry-policy check` shows them.
    ///
    /// ```
    /// let _ = retrykit_config::Setup::new("retry.toml").report_warnings(false);
    /// ```
    pub fn report_warnings(mut self, report: bool) -> Self {
        self.report_warnings = report;
        self
    }

    /// Replaces the load options (profile, environment, strictness).
    ///
    /// ```
    /// let _ = retrykit_config::Setup::new("r.toml").options(retrykit_config::Options::new().deny_warnings(true));
    /// ```
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The file it reads.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Setup::new("a.toml").path(), std::path::Path::new("a.toml"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads and validates, without installing. The error classes the
    /// program's `#[derive(Classify)]` types declare are the known classes
    /// `retry_on` is checked against, unless the options name them.
    ///
    /// # Errors
    ///
    /// Every problem found, as [`Diagnostics`]: the file cannot be read, a
    /// value breaks a rule, a key is unknown, or (with `deny_warnings`) a
    /// warning. Nothing is installed either way.
    ///
    /// ```
    /// assert!(retrykit_config::Setup::new("/no/such/file.toml").load().is_err());
    /// ```
    pub fn load(&self) -> Result<Config, Diagnostics> {
        if let Some(search) = &self.search
            && search.file.is_none()
        {
            return Err(not_found(search));
        }
        // A file found by the walk or the build (not named) gets the hints
        // for a default location; a named one, those for a path given.
        let origin = match self.search.as_ref().map(|s| s.how) {
            Some(How::Nearest | How::BuildTime) => FileOrigin::Default,
            Some(How::Named) => FileOrigin::Env,
            None => FileOrigin::Given,
        };
        let text = read_file(&self.path, origin)?;
        let mut options = self.options.clone();
        if options.known_classes.is_none() {
            // Classes registered by `#[derive(Classify)]` make `retry_on` checkable.
            let declared: Vec<String> = loader::declared_classes()
                .map(|c| c.name.to_owned())
                .collect();
            if !declared.is_empty() {
                options.known_classes = Some(declared);
            }
        }
        Config::load_str(&text, &self.path.display().to_string(), &options)
    }

    /// Loads, validates and checks that every `#[retry(policy = ...)]` call
    /// site names a defined policy; then installs the policies into
    /// retrykit-core's registry and remembers this setup for [`reload`].
    /// On any error nothing is installed and every problem is returned.
    ///
    /// # Errors
    ///
    /// Every problem [`Setup::load`] finds, and each `#[retry]` call site
    /// the file cannot serve: a policy it lacks, an attempt timeout or a
    /// breaker whose error type cannot say so, hedging the site cannot do.
    /// On error the registry is left as it was.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("retry.toml");
    /// std::fs::write(&path, "[policies.doc-setup]\nmax_attempts = 2\ncap = \"1s\"\n").unwrap();
    /// let config = retrykit_config::Setup::new(&path).install().unwrap();
    /// assert!(config.warnings().is_empty());
    /// assert_eq!(retrykit_core::registry::policy("doc-setup").unwrap().max_attempts(), Some(2));
    /// ```
    pub fn install(self) -> Result<Config, Diagnostics> {
        let (config, _) = self.install_inner(CallSites::Required)?;
        if self.report_warnings && !config.warnings().is_empty() {
            eprint!(
                "retrykit-config: {}:\n{}",
                self.path.display(),
                config.warnings().render()
            );
        }
        if self.strict {
            loader::set_strict(true);
        }
        *ACTIVE.lock().unwrap_or_else(PoisonError::into_inner) = Some(self);
        Ok(config)
    }

    /// What the installed policies came from, for the warning a call site
    /// gives when its policy is missing.
    fn origin(&self) -> String {
        let how = match self.search.as_ref().map(|s| s.how) {
            Some(How::Named) => " (named by RETRY_CONFIG)",
            Some(How::Nearest) => " (the nearest retry.toml)",
            Some(How::BuildTime) => " (the file checked at build time)",
            None => "",
        };
        let profile = match &self.options.profile {
            Some(p) => format!(", profile `{p}`"),
            None => String::new(),
        };
        format!("policies loaded from {}{how}{profile}", self.path.display())
    }

    /// Loads and installs; returns the config and the call sites it lacks
    /// (which fail the install when they are `Required`).
    fn install_inner(&self, call_sites: CallSites) -> Result<(Config, Diagnostics), Diagnostics> {
        self.install_withholding(call_sites, Vec::new())
    }

    /// [`install_inner`](Self::install_inner), leaving out the policies
    /// `withheld` (each with why, said at its call sites' first call).
    fn install_withholding(
        &self,
        call_sites: CallSites,
        withheld: Vec<(String, String)>,
    ) -> Result<(Config, Diagnostics), Diagnostics> {
        // Held from read to install, so concurrent reloads (a `reload` call
        // racing the watcher) install in the order they read the file.
        let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        let config = self.load()?;
        if config.policy_names().next().is_none() {
            // An empty file is far more likely a truncated write than a wish
            // to drop every policy at once.
            return Err(std::iter::once(
                Diagnostic::error(
                    "policies",
                    format!("{} defines no policies", self.path.display()),
                )
                .note(
                    "define at least one [policies.NAME] table; the installed policies were kept",
                ),
            )
            .collect());
        }
        let left_out: Vec<String> = withheld.iter().map(|(name, _)| name.clone()).collect();
        let registry = config.registry_without(last.as_deref(), &left_out);
        let missing = call_site_problems(&registry, &config);
        if call_sites == CallSites::Required && missing.has_errors() {
            return Err(missing);
        }
        let registry = Arc::new(registry);
        *last = Some(registry.clone());
        loader::set_origin(self.origin());
        loader::set_withheld(withheld);
        registry::install(Arc::unwrap_or_clone(registry));
        // Never silent: a program injecting chaos says so as it starts.
        if let Some(line) = config.chaos_line() {
            eprintln!("retrykit-config: {}: {line}", self.path.display());
        }
        Ok((config, missing))
    }
}

/// The setup of the last successful install, for [`reload`].
static ACTIVE: Mutex<Option<Setup>> = Mutex::new(None);
/// The registry this crate installed last, whose budgets a reload keeps.
/// (Read here rather than from retrykit-core, whose lookup could start the lazy loader.)
static LAST: Mutex<Option<Arc<Registry>>> = Mutex::new(None);

/// Discovers, loads, validates and installs the configuration (see
/// [`Setup::from_env`] and [`Setup::install`]); returns every problem.
///
/// # Errors
///
/// A bad `RETRY_*` environment value, a file that cannot be found or
/// read, and every problem [`Setup::install`] finds. Nothing is installed
/// then.
///
/// ```no_run
/// match retrykit_config::init() {
///     Ok(config) => eprint!("{}", config.warnings()),
///     Err(problems) => { eprint!("{}", problems.render()); std::process::exit(1) }
/// }
/// ```
pub fn init() -> Result<Config, Diagnostics> {
    Setup::from_env().install()
}

/// Re-reads the file of the last successful install (or discovers one),
/// validates it and swaps the registry atomically. On error the installed
/// policies stay as they were. Budgets with unchanged settings keep their counts.
///
/// # Errors
///
/// Every problem [`Setup::install`] finds in the file as it is now; the
/// policies installed before stay in force.
///
/// ```no_run
/// if let Err(problems) = retrykit_config::reload() {
///     eprintln!("kept the previous retry policies:\n{}", problems.render());
/// }
/// ```
pub fn reload() -> Result<Config, Diagnostics> {
    let setup = ACTIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_else(Setup::from_env);
    setup.install()
}

/// Why a discovery found no file: the file `RETRY_CONFIG` names, read for
/// the reason (missing, a directory, ...) worded as the `retry-policy` tool
/// words it ([`read_file`] with [`FileOrigin::Env`]); else every path tried.
fn not_found(search: &Found) -> Diagnostics {
    if search.how == How::Named
        && let Some(named) = search.searched.first()
        && let Err(diags) = read_file(named, FileOrigin::Env)
    {
        return diags;
    }
    std::iter::once(
        Diagnostic::error(
            "",
            format!(
                "no policy file found (searched {})",
                search.searched_list()
            ),
        )
        .note(
            "create retry.toml in the working directory or one above it, or set RETRY_CONFIG to the file's path",
        ),
    )
    .collect()
}
