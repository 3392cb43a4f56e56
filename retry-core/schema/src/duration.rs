//! Durations as people write them: the one grammar of every duration key
//! in retry.toml, its environment overrides and the tools' duration flags
//! (`retry-policy simulate --tick`, the demos' `--outage`), and the form
//! every message prints.
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
//! - more than 100 years (`"100y"`, which is `"36500d"`): [`MAX`], retrykit-core's
//!   limit on every duration, which keeps every sum of durations far from
//!   overflow. The year is 365 days so that `"100y"` is exactly that limit.
//!
//! ```
//! use retrykit_schema::duration::{Invalid, parse_duration, show_duration};
//! use std::time::Duration;
//! assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
//! assert_eq!(parse_duration("5M"), Err(Invalid::AmbiguousM));
//! assert_eq!(show_duration(Duration::from_millis(1500)), "1s 500ms");
//! ```

use std::fmt;
use std::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;
const DAY: u128 = 24 * 3600 * NANOS_PER_SEC;

/// Days in the year of the `y` unit.
///
/// ```
/// assert_eq!(retrykit_schema::duration::YEAR_DAYS, 365);
/// ```
pub const YEAR_DAYS: u64 = 365;

/// The limit on every duration, in years of [`YEAR_DAYS`].
///
/// ```
/// assert_eq!(retrykit_schema::duration::MAX_YEARS, 100);
/// ```
pub const MAX_YEARS: u64 = 100;

/// The longest duration anything accepts: 100 years, exactly `"100y"`.
/// Keeping every duration far below `u64::MAX` nanoseconds is what lets the
/// engine add them without overflow (retrykit-core's `Policy::MAX_DURATION`).
///
/// ```
/// use retrykit_schema::duration::{MAX, parse_duration};
/// assert_eq!(parse_duration("100y"), Ok(MAX));
/// ```
pub const MAX: Duration = Duration::from_secs(MAX_YEARS * YEAR_DAYS * 24 * 3600);

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
    (
        &["y", "yr", "yrs", "year", "years"],
        YEAR_DAYS as u128 * DAY,
    ),
];

/// The units `show_duration` prints, longest first (a subset of [`UNITS`]).
const SHOWN: &[(&str, u128)] = &[
    ("y", YEAR_DAYS as u128 * DAY),
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

/// The units in one line, for messages about a duration.
///
/// ```
/// assert!(retrykit_schema::duration::UNITS_NOTE.starts_with("units: ns"));
/// ```
pub const UNITS_NOTE: &str =
    "units: ns, us, ms, s, m, h, d, w, y (e.g. \"250ms\", \"1.5s\", \"1h 30m\")";

/// Why a text is not a duration. Its `Display` says the rule and the fix
/// in one line, for a command-line flag; retrykit-config words the same cases
/// for a key of the file.
///
/// ```
/// let invalid = retrykit_schema::duration::parse_duration("-5s").unwrap_err();
/// assert!(invalid.to_string().contains("cannot be negative"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Nothing but spaces.
    Empty,
    /// Starts with `-` or `+`.
    Signed(char),
    /// A number with no unit after it.
    NoUnit(String),
    /// Something that is not a number where a number must be.
    NotANumber(String),
    /// A unit no spelling in the table matches.
    UnknownUnit(String),
    /// `M`: minutes or milliseconds?
    AmbiguousM,
    /// `month`, `months`.
    Months,
    /// Over [`MAX`].
    TooLong,
}

