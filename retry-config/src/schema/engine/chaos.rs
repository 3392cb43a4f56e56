//! A policy's chaos keys bound to retrykit-core's [`Chaos`]: built as a
//! whole from the policy's fields, read back from the built policy.

use super::{Binding, Key, Value};
use crate::layers::Fields;
use retrykit_core::chaos::{Chaos, ChaosError, fault_class};
use retrykit_core::{Policy, PolicyBuilder};
use std::time::Duration;

/// The chaos `fields` set, checked by retrykit-core; `None` when no chaos
/// key is set, or when `off` (`RETRY_CHAOS=off`).
pub(crate) fn build_chaos(fields: &Fields, off: bool) -> Result<Option<Chaos>, ChaosError> {
    if off || !set(fields) {
        return Ok(None);
    }
    let get = |key: Key| fields.get(key).map(|s| &s.value);
    let seed = match get(Key::ChaosSeed) {
        Some(Value::Count(n)) => Some(u64::from(*n)),
        _ => None,
    };
    let rate = |key| match get(key) {
        Some(Value::Number(n)) => *n,
        _ => 0.0,
    };
    let class = match get(Key::ChaosFault) {
        Some(Value::Fault(name)) => fault_class(name),
        _ => None,
    };
    let retry_after = match get(Key::ChaosRetryAfter) {
        Some(Value::MaybeDuration(d)) => *d,
        _ => None,
    };
    let min = match get(Key::ChaosLatency) {
        Some(Value::Duration(d)) => *d,
        _ => Duration::ZERO,
    };
    let max = match get(Key::ChaosLatencyMax) {
        Some(Value::MaybeDuration(Some(d))) => *d,
        _ => min,
    };
    let chaos = Chaos::new(seed)
        .fault(
            rate(Key::ChaosFaultRate),
            class.unwrap_or(retrykit_core::Class::TRANSIENT),
            retry_after,
        )?
        .latency(rate(Key::ChaosLatencyRate), min, max)?;
    Ok(Some(chaos))
}

/// Whether any chaos key is set in `fields`.
pub(crate) fn set(fields: &Fields) -> bool {
    retrykit_schema::keys::CHAOS_KEYS
        .iter()
        .any(|&k| fields.get(k).is_some())
}

/// A chaos key's binding: set as a whole by [`build_chaos`]; read back
/// from the policy's chaos (the built-in without one).
pub(super) fn binding(key: Key) -> Binding {
    let get: fn(&Policy) -> String = match key {
        Key::ChaosFaultRate => |p| shown(p, |c| crate::show_number(c.fault_rate())),
        Key::ChaosFault => |p| shown(p, |c| c.fault_class().name().to_owned()),
        Key::ChaosRetryAfter => |p| shown(p, |c| Value::MaybeDuration(c.retry_after()).to_string()),
        Key::ChaosLatencyRate => |p| shown(p, |c| crate::show_number(c.latency_rate())),
        Key::ChaosLatency => |p| shown(p, |c| Value::Duration(c.latency_range().0).to_string()),
        Key::ChaosLatencyMax => |p| shown(p, |c| Value::Duration(c.latency_range().1).to_string()),
        _ => |p| shown(p, |c| c.seed().map_or("none".to_owned(), |s| s.to_string())),
    };
    Binding::Policy {
        set: |b: PolicyBuilder, _| b,
        get,
    }
}

/// `value` of the policy's chaos; `off` without chaos.
fn shown(policy: &Policy, value: fn(&Chaos) -> String) -> String {
    policy
        .chaos()
        .map_or_else(|| "off".to_owned(), |c| value(c))
}
