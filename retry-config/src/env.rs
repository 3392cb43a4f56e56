//! Overrides from environment variables:
//! `RETRY_POLICY__<NAME>__<KEY>=<value>`, `RETRY_BUDGET__<NAME>__<KEY>=<value>`
//! and `RETRY_BREAKER__<NAME>__<KEY>=<value>`, the name upper-cased with `-`
//! written as `_`. Any other `RETRY_*`
//! variable the project does not read warns (see [`unread`]).

mod unread;

use crate::diagnostic::{Diagnostic, Diagnostics, Source};
use crate::document::{Document, Named};
use crate::layers::{Fields, Layer, Set};
use crate::schema::{self, Cx, Key};
use crate::section::Section;
use retrykit_schema::suggest::did_you_mean;
use std::collections::HashMap;
use std::sync::Arc;
use toml::de::DeValue;

/// What every variable of this project starts with.
const RETRY_PREFIX: &str = "RETRY_";

/// Every `RETRY_*` variable the project reads besides the overrides: the one
/// list of them, so that any other `RETRY_*` variable can be warned about.
pub(crate) const SETTINGS: &[&str] = &[
    "RETRY_CONFIG",  // the file
    "RETRY_PROFILE", // the profile
    "RETRY_STRICT",  // warnings as errors
    "RETRY_CHAOS",   // `off`: every chaos table off
];

/// The variable that turns strict mode on.
pub(crate) const STRICT_VAR: &str = "RETRY_STRICT";
/// The values of [`STRICT_VAR`] that turn strict mode on, and off (any case, trimmed).
const STRICT_ON: [&str; 4] = ["1", "true", "yes", "on"];
const STRICT_OFF: [&str; 4] = ["0", "false", "no", "off"];

/// Strict mode as `RETRY_STRICT` says it (`None`: unset or empty), or an
/// error naming the variable, the values it takes and the fix: a value
/// that is neither on nor off must not quietly mean off.
// A rejected value is the cold path, read once at start-up.
#[allow(clippy::result_large_err)]
pub(crate) fn strict_setting(value: Option<&str>) -> Result<Option<bool>, Diagnostic> {
    let Some(raw) = value else {
        return Ok(None);
    };
    let word = raw.trim().to_ascii_lowercase();
    if word.is_empty() {
        return Ok(None);
    }
    if STRICT_ON.contains(&word.as_str()) {
        return Ok(Some(true));
    }
    if STRICT_OFF.contains(&word.as_str()) {
        return Ok(Some(false));
    }
    let line = format!("{STRICT_VAR}={raw}");
    let source = Arc::new(Source::new("environment", line));
    let at = STRICT_VAR.len() + 1;
    let span = crate::diagnostic::Span::new(source, at..at + raw.len());
    Err(Diagnostic::error(
        STRICT_VAR,
        format!(
            "{STRICT_VAR} is `{}`, which turns strict mode neither on nor off",
            crate::diagnostic::quoted(raw)
        ),
    )
    .at(Some(span), "not a strict-mode setting")
    .note(format!(
        "{STRICT_VAR} takes {} (on) or {} (off), in any case",
        STRICT_ON.join(", "),
        STRICT_OFF.join(", ")
    ))
    .note(format!(
        "set {STRICT_VAR}=1 for strict mode, or unset it (or set {STRICT_VAR}=0) for the default"
    )))
}

/// The environment variables a load reads, injectable so tests never touch
/// the process environment.
///
/// ```
/// use retrykit_config::Env;
/// let env = Env::new().with("RETRY_POLICY__OUTBOX__BASE", "5ms");
/// assert_eq!(env.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: Vec<(String, String)>,
    /// Other `RETRY_*` variables, none of [`SETTINGS`]: likely misspelt overrides.
    unread: Vec<(String, String)>,
    /// `RETRY_STRICT`'s value, checked by every load that reads this
    /// environment (see [`strict_setting`]).
    strict: Option<String>,
    /// `RETRY_CHAOS`'s value (`off` switches every chaos table off).
    chaos: Option<String>,
}

impl Env {
    /// No variables.
    ///
    /// ```
    /// assert!(retrykit_config::Env::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The process's `RETRY_*` variables (see [`with`](Self::with)).
    /// A value that is not valid UTF-8 is kept lossily and then rejected with
    /// a diagnostic naming the variable.
    ///
    /// ```
    /// let _ = retrykit_config::Env::from_process();
    /// ```
    pub fn from_process() -> Self {
        std::env::vars_os()
            .filter_map(|(k, v)| {
                let k = k.into_string().ok()?;
                k.starts_with(RETRY_PREFIX)
                    .then(|| (k, v.to_string_lossy().into_owned()))
            })
            .collect()
    }

