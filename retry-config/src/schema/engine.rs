//! The keys bound to retrykit-core, one row per key in [`binding`]: the
//! builder setter a key's value goes to, and how its effective value is read
//! back from what was built. retrykit-core names the field of each problem it
//! finds with the schema's key name, so [`report`] maps a problem back to
//! the text that set it without a table of its own.

// A rejected value is the cold path: boxing its diagnostic would only add noise.
#![allow(clippy::result_large_err)]

use super::{Key, POLICY_KEYS, Value};
use crate::diagnostic::{Diagnostic, Diagnostics, Span};
use crate::layers::{Fields, Layer};
use retrykit_core::breaker::{BreakerBuilder, CircuitBreaker};
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::{
    Backoff, GrpcThrottling, Jitter, Policy, PolicyBuilder, PolicyError, RetryBudget,
    RetryBudgetBuilder,
};
use retrykit_schema::hedge::HedgeAfterText;
use retrykit_schema::keys::{JITTER_MODES, NONE};
use std::sync::Arc;
use std::time::Duration;

mod breaker;
mod budget;
mod chaos;
mod limit;

pub(crate) use breaker::{breaker_scope, breaker_store, build_breaker, effective_breaker};
pub(crate) use budget::{budget_mode, budget_scope, budget_store, build_budget};
pub(crate) use chaos::{build_chaos, set as chaos_set};
pub(crate) use limit::{build_limit, effective_limit, limit_kind};

/// Where a key's value goes in retrykit-core and how it is read back.
enum Binding {
    Policy {
        set: fn(PolicyBuilder, &Value) -> PolicyBuilder,
        get: fn(&Policy) -> String,
    },
    Budget {
        set: fn(RetryBudgetBuilder, &Value) -> RetryBudgetBuilder,
        get: fn(&RetryBudget) -> String,
    },
    Breaker {
        set: fn(BreakerBuilder, &Value) -> BreakerBuilder,
        get: fn(&CircuitBreaker) -> String,
    },
    Limit {
        get: fn(&retrykit_core::limit::ConcurrencyLimit) -> String,
    },
}

