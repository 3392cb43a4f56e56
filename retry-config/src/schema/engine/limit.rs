//! The concurrency limit keys, and a `[limits.NAME]` table built into
//! retrykit-core's [`ConcurrencyLimit`]. The keys go in together (a limit
//! has no builder), by [`build_limit`]: `kind` picks which of them make
//! its [`LimitKind`]; a key of another kind is refused before this
//! (`resolve`'s limit checks).

use super::Binding;
use crate::layers::Fields;
use crate::schema::{Key, Value};
use retrykit_core::PolicyError;
use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
use retrykit_core::limit::{ConcurrencyLimit, LimitKind};
use retrykit_schema::keys::BuiltIn;

/// The binding of a limit key (`engine::binding` sends every limit key here).
pub(super) fn binding(key: Key) -> Binding {
    let get: fn(&ConcurrencyLimit) -> String = match key {
        Key::LimitKind => |l| l.kind().name().to_owned(),
        Key::MaxInFlight => |l| l.max_in_flight().to_string(),
        Key::MaxWait => |l| Value::MaybeDuration(l.max_wait()).to_string(),
        Key::MaxWaiting => |l| l.max_waiting().to_string(),
        Key::InitialLimit => |l| l.kind().initial().to_string(),
        Key::MinLimit => |l| sizes(l.kind()).map_or_else(String::new, |(min, _)| min.to_string()),
        Key::MaxLimit => |l| sizes(l.kind()).map_or_else(String::new, |(_, max)| max.to_string()),
        Key::Decrease => |l| aimd(l.kind()).map_or_else(String::new, |s| s.decrease.to_string()),
        Key::DropOn => |l| aimd(l.kind()).map_or_else(String::new, |s| drop_on(s).to_string()),
        Key::DropAbove => |l| {
            aimd(l.kind()).map_or_else(String::new, |s| {
                Value::MaybeDuration(s.drop_above).to_string()
            })
        },
        Key::Tolerance => {
            |l| gradient(l.kind()).map_or_else(String::new, |s| s.tolerance.to_string())
        }
        Key::Smoothing => {
            |l| gradient(l.kind()).map_or_else(String::new, |s| s.smoothing.to_string())
        }
        _ => |l| gradient(l.kind()).map_or_else(String::new, |s| s.probe_every.to_string()),
    };
    Binding::Limit { get }
}

fn aimd(kind: &LimitKind) -> Option<&AimdSettings> {
    match kind {
        LimitKind::Aimd(s) => Some(s),
        _ => None,
    }
}

fn gradient(kind: &LimitKind) -> Option<&GradientSettings> {
    match kind {
        LimitKind::Gradient(s) => Some(s),
        _ => None,
    }
}

/// An adaptive kind's smallest and largest size.
fn sizes(kind: &LimitKind) -> Option<(u32, u32)> {
    match kind {
        LimitKind::Fixed { .. } => None,
        LimitKind::Aimd(s) => Some((s.min, s.max)),
        LimitKind::Gradient(s) => Some((s.min, s.max)),
    }
}

/// An AIMD limit's drops, as a file writes them.
fn drop_on(s: &AimdSettings) -> Value {
    let on = [
        ("timeout", s.drop_on_timeout),
        ("throttled", s.drop_on_throttled),
    ];
    Value::Classes(
        on.iter()
            .filter(|(_, on)| *on)
            .map(|(class, _)| (*class).to_owned())
            .collect(),
    )
}

/// The kind `fields` name (`fixed` when none is set).
pub(crate) fn limit_kind(fields: &Fields) -> &'static str {
    match fields.get(Key::LimitKind).map(|s| &s.value) {
        Some(Value::LimitKind(kind)) => kind,
        _ => "fixed",
    }
}

/// The limit called `name` that `fields` describe, checked by
/// retrykit-core. A fixed limit's `max_in_flight` has no default:
/// `resolve` says so before this is asked.
pub(crate) fn build_limit(name: &str, fields: &Fields) -> Result<ConcurrencyLimit, PolicyError> {
    let count = |key: Key| match (fields.get(key).map(|s| &s.value), key.built_in()) {
        (Some(Value::Count(n)), _) => *n,
        (None, BuiltIn::Count(n)) => n,
        _ => 0,
    };
    let number = |key: Key| match (fields.get(key).map(|s| &s.value), key.built_in()) {
        (Some(Value::Number(n)), _) => *n,
        (None, BuiltIn::Number(n)) => n,
        _ => 0.0,
    };
    let maybe_duration = |key: Key| match fields.get(key).map(|s| &s.value) {
        Some(Value::MaybeDuration(d)) => *d,
        _ => None,
    };
    let kind = match limit_kind(fields) {
        "aimd" => {
            let drops = match fields.get(Key::DropOn).map(|s| &s.value) {
                Some(Value::Classes(c)) => [
                    c.iter().any(|c| c == "timeout"),
                    c.iter().any(|c| c == "throttled"),
                ],
                _ => [true, true],
            };
            LimitKind::Aimd(AimdSettings {
                initial: count(Key::InitialLimit),
                min: count(Key::MinLimit),
                max: count(Key::MaxLimit),
                decrease: number(Key::Decrease),
                drop_on_timeout: drops[0],
                drop_on_throttled: drops[1],
                drop_above: maybe_duration(Key::DropAbove),
            })
        }
        "gradient" => LimitKind::Gradient(GradientSettings {
            initial: count(Key::InitialLimit),
            min: count(Key::MinLimit),
            max: count(Key::MaxLimit),
            tolerance: number(Key::Tolerance),
            smoothing: number(Key::Smoothing),
            probe_every: count(Key::LimitProbeEvery),
        }),
        _ => LimitKind::Fixed {
            max_in_flight: count(Key::MaxInFlight),
        },
    };
    ConcurrencyLimit::new(
        Some(name),
        kind,
        maybe_duration(Key::MaxWait),
        count(Key::MaxWaiting),
    )
}

/// The effective value of a limit key in a built limit, as a file writes it.
pub(crate) fn effective_limit(limit: &ConcurrencyLimit, key: Key) -> String {
    match binding(key) {
        Binding::Limit { get } => get(limit),
        _ => String::new(),
    }
}
