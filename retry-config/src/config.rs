//! A loaded, validated configuration and the options that shape a load.

use crate::diagnostic::{Diagnostic, Diagnostics, Source, Span, shown};
use crate::document::{self, Document};
use crate::env::{self, Env};
use crate::layers::Layer;
use crate::lint;
use crate::read::{FileOrigin, read_file};
use crate::resolve::{self, ResolvedBreaker, ResolvedBudget, ResolvedLimit, ResolvedPolicy};
use crate::schema::{BUDGET_KEYS, Key, POLICY_KEYS, engine};
use retrykit_core::{Policy, RetryBudget};
use retrykit_schema::suggest::did_you_mean;
use std::path::Path;
use std::sync::Arc;

mod breakers;
mod chaos;
mod check;
mod limits_of;
mod registry;

pub use check::{check_file, check_str};

/// What a load reads besides the file: the profile, the environment, and how strict to be.
///
/// ```
/// use retrykit_config::{Env, Options};
/// let opts = Options::new().profile("test").env(Env::new()).deny_warnings(true);
/// assert_eq!(opts.profile.as_deref(), Some("test"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The profile whose overlays apply; `None` for the base file alone.
    pub profile: Option<String>,
    /// The `RETRY_POLICY__*` / `RETRY_BUDGET__*` / `RETRY_BREAKER__*` overrides.
    pub env: Env,
    /// Treat warnings as errors.
    pub deny_warnings: bool,
    /// Error classes the program declares, when known, to check `retry_on`.
    pub known_classes: Option<Vec<String>>,
}

impl Options {
    /// The base file, no environment, warnings allowed.
    ///
    /// ```
    /// assert!(retrykit_config::Options::new().profile.is_none());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Selects a profile. An empty name selects none (the base settings),
    /// as an empty `RETRY_PROFILE` does: the one rule for `--profile ""` too.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Options::new().profile("prod").profile.as_deref(), Some("prod"));
    /// assert_eq!(retrykit_config::Options::new().profile("").profile, None);
    /// ```
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into()).filter(|p| !p.is_empty());
        self
    }

    /// Sets the environment overrides.
    ///
    /// ```
    /// let _ = retrykit_config::Options::new().env(retrykit_config::Env::from_process());
    /// ```
    pub fn env(mut self, env: Env) -> Self {
        self.env = env;
        self
    }

    /// Makes warnings errors.
    ///
    /// ```
    /// assert!(retrykit_config::Options::new().deny_warnings(true).deny_warnings);
    /// ```
    pub fn deny_warnings(mut self, deny: bool) -> Self {
        self.deny_warnings = deny;
        self
    }

    /// Declares the error classes the program can produce (besides transient,
    /// throttled and timeout): `retry_on` naming a near miss of one (another
    /// case, one typo) is then an error, and naming any other class warns.
    ///
    /// ```
    /// let _ = retrykit_config::Options::new().known_classes(["conflict"]);
    /// ```
    pub fn known_classes<I, S>(mut self, classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.known_classes = Some(classes.into_iter().map(Into::into).collect());
        self
    }
}

/// One setting of a policy as `explain` shows it: the effective value and
/// the layer (and text) it came from.
///
/// ```
/// let cfg = retrykit_config::Config::load_str("[policies.a]\nbase = \"5ms\"\n", "f.toml", &Default::default()).unwrap();
/// let base = cfg.explain("a").unwrap().into_iter().find(|f| f.key == "base").unwrap();
/// assert_eq!((base.value.as_str(), base.layer), ("5ms", retrykit_config::Layer::File));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    /// The key, as written in files.
    pub key: &'static str,
    /// The effective value, as it would be written.
    pub value: String,
    /// Where it came from.
    pub layer: Layer,
    /// The text that set it (`None` for built-in defaults).
    pub span: Option<Span>,
}

/// A loaded configuration: every policy, budget, circuit breaker and
/// concurrency limit validated, plus the warnings found along the way.
///
/// ```
/// use retrykit_config::{Config, Options};
/// let text = r#"
/// [policies.outbox]
/// base = "100ms"
/// cap = "30s"
/// max_attempts = 8
///
/// [profiles.test.policies.outbox]
/// base = "1ms"
/// cap = "5ms"
/// "#;
/// let cfg = Config::load_str(text, "retry.toml", &Options::new().profile("test")).unwrap();
/// let outbox = cfg.policy("outbox").unwrap();
/// assert_eq!(outbox.base(), std::time::Duration::from_millis(1));
/// assert_eq!(outbox.max_attempts(), Some(8));
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    source: Arc<Source>,
    profile: Option<String>,
    policies: Vec<ResolvedPolicy>,
    budgets: Vec<ResolvedBudget>,
    breakers: Vec<ResolvedBreaker>,
    limits: Vec<ResolvedLimit>,
    profiles: Vec<String>,
    warnings: Diagnostics,
    /// `RETRY_CHAOS=off` switched every chaos table off.
    chaos_off: bool,
}

