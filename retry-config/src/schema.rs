//! Reading a value of the file (or of an environment variable) as its key
//! says: the keys, the kinds of value and the defaults are retrykit-schema's
//! ([`retrykit_schema::keys`]); this is how each kind is read from TOML, with
//! a diagnostic at the text for anything else.

// A rejected value is the cold path: boxing its diagnostic would only add noise.
#![allow(clippy::result_large_err)]

use crate::diagnostic::{Diagnostic, Diagnostics, Source, Span};
use retrykit_core::Jitter;
use retrykit_schema::suggest::did_you_mean;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;
use toml::de::DeValue;

mod classes;
mod duration;
pub(crate) mod engine;
mod http;
mod jitter;
mod names;

use retrykit_schema::duration::show_duration;
use retrykit_schema::hedge::{HEDGE_AFTER_FORMS, HedgeAfterText, Percentile};
pub(crate) use retrykit_schema::keys::{
    BREAKER_KEYS, BUDGET_KEYS, Key, Kind, LIMIT_KEYS, POLICY_KEYS,
};
use retrykit_schema::keys::{
    BUDGET_MODES, CHAOS_FAULTS, LIMIT_KINDS, NONE, PROPORTIONAL, SCOPES, SHAPES,
};

/// A parsed value of some key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A backoff shape (one of [`SHAPES`]), before its factor is known.
    Shape(&'static str),
    Number(f64),
    Duration(Duration),
    /// A duration that may be switched off with `"none"`.
    MaybeDuration(Option<Duration>),
    Jitter(Jitter),
    Count(u32),
    Classes(Vec<String>),
    /// Budget names; none for `"none"`.
    Names(Vec<String>),
    /// A breaker's name; `None` for `"none"`.
    MaybeName(Option<String>),
    /// HTTP status codes (the engine checks which it accepts).
    Statuses(Vec<u16>),
    /// HTTP method names (the engine checks their form).
    Methods(Vec<String>),
    /// gRPC status codes, by number (written by name).
    GrpcCodes(Vec<u8>),
    Bytes(u64),
    /// How a budget limits retries (one of [`BUDGET_MODES`]).
    Mode(&'static str),
    /// Where a budget is kept (one of [`SCOPES`]).
    Scope(&'static str),
    /// A budget's store URL, or `"none"`.
    MaybeStore(Option<String>),
    /// `hedge_after`: a percentile or a duration, or `"none"`.
    HedgeAfter(Option<HedgeAfterText>),
    /// A concurrency limit's kind (one of [`LIMIT_KINDS`]).
    LimitKind(&'static str),
    /// The class of chaos's faults (one of [`CHAOS_FAULTS`]).
    Fault(&'static str),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Shape(s) => f.write_str(s),
            Value::Number(n) => f.write_str(&crate::show_number(*n)),
            Value::Duration(d) | Value::MaybeDuration(Some(d)) => f.write_str(&show_duration(*d)),
            Value::MaybeDuration(None) | Value::MaybeStore(None) | Value::MaybeName(None) => {
                f.write_str(NONE)
            }
            Value::MaybeName(Some(name)) => f.write_str(name),
            Value::Names(names) => match names.as_slice() {
                [] => f.write_str(NONE),
                [one] => f.write_str(one),
                many => {
                    let quoted: Vec<String> = many.iter().map(|n| format!("{n:?}")).collect();
                    write!(f, "[{}]", quoted.join(", "))
                }
            },
            Value::Mode(s) | Value::Scope(s) | Value::LimitKind(s) | Value::Fault(s) => {
                f.write_str(s)
            }
            // A URL may carry a password: show it without.
            Value::MaybeStore(Some(url)) => f.write_str(&retrykit_schema::keys::store_shown(url)),
            Value::Jitter(Jitter::Proportional(r)) => {
                write!(f, "{{ {PROPORTIONAL} = {} }}", crate::show_number(*r))
            }
            Value::Jitter(j) => f.write_str(j.name()),
            Value::Count(0) => f.write_str("0 (unlimited)"),
            Value::Count(n) => write!(f, "{n}"),
            Value::Classes(c) => write!(f, "[{}]", c.join(", ")),
            Value::Statuses(codes) => {
                let codes: Vec<String> = codes.iter().map(u16::to_string).collect();
                write!(f, "[{}]", codes.join(", "))
            }
            Value::Methods(m) => {
                let quoted: Vec<String> = m.iter().map(|m| format!("{m:?}")).collect();
                write!(f, "[{}]", quoted.join(", "))
            }
            Value::GrpcCodes(codes) => {
                let names = codes.iter().map(|c| {
                    let name = retrykit_schema::grpc::code_name(*c);
                    format!("{:?}", name.unwrap_or("?"))
                });
                write!(f, "[{}]", names.collect::<Vec<_>>().join(", "))
            }
            Value::Bytes(n) => write!(f, "{n}"),
            Value::HedgeAfter(Some(after)) => write!(f, "{after}"),
            Value::HedgeAfter(None) => f.write_str(NONE),
        }
    }
}

impl Value {
    /// The value as a message about `key` shows it: `0 (unlimited)` is
    /// `max_attempts`'s alone (a breaker's `min_calls = 0` is just 0).
    pub(crate) fn shown_for(&self, key: Key) -> String {
        match self {
            Value::Count(n) if key != Key::MaxAttempts => n.to_string(),
            other => other.to_string(),
        }
    }
}

/// Where a value being read came from, to place its diagnostics.
pub(crate) struct Cx<'a> {
    pub source: &'a Arc<Source>,
    /// Added to every span of the value (the `NAME=` before an environment value).
    pub offset: usize,
    /// The dotted key, or the variable name, used in messages.
    pub key_path: &'a str,
    /// How the user should write the fix: `base = "100ms"` or `VAR=100ms`.
    pub env_var: Option<&'a str>,
    /// The error classes the program declares, when known (besides the built-in ones).
    pub known_classes: Option<&'a [String]>,
}

impl Cx<'_> {
    pub(crate) fn span(&self, range: Range<usize>) -> Span {
        Span::new(
            self.source.clone(),
            range.start + self.offset..range.end + self.offset,
        )
    }

    fn error(&self, range: Range<usize>, message: String, label: &str) -> Diagnostic {
        Diagnostic::error(self.key_path, message).at(Some(self.span(range)), label)
    }

    /// How to write `key = <example>` in this context.
    fn fix(&self, key: Key, example: &str) -> String {
        match self.env_var {
            // A variable writes a list as comma-separated words.
            Some(var) => {
                let words = example.trim_start_matches('[').trim_end_matches(']');
                let words: Vec<&str> = words
                    .split(',')
                    .map(|w| w.trim().trim_matches('"'))
                    .collect();
                format!("{var}={}", words.join(","))
            }
            None => format!("{} = {example}", key.name()),
        }
    }
}