/// Reads `text` by the grammar in the module doc. Its work is linear in the
/// text and stops at the limit, whatever the input.
///
/// # Errors
///
/// An [`Invalid`] saying what is wrong: an empty or signed text, a number or
/// unit that cannot be read, an ambiguous or calendar unit, or a duration
/// over [`MAX`].
///
/// ```
/// use std::time::Duration;
/// assert_eq!(retrykit_schema::duration::parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, Invalid> {
    let text = text.trim();
    match text.chars().next() {
        None => return Err(Invalid::Empty),
        Some(sign @ ('-' | '+')) => return Err(Invalid::Signed(sign)),
        _ if text == "0" => return Ok(Duration::ZERO),
        _ => {}
    }
    let max = MAX.as_nanos();
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
/// use retrykit_schema::duration::show_duration;
/// use std::time::Duration;
/// assert_eq!(show_duration(Duration::from_millis(1500)), "1s 500ms");
/// assert_eq!(show_duration(Duration::from_secs(90 * 24 * 3600)), "90d");
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

/// A duration as a message says it to a person: in one unit, to three
/// significant digits (a tenth of a second from 1s), under a minute, and in
/// two units, the smaller rounded, from a minute (`"222ms"`, `"1.5s"`,
/// `"2m 30s"`). A file or `show` needs the exact form,
/// [`show_duration`].
///
/// ```
/// use retrykit_schema::duration::round_duration;
/// use std::time::Duration;
/// assert_eq!(round_duration(Duration::from_nanos(221_542_025)), "222ms");
/// assert_eq!(round_duration(Duration::from_millis(1_540)), "1.5s");
/// assert_eq!(round_duration(Duration::from_millis(150_400)), "2m 30s");
/// ```
pub fn round_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let round = |unit: u128| (ns + unit / 2) / unit;
    if ns == 0 {
        return "0s".to_owned();
    }
    if ns < 1_000 {
        return format!("{ns}ns");
    }
    if round(1_000) < 1_000 {
        return format!("{}us", round(1_000));
    }
    if round(1_000_000) < 1_000 {
        return format!("{}ms", round(1_000_000));
    }
    let tenths = round(NANOS_PER_SEC / 10);
    if tenths < 600 {
        return match tenths % 10 {
            0 => format!("{}s", tenths / 10),
            tenth => format!("{}.{tenth}s", tenths / 10),
        };
    }
    // The largest unit it holds and the next: rounded to the next.
    let whole = round(NANOS_PER_SEC).saturating_mul(NANOS_PER_SEC);
    let largest = SHOWN
        .iter()
        .position(|(_, length)| whole >= *length)
        .unwrap_or(0);
    let next = SHOWN.get(largest + 1).map_or(1, |(_, length)| *length);
    let rounded = round(next).saturating_mul(next);
    show_duration(Duration::new(
        u64::try_from(rounded / NANOS_PER_SEC).unwrap_or(u64::MAX),
        (rounded % NANOS_PER_SEC) as u32,
    ))
}

/// Every spelling of every unit, for a did-you-mean on an unknown one.
///
/// ```
/// assert!(retrykit_schema::duration::unit_names().any(|u| u == "ms"));
/// ```
pub fn unit_names() -> impl Iterator<Item = &'static str> {
    UNITS.iter().flat_map(|(names, _)| names.iter().copied())
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::Empty => f.write_str("the duration is empty: write a number and a unit, e.g. 250ms"),
            Invalid::Signed('-') => f.write_str("a duration cannot be negative: it counts time forward; write it without the `-`"),
            Invalid::Signed(sign) => write!(f, "a duration takes no sign: write it without the `{sign}`"),
            Invalid::NoUnit(number) => write!(
                f,
                "`{number}` needs a unit (seconds or milliseconds?): write it as {number}ms or {number}s"
            ),
            Invalid::NotANumber(found) => write!(f, "expected a number, found `{found}`"),
            Invalid::UnknownUnit(unit) => {
                write!(f, "unknown unit `{unit}`")?;
                match crate::suggest::did_you_mean(unit, unit_names()) {
                    Some(meant) => write!(f, " (did you mean `{meant}`?)"),
                    None => Ok(()),
                }
            }
            Invalid::AmbiguousM => f.write_str("`M` is ambiguous: write `m` (minutes) or `ms` (milliseconds); months are not a unit"),
            Invalid::Months => f.write_str("months have no fixed length: write days instead, e.g. 30d"),
            Invalid::TooLong => write!(f, "too long: at most {MAX_YEARS} years ({MAX_YEARS}y, {}d)", MAX_YEARS * YEAR_DAYS),
        }?;
        write!(f, "; {UNITS_NOTE}")
    }
}

