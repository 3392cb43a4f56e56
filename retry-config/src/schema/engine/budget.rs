//! A `[budgets.NAME]` table built into a [`RetryBudget`]: its mode, its
//! scope and, for a fleet budget, its store.

use super::{Binding, binding, scope_of, store_of};
use crate::layers::Fields;
use crate::schema::{BUDGET_KEYS, Key, Value};
use retrykit_core::{PolicyError, RetryBudget};

/// The budget called `name` that `fields` describe, checked by retrykit-core;
/// with `scope = "fleet"`, shared through its store. The keys that do not
/// apply to its mode were refused before (`resolve`).
pub(crate) fn build_budget(name: &str, fields: &Fields) -> Result<RetryBudget, PolicyError> {
    if budget_mode(fields) == "adaptive" {
        return Ok(RetryBudget::adaptive());
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
