//! Checks of a concurrency limit table that retrykit-core cannot make,
//! since it never sees the file (a fixed limit's `max_in_flight` has no
//! default; a key of another kind; what `drop_on` may name). The lookup
//! of the limit a policy names is `table_ref`'s.

use super::budget_checks::at;
use crate::diagnostic::Diagnostic;
use crate::document::Named;
use crate::layers::Fields;
use crate::schema::engine::limit_kind;
use crate::schema::{Key, LIMIT_KEYS, Value};
use retrykit_schema::keys::DROP_CLASSES;
use retrykit_schema::suggest::did_you_mean;

/// The errors of limit `l` that retrykit-core cannot find: each key that
/// does not apply to its kind, a fixed limit without `max_in_flight` (a
/// limit's size is the dependency's, so it has no default), and an `aimd`
/// `drop_on` naming a class other than `timeout` and `throttled`, or
/// leaving the limit nothing to shrink on. The limit is not built then.
pub(super) fn checks(l: &Named, fields: &Fields) -> Vec<Diagnostic> {
    let (name, kind) = (&l.name, limit_kind(fields));
    let default = match fields.get(Key::LimitKind) {
        Some(_) => "",
        None => " (the default: no valid `kind` is set)",
    };
    let mut found: Vec<Diagnostic> = LIMIT_KEYS
        .iter()
        .filter(|key| !key.applies_to_limit_kind(kind))
        .filter_map(|&key| fields.get(key).map(|set| (key, set)))
        .map(|(key, set)| {
            let d = Diagnostic::error(
                format!("limits.{name}.{}", key.name()),
                format!(
                    "limit `{name}`: `{}` does not apply to a limit whose kind is \"{kind}\"{default}",
                    key.name()
                ),
            );
            at(d, set, &l.span, key).note(format!("fix: {}", why_not(key)))
        })
        .collect();
    if kind == "fixed" && fields.get(Key::MaxInFlight).is_none() {
        let key = Key::MaxInFlight.name();
        found.push(
            Diagnostic::error(
                format!("limits.{name}.{key}"),
                format!("limit `{name}` needs `{key}`: a limit's size has no default"),
            )
            .at(Some(l.span.clone()), format!("no `{key}`"))
            .note(format!(
                "fix: add {key} = {} (the most attempts the dependency should have in flight at once), \
                 or kind = \"gradient\" to have the size found from the latencies",
                Key::MaxInFlight.example()
            )),
        );
    }
    if kind == "aimd" {
        found.extend(drop_checks(l, fields));
    }
    found
}

/// How to fix `key` set on a limit whose kind it does not apply to.
fn why_not(key: Key) -> String {
    let name = key.name();
    match key {
        Key::MaxInFlight => format!(
            "an adaptive limit finds its size between min_limit and max_limit: remove \
             `{name}`, and set max_limit (and initial_limit) instead; or set kind = \"fixed\""
        ),
        Key::InitialLimit | Key::MinLimit | Key::MaxLimit => format!(
            "a fixed limit's size is max_in_flight: remove `{name}`, or set kind = \"aimd\" \
             or kind = \"gradient\" for a size that adapts"
        ),
        Key::Decrease | Key::DropOn | Key::DropAbove => format!(
            "`{name}` sets how an aimd limit shrinks on a drop: remove it, or set kind = \"aimd\""
        ),
        _ => format!(
            "`{name}` sets how a gradient limit reads the latencies: remove it, or set \
             kind = \"gradient\""
        ),
    }
}

/// An `aimd` limit's `drop_on` names only [`DROP_CLASSES`], and leaves it
/// a drop to shrink on (with `drop_above`).
fn drop_checks(l: &Named, fields: &Fields) -> Vec<Diagnostic> {
    let name = &l.name;
    let mut found = Vec::new();
    let set = fields.get(Key::DropOn);
    let classes: &[String] = match set.map(|s| &s.value) {
        Some(Value::Classes(c)) => c,
        _ => &[],
    };
    for class in classes
        .iter()
        .filter(|c| !DROP_CLASSES.contains(&c.as_str()))
    {
        let d = Diagnostic::error(
            format!("limits.{name}.drop_on"),
            format!(
                "limit `{name}`: `drop_on` may name {}, not `{class}`",
                DROP_CLASSES.join(" and ")
            ),
        );
        let d = match set {
            Some(set) => at(d, set, &l.span, Key::DropOn),
            None => d,
        };
        found.push(d.suggest(did_you_mean(class, DROP_CLASSES.iter().copied())).note(
            "fix: name the classes that say the dependency is overloaded (timeout, throttled); \
             another failure's latency says nothing about its load, so it is not read; or set \
             drop_above to count slow answers as drops",
        ));
    }
    let above = matches!(
        fields.get(Key::DropAbove).map(|s| &s.value),
        Some(Value::MaybeDuration(Some(_)))
    );
    if let Some(set) = set.filter(|_| classes.is_empty() && !above) {
        let d = Diagnostic::error(
            format!("limits.{name}.drop_on"),
            format!("limit `{name}`: an aimd limit with no drop only grows"),
        );
        found.push(at(d, set, &l.span, Key::DropOn).note(format!(
            "fix: name a drop class (drop_on = {}), or set drop_above = {} to count slow answers \
             as drops",
            Key::DropOn.example(),
            Key::DropAbove.example()
        )));
    }
    found
}
