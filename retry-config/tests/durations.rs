//! The duration grammar: every documented form reads as documented, the
//! 100-year limit accepts `"100y"` as its message says, and the forms that
//! cannot mean what they seem (`"5M"`, `"-5s"`, months) are refused plainly.

use proptest::prelude::*;
use retrykit_config::{Config, Diagnostics, Options, show_duration};
use retrykit_core::Policy;
use std::time::Duration;

const DAY: u64 = 24 * 3600;

/// The deadline `text` reads as (a deadline accepts the whole range, 0 aside).
fn deadline(text: &str) -> Result<Duration, Diagnostics> {
    let file = format!("[policies.a]\nbase = \"1ms\"\ncap = \"1ms\"\ndeadline = \"{text}\"\n");
    Config::load_str(&file, "f.toml", &Options::new())
        .map(|c| c.policy("a").unwrap().deadline().unwrap())
}

fn error(text: &str) -> retrykit_config::Diagnostic {
    match deadline(text) {
        Ok(d) => panic!("{text:?} was accepted as {d:?}"),
        Err(diags) => diags.errors().next().unwrap().clone(),
    }
}

#[test]
fn every_documented_form_reads_as_documented() {
    let cases: &[(&str, Duration)] = &[
        ("250ms", Duration::from_millis(250)),
        ("1.5s", Duration::from_millis(1500)),
        ("0.25 s", Duration::from_millis(250)),
        ("2m", Duration::from_secs(120)),
        ("1h", Duration::from_secs(3600)),
        ("1h 30m", Duration::from_secs(5400)),
        ("1h30m", Duration::from_secs(5400)),
        ("5s5ms", Duration::from_millis(5005)),
        ("5 s", Duration::from_secs(5)),
        ("5sec", Duration::from_secs(5)),
        ("2 minutes", Duration::from_secs(120)),
        ("3µs", Duration::from_micros(3)),
        ("3us", Duration::from_micros(3)),
        ("7ns", Duration::from_nanos(7)),
        ("1d", Duration::from_secs(DAY)),
        ("1w", Duration::from_secs(7 * DAY)),
        // A year is 365 days, the year of retrykit-core's 100-year limit.
        ("1y", Duration::from_secs(365 * DAY)),
        ("100y", Policy::MAX_DURATION),
    ];
    for (text, expected) in cases {
        match deadline(text) {
            Ok(d) => assert_eq!(d, *expected, "{text:?}"),
            Err(diags) => panic!("{text:?} was refused:\n{}", diags.render()),
        }
    }
}

#[test]
fn the_limit_is_what_its_message_says() {
    assert_eq!(deadline("100y").unwrap(), Policy::MAX_DURATION);
    assert_eq!(deadline("36500d").unwrap(), Policy::MAX_DURATION);
    let e = error("100y 1ns");
    assert!(e.message.contains("at most 100 years"), "{}", e.message);
    assert!(
        e.notes.iter().any(|n| n.contains("36500d")),
        "the note spells the limit out in days: {:?}",
        e.notes
    );
    // Far past any integer type: refused, not overflowed.
    let e = error("99999999999999999999999999999999999999999999y");
    assert!(e.message.contains("at most 100 years"), "{}", e.message);
}

#[test]
fn a_capital_m_is_ambiguous_and_months_are_refused() {
    let e = error("5M");
    assert!(e.message.contains("ambiguous"), "{}", e.message);
    let notes = e.notes.join("\n");
    assert!(
        notes.contains("`m`") && notes.contains("`ms`"),
        "the fix offers minutes and milliseconds: {notes}"
    );
    let e = error("2months");
    assert!(e.message.contains("month"), "{}", e.message);
    assert!(e.notes.join("\n").contains("30d"), "{:?}", e.notes);
}

#[test]
fn a_negative_duration_gets_a_plain_message() {
    let e = error("-5s");
    assert!(e.message.contains("cannot be negative"), "{}", e.message);
    assert!(
        !e.message.contains(" at "),
        "no parser offsets: {}",
        e.message
    );
    assert!(
        e.notes.iter().any(|n| n.contains("deadline = \"5s\"")),
        "{:?}",
        e.notes
    );
}

#[test]
fn a_negative_bare_number_is_not_fixed_into_a_negative_duration() {
    let text = "[policies.a]\ncap = \"1s\"\ndeadline = -5\n";
    let diags = Config::load_str(text, "f.toml", &Options::new()).unwrap_err();
    let e = diags.errors().next().unwrap();
    assert!(e.message.contains("cannot be negative"), "{}", e.message);
    assert!(
        e.notes.iter().any(|n| n.contains("deadline = \"5ms\"")),
        "{:?}",
        e.notes
    );
}

#[test]
fn an_unknown_unit_suggests_the_nearest_one() {
    let e = error("10 parsecs");
    assert!(
        e.message.contains("unknown unit `parsecs`"),
        "{}",
        e.message
    );
    let e = error("10 sex");
    assert!(
        e.suggestion
            .as_deref()
            .is_some_and(|s| s.starts_with("sec")),
        "{:?}",
        e.suggestion
    );
}

proptest! {
    /// What `show_duration` prints (in `explain`, `show` and every message)
    /// reads back as the same duration.
    #[test]
    fn shown_durations_read_back(nanos in 1..=Policy::MAX_DURATION.as_nanos() as u64) {
        let d = Duration::from_nanos(nanos);
        let shown = show_duration(d);
        prop_assert_eq!(deadline(&shown).ok(), Some(d), "{}", shown);
    }
}