/// Every key's binding: adding a key to the schema asks for its row here.
fn binding(key: Key) -> Binding {
    use Binding::{Budget, Policy};
    match key {
        // The factor is part of retrykit-core's `Backoff`: both go in together,
        // by `backoff` below.
        Key::Backoff => Policy {
            set: |b, _| b,
            get: |p| p.backoff().name().to_owned(),
        },
        Key::Factor => Policy {
            set: |b, _| b,
            get: |p| match p.backoff() {
                Backoff::Exponential { factor } => crate::show_number(factor),
                other => format!("- (unused by {} backoff)", other.name()),
            },
        },
        Key::Base => Policy {
            set: |b, v| apply(b, duration(v), PolicyBuilder::base),
            get: |p| Value::Duration(p.base()).to_string(),
        },
        Key::Cap => Policy {
            set: |b, v| apply(b, duration(v), PolicyBuilder::cap),
            get: |p| Value::Duration(p.cap()).to_string(),
        },
        Key::MinDelay => Policy {
            set: |b, v| apply(b, duration(v), PolicyBuilder::min_delay),
            get: |p| Value::Duration(p.min_delay()).to_string(),
        },
        Key::Jitter => Policy {
            set: |b, v| match v {
                Value::Jitter(j) => b.jitter(*j),
                _ => b,
            },
            get: |p| Value::Jitter(p.jitter()).to_string(),
        },
        Key::MaxAttempts => Policy {
            set: |b, v| match v {
                Value::Count(n) => b.max_attempts(*n),
                _ => b,
            },
            get: |p| Value::Count(p.max_attempts().unwrap_or(0)).to_string(),
        },
        Key::Deadline => Policy {
            set: |b, v| apply(b, maybe_duration(v), PolicyBuilder::deadline),
            get: |p| Value::MaybeDuration(p.deadline()).to_string(),
        },
        Key::AttemptTimeout => Policy {
            set: |b, v| apply(b, maybe_duration(v), PolicyBuilder::attempt_timeout),
            get: |p| Value::MaybeDuration(p.attempt_timeout()).to_string(),
        },
        Key::RetryOn => Policy {
            set: |b, v| match v {
                Value::Classes(c) => b.retry_on(c.iter().map(String::as_str)),
                _ => b,
            },
            get: |p| match p.retry_on() {
                Some(c) => Value::Classes(c.iter().map(|c| c.to_string()).collect()).to_string(),
                None => "(every non-permanent error)".to_owned(),
            },
        },
        Key::MaxRetryAfter => Policy {
            set: |b, v| apply(b, maybe_duration(v), PolicyBuilder::max_retry_after),
            get: |p| Value::MaybeDuration(p.max_retry_after()).to_string(),
        },
        // Names, looked up among the file's budgets when the policy is
        // resolved; a built policy holds the budgets, not their names.
        Key::Budget => Policy {
            set: |b, _| b,
            get: |p| match p.budgets().len() {
                0 => NONE.to_owned(),
                1 => "(a shared budget)".to_owned(),
                n => format!("({n} shared budgets)"),
            },
        },
        // A name, looked up among the file's breakers when the policy is
        // resolved; a built policy holds the breaker, which knows its name.
        Key::Breaker => Policy {
            set: |b, _| b,
            get: |p| match p.breaker() {
                Some(b) => b.name().unwrap_or("(an unnamed breaker)").to_owned(),
                None => NONE.to_owned(),
            },
        },
        // A name, looked up among the file's limits when the policy is
        // resolved; a built policy holds the limit, which knows its name.
        Key::Limit => Policy {
            set: |b, _| b,
            get: |p| match p.limit() {
                Some(l) => l.name().unwrap_or("(an unnamed limit)").to_owned(),
                None => NONE.to_owned(),
            },
        },
        Key::RetryOnStatus => Policy {
            set: |b, v| match v {
                Value::Statuses(codes) => b.retry_on_status(codes.iter().copied()),
                _ => b,
            },
            get: |p| Value::Statuses(p.retry_on_status().to_vec()).to_string(),
        },
        Key::RetryMethods => Policy {
            set: |b, v| match v {
                Value::Methods(m) => b.retry_methods(m.iter().map(String::as_str)),
                _ => b,
            },
            get: |p| {
                let methods = p.retry_methods().iter().map(|m| m.to_string()).collect();
                Value::Methods(methods).to_string()
            },
        },
        Key::GrpcRetryOn => Policy {
            set: |b, v| match v {
                Value::GrpcCodes(codes) => b.grpc_retry_on(codes.iter().copied()),
                _ => b,
            },
            get: |p| match p.grpc_retry_on() {
                Some(codes) => Value::GrpcCodes(codes.to_vec()).to_string(),
                None => format!(
                    "({})",
                    Value::GrpcCodes(retrykit_schema::grpc::DEFAULT_RETRY_ON.to_vec())
                ),
            },
        },
        Key::MaxReplayBody => Policy {
            set: |b, v| match v {
                Value::Bytes(n) => b.max_replay_body(*n),
                _ => b,
            },
            get: |p| Value::Bytes(p.max_replay_body()).to_string(),
        },
        // The three hedging keys make one `HedgeSettings`: they go in
        // together, by `hedge` below.
        Key::HedgeAfter => Policy {
            set: |b, _| b,
            get: |p| match p.hedge_settings() {
                Some(s) => s.after.to_string(),
                None => NONE.to_owned(),
            },
        },
        Key::HedgeFloor => Policy {
            set: |b, _| b,
            get: |p| match p.hedge_settings() {
                Some(s) => Value::Duration(s.floor).to_string(),
                None => "- (unused without hedge_after)".to_owned(),
            },
        },
        Key::HedgeShare => Policy {
            set: |b, _| b,
            get: |p| match p.hedge_settings() {
                Some(s) => crate::show_number(s.share),
                None => "- (unused without hedge_after)".to_owned(),
            },
        },
        // The mode decides which budget is built: by `build_budget` below.
        Key::Mode => Budget {
            set: |b, _| b,
            get: |b| b.mode().as_str().to_owned(),
        },
        Key::Ratio => Budget {
            set: |b, v| apply(b, number(v), RetryBudgetBuilder::ratio),
            get: |b| crate::show_number(b.ratio()),
        },
        Key::MinPerSec => Budget {
            set: |b, v| apply(b, number(v), RetryBudgetBuilder::min_per_sec),
            get: |b| crate::show_number(b.min_per_sec()),
        },
        Key::Window => Budget {
            set: |b, v| apply(b, duration(v), RetryBudgetBuilder::window),
            get: |b| Value::Duration(b.window()).to_string(),
        },
        // Scope and store go in together, after the local budget is built
        // (a fleet budget is a local one shared through its store): by
        // `build_budget` below.
        Key::Scope => Budget {
            set: |b, _| b,
            get: |b| b.scope().as_str().to_owned(),
        },
        Key::Store => Budget {
            set: |b, _| b,
            get: |b| budget::store_shown(b).unwrap_or_else(|| NONE.to_owned()),
        },
        // A `grpc_throttling` budget's bucket: both go in together, by
        // `build_budget` below.
        Key::MaxTokens => Budget {
            set: |b, _| b,
            get: |b| budget::bucket(b, GrpcThrottling::max_tokens),
        },
        Key::TokenRatio => Budget {
            set: |b, _| b,
            get: |b| budget::bucket(b, GrpcThrottling::token_ratio),
        },
        Key::FailureRatio
        | Key::MinCalls
        | Key::BreakerWindow
        | Key::OpenFor
        | Key::MaxOpenFor
        | Key::OpenJitter
        | Key::Probes
        | Key::SlowCall
        | Key::TripOn
        | Key::ProbeEvery
        | Key::ReleaseRamp
        | Key::ReleaseTripOn
        | Key::BreakerScope
        | Key::BreakerStore
        | Key::StoreTimeout
        | Key::Refresh => breaker::binding(key),
        Key::LimitKind
        | Key::MaxInFlight
        | Key::MaxWait
        | Key::MaxWaiting
        | Key::InitialLimit
        | Key::MinLimit
        | Key::MaxLimit
        | Key::Decrease
        | Key::DropOn
        | Key::DropAbove
        | Key::Tolerance
        | Key::Smoothing
        | Key::LimitProbeEvery => limit::binding(key),
        Key::ChaosFaultRate
        | Key::ChaosFault
        | Key::ChaosRetryAfter
        | Key::ChaosLatencyRate
        | Key::ChaosLatency
        | Key::ChaosLatencyMax
        | Key::ChaosSeed => chaos::binding(key),
    }
}

