//! Class names (`retry_on`, a breaker's `trip_on`), checked where they are
//! written (once per place, however many policies inherit them), by
//! retrykit-schema's rule ([`retrykit_schema::classes`]): a name that can
//! never match (a near miss of a known class, or `permanent` in `retry_on`)
//! is an error with a did-you-mean. (`permanent` in `trip_on` is
//! retrykit-core's rule, reported with the breaker.)
//!
//! A name near nothing keeps its warning: when the program's classes are
//! known, nothing produces it; when they are not (`retry-policy check`), the
//! program may declare it, so only a likely typo of a built-in class warns.

use super::{Cx, Key, type_name};
use crate::diagnostic::{Diagnostic, Diagnostics, Span};
use retrykit_schema::classes::{BUILT_IN, Verdict, judge};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Range;
use toml::Spanned;
use toml::de::DeValue;

/// Checks every class a `retry_on` or `trip_on` value names (already read as a list).
pub(crate) fn check(key: Key, value: &Spanned<DeValue<'_>>, cx: &Cx<'_>, diags: &mut Diagnostics) {
    let name = key.name();
    let mut candidates: Vec<&str> = BUILT_IN.to_vec();
    if let Some(known) = cx.known_classes {
        // A declared class may repeat a built-in one (or another declaration):
        // each is listed, and judged, once.
        for class in known {
            if !candidates.contains(&class.as_str()) {
                candidates.push(class);
            }
        }
    }
    // Where each name was first listed: a name listed again is a mistake
    // (said once per repeat, unless the name is wrong anyway).
    let mut first = HashMap::new();
    for (class, range) in written(value) {
        // An empty name is retrykit-core's rule, reported with the policy.
        if class.trim().is_empty() {
            continue;
        }
        let repeat_of = match first.entry(class) {
            Entry::Occupied(at) => Some(cx.span(Range::clone(at.get()))),
            Entry::Vacant(slot) => {
                slot.insert(range.clone());
                None
            }
        };
        let known_list = || format!("known classes: {}", candidates.join(", "));
        // Said only for a name that is otherwise fine (a wrong one has its own error).
        let repeated = |at: Span| {
            Diagnostic::warning(cx.key_path, format!("`{name}` lists `{class}` twice"))
                .at(Some(cx.span(range.clone())), "listed again")
                .note(format!("first listed at {at}"))
                .note(if key == Key::TripOn {
                    "remove the repeat: a class listed once counts toward opening the breaker; listing it again changes nothing"
                } else {
                    "remove the repeat: a class listed once is retried; listing it again changes nothing"
                })
        };
        let diagnostic = match judge(class, &candidates) {
            Verdict::Known => match repeat_of {
                Some(at) => repeated(at),
                None => continue,
            },
            Verdict::NeverRetried if key != Key::RetryOn => continue,
            Verdict::NeverRetried => cx.error(
                range,
                format!("`retry_on` names `{class}`, but permanent errors are never retried"),
                "never retried",
            )
            .note("an error classified as permanent ends the call whatever retry_on says")
            .note("remove it; to retry such an error, classify it as a retryable class (e.g. #[classify(transient)])"),
            Verdict::NearMiss(meant) => cx.error(
                range,
                format!("`{name}` names `{class}`, which can never match: classes match exactly, case included"),
                "no such class",
            )
            .suggest(Some(meant.to_owned()))
            .note(known_list()),
            Verdict::Unknown(suggestion) => {
                if cx.known_classes.is_none() && suggestion.is_none() {
                    if let Some(at) = repeat_of {
                        diags.push(repeated(at));
                    }
                    continue;
                }
                Diagnostic::warning(
                    cx.key_path,
                    format!("`{name}` names class `{class}`, which no code declares"),
                )
                .at(Some(cx.span(range)), "unknown class")
                .suggest(suggestion)
                .note(known_list())
            }
        };
        diags.push(diagnostic);
    }
}

/// Each class name with the range it was written at: the items of an array,
/// or the comma-separated names of an environment value.
fn written<'v>(value: &'v Spanned<DeValue<'_>>) -> Vec<(&'v str, Range<usize>)> {
    match value.get_ref() {
        DeValue::Array(items) => items
            .iter()
            .filter_map(|item| item.get_ref().as_str().map(|s| (s, item.span())))
            .collect(),
        DeValue::String(list) => {
            let mut start = value.span().start;
            list.split(',')
                .map(|part| {
                    let lead = part.len() - part.trim_start().len();
                    let name = part.trim();
                    let at = start + lead..start + lead + name.len();
                    start += part.len() + 1;
                    (name, at)
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A list of class names (`retry_on`, a breaker's `trip_on`).
pub(super) fn names(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<String>, Diagnostic> {
    let name = key.name();
    match value.get_ref() {
        DeValue::Array(items) => items
            .iter()
            .map(|item| {
                item.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                    cx.error(
                        item.span(),
                        format!(
                            "`{name}` lists class names (strings), found {}",
                            type_name(item.get_ref())
                        ),
                        "not a class name",
                    )
                    .note(format!("write it as: {}", cx.fix(key, key.example())))
                })
            })
            .collect(),
        // From the environment, a comma-separated list is the natural form.
        DeValue::String(s) if cx.env_var.is_some() => Ok(s
            .split(',')
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect()),
        other => Err(cx
            .error(
                value.span(),
                format!(
                    "`{name}` must be an array of class names, found {}",
                    type_name(other)
                ),
                "wrong type",
            )
            .note(format!("write it as: {}", cx.fix(key, key.example())))),
    }
}
