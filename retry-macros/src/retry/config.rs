//! The compile-time check of policy names against the crate's retry.toml.
//!
//! The file is found by retry-schema's one discovery rule (shared with the
//! run time): `RETRY_CONFIG` (relative to the crate, then to the workspace
//! root), else the nearest `retry.toml` walking up from the crate's
//! directory. Its absolute path is compiled into each call site, where the
//! run time looks last. Without a file, nothing is checked here; the
//! run-time checks still are. A file that appears later is not noticed until
//! something else triggers a rebuild (a compiler can only track files that exist).

use crate::suggest::hint;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;
use syn::LitStr;

/// The config file a build checks against, and what it says.
pub struct ConfigFile {
    pub path: PathBuf,
    policies: Result<Policies, String>,
}

/// What the checks need from the file: the policy names, and for each the
/// `retry_on` lists it may end up with (its own, or inherited through
/// `extends` or `[defaults]`, in the base file or any profile).
#[derive(Clone, Default)]
struct Policies {
    names: Vec<String>,
    extends: HashMap<String, String>,
    own_retry_on: HashMap<String, Vec<Vec<String>>>,
    default_retry_on: Vec<Vec<String>>,
    /// Where each policy's own table sets `attempt_timeout` (not `"none"`),
    /// in the base file or a profile: `policies.NAME` or `profiles.P.policies.NAME`.
    own_timeout: HashMap<String, String>,
    /// Where `[defaults]` sets `attempt_timeout`, in the base file or a profile.
    default_timeout: Option<String>,
}

/// The file for the crate being compiled, if there is one (see the module doc).
pub fn find() -> Option<ConfigFile> {
    use retry_schema::discover::{CONFIG_VAR, Discovery};
    let mut search = Discovery::new().named(std::env::var_os(CONFIG_VAR));
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        search = search.start(PathBuf::from(dir));
    }
    // Cargo runs the compiler in the workspace root.
    if let Ok(dir) = std::env::current_dir() {
        search = search.also_relative_to(dir);
    }
    let path = search.run().file?;
    let path = path.canonicalize().unwrap_or(path);
    let policies = read_cached(&path);
    Some(ConfigFile { path, policies })
}

impl ConfigFile {
    /// An error on `name` when the file does not define it.
    pub fn check(&self, name: &LitStr) -> Option<syn::Error> {
        let shown = self.path.display();
        match self.policies.as_ref().map(|p| &p.names) {
            // One error for a broken file, not one per call site.
            Err(_) if !first_report(&self.path) => None,
            Err(problem) => Some(syn::Error::new(
                name.span(),
                format!(
                    "cannot check policy `{}`: {shown} is not valid TOML ({problem}); fix the file (`retry-policy check` shows every problem)",
                    name.value()
                ),
            )),
            Ok(names) if names.iter().any(|n| *n == name.value()) => None,
            Ok(names) => {
                let known = if names.is_empty() {
                    "it defines no policies".to_owned()
                } else {
                    format!("it defines {}", quoted_list(names))
                };
                Some(syn::Error::new(
                    name.span(),
                    format!(
                        "unknown policy `{}`{}\n{shown} has no `[policies.{}]` ({known}); fix: use one of those names or add the policy to the file",
                        name.value(),
                        hint(&name.value(), names.iter().map(String::as_str)),
                        name.value()
                    ),
                ))
            }
        }
    }
}

impl ConfigFile {
    /// A `retry_on` list the policy may use that leaves out `transient`: an
    /// error type without `Classify` (every error transient) would then never
    /// be retried.
    pub fn retry_on_without_transient(&self, name: &str) -> Option<Vec<String>> {
        let policies = self.policies.as_ref().ok()?;
        let mut current = name.to_owned();
        let mut seen = Vec::new();
        let lists = loop {
            if let Some(lists) = policies.own_retry_on.get(&current) {
                break lists;
            }
            seen.push(current.clone());
            match policies.extends.get(&current) {
                Some(parent) if !seen.contains(parent) => current = parent.clone(),
                _ => break &policies.default_retry_on,
            }
        };
        lists
            .iter()
            .find(|list| !list.iter().any(|class| class == "transient"))
            .cloned()
    }
}

