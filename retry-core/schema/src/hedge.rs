//! The value of `hedge_after`: a fixed duration (`"20ms"`) or a percentile
//! of the policy's observed latency (`"p95"`, `"p99.9"`), parsed here once
//! for the loader, `#[retry]`'s build-time check and retrykit-core.
//!
//! ```
//! use retrykit_schema::hedge::{HedgeAfterText, Percentile, parse_hedge_after};
//! assert_eq!(parse_hedge_after("p99.9"), Ok(HedgeAfterText::Percentile(Percentile::new(999).unwrap())));
//! assert_eq!(parse_hedge_after("20ms"), Ok(HedgeAfterText::Fixed(std::time::Duration::from_millis(20))));
//! assert!(parse_hedge_after("p40").is_err());
//! ```

use crate::duration::{parse_duration, show_duration};
use std::fmt;
use std::time::Duration;

/// A latency percentile from p50 to p99.9, in tenths of a percent (p95 is
/// 950): one decimal at most, so every value prints back as it was written.
///
/// ```
/// let p = retrykit_schema::hedge::Percentile::parse("p95").unwrap();
/// assert_eq!((p.tenths(), p.quantile(), p.to_string()), (950, 0.95, "p95".to_owned()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percentile(u16);

impl Percentile {
    /// The lowest percentile accepted, p50: hedging below the median would
    /// send a second request for most calls.
    pub const LOWEST: u16 = 500;
    /// The highest percentile accepted, p99.9.
    pub const HIGHEST: u16 = 999;

    /// The percentile of `tenths` tenths of a percent, when from
    /// [`LOWEST`](Self::LOWEST) to [`HIGHEST`](Self::HIGHEST).
    ///
    /// ```
    /// use retrykit_schema::hedge::Percentile;
    /// assert!(Percentile::new(950).is_some() && Percentile::new(1000).is_none());
    /// ```
    pub const fn new(tenths: u16) -> Option<Percentile> {
        if tenths >= Self::LOWEST && tenths <= Self::HIGHEST {
            Some(Percentile(tenths))
        } else {
            None
        }
    }

    /// Reads `p50` to `p99.9` (at most one decimal).
    ///
    /// ```
    /// use retrykit_schema::hedge::Percentile;
    /// assert_eq!(Percentile::parse("p99.9").map(|p| p.tenths()), Some(999));
    /// assert_eq!(Percentile::parse("p99.95"), None);
    /// assert_eq!(Percentile::parse("95"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Percentile> {
        let digits = text.strip_prefix('p')?;
        let (whole, tenth) = match digits.split_once('.') {
            Some((w, t)) if t.len() == 1 => (w, t),
            Some(_) => return None,
            None => (digits, "0"),
        };
        let all_digits =
            |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(whole) || !all_digits(tenth) {
            return None;
        }
        let whole: u16 = whole.parse().ok()?;
        let tenth: u16 = tenth.parse().ok()?;
        Percentile::new(whole.checked_mul(10)?.checked_add(tenth)?)
    }

    /// Tenths of a percent: 950 for p95.
    pub const fn tenths(self) -> u16 {
        self.0
    }

    /// The quantile, from 0.5 to 0.999.
    ///
    /// ```
    /// assert_eq!(retrykit_schema::hedge::Percentile::new(999).unwrap().quantile(), 0.999);
    /// ```
    pub fn quantile(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

impl fmt::Display for Percentile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 % 10 {
            0 => write!(f, "p{}", self.0 / 10),
            t => write!(f, "p{}.{t}", self.0 / 10),
        }
    }
}

/// A parsed `hedge_after`.
///
/// ```
/// use retrykit_schema::hedge::parse_hedge_after;
/// assert_eq!(parse_hedge_after("p50").unwrap().to_string(), "p50");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HedgeAfterText {
    /// Hedge this long after the previous attempt started.
    Fixed(Duration),
    /// Hedge at this percentile of the policy's observed latency.
    Percentile(Percentile),
}

impl fmt::Display for HedgeAfterText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeAfterText::Fixed(d) => f.write_str(&show_duration(*d)),
            HedgeAfterText::Percentile(p) => p.fmt(f),
        }
    }
}

/// What a `hedge_after` value may look like, for messages.
pub const HEDGE_AFTER_FORMS: &str = "a percentile from \"p50\" to \"p99.9\" (one decimal at most), a duration such as \"20ms\", or \"none\"";

/// Reads `hedge_after`'s text (not `"none"`, which the caller handles):
/// a text starting with `p` is a percentile, anything else a duration.
///
/// # Errors
///
/// A message saying what was wrong: a percentile out of range or with more
/// than one decimal, or a text that is not a duration.
///
/// ```
/// use retrykit_schema::hedge::parse_hedge_after;
/// assert!(parse_hedge_after("p100").unwrap_err().contains("p50"));
/// assert!(parse_hedge_after("soon").is_err());
/// ```
pub fn parse_hedge_after(text: &str) -> Result<HedgeAfterText, String> {
    let text = text.trim();
    if text.starts_with('p') {
        return Percentile::parse(text)
            .map(HedgeAfterText::Percentile)
            .ok_or_else(|| {
                format!("`{text}` is not a percentile from p50 to p99.9 (one decimal at most)")
            });
    }
    parse_duration(text)
        .map(HedgeAfterText::Fixed)
        .map_err(|e| format!("`{text}` is neither a percentile nor a duration: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_percentile_prints_back_as_written() {
        for tenths in Percentile::LOWEST..=Percentile::HIGHEST {
            let p = Percentile::new(tenths).unwrap();
            assert_eq!(Percentile::parse(&p.to_string()), Some(p));
        }
    }

    #[test]
    fn malformed_percentiles_are_refused() {
        for bad in [
            "p", "p.5", "p49.9", "p100", "p9999", "p95.", "p95.55", "P95", "p-95", "p+95", "p 95",
        ] {
            assert_eq!(Percentile::parse(bad), None, "{bad}");
        }
    }
}
