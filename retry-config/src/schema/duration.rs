//! Reading a duration key of the file or an environment variable:
//! retrykit-schema's grammar ([`retrykit_schema::duration`], the one every
//! duration in the project is read by), with each refusal placed at the
//! text and worded for the key that holds it.

use super::{Cx, Key, type_name};
use crate::diagnostic::Diagnostic;
use retrykit_schema::duration::{
    Invalid, MAX_YEARS, UNITS_NOTE, YEAR_DAYS, parse_duration, unit_names,
};
use retrykit_schema::suggest::did_you_mean;
use std::ops::Range;
use std::time::Duration;
use toml::de::DeValue;

/// Reads `value` as the duration `key`; the error names the key, the rule
/// and how to write it.
pub(crate) fn read(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Duration, Diagnostic> {
    let range = value.span();
    let name = key.name();
    let text = match value.get_ref() {
        DeValue::String(s) => s.as_ref(),
        bare @ (DeValue::Integer(_) | DeValue::Float(_)) => {
            let shown = match bare {
                DeValue::Integer(i) => i.to_string(),
                DeValue::Float(f) => f.to_string(),
                _ => String::new(),
            };
            if let Some(sign) = shown.chars().next().filter(|c| matches!(c, '-' | '+')) {
                let fixed = format!("{}ms", &shown[1..]);
                return Err(signed(key, cx, range, sign, &fixed));
            }
            return Err(cx
                .error(
                    range,
                    format!("`{name}` needs a unit: a bare number is ambiguous"),
                    "bare number",
                )
                .note(format!(
                    "write a string with a unit, e.g. {}",
                    cx.fix(key, &format!("\"{shown}ms\""))
                ))
                .note(UNITS_NOTE));
        }
        other => {
            return Err(cx
                .error(
                    range,
                    format!(
                        "`{name}` must be a duration string, found {}",
                        type_name(other)
                    ),
                    "wrong type",
                )
                .note(format!("write it as: {}", cx.fix(key, key.example()))));
        }
    };
    let trimmed = text.trim();
    let example = || format!("write it as: {}", cx.fix(key, key.example()));
    let err = |message: String, label: &str| cx.error(range.clone(), message, label);
    parse_duration(text).map_err(|invalid| match invalid {
        Invalid::Empty => err(format!("`{name}` is empty"), "empty")
            .note(example())
            .note(UNITS_NOTE),
        Invalid::Signed(sign) => {
            let unsigned = trimmed.trim_start_matches(['-', '+']).trim_start();
            signed(key, cx, range.clone(), sign, unsigned)
        }
        Invalid::NoUnit(number) if number == trimmed => err(
            format!("`{name}` needs a unit: \"{text}\" has none"),
            "no unit",
        )
        .note(format!(
            "write it as: {}",
            cx.fix(key, &format!("\"{trimmed}ms\""))
        ))
        .note(UNITS_NOTE),
        Invalid::NoUnit(number) => err(
            format!("`{name}` needs a unit after `{number}` in \"{trimmed}\""),
            "no unit",
        )
        .note("every number needs a unit, e.g. \"1s 500ms\"")
        .note(UNITS_NOTE),
        Invalid::NotANumber(found) => err(
            format!("`{name}` is not a duration: expected a number, found `{found}`"),
            "not a duration",
        )
        .note(example())
        .note(UNITS_NOTE),
        Invalid::UnknownUnit(unit) => err(
            format!("`{name}` has an unknown unit `{unit}`"),
            "unknown unit",
        )
        .suggest(did_you_mean(&unit, unit_names()))
        .note(UNITS_NOTE),
        Invalid::AmbiguousM => err(
            format!("`{name}` uses `M`, which is ambiguous"),
            "minutes or milliseconds?",
        )
        .note("did you mean `m` (minutes) or `ms` (milliseconds)? Months are not a unit")
        .note(UNITS_NOTE),
        Invalid::Months => err(
            format!("`{name}` is in months, which have no fixed length"),
            "months",
        )
        .note(format!(
            "write days instead, e.g. {}",
            cx.fix(key, "\"30d\"")
        )),
        Invalid::TooLong => err(
            format!("`{name}` is too long: at most {MAX_YEARS} years"),
            "too long",
        )
        .note(format!(
            "the limit is {MAX_YEARS}y ({}d, a year being {YEAR_DAYS} days)",
            MAX_YEARS * YEAR_DAYS
        ))
        .note(format!(
            "use a shorter {name}, e.g. {}",
            cx.fix(key, key.example())
        )),
    })
}

/// A duration written with a sign; `unsigned` is how to write it instead.
fn signed(key: Key, cx: &Cx<'_>, range: Range<usize>, sign: char, unsigned: &str) -> Diagnostic {
    let name = key.name();
    let what = if sign == '-' {
        format!("`{name}` cannot be negative")
    } else {
        format!("`{name}` takes no sign")
    };
    cx.error(range, what, "signed")
        .note(format!(
            "write it as: {}",
            cx.fix(key, &format!("\"{unsigned}\""))
        ))
        .note("a duration counts time forward; there are no negative waits")
}
