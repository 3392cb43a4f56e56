//! The end-of-run report of the outbox demo.
//!
//! Two counts per event are easy to confuse: the **scheduled attempts** (the
//! relay taking the event up on the `outbox` policy's schedule, bounded by
//! its `max_attempts`) and the **publish calls** (each scheduled attempt
//! retries the call itself under the `publish` policy). They get a table
//! each, titled with the policy that bounds them, so that 24 calls for an
//! event with `max_attempts = 8` reads as 8 × 3, not as a broken limit.
//!
//! With an outage, it also counts the calls that reached the broker while
//! it was down, and says whether the `publish` policy's circuit breaker was
//! on: run the demo with and without `--no-breaker` to compare the two.

use super::event::{EventRow, EventState};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// How many dead letters are listed one by one; the rest are counted.
const DEAD_LETTERS_LISTED: usize = 5;

/// The summary of one run, printed with `Display`.
///
/// ```
/// use examples::outbox::{SqliteStore, Summary};
/// let store = SqliteStore::open_in_memory().unwrap();
/// store.place_order("lamp").unwrap();
/// let events = store.events().unwrap();
/// let summary = Summary {
///     events: &events,
///     deliveries: 0,
///     elapsed: std::time::Duration::from_secs(1),
///     outbox_max_attempts: Some(8),
///     publish_max_attempts: Some(3),
///     outage_calls: Some(12),
///     breaker: Some("broker"),
///     lost: 0,
///     chaos: Some(("faults 20% transient", 3)),
/// };
/// let text = summary.to_string();
/// assert!(text.contains("scheduled attempts per event (policy `outbox`, max_attempts = 8)"));
/// assert!(text.contains("publish calls per event (policy `publish`, up to 3 per scheduled attempt)"));
/// assert!(text.contains("broker calls in the outage          12  (circuit breaker `broker`; --no-breaker turns it off)"));
/// assert!(text.contains("events lost                          0"));
/// assert!(text.contains("attempts failed by chaos             3  (faults 20% transient)"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Summary<'a> {
    /// Every event, in any state.
    pub events: &'a [EventRow],
    /// What the broker accepted, duplicates included.
    pub deliveries: usize,
    /// The run's wall-clock time.
    pub elapsed: Duration,
    /// The `outbox` policy's attempt limit (`None`: unlimited).
    pub outbox_max_attempts: Option<u32>,
    /// The `publish` policy's attempt limit (`None`: unlimited).
    pub publish_max_attempts: Option<u32>,
    /// Calls that reached the broker while it was down (`None`: the run
    /// had no outage).
    pub outage_calls: Option<u64>,
    /// The circuit breaker the `publish` policy named (`None`: none, or
    /// turned off with `--no-breaker`).
    pub breaker: Option<&'a str>,
    /// Events neither delivered to the broker nor dead-lettered
    /// ([`lost`]).
    pub lost: usize,
    /// The `publish` policy's chaos and the attempts it failed in this
    /// process (`None`: no chaos).
    pub chaos: Option<(&'a str, u64)>,
}

