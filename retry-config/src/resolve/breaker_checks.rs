//! Checks of a breaker table that retrykit-core cannot make, since it never
//! sees the file (a fleet scope without its store, or in a build without
//! the `redis` feature; a store left unused), and the lookup of the breaker
//! a policy names.

use super::ResolvedBreaker;
use super::budget_checks::at;
use crate::diagnostic::Diagnostic;
use crate::document::{Document, Named};
use crate::layers::Fields;
use crate::schema::engine::{breaker_scope, breaker_store};
use crate::schema::{BREAKER_KEYS, Key, Value};
use retrykit_core::breaker::CircuitBreaker;
use retrykit_schema::suggest::did_you_mean;
use std::collections::HashMap;
use std::sync::Arc;

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

/// The breaker policy `policy` names in `fields` (`None`: none), found by
/// `index` (the position of each of the file's breakers) among `built`. An error
/// for a name the file does not define, with a did-you-mean; `Err(None)`
/// for a breaker that is defined but invalid (reported where it is).
// A missing breaker is the cold path: boxing its diagnostic would only add noise.
#[allow(clippy::result_large_err)]
pub(super) fn named(
    policy: &str,
    fields: &Fields,
    doc: &Document,
    (index, built): (&HashMap<&str, usize>, &[Option<ResolvedBreaker>]),
) -> Result<Option<Arc<CircuitBreaker>>, Option<Diagnostic>> {
    let Some(set) = fields.get(Key::Breaker) else {
        return Ok(None);
    };
    let Value::MaybeName(Some(name)) = &set.value else {
        return Ok(None);
    };
    match index.get(name.as_str()) {
        Some(&i) => match built.get(i).and_then(Option::as_ref) {
            Some(b) => Ok(Some(b.breaker.clone())),
            None => Err(None),
        },
        None => {
            let mut d = Diagnostic::error(
                format!("policies.{policy}.breaker"),
                format!("policy `{policy}` uses breaker `{name}`, which is not defined"),
            )
            .at(set.span.clone(), "no such breaker")
            .suggest(did_you_mean(
                name,
                doc.breakers.iter().map(|b| b.name.as_str()),
            ))
            .note(format!(
                "define it in a [breakers.{name}] table, or set breaker = \"none\""
            ));
            if !matches!(set.layer, crate::layers::Layer::File) {
                d = d.note(format!("this value comes from {}", set.layer));
            }
            Err(Some(d))
        }
    }
}
