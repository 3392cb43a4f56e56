//! The compile-time check of policy names against the crate's retry.toml.
//!
//! The file is found by retrykit-schema's one discovery rule (shared with the
//! run time): `RETRY_CONFIG` (relative to the crate, then to the workspace
//! root), else the nearest `retry.toml` walking up from the crate's
//! directory. Its absolute path is compiled into each call site, where the
//! run time looks last.
//!
//! - A file `RETRY_CONFIG` names that is missing (or a directory) is a
//!   compile error on the policy string, as it is an error at run time.
//! - Without a file, nothing is checked here (the run-time checks still
//!   are), and the build says so once per crate with a warning: a file
//!   created later is not noticed until something else triggers a rebuild.
//!   On stable Rust a proc-macro can make the build depend only on files
//!   that exist (`include_bytes!`) and on variables (`option_env!`);
//!   `proc_macro::tracked_path` is unstable. So the warning names the fix
//!   (set `RETRY_CONFIG`, which is tracked; or add the file, then `cargo
//!   clean -p` the crate or touch a source file). A crate whose policies
//!   come only from code turns it off with `[package.metadata.retry]
//!   expect-config = false` in its Cargo.toml (or `#[allow(deprecated)]`
//!   on the function).

mod read;

use crate::suggest::hint;
use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned};
use read::{Policies, read};
use retrykit_schema::classes::TRANSIENT;
use retrykit_schema::discover::{CONFIG_VAR, FILE_NAME};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;
use syn::LitStr;

/// The config file a build checks against, and what it says.
pub struct ConfigFile {
    pub path: PathBuf,
    policies: Result<Policies, String>,
}

/// What the search for the crate's file found.
pub enum Search {
    /// The file: names are checked against it.
    File(ConfigFile),
    /// `RETRY_CONFIG` names a file that is not there (every path tried).
    NamedMissing {
        value: OsString,
        searched: Vec<PathBuf>,
    },
    /// No file where discovery looks: nothing is checked.
    Nothing,
}

/// The search for the crate being compiled (see the module doc).
pub fn find() -> Search {
    use retrykit_schema::discover::Discovery;
    let named = std::env::var_os(CONFIG_VAR).filter(|v| !v.is_empty());
    let mut search = Discovery::new().named(named.clone());
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        search = search.start(PathBuf::from(dir));
    }
    // Cargo runs the compiler in the workspace root.
    if let Ok(dir) = std::env::current_dir() {
        search = search.also_relative_to(dir);
    }
    let found = search.run();
    match (found.file, named) {
        (Some(path), _) => {
            let path = path.canonicalize().unwrap_or(path);
            let policies = read_cached(&path);
            Search::File(ConfigFile { path, policies })
        }
        (None, Some(value)) => Search::NamedMissing {
            value,
            searched: found.searched,
        },
        (None, None) => Search::Nothing,
    }
}

impl Search {
    /// The file, when there is one.
    pub fn file(&self) -> Option<&ConfigFile> {
        match self {
            Search::File(file) => Some(file),
            _ => None,
        }
    }

    /// An error on `name`: the file does not define it, is not valid TOML,
    /// or is named by `RETRY_CONFIG` and missing (the last two once per
    /// compiler process, not once per call site).
    pub fn check(&self, name: &LitStr) -> Option<syn::Error> {
        match self {
            Search::File(file) => file.check(name),
            Search::NamedMissing { value, searched } => {
                let value = PathBuf::from(value);
                first_report(&value)
                    .then(|| syn::Error::new(name.span(), named_missing(name, &value, searched)))
            }
            Search::Nothing => None,
        }
    }

    /// The warning that nothing is checked (once per compiler process,
    /// never when a file is found or the crate says it expects none), and
    /// what the build must depend on for the crate's opt-out.
    pub fn unchecked_warning(&self, name: &LitStr) -> TokenStream {
        let Search::Nothing = self else {
            return TokenStream::new();
        };
        let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
            return TokenStream::new();
        };
        let manifest = dir.join("Cargo.toml");
        // Editing the opt-out rebuilds (cargo does not for `[package.metadata]` alone).
        let tracked = manifest.is_file().then(|| {
            let path = manifest.to_string_lossy().into_owned();
            quote! { const _: &[u8] = ::core::include_bytes!(#path); }
        });
        if !expects_config(&manifest) || !first_report(&dir.join(FILE_NAME)) {
            return quote! { #tracked };
        }
        let krate = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "<crate>".to_owned());
        let note = format!(
            "no {FILE_NAME} for crate `{krate}`: policy names are not checked at build time \
             (looked in {} and every directory above it; {CONFIG_VAR} is not set).\n\
             To check them: set {CONFIG_VAR} to the file (the build follows the variable), \
             or put {FILE_NAME} in {} or a directory above it and then run `cargo clean -p {krate}` \
             or touch a source file (cargo cannot notice a file that was not there at the last build).\n\
             Policies defined only in code: add `[package.metadata.retry] expect-config = false` to {} \
             (or `#[allow(deprecated)]` on the function) to silence this.",
            dir.display(),
            dir.display(),
            manifest.display(),
        );
        let warning = Ident::new("retry_toml_not_found", name.span());
        quote_spanned! {name.span()=>
            #tracked
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const #warning: () = ();
                #warning
            };
        }
    }
}

