//! "Did you mean" hints for misspelled names.

/// The candidate closest to `typo`, if it is close enough to be a likely
/// misspelling rather than a different word.
pub fn closest<'a>(typo: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(typo, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` or nothing.
pub fn hint<'a>(typo: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(typo, candidates) {
        Some(best) => format!("; did you mean `{best}`?"),
        None => String::new(),
    }
}

/// Joins errors into one, keeping each one's span.
pub fn combine(errors: Vec<syn::Error>) -> Option<syn::Error> {
    let mut errors = errors.into_iter();
    let mut first = errors.next()?;
    for e in errors {
        first.combine(e);
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_close_names() {
        let keys = ["policy", "retry_if", "on_retry", "crate"];
        assert_eq!(closest("polcy", keys), Some("policy"));
        assert_eq!(closest("retry_iff", keys), Some("retry_if"));
        assert_eq!(closest("zzz", keys), None);
        assert_eq!(hint("zzz", keys), "");
    }
}