    /// Adds a variable. `RETRY_POLICY__*`, `RETRY_BUDGET__*` and
    /// `RETRY_BREAKER__*` are overrides; any other `RETRY_*` variable but `RETRY_CONFIG`,
    /// `RETRY_PROFILE` and `RETRY_STRICT` is kept to be warned about (it is
    /// most likely a misspelt override); other variables are ignored.
    ///
    /// ```
    /// let env = retrykit_config::Env::new().with("RETRY_BUDGET__BROKER__RATIO", "0.2");
    /// assert_eq!(env.len(), 1);
    /// assert_eq!(env.with("HOME", "/root").with("RETRY_PROFILE", "test").len(), 1);
    /// ```
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        if is_override(&name) {
            self.vars.push((name, value.into()));
        } else if name == STRICT_VAR {
            self.strict = Some(value.into());
        } else if name == crate::resolve::chaos_checks::CHAOS_VAR {
            self.chaos = Some(value.into());
        } else if name.starts_with(RETRY_PREFIX) && !SETTINGS.contains(&name.as_str()) {
            self.unread.push((name, value.into()));
        }
        self
    }

    /// How many override variables there are.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Env::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// assert!(retrykit_config::Env::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Whether `RETRY_CHAOS` switches every chaos table off: `off` does;
    /// `on` or empty (or unset) leaves them as the file says; anything
    /// else is an error naming the variable.
    // A rejected value is the cold path, read once at start-up.
    #[allow(clippy::result_large_err)]
    pub(crate) fn chaos_off(&self) -> Result<bool, Diagnostic> {
        let var = crate::resolve::chaos_checks::CHAOS_VAR;
        match self.chaos.as_deref().map(str::trim) {
            None | Some("" | "on") => Ok(false),
            Some("off") => Ok(true),
            Some(other) => Err(Diagnostic::error(
                var,
                format!(
                    "{var} must be `off` or `on`, found `{}`",
                    crate::diagnostic::shown(other)
                ),
            )
            .note(format!(
                "{var}=off switches every policy's chaos off at start-up; unset or `on`, the file decides"
            ))),
        }
    }

    /// The value of override `name`, if set.
    pub(crate) fn value(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Strict mode as this environment's `RETRY_STRICT` says it (`None`:
    /// unset or empty), or the error a value that is neither on nor off gets.
    // A rejected value is the cold path, read once at start-up.
    #[allow(clippy::result_large_err)]
    pub(crate) fn strict(&self) -> Result<Option<bool>, Diagnostic> {
        strict_setting(self.strict.as_deref())
    }

    /// This environment without `RETRY_STRICT`.
    pub(crate) fn without_strict(&self) -> Env {
        Env {
            strict: None,
            ..self.clone()
        }
    }

    /// These overrides without `names`.
    pub(crate) fn without(&self, names: &[&str]) -> Env {
        let mut env = self.clone();
        env.vars.retain(|(k, _)| !names.contains(&k.as_str()));
        env
    }
}

/// For an override variable, the kind of table it sets and the name part
/// (`RETRY_POLICY__OUTBOX_FAST__BASE`: a policy, `OUTBOX_FAST`).
pub(crate) fn override_target(var: &str) -> Option<(Section, &str)> {
    let section = override_section(var)?;
    let rest = var.strip_prefix(section.env_prefix())?;
    Some((
        section,
        rest.split_once("__").map_or(rest, |(name, _)| name),
    ))
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        iter.into_iter()
            .fold(Env::new(), |env, (k, v)| env.with(k, v))
    }
}

fn is_override(name: &str) -> bool {
    override_section(name).is_some()
}

/// The kind of table the override variable `name` addresses.
fn override_section(name: &str) -> Option<Section> {
    Section::ALL
        .into_iter()
        .find(|s| name.starts_with(s.env_prefix()))
}

/// A policy or budget name as it appears in a variable name.
pub(crate) fn env_name(name: &str) -> String {
    name.to_ascii_uppercase().replace('-', "_")
}

/// Why no variable can address the table `name` of `section`, and a name
/// that would work; `None` when one can. `__` ends the name in a variable,
/// so the name's own form may not contain it, nor end in `_` (which joins
/// the `__` after it).
pub(crate) fn unaddressable(name: &str, section: Section) -> Option<(String, String)> {
    let upper = env_name(name);
    if !upper.contains("__") && !upper.ends_with('_') {
        return None;
    }
    let (prefix, what) = (section.env_prefix(), section.what());
    let key = section.example_key().name().to_ascii_uppercase();
    let var = format!("{prefix}{upper}__{key}");
    let (read_name, read_key) = var[prefix.len()..].split_once("__").unwrap_or_default();
    let reason = format!(
        "{var} would read as {what} `{read_name}` with key `{read_key}`: `__` separates the name from the key"
    );
    let mut fixed = String::with_capacity(name.len());
    for c in name.chars() {
        let separator = c == '-' || c == '_';
        if !(separator && fixed.ends_with(['-', '_'])) {
            fixed.push(c);
        }
    }
    let fixed = fixed.trim_end_matches(['-', '_']).to_owned();
    Some((reason, fixed))
}

/// The overlays the environment applies, by policy, budget and breaker name.
#[derive(Debug, Default)]
pub(crate) struct EnvOverlays {
    pub policies: HashMap<String, Fields>,
    pub budgets: HashMap<String, Fields>,
    pub breakers: HashMap<String, Fields>,
    pub limits: HashMap<String, Fields>,
}

