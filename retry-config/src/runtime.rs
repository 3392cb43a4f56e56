//! Installing a configuration into retry-core's process-wide registry:
//! discovery, `init`, `reload`, the opt-in file watcher, and the lazy loader
//! the registry runs on its first lookup when `init` was never called.

use crate::config::{Config, Options};
use crate::diagnostic::{Diagnostic, Diagnostics, did_you_mean};
use crate::env::Env;
use crate::read::{FileOrigin, read_file};
use retry_core::Registry;
use retry_core::registry::{self, LazyLoader};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// The file `init` reads when `RETRY_CONFIG` is not set.
///
/// ```
/// assert_eq!(retry_config::DEFAULT_FILE, "retry.toml");
/// ```
pub const DEFAULT_FILE: &str = "retry.toml";

/// Where the configuration comes from and how to read it; `init` is
/// `Setup::from_env().install()`.
///
/// ```
/// use retry_config::{Options, Setup};
/// let setup = Setup::new("retry.toml").options(Options::new().profile("test"));
/// assert_eq!(setup.path(), std::path::Path::new("retry.toml"));
/// ```
#[derive(Debug, Clone)]
pub struct Setup {
    path: PathBuf,
    options: Options,
    /// Whether the path was found by discovery (`retry.toml`) rather than named.
    discovered: bool,
}

