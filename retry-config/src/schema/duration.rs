//! Durations as a file (or an environment variable) writes them: the one
//! grammar every duration key uses, and the form every message prints.
//!
//! A duration is a string of one or more terms, each a number and a unit;
//! the terms add up. Spaces may separate terms, and a number from its unit.
//!
//! ```text
//! duration = "0" | term { term }
//! term     = number [spaces] unit [spaces]
//! number   = digits [ "." digits ]
//! ```
//!
//! | unit | also written                      | length          |
//! |------|-----------------------------------|-----------------|
//! | `ns` | `nsec`, `nanos`                   | a nanosecond    |
//! | `us` | `µs`, `μs`, `usec`                | a microsecond   |
//! | `ms` | `msec`, `millis`                  | a millisecond   |
//! | `s`  | `sec`, `secs`, `second`, `seconds`| a second        |
//! | `m`  | `min`, `mins`, `minute`, `minutes`| 60 seconds      |
//! | `h`  | `hr`, `hrs`, `hour`, `hours`      | 60 minutes      |
//! | `d`  | `day`, `days`                     | 24 hours        |
//! | `w`  | `wk`, `wks`, `week`, `weeks`      | 7 days          |
//! | `y`  | `yr`, `yrs`, `year`, `years`      | 365 days        |
//!
//! Examples: `"250ms"`, `"1.5s"`, `"2m"`, `"1h 30m"`, `"5s5ms"`, `"100y"`.
//! Units are case-sensitive; a fraction is rounded down to whole nanoseconds.
//!
//! Refused, each with a message saying why and how to write it:
//! - a bare number (`"100"`, or `100` unquoted), except `"0"`: seconds or milliseconds?
//! - a sign (`"-5s"`): a duration counts time forward;
//! - `M`: minutes (`m`) or milliseconds (`ms`)?
//! - months: they have no fixed length (write days: `"30d"`);
//! - more than 100 years (`"100y"`, which is `"36500d"`): retry-core's limit
//!   ([`Policy::MAX_DURATION`]), which keeps every sum of durations far from
//!   overflow. The year is 365 days so that `"100y"` is exactly that limit.

use super::{Cx, Key, type_name};
use crate::diagnostic::Diagnostic;
use retry_core::Policy;
use retry_schema::suggest::did_you_mean;
use std::ops::Range;
use std::time::Duration;
use toml::de::DeValue;

const NANOS_PER_SEC: u128 = 1_000_000_000;
const DAY: u128 = 24 * 3600 * NANOS_PER_SEC;

/// Every spelling of every unit, and its length in nanoseconds.
const UNITS: &[(&[&str], u128)] = &[
    (&["ns", "nsec", "nanos"], 1),
    (&["us", "µs", "μs", "usec"], 1_000),
    (&["ms", "msec", "millis"], 1_000_000),
    (&["s", "sec", "secs", "second", "seconds"], NANOS_PER_SEC),
    (
        &["m", "min", "mins", "minute", "minutes"],
        60 * NANOS_PER_SEC,
    ),
    (&["h", "hr", "hrs", "hour", "hours"], 3600 * NANOS_PER_SEC),
    (&["d", "day", "days"], DAY),
    (&["w", "wk", "wks", "week", "weeks"], 7 * DAY),
    (&["y", "yr", "yrs", "year", "years"], 365 * DAY),
];

/// The units `show_duration` prints, longest first (a subset of [`UNITS`]).
const SHOWN: &[(&str, u128)] = &[
    ("y", 365 * DAY),
    ("d", DAY),
    ("h", 3600 * NANOS_PER_SEC),
    ("m", 60 * NANOS_PER_SEC),
    ("s", NANOS_PER_SEC),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// Digits of a fraction past this many are below a nanosecond for every
/// unit up to a year (and would overflow the arithmetic), so they are dropped.
const FRACTION_DIGITS: usize = 18;

const UNITS_NOTE: &str =
    "units: ns, us, ms, s, m, h, d, w, y (e.g. \"250ms\", \"1.5s\", \"1h 30m\")";

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    Empty,
    /// Starts with `-` or `+`.
    Signed(char),
    /// A number with no unit after it.
    NoUnit(String),
    /// Something that is not a number where a number must be.
    NotANumber(String),
    UnknownUnit(String),
    /// `M`: minutes or milliseconds?
    AmbiguousM,
    /// `month`, `months`.
    Months,
    /// Over [`Policy::MAX_DURATION`].
    TooLong,
}

