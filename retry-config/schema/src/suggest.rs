//! "Did you mean": the one similarity rule for every misspelled name the
//! framework reports (keys, policy names, classes, profiles, variables).
//! Case is ignored when comparing, so `Transient` suggests `transient`.
//!
//! ```
//! use retry_schema::suggest::did_you_mean;
//! assert_eq!(did_you_mean("outbx", ["outbox", "db"]).as_deref(), Some("outbox"));
//! assert_eq!(did_you_mean("Transient", ["transient"]).as_deref(), Some("transient"));
//! assert_eq!(did_you_mean("zzz", ["outbox"]), None);
//! ```

/// How alike two names must be (Jaro-Winkler, 0 to 1) to be suggested.
const THRESHOLD: f64 = 0.8;

/// The candidate closest to `word`, when it is close enough to be a likely
/// misspelling rather than a different word.
///
/// ```
/// assert_eq!(retry_schema::suggest::did_you_mean("bsae", ["base", "cap"]).as_deref(), Some("base"));
/// ```
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&word, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= THRESHOLD)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}
