//! The limits on what a file may define ([`crate::limits`]), checked by
//! counting before any table is read, so they bound the work a load does.

use super::Walker;
use crate::diagnostic::{Diagnostic, shown};
use crate::limits::{
    MAX_BREAKERS, MAX_BUDGETS, MAX_CLASSES, MAX_LIMITS, MAX_POLICIES, MAX_PROFILES,
};
use crate::schema::Key;
use retrykit_schema::layering::{BREAKERS, BUDGETS, DEFAULTS, LIMITS, POLICIES, PROFILES};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

impl Walker<'_> {
    /// Whether a section (or a profile's overlay of one) has more tables than
    /// its limit ([`crate::limits`]): each such section is an error, found
    /// by counting, before any of its tables is read.
    pub(super) fn beyond_limits(&mut self, root: &DeTable<'_>) -> bool {
        let mut sections: Vec<(String, &Spanned<DeValue<'_>>)> = Vec::new();
        for (key, value) in root.iter() {
            let name = key.get_ref().as_ref();
            sections.push((name.to_owned(), value));
            if name == PROFILES
                && let DeValue::Table(profiles) = value.get_ref()
                && profiles.len() <= MAX_PROFILES
            {
                for (profile, overlay) in profiles.iter() {
                    if let DeValue::Table(overlay) = overlay.get_ref() {
                        for (k, v) in overlay.iter() {
                            let path = format!("{PROFILES}.{}.{}", profile.get_ref(), k.get_ref());
                            sections.push((path, v));
                        }
                    }
                }
            }
        }
        let mut beyond = false;
        for (path, value) in sections {
            let section = path.rsplit('.').next().unwrap_or_default();
            let (limit, what, constant) = match section {
                POLICIES => (MAX_POLICIES, "policies", "MAX_POLICIES"),
                BUDGETS => (MAX_BUDGETS, "budgets", "MAX_BUDGETS"),
                BREAKERS => (MAX_BREAKERS, "breakers", "MAX_BREAKERS"),
                LIMITS => (MAX_LIMITS, "limits", "MAX_LIMITS"),
                PROFILES if path == PROFILES => (MAX_PROFILES, "profiles", "MAX_PROFILES"),
                _ => continue,
            };
            let DeValue::Table(t) = value.get_ref() else {
                continue;
            };
            if t.len() <= limit {
                continue;
            }
            beyond = true;
            self.diags.push(
                Diagnostic::error(
                    path.clone(),
                    format!(
                        "`{}` defines {} {what}, but a file may define at most {limit}",
                        shown(&path),
                        t.len()
                    ),
                )
                .at(Some(self.span(value)), format!("{} {what}", t.len()))
                .note(format!(
                    "the limit ({constant} in retrykit-config) bounds the time and memory a load takes; a policy file is a few kilobytes"
                ))
                .note(format!(
                    "define at most {limit} {what}: share settings through [defaults] and `extends`, or check that this is the right file"
                )),
            );
        }
        beyond | self.beyond_class_limit(root)
    }

    /// Whether the file's `retry_on` lists name more than [`MAX_CLASSES`]
    /// distinct classes: one error, at the list that goes past it.
    fn beyond_class_limit(&mut self, root: &DeTable<'_>) -> bool {
        fn table<'v, 'i>(v: &'v Spanned<DeValue<'i>>) -> Option<&'v DeTable<'i>> {
            match v.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            }
        }
        // [defaults] and every policy, in the file and in each profile's overlay.
        let mut layers = vec![root];
        if let Some(profiles) = root.get(PROFILES).and_then(table) {
            layers.extend(profiles.values().filter_map(table));
        }
        let mut distinct = std::collections::HashSet::new();
        for layer in layers {
            let defaults = layer.get(DEFAULTS).and_then(table).into_iter();
            let policies = layer.get(POLICIES).and_then(table);
            let tables = defaults.chain(
                policies
                    .into_iter()
                    .flat_map(|p| p.values().filter_map(table)),
            );
            for list in tables.filter_map(|t| t.get(Key::RetryOn.name())) {
                let DeValue::Array(items) = list.get_ref() else {
                    continue;
                };
                distinct.extend(items.iter().filter_map(|i| i.get_ref().as_str()));
                if distinct.len() <= MAX_CLASSES {
                    continue;
                }
                self.diags.push(
                    Diagnostic::error(
                        Key::RetryOn.name(),
                        format!(
                            "the file's `retry_on` lists name more than {MAX_CLASSES} distinct classes, the most a file may name"
                        ),
                    )
                    .at(Some(self.span(list)), format!("past {MAX_CLASSES} distinct classes"))
                    .note(
                        "the limit (MAX_CLASSES in retrykit-config) bounds the time and memory a load takes; a program declares a few dozen classes",
                    )
                    .note(format!(
                        "name at most {MAX_CLASSES} distinct classes: list only those your error types declare (#[classify(...)]), or check that this is the right file"
                    )),
                );
                return true;
            }
        }
        false
    }
}