impl ConfigFile {
    /// Where the policy gets an `attempt_timeout` in any layer (`[defaults]`,
    /// its `extends` chain, any profile), for the check that its error type
    /// can carry one.
    pub fn attempt_timeout_set_at(&self, name: &str) -> Option<String> {
        let policies = self.policies.as_ref().ok()?;
        let mut current = name.to_owned();
        let mut seen = Vec::new();
        loop {
            if let Some(at) = policies.own_timeout.get(&current) {
                return Some(at.clone());
            }
            seen.push(current.clone());
            match policies.extends.get(&current) {
                Some(parent) if !seen.contains(parent) => current = parent.clone(),
                _ => return policies.default_timeout.clone(),
            }
        }
    }
}

/// Whether this compiler process has not yet reported `path` as broken.
fn first_report(path: &Path) -> bool {
    static REPORTED: Mutex<Vec<(PathBuf, Option<SystemTime>)>> = Mutex::new(Vec::new());
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let mut reported = REPORTED.lock().unwrap_or_else(|p| p.into_inner());
    let key = (path.to_owned(), modified);
    if reported.contains(&key) {
        return false;
    }
    reported.push(key);
    true
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

type Cache = HashMap<PathBuf, (Option<SystemTime>, Result<Policies, String>)>;

/// The file's contents, read once per file version per compiler process
/// (every annotated function asks).
fn read_cached(path: &Path) -> Result<Policies, String> {
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((when, policies)) = cache.get(path)
        && *when == modified
        && modified.is_some()
    {
        return policies.clone();
    }
    let policies = read(path);
    cache.insert(path.to_owned(), (modified, policies.clone()));
    policies
}

fn read(path: &Path) -> Result<Policies, String> {
    use toml::de::{DeTable, DeValue};
    fn get<'a, 'i>(table: &'a DeTable<'i>, key: &str) -> Option<&'a DeValue<'i>> {
        table
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v.get_ref())
    }
    fn table<'a, 'i>(value: Option<&'a DeValue<'i>>) -> Option<&'a DeTable<'i>> {
        match value {
            Some(DeValue::Table(t)) => Some(t),
            _ => None,
        }
    }
    fn strings(value: Option<&DeValue<'_>>) -> Option<Vec<String>> {
        match value {
            Some(DeValue::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(|item| match item.get_ref() {
                        DeValue::String(s) => Some(s.to_string()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let root = DeTable::parse(&text).map_err(|e| e.message().to_owned())?;
    let root = root.get_ref();
    let mut out = Policies::default();
    fn sets_timeout(table: &DeTable<'_>) -> bool {
        match get(table, "attempt_timeout") {
            Some(DeValue::String(s)) => s.as_ref() != "none",
            Some(_) => true,
            None => false,
        }
    }
    // The base file first, then each profile's overlay of it.
    let mut layers = vec![(root, String::new())];
    if let Some(profiles) = table(get(root, "profiles")) {
        layers.extend(profiles.iter().filter_map(|(name, p)| match p.get_ref() {
            DeValue::Table(t) => Some((t, format!("profiles.{}.", name.get_ref()))),
            _ => None,
        }));
    }
    for (layer, prefix) in layers {
        let base = prefix.is_empty();
        let defaults = table(get(layer, "defaults"));
        out.default_retry_on
            .extend(strings(defaults.and_then(|d| get(d, "retry_on"))));
        if defaults.is_some_and(sets_timeout) && out.default_timeout.is_none() {
            out.default_timeout = Some(format!("[{prefix}defaults]"));
        }
        let Some(policies) = table(get(layer, "policies")) else {
            continue;
        };
        for (name, policy) in policies.iter() {
            let name = name.get_ref().to_string();
            let DeValue::Table(policy) = policy.get_ref() else {
                continue;
            };
            if base {
                out.names.push(name.clone());
            }
            if let Some(DeValue::String(parent)) = get(policy, "extends") {
                out.extends.insert(name.clone(), parent.to_string());
            }
            if sets_timeout(policy) {
                out.own_timeout
                    .entry(name.clone())
                    .or_insert_with(|| format!("[{prefix}policies.{name}]"));
            }
            if let Some(list) = strings(get(policy, "retry_on")) {
                out.own_retry_on.entry(name).or_default().push(list);
            }
        }
    }
    out.names.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_policy_names_and_ignores_profiles() {
        let dir = std::env::temp_dir().join(format!("retry-macros-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("retry.toml");
        std::fs::write(
            &file,
            "[defaults]\nmax_attempts = 3\n[policies.outbox]\nbase = \"1ms\"\n[policies.db]\n[profiles.test.policies.outbox]\ncap = \"2ms\"\n",
        )
        .unwrap();
        assert_eq!(read(&file).unwrap().names, ["db", "outbox"]);
        std::fs::write(&file, "[policies\n").unwrap();
        assert!(read(&file).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod retry_on_tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        let dir = std::env::temp_dir().join(format!(
            "retry-macros-retry-on-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("retry.toml");
        std::fs::write(&path, text).unwrap();
        let policies = read(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        ConfigFile { path, policies }
    }

    #[test]
    fn finds_retry_on_lists_without_transient_through_every_layer() {
        let config = file(
            "[defaults]\nretry_on = [\"transient\"]\n\
             [policies.a]\nretry_on = [\"throttled\"]\n\
             [policies.b]\nextends = \"a\"\n\
             [policies.c]\n\
             [policies.d]\nretry_on = [\"transient\", \"timeout\"]\n\
             [profiles.prod.policies.d]\nretry_on = [\"timeout\"]\n",
        );
        assert_eq!(
            config.retry_on_without_transient("a"),
            Some(vec!["throttled".to_owned()])
        );
        assert_eq!(
            config.retry_on_without_transient("b"),
            Some(vec!["throttled".to_owned()]),
            "inherited"
        );
        assert_eq!(
            config.retry_on_without_transient("c"),
            None,
            "defaults include transient"
        );
        assert_eq!(
            config.retry_on_without_transient("d"),
            Some(vec!["timeout".to_owned()]),
            "a profile"
        );
    }

    #[test]
    fn finds_attempt_timeout_in_every_layer() {
        let config = file(
            "[policies.a]\nattempt_timeout = \"1s\"\n\
             [policies.b]\nextends = \"a\"\n\
             [policies.c]\n\
             [policies.d]\nattempt_timeout = \"none\"\n\
             [policies.e]\n\
             [profiles.prod.policies.e]\nattempt_timeout = \"2s\"\n",
        );
        assert_eq!(
            config.attempt_timeout_set_at("a").as_deref(),
            Some("[policies.a]")
        );
        assert_eq!(
            config.attempt_timeout_set_at("b").as_deref(),
            Some("[policies.a]"),
            "inherited"
        );
        assert_eq!(config.attempt_timeout_set_at("c"), None);
        assert_eq!(config.attempt_timeout_set_at("d"), None, "switched off");
        assert_eq!(
            config.attempt_timeout_set_at("e").as_deref(),
            Some("[profiles.prod.policies.e]"),
            "a profile"
        );
        let defaults = file("[profiles.test.defaults]\nattempt_timeout = \"5s\"\n[policies.x]\n");
        assert_eq!(
            defaults.attempt_timeout_set_at("x").as_deref(),
            Some("[profiles.test.defaults]")
        );
    }

    #[test]
    fn extends_cycles_end() {
        let config = file("[policies.a]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n");
        assert_eq!(config.retry_on_without_transient("a"), None);
    }
}
