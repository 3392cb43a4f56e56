//! "Did you mean": the one similarity rule for every misspelled name the
//! framework reports (keys, policy names, classes, profiles, variables,
//! `#[retry]` options), and the stricter [`near_miss`] for names where a
//! slip cannot be let through. Case is ignored by both, so `Transient`
//! suggests `transient`.
//!
//! ```
//! use retrykit_schema::suggest::did_you_mean;
//! assert_eq!(did_you_mean("outbx", ["outbox", "db"]).as_deref(), Some("outbox"));
//! assert_eq!(did_you_mean("Transient", ["transient"]).as_deref(), Some("transient"));
//! assert_eq!(did_you_mean("zzz", ["outbox"]), None);
//! ```

/// How alike two names must be (Jaro-Winkler, 0 to 1) to be suggested.
const THRESHOLD: f64 = 0.8;

/// The candidate closest to `word`, when it is close enough to be a likely
/// misspelling rather than a different word: a hint, never a verdict.
///
/// ```
/// assert_eq!(retrykit_schema::suggest::did_you_mean("bsae", ["base", "cap"]).as_deref(), Some("base"));
/// assert_eq!(retrykit_schema::suggest::did_you_mean("POLICY", ["policy"]).as_deref(), Some("policy"));
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

/// The candidate `word` is a slip of, if any: the same word in another case,
/// or (for words of four letters or more) one edit away: a letter added,
/// dropped or changed, or two neighbours swapped. Stricter than
/// [`did_you_mean`], for names where a near miss is an error, not a hint
/// (a `retry_on` class that can never match, since classes match exactly).
///
/// ```
/// use retrykit_schema::suggest::near_miss;
/// assert_eq!(near_miss("throtled", ["transient", "throttled"]), Some("throttled"));
/// assert_eq!(near_miss("quota", ["transient", "throttled"]), None);
/// ```
pub fn near_miss<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let mut one_edit = None;
    for c in candidates {
        let candidate = c.to_lowercase();
        if candidate == word {
            return Some(c);
        }
        let long_enough = word.chars().count() >= 4 && candidate.chars().count() >= 4;
        if one_edit.is_none() && long_enough && strsim::osa_distance(&word, &candidate) == 1 {
            one_edit = Some(c);
        }
    }
    one_edit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_close_words_only() {
        let keys = ["base", "cap", "max_attempts", "jitter"];
        assert_eq!(did_you_mean("bsae", keys).as_deref(), Some("base"));
        assert_eq!(
            did_you_mean("max_atempts", keys).as_deref(),
            Some("max_attempts")
        );
        assert_eq!(did_you_mean("JITTER", keys).as_deref(), Some("jitter"));
        assert_eq!(did_you_mean("colour", keys), None);
    }

    #[test]
    fn near_miss_is_a_case_change_or_one_edit() {
        let classes = ["transient", "throttled", "timeout", "db"];
        assert_eq!(near_miss("Transient", classes), Some("transient"));
        assert_eq!(near_miss("throtled", classes), Some("throttled"));
        assert_eq!(near_miss("tiemout", classes), Some("timeout"));
        assert_eq!(near_miss("DB", classes), Some("db"));
        assert_eq!(near_miss("da", classes), None); // too short for an edit to be a slip
        assert_eq!(near_miss("transport", classes), None);
        assert_eq!(near_miss("quota", classes), None);
    }
}
