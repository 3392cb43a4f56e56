//! The concurrency limit keys, and a `[limits.NAME]` table built into
//! retrykit-core's [`ConcurrencyLimit`]. The four keys go in together (a
//! limit has no builder), by [`build_limit`].

use super::Binding;
use crate::layers::Fields;
use crate::schema::{Key, Value};
use retrykit_core::PolicyError;
use retrykit_core::limit::ConcurrencyLimit;

/// The binding of a limit key (`engine::binding` sends every limit key here).
pub(super) fn binding(key: Key) -> Binding {
    let get: fn(&ConcurrencyLimit) -> String = match key {
        Key::MaxInFlight => |l| l.max_in_flight().to_string(),
        Key::MaxWait => |l| Value::MaybeDuration(l.max_wait()).to_string(),
        Key::MaxWaiting => |l| l.max_waiting().to_string(),
        // The only kind built so far.
        _ => |_| "fixed".to_owned(),
    };
    Binding::Limit { get }
}

/// The limit called `name` that `fields` describe, checked by
/// retrykit-core. `max_in_flight` has no default: `resolve` says so
/// before this is asked.
pub(crate) fn build_limit(name: &str, fields: &Fields) -> Result<ConcurrencyLimit, PolicyError> {
    let count = |key: Key, default: u32| match fields.get(key).map(|s| &s.value) {
        Some(Value::Count(n)) => *n,
        _ => default,
    };
    let max_wait = match fields.get(Key::MaxWait).map(|s| &s.value) {
        Some(Value::MaybeDuration(d)) => *d,
        _ => None,
    };
    let max_waiting = match Key::MaxWaiting.built_in() {
        retrykit_schema::keys::BuiltIn::Count(n) => count(Key::MaxWaiting, n),
        _ => count(Key::MaxWaiting, 0),
    };
    ConcurrencyLimit::named(name, count(Key::MaxInFlight, 0), max_wait, max_waiting)
}

/// The effective value of a limit key in a built limit, as a file writes it.
pub(crate) fn effective_limit(limit: &ConcurrencyLimit, key: Key) -> String {
    match binding(key) {
        Binding::Limit { get } => get(limit),
        _ => String::new(),
    }
}
