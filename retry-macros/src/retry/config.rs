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
    names: Result<Vec<String>, String>,
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
    let names = policy_names(&path);
    Some(ConfigFile { path, names })
}

impl ConfigFile {
    /// An error on `name` when the file does not define it.
    pub fn check(&self, name: &LitStr) -> Option<syn::Error> {
        let shown = self.path.display();
        match &self.names {
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

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

type Cache = HashMap<PathBuf, (Option<SystemTime>, Result<Vec<String>, String>)>;

/// The policy names the file defines, read once per file version per
/// compiler process (every annotated function asks).
fn policy_names(path: &Path) -> Result<Vec<String>, String> {
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((when, names)) = cache.get(path)
        && *when == modified
        && modified.is_some()
    {
        return names.clone();
    }
    let names = read_names(path);
    cache.insert(path.to_owned(), (modified, names.clone()));
    names
}

fn read_names(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let table = toml::de::DeTable::parse(&text).map_err(|e| e.message().to_owned())?;
    let policies = table
        .get_ref()
        .iter()
        .find(|(key, _)| key.get_ref() == "policies")
        .map(|(_, value)| value.get_ref());
    let mut names: Vec<String> = match policies {
        Some(toml::de::DeValue::Table(policies)) => policies
            .iter()
            .map(|(key, _)| key.get_ref().to_string())
            .collect(),
        _ => Vec::new(),
    };
    names.sort();
    Ok(names)
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
        assert_eq!(read_names(&file).unwrap(), ["db", "outbox"]);
        std::fs::write(&file, "[policies\n").unwrap();
        assert!(read_names(&file).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