/// Reads `value` as `key`, adding its problems to `diags`: a value of the
/// wrong form (then `None`), and the checks of what it names (`retry_on`).
pub(crate) fn read(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
    diags: &mut Diagnostics,
) -> Option<Value> {
    match parse_value(key, value, cx, diags) {
        Ok(parsed) => {
            if key.kind() == Kind::Classes {
                classes::check(key, value, cx, diags);
            }
            Some(parsed)
        }
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

/// Reads `value` as `key`'s type; the error says what was expected and how
/// to write it. A list whose several items are bad adds all but the last
/// item's problem to `diags`, and returns the last.
fn parse_value(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
    diags: &mut Diagnostics,
) -> Result<Value, Diagnostic> {
    let range = value.span();
    let wrong_type = |expected: &str| {
        cx.error(
            range.clone(),
            format!(
                "`{}` must be {expected}, found {}",
                key.name(),
                type_name(value.get_ref())
            ),
            "wrong type",
        )
        .note(format!("write it as: {}", cx.fix(key, key.example())))
    };
    let name = key.name();
    match key.kind() {
        Kind::Shape => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a string"))?;
            match SHAPES.iter().find(|shape| **shape == s) {
                Some(shape) => Ok(Value::Shape(shape)),
                None => Err(cx
                    .error(
                        range,
                        format!("unknown backoff shape `{s}`"),
                        "unknown shape",
                    )
                    .suggest(did_you_mean(s, SHAPES.iter().copied()))
                    .note(format!("expected one of: {}", SHAPES.join(", ")))),
            }
        }
        Kind::Number => number(value.get_ref())
            .map(Value::Number)
            .ok_or_else(|| wrong_type("a number")),
        Kind::Rate => {
            let n = number(value.get_ref()).ok_or_else(|| wrong_type("a number from 0 to 1"))?;
            if (0.0..=1.0).contains(&n) {
                Ok(Value::Number(n))
            } else {
                Err(cx
                    .error(
                        range,
                        format!(
                            "`{name}` must be from 0 to 1, found {}",
                            crate::show_number(n)
                        ),
                        "out of range",
                    )
                    .note("it is the share of attempts affected: 0.05 is 5%")
                    .note(format!("write it as: {}", cx.fix(key, key.example()))))
            }
        }
        Kind::FaultClass => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a string"))?;
            match CHAOS_FAULTS.iter().find(|class| **class == s) {
                Some(class) => Ok(Value::Fault(class)),
                None => Err(cx
                    .error(range, format!("unknown fault class `{s}`"), "unknown class")
                    .suggest(did_you_mean(s, CHAOS_FAULTS.iter().copied()))
                    .note(format!("expected one of: {}", CHAOS_FAULTS.join(", ")))),
            }
        }
        Kind::Duration => duration::read(key, value, cx).map(Value::Duration),
        Kind::DurationOrNone => {
            if value.get_ref().as_str() == Some(NONE) {
                return Ok(Value::MaybeDuration(None));
            }
            duration::read(key, value, cx).map(|d| Value::MaybeDuration(Some(d)))
        }
        Kind::Jitter => jitter::read(value, cx).map(Value::Jitter),
        Kind::Count => {
            // Only `max_attempts` reads 0 as unlimited; a breaker's counts
            // start at 1 (their own rules say why).
            let unlimited = key == Key::MaxAttempts;
            let Some(int) = value.get_ref().as_integer() else {
                return Err(wrong_type(if unlimited {
                    "a whole number (0 = unlimited)"
                } else {
                    "a whole number"
                }));
            };
            let parsed = i128::from_str_radix(int.as_str(), int.radix()).ok();
            let least = if unlimited { 0 } else { 1 };
            let bound = if unlimited {
                format!("from 0 to {}", u32::MAX)
            } else if parsed.is_some_and(|n| n > 0) {
                format!("at most {}", u32::MAX)
            } else {
                format!("at least {least}")
            };
            match parsed.and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Ok(Value::Count(n)),
                None => Err(cx
                    .error(
                        range,
                        format!("`{name}` must be {bound}, found {int}"),
                        "out of range",
                    )
                    .note(if key == Key::MaxAttempts {
                        "it counts calls, the first included; 0 means unlimited (needs a deadline)"
                            .to_owned()
                    } else {
                        format!("write it as: {}", cx.fix(key, key.example()))
                    })),
            }
        }
        Kind::Classes => classes::names(key, value, cx).map(Value::Classes),
        Kind::Statuses => http::statuses(key, value, cx)
            .map(Value::Statuses)
            .map_err(|problems| all_but_last(problems, diags)),
        Kind::Methods => http::methods(key, value, cx)
            .map(Value::Methods)
            .map_err(|problems| all_but_last(problems, diags)),
        Kind::GrpcCodes => http::grpc_codes(key, value, cx)
            .map(Value::GrpcCodes)
            .map_err(|problems| all_but_last(problems, diags)),
        Kind::Bytes => {
            let Some(int) = value.get_ref().as_integer() else {
                return Err(wrong_type("a whole number of bytes"));
            };
            let parsed = i128::from_str_radix(int.as_str(), int.radix()).ok();
            match parsed.and_then(|n| u64::try_from(n).ok()) {
                Some(n) => Ok(Value::Bytes(n)),
                None => Err(cx
                    .error(
                        range,
                        format!("`{name}` must be a whole number of bytes from 0, found {int}"),
                        "out of range",
                    )
                    .note(format!("write it as: {}", cx.fix(key, key.example())))),
            }
        }
        Kind::NamesOrNone => names::budgets(value, cx).map(Value::Names),
        Kind::NameOrNone => names::breaker(key, value, cx).map(Value::MaybeName),
        Kind::BudgetMode => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a string"))?;
            match BUDGET_MODES.iter().find(|mode| **mode == s) {
                Some(mode) => Ok(Value::Mode(mode)),
                None => Err(cx
                    .error(range, format!("unknown budget mode `{s}`"), "unknown mode")
                    .suggest(did_you_mean(s, BUDGET_MODES.iter().copied()))
                    .note(format!("expected one of: {}", BUDGET_MODES.join(", ")))),
            }
        }
        Kind::Scope => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a string"))?;
            match SCOPES.iter().find(|scope| **scope == s) {
                Some(scope) => Ok(Value::Scope(scope)),
                None => Err(cx
                    .error(
                        range,
                        format!(
                            "unknown {} scope `{s}`",
                            if key == Key::BreakerScope {
                                "breaker"
                            } else {
                                "budget"
                            }
                        ),
                        "unknown scope",
                    )
                    .suggest(did_you_mean(s, SCOPES.iter().copied()))
                    .note(format!("expected one of: {}", SCOPES.join(", ")))),
            }
        }
        Kind::LimitKind => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a string"))?;
            match LIMIT_KINDS.iter().find(|kind| **kind == s) {
                Some(kind) => Ok(Value::LimitKind(kind)),
                None => Err(cx
                    .error(
                        range,
                        format!("unknown concurrency limit kind `{s}`"),
                        "unknown kind",
                    )
                    .suggest(did_you_mean(s, LIMIT_KINDS.iter().copied()))
                    .note(format!("expected one of: {}", LIMIT_KINDS.join(", ")))),
            }
        }
        Kind::HedgeAfter => {
            match value.get_ref().as_str() {
                Some(NONE) => Ok(Value::HedgeAfter(None)),
                Some(text) if text.trim_start().starts_with('p') => {
                    match Percentile::parse(text.trim()) {
                    Some(p) => Ok(Value::HedgeAfter(Some(HedgeAfterText::Percentile(p)))),
                    None => Err(cx
                        .error(
                            range,
                            format!("`{name}` must be a percentile from p50 to p99.9, found `{text}`"),
                            "not a percentile",
                        )
                        .note(format!("expected {HEDGE_AFTER_FORMS}"))
                        .note(format!("write it as: {}", cx.fix(key, key.example())))),
                }
                }
                _ => duration::read(key, value, cx)
                    .map(|d| Value::HedgeAfter(Some(HedgeAfterText::Fixed(d))))
                    .map_err(|d| d.note(format!("`{name}` may be {HEDGE_AFTER_FORMS}"))),
            }
        }
        Kind::StoreOrNone => {
            let s = value
                .get_ref()
                .as_str()
                .ok_or_else(|| wrong_type("a URL string"))?;
            Ok(Value::MaybeStore((s != NONE).then(|| s.to_owned())))
        }
    }
}

/// Adds every problem but the last to `diags`, and returns the last (there is at least one).
fn all_but_last(mut problems: Vec<Diagnostic>, diags: &mut Diagnostics) -> Diagnostic {
    let last = problems.pop();
    problems.into_iter().for_each(|d| diags.push(d));
    last.unwrap_or_else(|| Diagnostic::error("", "a list was rejected without a reason"))
}

pub(crate) fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        // Past i64, an integer is still a number (far out of any range, which
        // the range check then says); i128 covers every 64-bit literal.
        DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix())
            .ok()
            .map(|n| n as f64)
            .or_else(|| i.as_str().parse().ok()),
        DeValue::Float(f) => {
            let text = f.as_str().replace('_', "");
            match text.as_str() {
                "inf" | "+inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                "nan" | "+nan" | "-nan" => Some(f64::NAN),
                t => t.parse().ok(),
            }
        }
        _ => None,
    }
}