impl std::error::Error for Invalid {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_durations_as_a_person_reads_them() {
        let ns = Duration::from_nanos;
        for (d, shown) in [
            (Duration::ZERO, "0s"),
            (ns(25), "25ns"),
            (ns(1_499), "1us"),
            (ns(999_600), "1ms"),
            (ns(221_542_025), "222ms"),
            (ns(999_600_000), "1s"),
            (Duration::from_millis(1_500), "1.5s"),
            (Duration::from_millis(10_000), "10s"),
            (Duration::from_micros(10_000_200), "10s"),
            (Duration::from_millis(10_460), "10.5s"),
            (Duration::from_millis(59_940), "59.9s"),
            (Duration::from_millis(9_960), "10s"),
            (Duration::from_millis(59_960), "1m"),
            (Duration::from_millis(90_400), "1m 30s"),
            (Duration::from_secs(2 * 3600 - 1), "2h"),
            (Duration::from_secs(26 * 3600 + 1_800), "1d 3h"),
            (Duration::MAX, "584942417355y 26d"),
        ] {
            assert_eq!(round_duration(d), shown, "{d:?}");
        }
    }

    #[test]
    fn malformed_numbers_and_units_are_refused_by_kind() {
        assert_eq!(parse_duration(""), Err(Invalid::Empty));
        assert_eq!(
            parse_duration("1.2.3s"),
            Err(Invalid::NotANumber("1.2.3".into()))
        );
        assert_eq!(parse_duration("1.s"), Err(Invalid::NotANumber("1.".into())));
        assert_eq!(parse_duration(".5s"), Err(Invalid::NotANumber(".5".into())));
        assert_eq!(parse_duration("s"), Err(Invalid::NotANumber("s".into())));
        assert_eq!(parse_duration("5s -3s"), Err(Invalid::Signed('-')));
        assert_eq!(parse_duration("5s 3"), Err(Invalid::NoUnit("3".into())));
        assert_eq!(
            parse_duration("1e3s"),
            Err(Invalid::UnknownUnit("e".into()))
        );
        assert_eq!(parse_duration("5 S"), Err(Invalid::UnknownUnit("S".into())));
    }

    #[test]
    fn long_fractions_round_down_to_nanoseconds() {
        let third = "0.333333333333333333333333333333333333s";
        assert_eq!(parse_duration(third), Ok(Duration::from_nanos(333_333_333)));
        assert_eq!(parse_duration("1.0000000001s"), Ok(Duration::from_secs(1)));
    }

    #[test]
    fn a_long_input_is_read_in_one_pass_and_stops_at_the_limit() {
        let many = "1ns ".repeat(100_000);
        assert_eq!(parse_duration(&many), Ok(Duration::from_nanos(100_000)));
        let over = "99y ".repeat(100_000);
        assert_eq!(parse_duration(&over), Err(Invalid::TooLong));
    }

    #[test]
    fn every_refusal_says_the_rule_and_the_units() {
        for (text, says) in [
            ("", "empty"),
            ("-5s", "negative"),
            ("+5s", "no sign"),
            ("100", "needs a unit"),
            ("5 parsecs", "unknown unit `parsecs`"),
            ("5 sek", "did you mean `sec`?"),
            ("1M", "`m` (minutes) or `ms` (milliseconds)"),
            ("2 months", "write days"),
            ("101y", "at most 100 years"),
        ] {
            let message = parse_duration(text).unwrap_err().to_string();
            assert!(message.contains(says), "{text:?}: {message}");
            assert!(message.ends_with(UNITS_NOTE), "{text:?}: {message}");
        }
    }
}