impl EnvOverlays {
    fn of(&mut self, section: Section) -> &mut HashMap<String, Fields> {
        match section {
            Section::Policy => &mut self.policies,
            Section::Budget => &mut self.budgets,
            Section::Breaker => &mut self.breakers,
            Section::Limit => &mut self.limits,
        }
    }
}

/// Reads every override variable against the document's names (and
/// `retry_on` against `known_classes`); each problem names the variable.
pub(crate) fn overlays(
    env: &Env,
    doc: &Document,
    known_classes: Option<&[String]>,
    diags: &mut Diagnostics,
) -> EnvOverlays {
    let mut out = EnvOverlays::default();
    let mut vars = env.vars.clone();
    vars.sort();
    for (var, value) in &vars {
        let Some(section) = override_section(var) else {
            continue; // only overrides are kept in `vars`
        };
        let (prefix, targets, keys, what) = (
            section.env_prefix(),
            doc.tables(section),
            section.keys(),
            section.what(),
        );
        let line = format!("{var}={value}");
        let source = Arc::new(Source::new("environment", line));
        let whole = crate::diagnostic::Span::new(source.clone(), 0..var.len());
        let rest = &var[prefix.len()..];
        let Some((name_part, key_part)) = rest.split_once("__") else {
            diags.push(
                Diagnostic::error(
                    var.as_str(),
                    format!("environment variable {var} names no key"),
                )
                .at(Some(whole), "expected NAME__KEY after the prefix")
                .note(format!(
                    "write it as: {prefix}<NAME>__<KEY>=<value>, e.g. {prefix}OUTBOX__BASE=250ms"
                )),
            );
            continue;
        };
        let Some(target) = targets.iter().find(|t| env_name(&t.name) == name_part) else {
            let names = targets
                .iter()
                .map(|t| env_name(&t.name))
                .collect::<Vec<_>>();
            let start = prefix.len();
            diags.push(
                Diagnostic::error(var.as_str(), format!("environment variable {var} names no {what} defined in the file"))
                    .at(
                        Some(crate::diagnostic::Span::new(source.clone(), start..start + name_part.len())),
                        format!("no {what} maps to `{name_part}`"),
                    )
                    .suggest(did_you_mean(name_part, names.iter().map(String::as_str)))
                    .note(format!("{what} names are upper-cased with `-` written as `_` (`outbox-fast` is OUTBOX_FAST)")),
            );
            continue;
        };
        let key_start = prefix.len() + name_part.len() + 2;
        let key_span = crate::diagnostic::Span::new(source.clone(), key_start..var.len());
        let Some(key) = Key::find(keys, &key_part.to_ascii_lowercase()) else {
            let upper: Vec<String> = keys.iter().map(|k| k.name().to_ascii_uppercase()).collect();
            diags.push(
                Diagnostic::error(
                    var.as_str(),
                    format!("environment variable {var} names unknown {what} key `{key_part}`"),
                )
                .at(Some(key_span), "unknown key")
                .suggest(did_you_mean(key_part, upper.iter().map(String::as_str)))
                .note(format!("expected one of: {}", upper.join(", "))),
            );
            continue;
        };
        let offset = var.len() + 1;
        let parsed = parse_env_value(value);
        let cx = Cx {
            source: &source,
            offset,
            key_path: var,
            env_var: Some(var),
            known_classes,
        };
        if let Some(v) = schema::read(key, &parsed, &cx, diags) {
            out.of(section).entry(target.name.clone()).or_default().set(
                key,
                Set {
                    value: v,
                    span: Some(cx.span(0..value.len())),
                    layer: Layer::Env(var.clone()),
                },
            );
        }
    }
    unread::warn(&env.unread, doc, diags);
    // A value that is neither on nor off must not quietly mean off, on any
    // entry point that reads the environment.
    if let Err(problem) = env.strict() {
        diags.push(problem);
    }
    out
}

/// A variable's value read as TOML when it is a number, boolean, array or
/// inline table, and as a plain string otherwise (`250ms`, `full`).
fn parse_env_value(raw: &str) -> toml::Spanned<DeValue<'_>> {
    let whole = toml::Spanned::new(0..raw.len(), DeValue::String(raw.into()));
    let trimmed = raw.trim_start();
    let looks_structured = trimmed.starts_with(['[', '{']);
    match DeValue::parse(raw) {
        Ok(v)
            if looks_structured
                || !matches!(v.get_ref(), DeValue::String(_) | DeValue::Datetime(_)) =>
        {
            v
        }
        _ => whole,
    }
}

/// The env-variable names of `named` that collide (`a-b` and `a_b`).
pub(crate) fn collisions(named: &[Named]) -> Vec<(&Named, &Named)> {
    let mut seen: HashMap<String, &Named> = HashMap::new();
    let mut out = Vec::new();
    for n in named {
        if let Some(first) = seen.get(&env_name(&n.name)) {
            out.push((*first, n));
        } else {
            seen.insert(env_name(&n.name), n);
        }
    }
    out
}
