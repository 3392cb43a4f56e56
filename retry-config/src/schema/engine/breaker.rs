//! The breaker keys bound to retrykit-core's [`BreakerBuilder`], one row per
//! key, and a `[breakers.NAME]` table built into a [`CircuitBreaker`].

use super::{Binding, apply, duration, maybe_duration, number};
use crate::layers::Fields;
use crate::schema::{BREAKER_KEYS, Key, Value};
use retrykit_core::PolicyError;
use retrykit_core::breaker::{BreakerBuilder, CircuitBreaker};
use retrykit_schema::keys::NONE;

/// Where a breaker key's value goes, and how it is read back.
type Set = fn(BreakerBuilder, &Value) -> BreakerBuilder;
type Get = fn(&CircuitBreaker) -> String;

/// The binding of a breaker key (`engine::binding` sends every breaker key here).
pub(super) fn binding(key: Key) -> Binding {
    let (set, get): (Set, Get) = match key {
        Key::FailureRatio => (
            |b, v| apply(b, number(v), BreakerBuilder::failure_ratio),
            |c| crate::show_number(c.failure_ratio()),
        ),
        Key::MinCalls => (
            |b, v| match v {
                Value::Count(n) => b.min_calls(*n),
                _ => b,
            },
            |c| c.min_calls().to_string(),
        ),
        Key::BreakerWindow => (
            |b, v| apply(b, duration(v), BreakerBuilder::window),
            |c| Value::Duration(c.window()).to_string(),
        ),
        Key::OpenFor => (
            |b, v| apply(b, duration(v), BreakerBuilder::open_for),
            |c| Value::Duration(c.open_for()).to_string(),
        ),
        Key::MaxOpenFor => (
            |b, v| apply(b, duration(v), BreakerBuilder::max_open_for),
            |c| Value::Duration(c.max_open_for()).to_string(),
        ),
        Key::OpenJitter => (
            |b, v| apply(b, number(v), BreakerBuilder::open_jitter),
            |c| crate::show_number(c.open_jitter()),
        ),
        Key::Probes => (
            |b, v| match v {
                Value::Count(n) => b.probes(*n),
                _ => b,
            },
            |c| c.probes().to_string(),
        ),
        Key::SlowCall => (
            |b, v| apply(b, maybe_duration(v), BreakerBuilder::slow_call),
            |c| Value::MaybeDuration(c.slow_call()).to_string(),
        ),
        Key::TripOn => (
            |b, v| match v {
                Value::Classes(c) => b.trip_on(c.iter().map(String::as_str)),
                _ => b,
            },
            |c| Value::Classes(c.trip_on().iter().map(|c| c.to_string()).collect()).to_string(),
        ),
        Key::ProbeEvery => (
            |b, v| apply(b, duration(v), BreakerBuilder::probe_every),
            |c| Value::Duration(c.probe_every()).to_string(),
        ),
        Key::ReleaseRamp => (
            |b, v| apply(b, duration(v), BreakerBuilder::release_ramp),
            |c| Value::Duration(c.release_ramp()).to_string(),
        ),
        Key::ReleaseTripOn => (
            |b, v| match v {
                Value::Classes(c) => b.release_trip_on(Some(c.iter().map(String::as_str))),
                _ => b,
            },
            |c| {
                let classes = c.release_trip_on().iter().map(|c| c.to_string()).collect();
                Value::Classes(classes).to_string()
            },
        ),
        // Scope, store and the link's timing (`store_timeout`, `refresh`)
        // go in together, after the local breaker is built (a fleet breaker
        // is a local one shared through its store): by `build_breaker`
        // below. A built breaker does not say its scope:
        // `Config::explain_breaker` shows the values the file set.
        _ => (|b, _| b, |_| String::new()),
    };
    Binding::Breaker { set, get }
}

/// The breaker called `name` that `fields` describe, checked by
/// retrykit-core; with `scope = "fleet"` (its store and the `redis` feature
/// checked before, by `resolve`), shared through its store.
pub(crate) fn build_breaker(name: &str, fields: &Fields) -> Result<CircuitBreaker, PolicyError> {
    let mut b = CircuitBreaker::builder().name(name);
    for &key in BREAKER_KEYS {
        if let (Some(set), Binding::Breaker { set: apply, .. }) =
            (fields.get(key), super::binding(key))
        {
            b = apply(b, &set.value);
        }
    }
    let breaker = b.build()?;
    if breaker_scope(fields) != "fleet" {
        return Ok(breaker);
    }
    fleet(breaker, name, fields)
}

#[cfg(feature = "redis")]
fn fleet(
    breaker: CircuitBreaker,
    name: &str,
    fields: &Fields,
) -> Result<CircuitBreaker, PolicyError> {
    let store = breaker_store(fields).unwrap_or_default();
    let mut options = retrykit_core::fleet::FleetOptions::new(name, store);
    if let Some(Value::Duration(d)) = fields.get(Key::StoreTimeout).map(|s| &s.value) {
        options = options.with_timeout(*d);
    }
    if let Some(Value::Duration(d)) = fields.get(Key::Refresh).map(|s| &s.value) {
        options = options.with_refresh(*d);
    }
    breaker.with_fleet(options)
}

/// Without the `redis` feature, a fleet scope was refused before (`resolve`).
#[cfg(not(feature = "redis"))]
fn fleet(breaker: CircuitBreaker, _: &str, _: &Fields) -> Result<CircuitBreaker, PolicyError> {
    Ok(breaker)
}

/// The breaker's scope, from `fields` or the built-in default.
pub(crate) fn breaker_scope(fields: &Fields) -> &'static str {
    super::scope_of(fields, Key::BreakerScope)
}

/// The breaker's store URL, when one is set.
pub(crate) fn breaker_store(fields: &Fields) -> Option<String> {
    super::store_of(fields, Key::BreakerStore)
}

/// The effective value of a breaker key, as a file writes it: read back
/// from the built breaker, but for the scope and store, which `fields` say.
pub(crate) fn effective_breaker(breaker: &CircuitBreaker, fields: &Fields, key: Key) -> String {
    match key {
        Key::StoreTimeout | Key::Refresh => link_timing(breaker, key),
        Key::BreakerScope => breaker_scope(fields).to_owned(),
        Key::BreakerStore => match breaker_store(fields) {
            Some(url) => Value::MaybeStore(Some(url)).to_string(),
            None => NONE.to_owned(),
        },
        _ => match binding(key) {
            Binding::Breaker { get, .. } => get(breaker),
            Binding::Policy { .. } | Binding::Budget { .. } | Binding::Limit { .. } => {
                String::new()
            }
        },
    }
}

/// A fleet breaker's `store_timeout` or `refresh`, read back from its link;
/// a local breaker has no link to time.
fn link_timing(breaker: &CircuitBreaker, key: Key) -> String {
    #[cfg(feature = "redis")]
    if let Some(options) = breaker.fleet_options() {
        let d = match key {
            Key::StoreTimeout => options.timeout(),
            _ => options.refresh(),
        };
        return Value::Duration(d).to_string();
    }
    let _ = (breaker, key);
    "- (unused by a local breaker)".to_owned()
}
