//! Checks of a budget table that retrykit-core cannot make, since it never
//! sees the file: keys that mean nothing to the budget's mode, the keys a
//! `grpc_throttling` budget must set, a fleet scope in a build without the
//! `redis` feature, a store left unused.

use crate::diagnostic::{Diagnostic, Span};
use crate::layers::{Fields, Layer, Set};
use crate::schema::engine::{budget_mode, budget_scope, budget_store};
use crate::schema::{BUDGET_KEYS, Key};

/// Errors for keys that do not apply to the budget's mode (an adaptive
/// budget has no setting but its mode, a `grpc_throttling` one only its
/// bucket's two), for the bucket's keys left unset, and for a fleet scope
/// this build cannot keep. The budget is not built when there is any.
pub(super) fn refused_keys(name: &str, span: &Span, fields: &Fields) -> Vec<Diagnostic> {
    let mode = budget_mode(fields);
    // No valid `mode` (none written, or one refused with its own error).
    let default = match fields.get(Key::Mode) {
        Some(_) => "",
        None => " (the default: no valid `mode` is set)",
    };
    let mut errors: Vec<Diagnostic> = BUDGET_KEYS
        .iter()
        .filter(|key| !key.applies_to_mode(mode))
        .filter_map(|&key| fields.get(key).map(|set| (key, set)))
        .map(|(key, set)| {
            let d = Diagnostic::error(
                format!("budgets.{name}.{}", key.name()),
                format!(
                    "budget `{name}`: `{}` does not apply to a budget whose mode is \"{mode}\"{default}",
                    key.name()
                ),
            );
            at(d, set, span, key).note(format!("fix: remove `{}` {}", key.name(), why_not(mode, key)))
        })
        .collect();
    if mode == "grpc_throttling" {
        for key in [Key::MaxTokens, Key::TokenRatio] {
            if fields.get(key).is_none() {
                errors.push(
                    Diagnostic::error(
                        format!("budgets.{name}.{}", key.name()),
                        format!(
                            "budget `{name}`: a budget whose mode is \"grpc_throttling\" needs `{}` \
                             (gRFC A6's retryThrottling gives it no default)",
                            key.name()
                        ),
                    )
                    .at(Some(span.clone()), format!("no `{}`", key.name()))
                    .note(format!("fix: add {} = {}", key.name(), key.example())),
                );
            }
        }
    }
    if !cfg!(feature = "redis")
        && budget_scope(fields) == "fleet"
        && let Some(set) = fields.get(Key::Scope)
        && Key::Scope.applies_to_mode(mode)
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

/// Why `key` means nothing to a budget of `mode`, and the other way out.
fn why_not(mode: &str, key: Key) -> &'static str {
    match (mode, key) {
        ("adaptive", _) => {
            "(an adaptive budget has no settings: it paces attempts by the throttling it sees), \
             or set mode = \"window\" for a retry budget"
        }
        ("grpc_throttling", Key::Scope | Key::Store) => {
            "(a grpc_throttling bucket is kept in each process, as gRPC's clients keep one per \
             target: its count moves with every attempt's outcome, and gRFC A6 defines no \
             shared one); to cap a fleet's retries too, name a window budget with \
             scope = \"fleet\" as well (budget = [\"this\", \"that\"])"
        }
        ("grpc_throttling", _) => {
            "(a grpc_throttling budget has only max_tokens and token_ratio, gRFC A6's token \
             bucket), or set mode = \"window\" for a retry budget"
        }
        _ => {
            "(it sets a grpc_throttling budget's bucket), or set mode = \"grpc_throttling\" \
             for gRFC A6's token bucket"
        }
    }
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
