//! A6's durations: proto JSON (`"0.1s"`: whole seconds, up to 9 decimals,
//! then `s`), within protobuf Duration's range (at most 315,576,000,000
//! seconds) and retry.toml's (at most [`MAX`], 100 years), written as a
//! retry.toml duration that is exact: milliseconds, else microseconds, else
//! nanoseconds. The arithmetic is checked: no input overflows.

use super::Cx;
use super::json::Json;
use retrykit_schema::duration::{MAX, show_duration};
use std::time::Duration;

/// protobuf Duration's largest `seconds` (10,000 years).
pub const PROTO_MAX_SECONDS: u64 = 315_576_000_000;

/// Why a value is not one of A6's durations, worded after its JSON path.
fn parse(value: &Json) -> Result<Duration, String> {
    const FORM: &str = "seconds then `s`, such as \"0.1s\", as gRFC A6's service config \
                        requires (protobuf Duration in JSON)";
    let Some(text) = value.as_str() else {
        return Err(format!(
            "{value} is not a duration: write a string of {FORM}"
        ));
    };
    let Some(number) = text.strip_suffix('s') else {
        return Err(format!(
            "{value} is not a duration in proto JSON form: write {FORM}"
        ));
    };
    if let Some(positive) = number.strip_prefix('-') {
        let fix = super::json::clip(positive);
        return Err(format!(
            "{value} is negative: a wait or a timeout counts forward; write \"{fix}s\""
        ));
    }
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let dangling = number.contains('.') && frac.is_empty();
    if whole.is_empty() || !digits(whole) || !digits(frac) || dangling {
        return Err(format!(
            "{value} is not a duration in proto JSON form: write {FORM}"
        ));
    }
    if frac.len() > 9 {
        return Err(format!(
            "{value} has {} digits after the point: protobuf Duration counts whole \
             nanoseconds (at most 9 digits); round it to 9",
            frac.len()
        ));
    }
    let seconds = whole
        .trim_start_matches('0')
        .parse::<u64>()
        .ok()
        .or_else(|| whole.bytes().all(|b| b == b'0').then_some(0))
        .filter(|s| *s <= PROTO_MAX_SECONDS);
    let Some(seconds) = seconds else {
        return Err(format!(
            "{value} is past protobuf Duration's limit of {PROTO_MAX_SECONDS}s (10000 years); \
             use a duration of at most {}s (retry.toml's limit, {})",
            MAX.as_secs(),
            show_duration(MAX)
        ));
    };
    let nanos: u32 = format!("{frac:0<9}").parse().unwrap_or(0);
    let d = Duration::new(seconds, nanos);
    if d > MAX {
        return Err(format!(
            "{value} is longer than retry.toml's limit of {} ({}s); use at most \"{}s\"",
            show_duration(MAX),
            MAX.as_secs(),
            MAX.as_secs()
        ));
    }
    Ok(d)
}

/// `d` as retry.toml writes it, exactly: `"100ms"`, `"1500us"`, `"7ns"`.
pub fn toml_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos.is_multiple_of(1_000_000) {
        format!("{}ms", nanos / 1_000_000)
    } else if nanos.is_multiple_of(1_000) {
        format!("{}us", nanos / 1_000)
    } else {
        format!("{nanos}ns")
    }
}

impl Cx {
    /// `value` as a retry.toml duration, or an error at `path`.
    pub(super) fn duration(&mut self, path: &str, value: &Json) -> Option<String> {
        match parse(value) {
            Ok(d) => Some(toml_duration(d)),
            Err(why) => {
                self.error(path, why);
                None
            }
        }
    }
}
