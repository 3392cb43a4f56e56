//! Whether the crate being compiled depends on retrykit-config, and by which
//! name. When it does, each call site names retrykit-config's lazy loader, so
//! the loader is linked into the program even if the program itself never
//! names retrykit-config (a crate nobody names is not linked at all, and the
//! documented "load retry.toml on first use" would silently not happen).
//!
//! Only `[dependencies]` (and `[target.*.dependencies]`) count: a
//! dev-dependency is missing from the library's own build, where naming it
//! would not compile.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use toml::de::{DeTable, DeValue};

/// The package whose loader call sites name.
const PACKAGE: &str = "retrykit-config";

/// The crate name (as code names it) under which the crate being compiled
/// depends on retrykit-config, if it does.
pub fn retrykit_config() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    static CACHE: Mutex<Option<HashMap<PathBuf, Option<String>>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(found) = cache.get(&dir) {
        return found.clone();
    }
    let found = std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|text| dependency_name(&text));
    cache.insert(dir, found.clone());
    found
}

/// The key under which `manifest` lists retrykit-config as a normal
/// dependency, as a Rust identifier.
fn dependency_name(manifest: &str) -> Option<String> {
    let root = DeTable::parse(manifest).ok()?;
    let root = root.get_ref();
    let mut tables = vec![get(root, "dependencies")];
    if let Some(DeValue::Table(targets)) = get(root, "target") {
        for (_, target) in targets.iter() {
            if let DeValue::Table(target) = target.get_ref() {
                tables.push(get(target, "dependencies"));
            }
        }
    }
    tables.into_iter().flatten().find_map(|deps| {
        let DeValue::Table(deps) = deps else {
            return None;
        };
        deps.iter().find_map(|(key, spec)| {
            let key = key.get_ref();
            let package = match spec.get_ref() {
                DeValue::Table(spec) => match get(spec, "package") {
                    Some(DeValue::String(p)) => p.to_string(),
                    _ => key.to_string(),
                },
                _ => key.to_string(),
            };
            (package == PACKAGE).then(|| key.replace('-', "_"))
        })
    })
}

fn get<'a, 'i>(table: &'a DeTable<'i>, key: &str) -> Option<&'a DeValue<'i>> {
    table
        .iter()
        .find(|(k, _)| k.get_ref() == key)
        .map(|(_, v)| v.get_ref())
}

#[cfg(test)]
mod tests {
    use super::dependency_name;

    #[test]
    fn finds_plain_workspace_renamed_and_target_dependencies() {
        assert_eq!(
            dependency_name("[dependencies]\nretrykit-config = \"0.1\"\n").as_deref(),
            Some("retrykit_config")
        );
        assert_eq!(
            dependency_name("[dependencies]\nretrykit-config.workspace = true\n").as_deref(),
            Some("retrykit_config")
        );
        assert_eq!(
            dependency_name(
                "[dependencies]\ncfg = { package = \"retrykit-config\", version = \"0.1\" }\n"
            )
            .as_deref(),
            Some("cfg")
        );
        assert_eq!(
            dependency_name("[target.'cfg(unix)'.dependencies]\nretrykit-config = \"0.1\"\n")
                .as_deref(),
            Some("retrykit_config")
        );
    }

    #[test]
    fn a_dev_dependency_or_another_crate_does_not_count() {
        assert_eq!(
            dependency_name("[dev-dependencies]\nretrykit-config = \"0.1\"\n"),
            None
        );
        assert_eq!(
            dependency_name("[dependencies]\nretrykit-config = { package = \"other\" }\n"),
            None
        );
        assert_eq!(dependency_name("not toml ["), None);
    }
}
