//! The compile-time check of policy names against the crate's retry.toml.
//!
//! The file is found by retry-schema's one discovery rule (shared with the
//! run time): `RETRY_CONFIG` (relative to the crate, then to the workspace
//! root), else the nearest `retry.toml` walking up from the crate's
//! directory. Its absolute path is compiled into each call site, where the
//! run time looks last. Without a file, nothing is checked here; the
//! run-time checks still are. A file that appears later is not noticed until
//! something else triggers a rebuild (a compiler can only track files that exist).

mod read;

use crate::suggest::hint;
use read::{Policies, read};
use retry_schema::classes::TRANSIENT;
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
    /// A `retry_on` list the policy may end up with (under any profile)
    /// that leaves out `transient`: an error type without `Classify` (every
    /// error transient) would then never be retried.
    pub fn retry_on_without_transient(&self, name: &str) -> Option<Vec<String>> {
        let policies = self.policies.as_ref().ok()?;
        policies
            .effective(name, |s| s.retry_on.as_ref())
            .into_iter()
            .map(|(_, list)| list)
            .find(|list| !list.iter().any(|class| class == TRANSIENT))
            .cloned()
    }

    /// Where the policy gets an `attempt_timeout` under any profile (the
    /// table that sets it), for the check that its error type can carry one.
    pub fn attempt_timeout_set_at(&self, name: &str) -> Option<String> {
        let policies = self.policies.as_ref().ok()?;
        policies
            .effective(name, |s| s.attempt_timeout)
            .into_iter()
            .find(|(_, set)| *set)
            .map(|(table, _)| table)
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
        let defaults = file("[defaults]\nattempt_timeout = \"5s\"\n[policies.x]\n");
        assert_eq!(
            defaults.attempt_timeout_set_at("x").as_deref(),
            Some("[defaults]")
        );
        // A profile has no [defaults] (the loader refuses one): not a layer.
        let profile = file("[profiles.test.defaults]\nattempt_timeout = \"5s\"\n[policies.x]\n");
        assert_eq!(profile.attempt_timeout_set_at("x"), None);
    }

    #[test]
    fn a_profiles_overlay_of_an_ancestor_beats_the_policys_own_table() {
        // Under `prod`, `b` is [defaults], a, b, then prod's a: `throttled` only.
        let config = file(
            "[policies.a]\nretry_on = [\"transient\"]\nattempt_timeout = \"none\"\n\
             [policies.b]\nextends = \"a\"\nretry_on = [\"transient\", \"timeout\"]\n\
             [profiles.prod.policies.a]\nretry_on = [\"throttled\"]\nattempt_timeout = \"2s\"\n",
        );
        assert_eq!(
            config.retry_on_without_transient("b"),
            Some(vec!["throttled".to_owned()])
        );
        assert_eq!(
            config.attempt_timeout_set_at("b").as_deref(),
            Some("[profiles.prod.policies.a]")
        );
    }

    #[test]
    fn a_policy_that_switches_the_timeout_off_has_none() {
        let config = file(
            "[defaults]\nattempt_timeout = \"5s\"\n\
             [policies.quick]\nattempt_timeout = \"none\"\n\
             [policies.child]\nextends = \"quick\"\n",
        );
        assert_eq!(config.attempt_timeout_set_at("quick"), None);
        assert_eq!(config.attempt_timeout_set_at("child"), None, "inherited");
    }

    #[test]
    fn extends_cycles_end() {
        let config = file("[policies.a]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n");
        assert_eq!(config.retry_on_without_transient("a"), None);
    }
}