/// Reads `text` by the grammar in the module doc.
pub(crate) fn parse(text: &str) -> Result<Duration, Invalid> {
    let text = text.trim();
    match text.chars().next() {
        None => return Err(Invalid::Empty),
        Some(sign @ ('-' | '+')) => return Err(Invalid::Signed(sign)),
        _ if text == "0" => return Ok(Duration::ZERO),
        _ => {}
    }
    let max = Policy::MAX_DURATION.as_nanos();
    let mut total: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        if number.is_empty() {
            let found = rest.split_whitespace().next().unwrap_or(rest);
            return Err(match found.chars().next() {
                Some(sign @ ('-' | '+')) => Invalid::Signed(sign),
                _ => Invalid::NotANumber(found.to_owned()),
            });
        }
        let after = after.trim_start();
        let unit_end = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let per_unit = unit_length(unit)?.ok_or_else(|| Invalid::NoUnit(number.to_owned()))?;
        let term = nanos(number, per_unit)?;
        // Stopping at the limit bounds the work (and the sum) for any input.
        total = total.saturating_add(term);
        if total > max {
            return Err(Invalid::TooLong);
        }
        rest = after.trim_start();
    }
    // total ≤ 100 years in nanoseconds, far below u64::MAX.
    Ok(Duration::from_nanos(
        u64::try_from(total).map_err(|_| Invalid::TooLong)?,
    ))
}

/// The length of `unit` in nanoseconds; `None` when there is no unit.
fn unit_length(unit: &str) -> Result<Option<u128>, Invalid> {
    if unit.is_empty() {
        return Ok(None);
    }
    if let Some((_, length)) = UNITS.iter().find(|(names, _)| names.contains(&unit)) {
        return Ok(Some(*length));
    }
    Err(match unit {
        "M" => Invalid::AmbiguousM,
        "month" | "months" | "mo" | "mon" => Invalid::Months,
        other => Invalid::UnknownUnit(other.to_owned()),
    })
}

/// `number` (digits, with at most one `.`) units of `per_unit` nanoseconds,
/// saturating: anything that large is over the limit anyway.
fn nanos(number: &str, per_unit: u128) -> Result<u128, Invalid> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let well_formed = !whole.is_empty()
        && (number.len() == whole.len() || !fraction.is_empty())
        && !fraction.contains('.');
    if !well_formed {
        return Err(Invalid::NotANumber(number.to_owned()));
    }
    let digits = |s: &str| {
        s.bytes().fold(0u128, |n, b| {
            n.saturating_mul(10).saturating_add(u128::from(b - b'0'))
        })
    };
    let fraction = &fraction[..fraction.len().min(FRACTION_DIGITS)];
    let scale = 10u128.pow(fraction.len() as u32);
    Ok(digits(whole)
        .saturating_mul(per_unit)
        .saturating_add(digits(fraction) * per_unit / scale))
}

/// A duration as a user would write it, in the grammar above: `"1m 30s"`,
/// `"250ms"`, `"0s"`.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(retry_config::show_duration(Duration::from_millis(1500)), "1s 500ms");
/// assert_eq!(retry_config::show_duration(Duration::from_secs(90 * 24 * 3600)), "90d");
/// ```
pub fn show_duration(d: Duration) -> String {
    let mut left = d.as_nanos();
    if left == 0 {
        return "0s".to_owned();
    }
    let mut parts = Vec::new();
    for (unit, length) in SHOWN {
        if left >= *length {
            parts.push(format!("{}{unit}", left / length));
            left %= length;
        }
    }
    parts.join(" ")
}

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
    parse(text).map_err(|invalid| match invalid {
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
        .suggest(did_you_mean(
            &unit,
            UNITS.iter().flat_map(|(names, _)| names.iter().copied()),
        ))
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
        Invalid::TooLong => {
            let days = Policy::MAX_DURATION.as_nanos() / DAY;
            err(
                format!("`{name}` is too long: at most {} years", days / 365),
                "too long",
            )
            .note(format!(
                "the limit is {}y ({days}d, a year being 365 days)",
                days / 365
            ))
            .note(format!(
                "use a shorter {name}, e.g. {}",
                cx.fix(key, key.example())
            ))
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_numbers_and_units_are_refused_by_kind() {
        assert_eq!(parse(""), Err(Invalid::Empty));
        assert_eq!(parse("1.2.3s"), Err(Invalid::NotANumber("1.2.3".into())));
        assert_eq!(parse("1.s"), Err(Invalid::NotANumber("1.".into())));
        assert_eq!(parse(".5s"), Err(Invalid::NotANumber(".5".into())));
        assert_eq!(parse("s"), Err(Invalid::NotANumber("s".into())));
        assert_eq!(parse("5s -3s"), Err(Invalid::Signed('-')));
        assert_eq!(parse("5s 3"), Err(Invalid::NoUnit("3".into())));
        assert_eq!(parse("1e3s"), Err(Invalid::UnknownUnit("e".into())));
        assert_eq!(parse("5 S"), Err(Invalid::UnknownUnit("S".into())));
    }

    #[test]
    fn long_fractions_round_down_to_nanoseconds() {
        let third = "0.333333333333333333333333333333333333s";
        assert_eq!(parse(third), Ok(Duration::from_nanos(333_333_333)));
        assert_eq!(parse("1.0000000001s"), Ok(Duration::from_secs(1)));
    }

    #[test]
    fn a_long_input_is_read_in_one_pass_and_stops_at_the_limit() {
        let many = "1ns ".repeat(100_000);
        assert_eq!(parse(&many), Ok(Duration::from_nanos(100_000)));
        let over = "99y ".repeat(100_000);
        assert_eq!(parse(&over), Err(Invalid::TooLong));
    }
}
