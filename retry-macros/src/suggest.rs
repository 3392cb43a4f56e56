//! "Did you mean" hints for misspelled names, in the words of a compile
//! error; the similarity rule is retrykit-schema's, shared with the run time.

use retrykit_schema::suggest::did_you_mean;

/// `; did you mean `x`?` or nothing.
pub fn hint<'a>(typo: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match did_you_mean(typo, candidates) {
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
        assert_eq!(hint("polcy", keys), "; did you mean `policy`?");
        assert_eq!(hint("retry_iff", keys), "; did you mean `retry_if`?");
        assert_eq!(hint("zzz", keys), "");
        // Case is ignored, as everywhere else a name is suggested.
        assert_eq!(hint("POLICY", keys), "; did you mean `policy`?");
    }
}