/// How many of `events` the broker never received (`delivered`: its
/// delivery log, event ids) and the relay did not dead-letter: what the
/// outbox exists to make zero.
///
/// ```
/// use examples::outbox::{SqliteStore, lost};
/// let store = SqliteStore::open_in_memory().unwrap();
/// store.place_order("lamp").unwrap();
/// let events = store.events().unwrap();
/// assert_eq!(lost(&events, &[]), 1);
/// assert_eq!(lost(&events, &[events[0].event_id.clone()]), 0);
/// ```
pub fn lost(events: &[EventRow], delivered: &[String]) -> usize {
    let delivered: std::collections::HashSet<&str> = delivered.iter().map(String::as_str).collect();
    events
        .iter()
        .filter(|e| e.state != EventState::Dead && !delivered.contains(e.event_id.as_str()))
        .count()
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events = self.events;
        let count = |state| events.iter().filter(|e| e.state == state).count();
        let scheduled: u64 = events.iter().map(|e| u64::from(e.scheduled_attempts)).sum();
        let calls: u64 = events.iter().map(|e| u64::from(e.publish_calls)).sum();
        let total_wait_ms: i64 = events.iter().map(|e| e.total_wait_ms).sum();
        let row = |f: &mut fmt::Formatter<'_>, label: &str, value: &dyn fmt::Display| {
            writeln!(f, "  {label:<28}{value:>10}")
        };
        writeln!(f, "\nsummary")?;
        row(f, "events", &events.len())?;
        row(f, "published", &count(EventState::Published))?;
        row(f, "dead-lettered (gave up)", &count(EventState::Dead))?;
        row(f, "scheduled attempts", &scheduled)?;
        row(f, "publish calls", &calls)?;
        row(f, "broker deliveries", &self.deliveries)?;
        row(f, "events lost", &self.lost)?;
        if let Some((chaos, faults)) = self.chaos {
            writeln!(
                f,
                "  {:<28}{faults:>10}  ({chaos})",
                "attempts failed by chaos"
            )?;
        }
        if let Some(calls) = self.outage_calls {
            let breaker = match self.breaker {
                Some(name) => format!("circuit breaker `{name}`; --no-breaker turns it off"),
                None => "no circuit breaker".to_owned(),
            };
            writeln!(
                f,
                "  {:<28}{calls:>10}  ({breaker})",
                "broker calls in the outage"
            )?;
        }
        let total_wait = format!("{}s", total_wait_ms as f64 / 1000.0);
        row(f, "total wait in the table", &total_wait)?;
        row(f, "elapsed", &format!("{:.1}s", self.elapsed.as_secs_f64()))?;
        let finished = count(EventState::Published) + count(EventState::Dead);
        let per_second = finished as f64 / self.elapsed.as_secs_f64().max(1e-3);
        row(f, "events finished per second", &format!("{per_second:.0}"))?;

        writeln!(
            f,
            "\n  scheduled attempts per event (policy `outbox`, {})",
            limit(self.outbox_max_attempts)
        )?;
        histogram(f, "attempts", events.iter().map(|e| e.scheduled_attempts))?;
        let per_attempt = self
            .publish_max_attempts
            .map_or_else(|| "no limit".to_owned(), |n| format!("up to {n}"));
        writeln!(
            f,
            "\n  publish calls per event (policy `publish`, {per_attempt} per scheduled attempt)"
        )?;
        histogram(f, "calls", events.iter().map(|e| e.publish_calls))?;

        dead_letters(f, events)
    }
}

/// `max_attempts = 8`, or what an unlimited policy means.
fn limit(max_attempts: Option<u32>) -> String {
    max_attempts.map_or_else(
        || "no attempt limit".to_owned(),
        |n| format!("max_attempts = {n}"),
    )
}

/// How many events have each value, smallest value first, under a column
/// header naming what the value counts.
fn histogram(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    values: impl Iterator<Item = u32>,
) -> fmt::Result {
    let mut by_value = BTreeMap::<u32, u32>::new();
    for v in values {
        *by_value.entry(v).or_default() += 1;
    }
    writeln!(f, "  {what:>10}    events")?;
    for (value, n) in by_value {
        writeln!(f, "  {value:>10}    {n:>6}")?;
    }
    Ok(())
}

/// The first [`DEAD_LETTERS_LISTED`] dead letters with their last error,
/// then how many more there are.
fn dead_letters(f: &mut fmt::Formatter<'_>, events: &[EventRow]) -> fmt::Result {
    let dead: Vec<_> = events
        .iter()
        .filter(|e| e.state == EventState::Dead)
        .collect();
    if dead.is_empty() {
        return Ok(());
    }
    writeln!(f, "\n  dead letters")?;
    for e in dead.iter().take(DEAD_LETTERS_LISTED) {
        writeln!(
            f,
            "  {:<12} after {} ({}): {}",
            e.event_id,
            counted(e.scheduled_attempts, "scheduled attempt"),
            counted(e.publish_calls, "publish call"),
            e.last_error.as_deref().unwrap_or("?")
        )?;
    }
    if let Some(more) = dead
        .len()
        .checked_sub(DEAD_LETTERS_LISTED)
        .filter(|n| *n > 0)
    {
        writeln!(f, "  and {more} more")?;
    }
    Ok(())
}

/// `1 publish call`, `3 publish calls`.
fn counted(n: u32, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{n} {noun}{s}")
}
