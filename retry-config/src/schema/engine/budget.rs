//! A `[budgets.NAME]` table built into a [`RetryBudget`]: its mode, its
//! scope and, for a fleet budget, its store.

use super::{Binding, binding, number, scope_of, store_of};
use crate::layers::Fields;
use crate::schema::{BUDGET_KEYS, Key, Value};
use retrykit_core::{GrpcThrottling, PolicyError, RetryBudget};

/// The budget called `name` that `fields` describe, checked by retrykit-core;
/// with `scope = "fleet"`, shared through its store. The keys that do not
/// apply to its mode, and a `grpc_throttling` budget's missing ones, were
/// refused before (`resolve`).
pub(crate) fn build_budget(name: &str, fields: &Fields) -> Result<RetryBudget, PolicyError> {
    match budget_mode(fields) {
        "adaptive" => return Ok(RetryBudget::adaptive()),
        "grpc_throttling" => {
            // Unset is refused before; NaN would be refused by retrykit-core.
            let get = |key| fields.get(key).and_then(|s| number(&s.value));
            let (max, ratio) = (get(Key::MaxTokens), get(Key::TokenRatio));
            return RetryBudget::grpc_throttling(
                max.unwrap_or(f64::NAN),
                ratio.unwrap_or(f64::NAN),
            );
        }
        _ => {}
    }
    let mut b = RetryBudget::builder();
    for &key in BUDGET_KEYS {
        if let (Some(set), Binding::Budget { set: apply, .. }) = (fields.get(key), binding(key)) {
            b = apply(b, &set.value);
        }
    }
    let budget = b.build()?;
    if budget_scope(fields) != "fleet" {
        return Ok(budget);
    }
    fleet(budget, name, fields)
}

/// `budget` shared through its store (an absent store is refused by
/// retrykit-core, with the fix).
#[cfg(feature = "redis")]
fn fleet(budget: RetryBudget, name: &str, fields: &Fields) -> Result<RetryBudget, PolicyError> {
    let store = budget_store(fields).unwrap_or_default();
    budget.with_fleet(retrykit_core::fleet::FleetOptions::new(name, store))
}

/// Without the `redis` feature, a fleet scope was refused before (`resolve`).
#[cfg(not(feature = "redis"))]
fn fleet(budget: RetryBudget, _: &str, _: &Fields) -> Result<RetryBudget, PolicyError> {
    Ok(budget)
}

/// The budget's mode, from `fields` or the built-in default.
pub(crate) fn budget_mode(fields: &Fields) -> &'static str {
    match fields.get(Key::Mode).map(|s| &s.value) {
        Some(Value::Mode(mode)) => mode,
        _ => Key::Mode.built_in().word().unwrap_or("window"),
    }
}

/// The budget's scope, from `fields` or the built-in default.
pub(crate) fn budget_scope(fields: &Fields) -> &'static str {
    scope_of(fields, Key::Scope)
}

/// The budget's store URL, when one is set.
pub(crate) fn budget_store(fields: &Fields) -> Option<String> {
    store_of(fields, Key::Store)
}

/// The fleet budget's store, without its password.
#[cfg(feature = "redis")]
pub(super) fn store_shown(budget: &RetryBudget) -> Option<String> {
    budget.fleet_options().map(|o| o.store_shown())
}

#[cfg(not(feature = "redis"))]
pub(super) fn store_shown(_: &RetryBudget) -> Option<String> {
    None
}

/// A `grpc_throttling` budget's setting that `get` reads, as a file writes
/// it (empty for another mode, whose table has no such key).
pub(super) fn bucket(budget: &RetryBudget, get: fn(&GrpcThrottling) -> f64) -> String {
    budget
        .throttling()
        .map_or_else(String::new, |t| crate::show_number(get(t)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::{Layer, Set};

    /// Each mode a file may write builds a budget of that mode.
    #[test]
    fn every_budget_mode_of_the_schema_builds_a_budget_of_that_mode() {
        for &mode in retrykit_schema::keys::BUDGET_MODES {
            let mut fields = Fields::default();
            let set = |value| Set {
                value,
                layer: Layer::File,
                span: None,
            };
            fields.set(Key::Mode, set(Value::Mode(mode)));
            fields.set(Key::MaxTokens, set(Value::Number(10.0)));
            fields.set(Key::TokenRatio, set(Value::Number(0.1)));
            let budget = build_budget("b", &fields).unwrap();
            assert_eq!(budget.mode().as_str(), mode);
            assert_eq!(
                bucket(&budget, GrpcThrottling::max_tokens).is_empty(),
                mode != "grpc_throttling"
            );
        }
    }
}