/// The error for a `RETRY_CONFIG` that names no file.
fn named_missing(name: &LitStr, value: &Path, searched: &[PathBuf]) -> String {
    let shown = value.display();
    let cannot = format!("cannot check policy `{}`", name.value());
    if let Some(dir) = searched.iter().find(|p| p.is_dir()) {
        let resolved = if dir == value {
            String::new()
        } else {
            format!(" ({})", dir.display())
        };
        return format!(
            "{cannot}: {CONFIG_VAR} names {shown}, which is a directory{resolved}, not a file; \
             fix: set {CONFIG_VAR} to the policy file (e.g. {}), or unset it to use the nearest {FILE_NAME}",
            dir.join(FILE_NAME).display()
        );
    }
    // The crate's directory and the workspace root are one for a lone crate.
    let mut tried: Vec<PathBuf> = Vec::new();
    for path in searched {
        if !tried.contains(path) {
            tried.push(path.clone());
        }
    }
    let tried = if tried == [value] {
        String::new()
    } else {
        format!(" (tried {})", retrykit_schema::discover::list(&tried))
    };
    format!(
        "{cannot}: {CONFIG_VAR} names {shown}, which does not exist{tried}; \
         fix: create the file, or correct {CONFIG_VAR} or unset it to use the nearest {FILE_NAME}"
    )
}

/// Whether the crate's manifest leaves the warning on: not
/// `[package.metadata.retry] expect-config = false`.
fn expects_config(manifest: &Path) -> bool {
    use toml::de::{DeTable, DeValue};
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return true;
    };
    let Ok(root) = DeTable::parse(&text) else {
        return true;
    };
    let mut table = root.get_ref();
    for key in ["package", "metadata", "retry"] {
        match table
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v.get_ref())
        {
            Some(DeValue::Table(t)) => table = t,
            _ => return true,
        }
    }
    !table.iter().any(|(k, v)| {
        k.get_ref() == EXPECT_CONFIG && matches!(v.get_ref(), DeValue::Boolean(false))
    })
}

/// The manifest key (under `[package.metadata.retry]`) that turns the
/// no-file warning off.
const EXPECT_CONFIG: &str = "expect-config";

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

    /// Where the policy names a breaker under any profile (the table that
    /// sets it, and the breaker), for the check that its error type can
    /// stand for an attempt the breaker refused.
    pub fn breaker_set_at(&self, name: &str) -> Option<(String, String)> {
        let policies = self.policies.as_ref().ok()?;
        policies
            .effective(name, |s| s.breaker.as_ref())
            .into_iter()
            .find_map(|(table, breaker)| breaker.clone().map(|b| (table, b)))
    }

    /// Where the policy gets a `hedge_after` under any profile (the table
    /// that sets it), for the check that a blocking fn does not hedge.
    pub fn hedge_after_set_at(&self, name: &str) -> Option<String> {
        let policies = self.policies.as_ref().ok()?;
        policies
            .effective(name, |s| s.hedge_after)
            .into_iter()
            .find(|(_, set)| *set)
            .map(|(table, _)| table)
    }
}

/// Whether this compiler process has not yet reported `path` (as broken,
/// missing, or, for the crate's `retry.toml`, as not found).
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
    fn finds_hedge_after_in_policies_and_profiles_but_not_none() {
        let config = file(
            "[policies.a]\nhedge_after = \"p95\"\n[policies.b]\nhedge_after = \"none\"\n\
             [policies.c]\n[profiles.prod.policies.c]\nhedge_after = \"20ms\"\n",
        );
        assert_eq!(
            config.hedge_after_set_at("a").as_deref(),
            Some("[policies.a]")
        );
        assert_eq!(config.hedge_after_set_at("b"), None, "switched off");
        assert_eq!(
            config.hedge_after_set_at("c").as_deref(),
            Some("[profiles.prod.policies.c]")
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
