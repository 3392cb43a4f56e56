//! Checks of a budget table that retrykit-core cannot make, since it never
//! sees the file: keys that mean nothing to the budget's mode, a fleet
//! scope in a build without the `redis` feature, a store left unused.

use crate::diagnostic::{Diagnostic, Span};
use crate::layers::{Fields, Layer, Set};
use crate::schema::engine::{budget_mode, budget_scope, budget_store};
use crate::schema::{BUDGET_KEYS, Key};

/// Errors for keys that do not apply to the budget's mode (an adaptive
/// budget has no setting but its mode), and for a fleet scope this build
/// cannot keep. The budget is not built when there is any.
pub(super) fn refused_keys(name: &str, span: &Span, fields: &Fields) -> Vec<Diagnostic> {
    let mode = budget_mode(fields);
    let mut errors: Vec<Diagnostic> = BUDGET_KEYS
        .iter()
        .filter(|key| !key.applies_to_mode(mode))
        .filter_map(|&key| fields.get(key).map(|set| (key, set)))
        .map(|(key, set)| {
            let d = Diagnostic::error(
                format!("budgets.{name}.{}", key.name()),
                format!(
                    "budget `{name}`: `{}` does not apply to a budget whose mode is \"{mode}\"",
                    key.name()
                ),
            );
            at(d, set, span, key).note(format!(
                "fix: remove `{}` (an adaptive budget has no settings: it paces attempts by \
                 the throttling it sees), or set mode = \"window\" for a retry budget",
                key.name()
            ))
        })
        .collect();
    if !cfg!(feature = "redis")
        && budget_scope(fields) == "fleet"
        && let Some(set) = fields.get(Key::Scope)
        && mode != "adaptive"
    {
        let d = Diagnostic::error(
            format!("budgets.{name}.scope"),
            format!(
                "budget `{name}`: scope \"fleet\" needs retrykit-config's `redis` feature, \
                 which this build lacks"
            ),
        );
        errors.push(at(d, set, span, Key::Scope).note(
            "fix: enable it (retrykit-config = { version = \"0.1\", features = [\"redis\"] }; \
             it is off by default), or remove scope = \"fleet\" to keep the budget in each \
             process",
        ));
    }
    errors
}

/// A warning when a budget has a store but keeps its count locally: the
/// store would be silently unused.
pub(super) fn unused_store(name: &str, span: &Span, fields: &Fields) -> Option<Diagnostic> {
    let set = fields.get(Key::Store)?;
    if budget_scope(fields) == "fleet"
        || budget_store(fields).is_none()
        || !Key::Store.applies_to_mode(budget_mode(fields))
    {
        return None;
    }
    let d = Diagnostic::warning(
        format!("budgets.{name}.store"),
        format!("budget `{name}`: `store` is unused: the budget's scope is local"),
    );
    Some(at(d, set, span, Key::Store).note(
        "fix: add scope = \"fleet\" to share the budget through the store, or remove the store",
    ))
}

/// `d` placed at the text that set `key` (the table's name when an
/// environment variable did), saying which layer set it.
pub(super) fn at(d: Diagnostic, set: &Set, table: &Span, key: Key) -> Diagnostic {
    let d = d.at(
        set.span.clone().or_else(|| Some(table.clone())),
        format!("{} = {}", key.name(), set.value.shown_for(key)),
    );
    if set.layer == Layer::File {
        d
    } else {
        d.note(format!("this value comes from {}", set.layer))
    }
}
