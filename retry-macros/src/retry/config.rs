//! The compile-time check of policy names against the crate's retry.toml.
//!
//! The file checked is the one `RETRY_CONFIG` names at build time, else
//! `retry.toml` next to the crate's `Cargo.toml`. Without either, nothing is
//! checked here; the run-time start-up check (`registry::missing_policies`)
//! still is. A file that appears later is not noticed until something else
//! triggers a rebuild (a compiler can only track files that exist).

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
}

/// The file for the crate being compiled, if there is one: `RETRY_CONFIG`
/// (absolute, or relative to the crate's manifest directory or to where cargo
/// runs the compiler, the workspace root), else `retry.toml` beside the
/// crate's `Cargo.toml`.
pub fn find() -> Option<ConfigFile> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let configured = std::env::var_os("RETRY_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let mut candidates = Vec::new();
    if let Some(configured) = configured {
        if configured.is_relative() {
            candidates.extend(manifest_dir.iter().map(|dir| dir.join(&configured)));
        }
        candidates.push(configured);
    }
    candidates.extend(manifest_dir.map(|dir| dir.join("retry.toml")));
    let path = candidates.into_iter().find(|p| p.is_file())?;
    let path = path.canonicalize().unwrap_or(path);
    let policies = read_cached(&path);
    Some(ConfigFile { path, policies })
}

impl ConfigFile {
    /// An error on `name` when the file does not define it.
    pub fn check(&self, name: &LitStr) -> Option<syn::Error> {
        let shown = self.path.display();
        match self.policies.as_ref().map(|p| &p.names) {
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
    // The base file first, then each profile's overlay of it.
    let mut layers = vec![(root, true)];
    if let Some(profiles) = table(get(root, "profiles")) {
        layers.extend(profiles.iter().filter_map(|(_, p)| match p.get_ref() {
            DeValue::Table(t) => Some((t, false)),
            _ => None,
        }));
    }
    for (layer, base) in layers {
        out.default_retry_on.extend(strings(
            table(get(layer, "defaults")).and_then(|d| get(d, "retry_on")),
        ));
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
    fn extends_cycles_end() {
        let config = file("[policies.a]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n");
        assert_eq!(config.retry_on_without_transient("a"), None);
    }
}
