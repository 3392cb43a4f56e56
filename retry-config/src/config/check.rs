//! Checking a file under every profile, as `retry-policy check` does:
//! every distinct error and warning, each reported once.

use super::{Options, load_profile};
use crate::diagnostic::{Diagnostic, Diagnostics, Source, Span};
use crate::document;
use crate::read::{FileOrigin, read_file};
use crate::resolve;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

/// Checks `text` under every profile (or only `options.profile` when set),
/// returning every distinct error and warning: what `retry-policy check` reports.
///
/// ```
/// let text = "[policies.a]\nbase = \"1s\"\ncap = \"2s\"\n[profiles.test.policies.a]\nbase = \"5s\"\n";
/// let diags = retrykit_config::check_str(text, "f.toml", &Default::default());
/// assert!(diags.has_errors()); // cap < base only under the test profile
/// ```
pub fn check_str(text: &str, name: &str, options: &Options) -> Diagnostics {
    let source = Arc::new(Source::new(name, text));
    let mut diags = Diagnostics::new();
    let doc = document::parse(&source, options.known_classes.as_deref(), &mut diags);
    resolve::check_structure(&doc, &mut diags);
    let _ = load_profile(&source, &doc, options, &mut diags);
    if options.profile.is_none() {
        for profile in &doc.profiles {
            let opts = options.clone().profile(profile.name.clone());
            let mut per_profile = Diagnostics::new();
            let _ = load_profile(&source, &doc, &opts, &mut per_profile);
            for mut d in per_profile.into_iter_owned() {
                if !d.message.contains("profile `") {
                    d.notes.push(format!("with profile `{}`", profile.name));
                }
                diags.push(d);
            }
        }
    }
    if options.deny_warnings {
        diags.deny_warnings();
    }
    if options.profile.is_none() && !doc.profiles.is_empty() {
        dedup_across_profiles(&mut diags);
    }
    diags.sort_and_dedup();
    diags
}

/// Like [`check_str`], for a file.
///
/// ```
/// let diags = retrykit_config::check_file("/no/such.toml", &Default::default());
/// assert!(diags.has_errors());
/// ```
pub fn check_file(path: impl AsRef<Path>, options: &Options) -> Diagnostics {
    let path = path.as_ref();
    match read_file(path, FileOrigin::Given) {
        Ok(text) => check_str(&text, &path.display().to_string(), options),
        Err(d) => d,
    }
}

/// A diagnostic found under a profile that the base file already produced is
/// not repeated. Linear: each is looked up in a hash set of those kept.
fn dedup_across_profiles(diags: &mut Diagnostics) {
    /// Where a diagnostic points and what it says; hashed by the source's
    /// name and the range (never the source's text), compared in full.
    #[derive(PartialEq, Eq)]
    struct Seen(Option<Span>, String);
    impl Hash for Seen {
        fn hash<H: Hasher>(&self, state: &mut H) {
            let at = self.0.as_ref().map(|s| (s.source().name(), s.range()));
            at.hash(state);
            self.1.hash(state);
        }
    }
    // A Source caches its line index in a OnceLock, which neither Hash nor Eq reads.
    #[allow(clippy::mutable_key_type)]
    let mut seen = HashSet::new();
    let items: Vec<Diagnostic> = std::mem::take(diags).into_iter_owned().collect();
    for d in items {
        if seen.insert(Seen(d.span.clone(), d.message.clone())) {
            diags.push(d);
        }
    }
}
