//! Checks of a breaker table that retrykit-core cannot make, since it never
//! sees the file (a fleet scope without its store, or in a build without
//! the `redis` feature; a store left unused). The lookup of the breaker a
//! policy names is `table_ref`'s.

use super::budget_checks::at;
use crate::diagnostic::Diagnostic;
use crate::document::Named;
use crate::layers::Fields;
use crate::schema::engine::{breaker_scope, breaker_store};
use crate::schema::{BREAKER_KEYS, Key};

/// What is wrong with breaker `b`'s settings before retrykit-core sees
/// them: an error for a fleet scope that cannot be kept (naming what is
/// missing), a warning for a store the local scope leaves unused.
pub(super) fn checks(b: &Named, fields: &Fields) -> Vec<Diagnostic> {
    let name = &b.name;
    let store = breaker_store(fields);
    let mut found = Vec::new();
    if breaker_scope(fields) != "fleet" {
        // The keys only a fleet breaker reads (a store of "none" is no store).
        let unused = BREAKER_KEYS
            .iter()
            .filter(|k| k.fleet_only())
            .filter(|&&k| k != Key::BreakerStore || store.is_some())
            .filter_map(|&k| fields.get(k).map(|set| (k, set)));
        for (key, set) in unused {
            let key_name = key.name();
            let d = Diagnostic::warning(
                format!("breakers.{name}.{key_name}"),
                format!("breaker `{name}`: `{key_name}` is unused: the breaker's scope is local"),
            );
            let fix = match key {
                Key::BreakerStore => "fix: add scope = \"fleet\" to share the breaker through the \
                     store, or remove the store"
                    .to_owned(),
                _ => format!(
                    "fix: `{key_name}` times a fleet breaker's link to its store: add \
                     scope = \"fleet\" and a store to share the breaker, or remove `{key_name}`"
                ),
            };
            found.push(at(d, set, &b.span, key).note(fix));
        }
        return found;
    }
    let mut missing = Vec::new();
    if store.is_none() {
        missing.push("a `store` (the Redis URL the fleet shares it through)");
    }
    if !cfg!(feature = "redis") {
        missing.push("retrykit-config's `redis` feature, which this build lacks");
    }
    if missing.is_empty() {
        return found;
    }
    let mut fixes = Vec::new();
    if store.is_none() {
        fixes.push(format!("add store = {}", Key::BreakerStore.example()));
    }
    if !cfg!(feature = "redis") {
        fixes.push(
            "enable the feature (retrykit-config = { version = \"0.1\", features = [\"redis\"] }; it is off by default)"
                .to_owned(),
        );
    }
    let d = Diagnostic::error(
        format!("breakers.{name}.scope"),
        format!(
            "breaker `{name}`: scope \"fleet\" needs {}",
            missing.join(" and ")
        ),
    );
    let d = match fields.get(Key::BreakerScope) {
        Some(set) => at(d, set, &b.span, Key::BreakerScope),
        None => d.at(Some(b.span.clone()), "fleet scope"),
    };
    found.push(d.note(format!(
        "fix: {}; or remove scope = \"fleet\" to keep the breaker in each process",
        fixes.join(", and ")
    )));
    found
}