impl Config {
    /// Loads `text` (named `name` in diagnostics). Returns every error and
    /// warning in one pass when anything is wrong.
    ///
    /// # Errors
    ///
    /// Every error in `text` (with `deny_warnings`, every warning too), each
    /// at its file:line:col with the rule broken and the fix.
    ///
    /// ```
    /// let err = retrykit_config::Config::load_str("[policies.a]\nbase = 100\n", "f.toml", &Default::default())
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("f.toml:2:8"));
    /// ```
    pub fn load_str(text: &str, name: &str, options: &Options) -> Result<Config, Diagnostics> {
        let source = Arc::new(Source::new(name, text));
        let mut diags = Diagnostics::new();
        let doc = document::parse(&source, options.known_classes.as_deref(), &mut diags);
        resolve::check_structure(&doc, &mut diags);
        let config = load_profile(&source, &doc, options, &mut diags);
        finish(diags, options, config)
    }

    /// Reads and loads the file at `path`.
    ///
    /// # Errors
    ///
    /// What [`read_file`](crate::read_file) and [`Config::load_str`] return.
    ///
    /// ```
    /// let err = retrykit_config::Config::load_file("/no/such/retry.toml", &Default::default()).unwrap_err();
    /// assert!(err.to_string().contains("cannot read"));
    /// ```
    pub fn load_file(path: impl AsRef<Path>, options: &Options) -> Result<Config, Diagnostics> {
        let path = path.as_ref();
        let text = read_file(path, FileOrigin::Given)?;
        Config::load_str(&text, &path.display().to_string(), options)
    }

    /// The policy named `name` (validated, with its budget attached).
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[policies.db]\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.policy("db").unwrap().name(), Some("db"));
    /// assert!(cfg.policy("nope").is_none());
    /// ```
    pub fn policy(&self, name: &str) -> Option<&Arc<Policy>> {
        self.policies
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.policy)
    }

    /// Every policy name, in file order.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[policies.b]\n[policies.a]\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.policy_names().collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn policy_names(&self) -> impl Iterator<Item = &str> {
        self.policies.iter().map(|p| p.name.as_str())
    }

    /// The budget named `name`.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[budgets.b]\nratio = 0.2\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.budget("b").unwrap().ratio(), 0.2);
    /// ```
    pub fn budget(&self, name: &str) -> Option<&Arc<RetryBudget>> {
        self.budgets
            .iter()
            .find(|b| b.name == name)
            .map(|b| &b.budget)
    }

    /// Every budget name, in file order.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[budgets.b]\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.budget_names().collect::<Vec<_>>(), ["b"]);
    /// ```
    pub fn budget_names(&self) -> impl Iterator<Item = &str> {
        self.budgets.iter().map(|b| b.name.as_str())
    }

    /// The policies `name` extends, nearest first.
    ///
    /// ```
    /// let text = "[policies.a]\n[policies.b]\nextends = \"a\"\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.extends("b").unwrap(), ["a"]);
    /// ```
    pub fn extends(&self, name: &str) -> Option<Vec<&str>> {
        // Collected on request: policies share their ancestors' lists.
        self.policies
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.extends.names().collect())
    }

    /// Every setting of policy `name`: its effective value and the layer it came from.
    ///
    /// ```
    /// use retrykit_config::{Config, Env, Layer, Options};
    /// let env = Env::new().with("RETRY_POLICY__DB__MAX_ATTEMPTS", "2");
    /// let cfg = Config::load_str("[policies.db]\n", "f", &Options::new().env(env)).unwrap();
    /// let fields = cfg.explain("db").unwrap();
    /// let max = fields.iter().find(|f| f.key == "max_attempts").unwrap();
    /// assert_eq!(max.layer, Layer::Env("RETRY_POLICY__DB__MAX_ATTEMPTS".into()));
    /// let cap = fields.iter().find(|f| f.key == "cap").unwrap();
    /// assert_eq!(cap.layer, Layer::Builtin);
    /// ```
    pub fn explain(&self, name: &str) -> Option<Vec<Explained>> {
        let p = self.policies.iter().find(|p| p.name == name)?;
        let mut all = explained(POLICY_KEYS, &p.fields, |key| {
            match (key, p.fields.get(key)) {
                (Key::Budget | Key::Breaker | Key::Limit, Some(s)) => s.value.to_string(),
                (Key::Budget | Key::Breaker | Key::Limit, None) => "none".to_owned(),
                _ => engine::effective(&p.policy, key),
            }
        });
        // A policy's chaos keys, when some layer sets one (`chaos.KEY`).
        if engine::chaos_set(&p.fields) {
            all.extend(chaos::explained(&p.fields, &p.policy, self.chaos_off));
        }
        Some(all)
    }

    /// Every setting of budget `name`, like [`explain`](Self::explain)
    /// (a key its mode does not use says so).
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[budgets.b]\nratio = 0.2\n", "f", &Default::default()).unwrap();
    /// let explained = cfg.explain_budget("b").unwrap();
    /// assert_eq!(explained.iter().find(|e| e.key == "ratio").unwrap().value, "0.2");
    /// ```
    pub fn explain_budget(&self, name: &str) -> Option<Vec<Explained>> {
        let b = self.budgets.iter().find(|b| b.name == name)?;
        Some(explained(BUDGET_KEYS, &b.fields, |key| {
            if key.applies_to_mode(b.budget.mode().as_str()) {
                engine::effective_budget(&b.budget, key)
            } else {
                format!("- (unused by {} budgets)", b.budget.mode())
            }
        }))
    }

    /// The selected profile.
    ///
    /// ```
    /// let text = "[policies.a]\n[profiles.ci]\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &retrykit_config::Options::new().profile("ci")).unwrap();
    /// assert_eq!(cfg.profile(), Some("ci"));
    /// ```
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Every profile the file defines.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[profiles.ci]\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.profiles().collect::<Vec<_>>(), ["ci"]);
    /// ```
    pub fn profiles(&self) -> impl Iterator<Item = &str> {
        self.profiles.iter().map(String::as_str)
    }

    /// The text it was loaded from.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("", "empty.toml", &Default::default()).unwrap();
    /// assert_eq!(cfg.source().name(), "empty.toml");
    /// ```
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The warnings found (empty under `deny_warnings`, which fails the load instead).
    ///
    /// ```
    /// let text = "[policies.a]\ncap = \"5s\"\njitter = \"none\"\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.warnings().len(), 1);
    /// assert!(cfg.warnings().to_string().contains("no jitter"));
    /// ```
    pub fn warnings(&self) -> &Diagnostics {
        &self.warnings
    }
}