/// `setter(builder, value)`, when the value is of the key's kind (which
/// reading it made sure of).
fn apply<B, T>(builder: B, value: Option<T>, setter: fn(B, T) -> B) -> B {
    match value {
        Some(v) => setter(builder, v),
        None => builder,
    }
}

fn duration(v: &Value) -> Option<Duration> {
    match v {
        Value::Duration(d) => Some(*d),
        _ => None,
    }
}

fn maybe_duration(v: &Value) -> Option<Option<Duration>> {
    match v {
        Value::MaybeDuration(d) => Some(*d),
        _ => None,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// The policy `fields` describe, checked by retrykit-core, with the shared
/// budgets and breaker its names were resolved to.
pub(crate) fn build_policy(
    name: &str,
    fields: &Fields,
    budgets: Vec<Arc<RetryBudget>>,
    breaker: Option<Arc<CircuitBreaker>>,
    limit: Option<Arc<retrykit_core::limit::ConcurrencyLimit>>,
    chaos: Option<Arc<retrykit_core::chaos::Chaos>>,
) -> Result<Policy, PolicyError> {
    let mut b = Policy::builder()
        .name(name)
        .budgets(budgets)
        .breaker(breaker)
        .limit(limit)
        .chaos(chaos);
    // Always `Some` (the schema's words and defaults are retrykit-core's, tested).
    if let Some(backoff) = backoff(fields) {
        b = b.backoff(backoff);
    }
    for &key in POLICY_KEYS {
        if let (Some(set), Binding::Policy { set: apply, .. }) = (fields.get(key), binding(key)) {
            b = apply(b, &set.value);
        }
    }
    b.hedge(hedge(fields)).build()
}

/// The hedging settings, when `hedge_after` is set to something but
/// `"none"`: `hedge_floor` and `hedge_share` from `fields` or the built-in
/// defaults (which are retrykit-core's, tested).
fn hedge(fields: &Fields) -> Option<HedgeSettings> {
    let after = match fields.get(Key::HedgeAfter).map(|s| &s.value) {
        Some(Value::HedgeAfter(Some(HedgeAfterText::Fixed(d)))) => HedgeAfter::Fixed(*d),
        Some(Value::HedgeAfter(Some(HedgeAfterText::Percentile(p)))) => HedgeAfter::Percentile(*p),
        _ => return None,
    };
    let mut settings = HedgeSettings::new(after);
    if let Some(Value::Duration(d)) = fields.get(Key::HedgeFloor).map(|s| &s.value) {
        settings.floor = *d;
    }
    if let Some(Value::Number(n)) = fields.get(Key::HedgeShare).map(|s| &s.value) {
        settings.share = *n;
    }
    Some(settings)
}

/// The scope `key` (a budget's or a breaker's) gives, from `fields` or the
/// built-in default.
fn scope_of(fields: &Fields, key: Key) -> &'static str {
    match fields.get(key).map(|s| &s.value) {
        Some(Value::Scope(scope)) => scope,
        _ => key.built_in().word().unwrap_or("local"),
    }
}

/// The store URL `key` (a budget's or a breaker's) gives, when one is set.
fn store_of(fields: &Fields, key: Key) -> Option<String> {
    match fields.get(key).map(|s| &s.value) {
        Some(Value::MaybeStore(store)) => store.clone(),
        _ => None,
    }
}

/// The effective value of a policy key in a built policy, as a file writes it.
pub(crate) fn effective(policy: &Policy, key: Key) -> String {
    match binding(key) {
        Binding::Policy { get, .. } => get(policy),
        Binding::Budget { .. } | Binding::Breaker { .. } | Binding::Limit { .. } => String::new(),
    }
}

/// The effective value of a budget key in a built budget.
pub(crate) fn effective_budget(budget: &RetryBudget, key: Key) -> String {
    match binding(key) {
        Binding::Budget { get, .. } => get(budget),
        Binding::Policy { .. } | Binding::Breaker { .. } | Binding::Limit { .. } => String::new(),
    }
}

/// The backoff shape with its factor, from `fields` or the built-in defaults.
fn backoff(fields: &Fields) -> Option<Backoff> {
    let factor = match fields.get(Key::Factor).map(|s| &s.value) {
        Some(Value::Number(f)) => Some(*f),
        _ => Key::Factor.built_in().number(),
    }?;
    let shape = match fields.get(Key::Backoff).map(|s| &s.value) {
        Some(Value::Shape(shape)) => Some(*shape),
        _ => Key::Backoff.built_in().word(),
    }?;
    backoff_shape(shape, factor)
}

/// retrykit-core's backoff called `shape` (a word of the schema's [`SHAPES`](retrykit_schema::keys::SHAPES)).
fn backoff_shape(shape: &str, factor: f64) -> Option<Backoff> {
    [
        Backoff::Constant,
        Backoff::Linear,
        Backoff::Exponential { factor },
    ]
    .into_iter()
    .find(|b| b.name() == shape)
}

/// retrykit-core's jitter called `mode` (a word of the schema's [`JITTER_MODES`]).
pub(crate) fn jitter_mode(mode: &str) -> Option<Jitter> {
    [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ]
    .into_iter()
    .find(|j| JITTER_MODES.contains(&mode) && j.name() == mode)
}

/// Maps retrykit-core's problems to diagnostics at the text that set the
/// field, one of `keys` (the table's: a breaker's `window` is not a budget's).
pub(crate) fn report(
    error: &PolicyError,
    subject: &str,
    path: &str,
    name_span: &Span,
    (fields, keys): (&Fields, &[Key]),
    diags: &mut Diagnostics,
) {
    for problem in error.problems() {
        let key = Key::find(keys, problem.field);
        // `factor` rules also apply to the default factor of an exponential backoff.
        let set = key.and_then(|k| fields.get(k)).or_else(|| {
            (key == Some(Key::Factor))
                .then(|| fields.get(Key::Backoff))
                .flatten()
        });
        let mut d = Diagnostic::error(
            format!("{path}.{}", problem.field),
            format!("{subject}: `{}` {}", problem.field, problem.rule),
        );
        d = match set {
            Some(set) => {
                let shown = key.map_or_else(|| set.value.to_string(), |k| set.value.shown_for(k));
                let d = d.at(set.span.clone(), format!("{} = {shown}", problem.field));
                if set.layer == Layer::File {
                    d
                } else {
                    d.note(format!("this value comes from {}", set.layer))
                }
            }
            None => d.at(
                Some(name_span.clone()),
                format!("the built-in `{}` applies here", problem.field),
            ),
        };
        d = d.note(format!("fix: {}", problem.fix));
        if let Some((k, s)) = key
            .and_then(related)
            .and_then(|k| fields.get(k).map(|s| (k, s)))
        {
            let at = s
                .span
                .as_ref()
                .map(|s| format!(" at {s}"))
                .unwrap_or_default();
            d = d.note(format!("`{}` is {} ({}{at})", k.name(), s.value, s.layer));
        }
        diags.push(d);
    }
}

/// The other key a rule of retrykit-core's compares against.
fn related(key: Key) -> Option<Key> {
    match key {
        Key::Cap => Some(Key::Base),
        Key::MinDelay => Some(Key::Cap),
        Key::MaxAttempts => Some(Key::Deadline),
        Key::HedgeFloor | Key::HedgeShare => Some(Key::HedgeAfter),
        Key::MaxOpenFor => Some(Key::OpenFor),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::BUDGET_KEYS;
    use retrykit_schema::keys::SHAPES;

    #[test]
    fn every_word_of_the_schema_names_an_engine_value() {
        for shape in SHAPES {
            let backoff = backoff_shape(shape, 2.0);
            assert_eq!(backoff.map(|b| b.name()), Some(*shape));
        }
        for mode in JITTER_MODES {
            assert_eq!(jitter_mode(mode).map(|j| j.name()), Some(*mode));
        }
        assert_eq!(jitter_mode("proportional"), None, "needs its ratio");
    }

    #[test]
    fn every_key_is_bound_to_its_own_table() {
        for &key in POLICY_KEYS {
            assert!(matches!(binding(key), Binding::Policy { .. }), "{key:?}");
        }
        for &key in BUDGET_KEYS {
            assert!(matches!(binding(key), Binding::Budget { .. }), "{key:?}");
        }
        for &key in super::super::BREAKER_KEYS {
            assert!(matches!(binding(key), Binding::Breaker { .. }), "{key:?}");
        }
        for &key in super::super::LIMIT_KEYS {
            assert!(matches!(binding(key), Binding::Limit { .. }), "{key:?}");
        }
        for &key in retrykit_schema::keys::CHAOS_KEYS {
            assert!(matches!(binding(key), Binding::Policy { .. }), "{key:?}");
        }
    }
}