impl Setup {
    /// Reads the file at `path`, with the base settings and no environment.
    ///
    /// ```
    /// let _ = retry_config::Setup::new("config/retry.toml");
    /// ```
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Setup {
            path: path.into(),
            options: Options::default(),
            discovered: false,
        }
    }

    /// Discovery: the file named by `RETRY_CONFIG`, else `retry.toml` in the
    /// working directory; the profile named by `RETRY_PROFILE`; overrides from
    /// `RETRY_POLICY__*` / `RETRY_BUDGET__*`.
    ///
    /// ```
    /// let setup = retry_config::Setup::from_env();
    /// assert!(!setup.path().as_os_str().is_empty());
    /// ```
    pub fn from_env() -> Self {
        let named = std::env::var_os("RETRY_CONFIG").filter(|p| !p.is_empty());
        let discovered = named.is_none();
        let path = named.map_or_else(|| PathBuf::from(DEFAULT_FILE), PathBuf::from);
        let mut options = Options::new().env(Env::from_process());
        if let Some(p) = std::env::var("RETRY_PROFILE")
            .ok()
            .filter(|p| !p.is_empty())
        {
            options = options.profile(p);
        }
        Setup {
            path,
            options,
            discovered,
        }
    }

    /// Replaces the load options (profile, environment, strictness).
    ///
    /// ```
    /// let _ = retry_config::Setup::new("r.toml").options(retry_config::Options::new().deny_warnings(true));
    /// ```
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The file it reads.
    ///
    /// ```
    /// assert_eq!(retry_config::Setup::new("a.toml").path(), std::path::Path::new("a.toml"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Loads and validates, without installing. Error classes registered as
    /// [`registry::DeclaredClass`] are the known classes `retry_on` is checked
    /// against, unless the options name them.
    ///
    /// ```
    /// assert!(retry_config::Setup::new("/no/such/file.toml").load().is_err());
    /// ```
    pub fn load(&self) -> Result<Config, Diagnostics> {
        let origin = if self.discovered {
            FileOrigin::Default
        } else {
            FileOrigin::Given
        };
        let text = read_file(&self.path, origin)?;
        let mut options = self.options.clone();
        if options.known_classes.is_none() {
            // Classes registered by `#[derive(Classify)]` make `retry_on` checkable.
            let declared: Vec<String> = registry::declared_classes()
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
    /// retry-core's registry and remembers this setup for [`reload`].
    /// On any error nothing is installed and every problem is returned.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("retry.toml");
    /// std::fs::write(&path, "[policies.doc-setup]\nmax_attempts = 2\ncap = \"1s\"\n").unwrap();
    /// let config = retry_config::Setup::new(&path).install().unwrap();
    /// assert!(config.warnings().is_empty());
    /// assert_eq!(retry_core::registry::policy("doc-setup").unwrap().max_attempts(), Some(2));
    /// ```
    pub fn install(self) -> Result<Config, Diagnostics> {
        let (config, _) = self.install_inner(CallSites::Required)?;
        *ACTIVE.lock().unwrap_or_else(PoisonError::into_inner) = Some(self);
        Ok(config)
    }

    /// Loads and installs; returns the config and the call sites it lacks
    /// (which fail the install when they are `Required`).
    fn install_inner(&self, call_sites: CallSites) -> Result<(Config, Diagnostics), Diagnostics> {
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
        let registry = config.registry(last.as_deref());
        let missing = missing_call_sites(&registry, &config);
        if call_sites == CallSites::Required && missing.has_errors() {
            return Err(missing);
        }
        let registry = Arc::new(registry);
        *last = Some(registry.clone());
        registry::install(Arc::unwrap_or_clone(registry));
        Ok((config, missing))
    }

    /// Watches the file: every `interval` it is re-read and, when its bytes
    /// changed and then held still for one more interval, validated and
    /// installed atomically. A bad file keeps the last
    /// good policies; `on_change` receives every outcome.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// let watcher = retry_config::Setup::from_env().watch(Duration::from_secs(2), |outcome| {
    ///     if let Err(diags) = outcome { eprintln!("retry.toml rejected:\n{}", diags.render()); }
    /// });
    /// drop(watcher); // stops watching
    /// ```
    pub fn watch<F>(self, interval: Duration, on_change: F) -> Watcher
    where
        F: Fn(Result<&Config, &Diagnostics>) + Send + 'static,
    {
        let (stop, stopped) = mpsc::channel::<()>();
        // Read before the thread starts, so a change made right after `watch`
        // returns is seen as a change.
        let mut applied = std::fs::read(&self.path).ok();
        let handle = thread::Builder::new()
            .name("retry-config-watch".into())
            .spawn(move || {
                let mut pending = None;
                loop {
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    let now = std::fs::read(&self.path).ok();
                    if now == applied {
                        pending = None;
                        continue;
                    }
                    // An editor writing in place passes through partial
                    // contents: act only on bytes that held still for one interval.
                    if pending.as_ref() != Some(&now) {
                        pending = Some(now);
                        continue;
                    }
                    applied = pending.take().flatten();
                    match self.install_inner(CallSites::Required) {
                        Ok((config, _)) => on_change(Ok(&config)),
                        Err(diags) => on_change(Err(&diags)),
                    }
                }
            })
            .ok();
        Watcher {
            stop: Some(stop),
            handle,
        }
    }
}

/// A running file watcher; dropping it stops the watch.
///
/// ```no_run
/// let w = retry_config::Setup::new("retry.toml").watch(std::time::Duration::from_secs(1), |_| {});
/// w.stop();
/// ```
#[derive(Debug)]
pub struct Watcher {
    stop: Option<mpsc::Sender<()>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Watcher {
    /// Stops watching and waits for the watch thread to end.
    ///
    /// ```no_run
    /// retry_config::Setup::new("retry.toml").watch(std::time::Duration::from_secs(1), |_| {}).stop();
    /// ```
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The setup of the last successful install, for [`reload`].
static ACTIVE: Mutex<Option<Setup>> = Mutex::new(None);
/// The registry this crate installed last, whose budgets a reload keeps.
/// (Read here rather than from retry-core, whose lookup could start the lazy loader.)
static LAST: Mutex<Option<Arc<Registry>>> = Mutex::new(None);

/// Discovers, loads, validates and installs the configuration (see
/// [`Setup::from_env`] and [`Setup::install`]); returns every problem.
///
/// ```no_run
/// match retry_config::init() {
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
/// ```no_run
/// if let Err(problems) = retry_config::reload() {
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

/// Call sites whose policy the configuration lacks, as errors.
fn missing_call_sites(registry: &Registry, config: &Config) -> Diagnostics {
    registry::missing_policies(registry)
        .into_iter()
        .map(|site| {
            Diagnostic::error(
                format!("policies.{}", site.policy),
                format!(
                    "`{}` at {}:{} uses policy `{}`, which {} does not define",
                    site.function,
                    site.file,
                    site.line,
                    site.policy,
                    config.source().name()
                ),
            )
            .suggest(did_you_mean(site.policy, config.policy_names()))
            .note(format!("add a [policies.{}] table", site.policy))
        })
        .collect()
}

/// Whether every call site's policy must be defined for an install to go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallSites {
    /// `init`, `reload` and the watcher: a missing name fails the install.
    Required,
    /// The lazy loader: nobody can act on an error there, so the valid file is
    /// installed and the sites it lacks run once, without retry (retry-core's
    /// fallback), with the problem on stderr.
    Reported,
}

/// Run by retry-core on the first lookup when nothing was installed: loads
/// the discovered file if there is one, and reports problems on stderr.
fn lazy_load() {
    let setup = Setup::from_env();
    if setup.discovered && !setup.path.exists() {
        return; // no configuration at all is not an error here
    }
    let path = setup.path.display().to_string();
    match setup.install_inner(CallSites::Reported) {
        Ok((config, missing)) => {
            let mut problems = config.warnings().clone();
            for d in &missing {
                problems.push(
                    d.clone()
                        .note("until it is defined, that call runs once, without retry"),
                );
            }
            if !problems.is_empty() {
                eprint!("retry-config: {path}:\n{}", problems.render());
            }
            *ACTIVE.lock().unwrap_or_else(PoisonError::into_inner) = Some(setup);
        }
        Err(problems) => eprint!(
            "retry-config: {path} was not installed:\n{}",
            problems.render()
        ),
    }
}

retry_core::inventory::submit! {
    LazyLoader { name: "retry-config", load: lazy_load }
}