/// Each of `keys` as `explain` shows it: `value(key)`, and the layer and
/// text `fields` say it came from (built-in when no layer set it).
fn explained(
    keys: &[Key],
    fields: &crate::layers::Fields,
    value: impl Fn(Key) -> String,
) -> Vec<Explained> {
    keys.iter()
        .map(|&key| {
            let set = fields.get(key);
            Explained {
                key: key.name(),
                value: value(key),
                layer: set.map_or(Layer::Builtin, |s| s.layer.clone()),
                span: set.and_then(|s| s.span.clone()),
            }
        })
        .collect()
}

fn load_profile(
    source: &Arc<Source>,
    doc: &Document,
    options: &Options,
    diags: &mut Diagnostics,
) -> Option<Config> {
    if let Some(p) = &options.profile
        && doc.profile(p).is_none()
        && p.trim() != p
    {
        let trimmed = p.trim();
        diags.push(
            Diagnostic::error(
                "profile",
                format!(
                    "the profile name `{}` has leading or trailing whitespace",
                    shown(p)
                ),
            )
            .suggest((!trimmed.is_empty()).then(|| trimmed.to_owned()))
            .note("profile names are TOML keys, matched exactly")
            .note(format!(
                "select the profile without the whitespace (e.g. RETRY_PROFILE={})",
                shown(trimmed)
            )),
        );
        return None;
    }
    if let Some(p) = &options.profile
        && doc.profile(p).is_none()
    {
        let defined: Vec<&str> = doc.profiles.iter().map(|p| p.name.as_str()).collect();
        let listed = if defined.is_empty() {
            "none".to_owned()
        } else {
            defined.join(", ")
        };
        diags.push(
            Diagnostic::error(
                "profile",
                format!("profile `{p}` is not defined in {}", source.name()),
            )
            .suggest(did_you_mean(p, defined.iter().copied()))
            .note(format!("defined profiles: {listed}"))
            .note(format!(
                "to use the base settings as they are, add an empty [profiles.{p}] table"
            )),
        );
        return None;
    }
    // Warnings about a file with structural errors would judge values that
    // were dropped; they wait until the errors are fixed.
    let structurally_sound = !diags.has_errors();
    let before = diags.errors().count();
    let env = env::overlays(&options.env, doc, options.known_classes.as_deref(), diags);
    let chaos_off = options.env.chaos_off().unwrap_or_else(|d| {
        diags.push(d);
        false
    });
    let resolved = resolve::resolve(doc, options.profile.as_deref(), (&env, chaos_off), diags);
    if structurally_sound {
        lint::lint_policies(&resolved.policies, diags);
    }
    if !structurally_sound || diags.errors().count() > before {
        return None;
    }
    lint::lint_budgets(&resolved.budgets, &resolved.policies, diags);
    lint::lint_limits(&resolved.limits, &resolved.policies, diags);
    lint::lint_breakers(
        &resolved.breakers,
        &resolved.policies,
        options.known_classes.as_deref(),
        diags,
    );
    Some(Config {
        source: source.clone(),
        profile: options.profile.clone(),
        policies: resolved.policies,
        budgets: resolved.budgets,
        breakers: resolved.breakers,
        limits: resolved.limits,
        profiles: doc.profiles.iter().map(|p| p.name.clone()).collect(),
        warnings: Diagnostics::new(),
        chaos_off,
    })
}

fn finish(
    mut diags: Diagnostics,
    options: &Options,
    config: Option<Config>,
) -> Result<Config, Diagnostics> {
    if options.deny_warnings {
        diags.deny_warnings();
    }
    diags.sort_and_dedup();
    match config {
        Some(mut config) if !diags.has_errors() => {
            config.warnings = diags;
            Ok(config)
        }
        _ => Err(diags),
    }
}
