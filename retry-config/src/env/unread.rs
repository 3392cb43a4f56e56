//! `RETRY_*` variables the project does not read. Most are misspelt
//! overrides (`RETRY_POLICY_FETCH_BASE`, with single underscores) that would
//! otherwise change nothing, silently; each warns with the spelling that
//! would work.

use super::{RETRY_PREFIX, SETTINGS, env_name};
use crate::diagnostic::{Diagnostic, Diagnostics, Source, Span};
use crate::document::Document;
use crate::schema::Key;
use crate::section::Section;
use retrykit_schema::suggest::did_you_mean;
use std::sync::Arc;

/// One warning per unread variable.
pub(super) fn warn(unread: &[(String, String)], doc: &Document, diags: &mut Diagnostics) {
    for (var, value) in unread {
        let source = Arc::new(Source::new("environment", format!("{var}={value}")));
        diags.push(
            Diagnostic::warning(
                var.as_str(),
                format!("environment variable {var} is not one retrykit-config reads, so it changes nothing"),
            )
            .at(Some(Span::new(source, 0..var.len())), "not read")
            .suggest(respelling(var, doc))
            .note("overrides are RETRY_POLICY__<NAME>__<KEY>, RETRY_BUDGET__<NAME>__<KEY> and RETRY_BREAKER__<NAME>__<KEY>, with `__` around the name")
            .note(format!("also read: {}", SETTINGS.join(", "))),
        );
    }
}

/// The variable `var` most likely means.
fn respelling(var: &str, doc: &Document) -> Option<String> {
    // The right prefix with single underscores: find a defined name and a key after it.
    for section in Section::ALL {
        let (prefix, targets, keys) = (section.env_prefix(), doc.tables(section), section.keys());
        let head = prefix.trim_end_matches('_');
        let Some(rest) = var.strip_prefix(head).filter(|r| r.starts_with('_')) else {
            continue;
        };
        let rest = rest.trim_start_matches('_');
        for target in targets {
            let name = env_name(&target.name);
            let key = rest
                .strip_prefix(name.as_str())
                .filter(|k| k.starts_with('_'))
                .map(|k| k.trim_start_matches('_').to_ascii_lowercase());
            if let Some(key) = key.and_then(|k| Key::find(keys, &k)) {
                return Some(format!(
                    "{prefix}{name}__{}",
                    key.name().to_ascii_uppercase()
                ));
            }
        }
    }
    // A misspelt word after RETRY_, compared without the prefix all share.
    let word = var.strip_prefix(RETRY_PREFIX)?;
    let unprefixed = |names: &[&'static str]| -> Vec<&'static str> {
        names
            .iter()
            .map(|n| n.trim_start_matches(RETRY_PREFIX).trim_end_matches('_'))
            .collect()
    };
    if let Some((head, rest)) = word.split_once("__") {
        let prefixes = Section::ALL.map(Section::env_prefix);
        let heads = unprefixed(&prefixes);
        return did_you_mean(head, heads).map(|h| format!("{RETRY_PREFIX}{h}__{rest}"));
    }
    did_you_mean(word, unprefixed(SETTINGS)).map(|s| format!("{RETRY_PREFIX}{s}"))
}
