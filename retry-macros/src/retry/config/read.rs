//! Reading what the build-time checks need from the file, and the values
//! a policy can end up with by retrykit-schema's layering rule (the one the
//! loader resolves by). Only the settings the checks look at are read; the
//! loader reports everything else that is wrong with the file.

use retrykit_schema::keys::{Key, NONE};
use retrykit_schema::layering::{self, DEFAULTS, EXTENDS, POLICIES, PROFILES, Table};
use std::collections::HashMap;
use std::path::Path;

/// What the checks need from the file: the policy names, the profiles,
/// each policy's parent, and the settings the checks look at, by the table
/// that sets them (`[defaults]`, `[policies.NAME]`,
/// `[profiles.P.policies.NAME]`; see `Table`'s display).
#[derive(Clone, Default)]
pub(super) struct Policies {
    pub(super) names: Vec<String>,
    profiles: Vec<String>,
    extends: HashMap<String, String>,
    tables: HashMap<String, Settings>,
}

/// The values one table gives the settings the checks look at.
#[derive(Clone, Default)]
pub(super) struct Settings {
    pub(super) retry_on: Option<Vec<String>>,
    /// Whether `attempt_timeout` is set to a timeout (`false`: to `"none"`).
    pub(super) attempt_timeout: Option<bool>,
    /// Whether `hedge_after` is set to a delay (`false`: to `"none"`).
    pub(super) hedge_after: Option<bool>,
    /// The breaker `breaker` names (`None` inside: set to `"none"`).
    pub(super) breaker: Option<Option<String>>,
}

impl Policies {
    /// The value of one setting policy `name` ends up with under no profile
    /// and under each profile, with the table it comes from, by the
    /// schema's layering rule; a profile under which no table sets it (the
    /// built-in default applies) adds nothing.
    pub(super) fn effective<'s, V>(
        &'s self,
        name: &str,
        value_in: impl Fn(&'s Settings) -> Option<V>,
    ) -> Vec<(String, V)> {
        let chain = layering::chain(name, |p| self.extends.get(p).map(String::as_str));
        let profiles = std::iter::once(None).chain(self.profiles.iter().map(|p| Some(p.as_str())));
        profiles
            .filter_map(|profile| {
                let tables = layering::tables(&chain, profile);
                layering::effective(&tables, |table| {
                    self.tables.get(&table.to_string()).and_then(&value_in)
                })
                .map(|(table, value)| (table.to_string(), value))
            })
            .collect()
    }
}

/// The file's policies, profiles and the settings the checks need, or
/// why it is not valid TOML.
pub(super) fn read(path: &Path) -> Result<Policies, String> {
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

    fn settings(table: &DeTable<'_>) -> Settings {
        Settings {
            retry_on: strings(get(table, Key::RetryOn.name())),
            attempt_timeout: get(table, Key::AttemptTimeout.name()).map(|value| match value {
                DeValue::String(s) => s.as_ref() != NONE,
                _ => true,
            }),
            hedge_after: get(table, Key::HedgeAfter.name()).map(|value| match value {
                DeValue::String(s) => s.as_ref() != NONE,
                _ => true,
            }),
            // A value of another type is the loader's error to report.
            breaker: get(table, Key::Breaker.name()).map(|value| match value {
                DeValue::String(s) if s.trim() != NONE => Some(s.trim().to_owned()),
                _ => None,
            }),
        }
    }

    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let root = DeTable::parse(&text).map_err(|e| e.message().to_owned())?;
    let root = root.get_ref();
    let mut out = Policies::default();
    if let Some(defaults) = table(get(root, DEFAULTS)) {
        out.tables
            .insert(Table::Defaults.to_string(), settings(defaults));
    }
    let policy_tables = |section: Option<&DeTable<'_>>| -> Vec<(String, Settings, Option<String>)> {
        let Some(policies) = table(section.and_then(|s| get(s, POLICIES))) else {
            return Vec::new();
        };
        policies
            .iter()
            .filter_map(|(name, policy)| match policy.get_ref() {
                DeValue::Table(t) => Some((
                    name.get_ref().to_string(),
                    settings(t),
                    match get(t, EXTENDS) {
                        Some(DeValue::String(parent)) => Some(parent.to_string()),
                        _ => None,
                    },
                )),
                _ => None,
            })
            .collect()
    };
    for (name, settings, parent) in policy_tables(Some(root)) {
        out.tables
            .insert(Table::Policy(&name).to_string(), settings);
        if let Some(parent) = parent {
            out.extends.insert(name.clone(), parent);
        }
        out.names.push(name);
    }
    // Profiles overlay policies only (a profile has no [defaults], and
    // cannot change `extends`: the loader refuses both).
    if let Some(profiles) = table(get(root, PROFILES)) {
        for (profile, overlays) in profiles.iter() {
            let profile = profile.get_ref().to_string();
            let overlays = match overlays.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            };
            for (policy, settings, _) in policy_tables(overlays) {
                let table = Table::ProfilePolicy {
                    profile: &profile,
                    policy: &policy,
                };
                out.tables.insert(table.to_string(), settings);
            }
            out.profiles.push(profile);
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

    #[test]
    fn reads_the_breaker_a_policy_names_through_every_layer() {
        let dir = std::env::temp_dir().join(format!("retry-macros-breaker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("retry.toml");
        std::fs::write(
            &file,
            "[defaults]\nbreaker = \"broker\"\n[policies.a]\n[policies.b]\nbreaker = \"none\"\n\
             [policies.c]\nextends = \"b\"\n[profiles.prod.policies.c]\nbreaker = \" db \"\n",
        )
        .unwrap();
        let policies = read(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // One value under no profile, and one under `prod`.
        let named = |name: &str| policies.effective(name, |s| s.breaker.clone());
        let defaults = ("[defaults]".to_owned(), Some("broker".to_owned()));
        assert_eq!(named("a"), [defaults.clone(), defaults]);
        let off = ("[policies.b]".to_owned(), None);
        assert_eq!(named("b"), [off.clone(), off], "switched off");
        assert_eq!(
            named("c"),
            [
                ("[policies.b]".to_owned(), None),
                (
                    "[profiles.prod.policies.c]".to_owned(),
                    Some("db".to_owned())
                )
            ],
            "inherited, then a profile's"
        );
    }
}
