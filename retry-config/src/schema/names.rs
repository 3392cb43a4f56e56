//! Reading a policy's references to other tables by name: its budgets
//! (`budget`) and its breaker (`breaker`). Whether the names are defined is
//! checked when the policies resolve.

// A rejected value is the cold path: boxing its diagnostic would only add noise.
#![allow(clippy::result_large_err)]

use super::{Cx, Key, type_name};
use crate::diagnostic::Diagnostic;
use retrykit_schema::keys::NONE;
use std::ops::Range;
use toml::de::DeValue;

/// A policy's budgets: one name, an array of names (every one applies),
/// or `"none"`; from the environment, names separated by commas.
pub(super) fn budgets(
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<String>, Diagnostic> {
    let fix = || {
        format!(
            "write it as: {}",
            cx.fix(Key::Budget, "[\"broker\", \"aws\"]")
        )
    };
    let names: Vec<(String, Range<usize>)> = match value.get_ref() {
        DeValue::String(s) if cx.env_var.is_some() => s
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| (n.to_owned(), value.span()))
            .collect(),
        DeValue::String(s) => vec![(s.to_string(), value.span())],
        DeValue::Array(items) => items
            .iter()
            .map(|item| match item.get_ref().as_str() {
                Some(name) => Ok((name.to_owned(), item.span())),
                None => Err(cx
                    .error(
                        item.span(),
                        format!(
                            "`budget` lists budget names (strings), found {}",
                            type_name(item.get_ref())
                        ),
                        "not a budget name",
                    )
                    .note(fix())),
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(cx
                .error(
                    value.span(),
                    format!(
                        "`budget` must be a budget name or an array of them, found {}",
                        type_name(other)
                    ),
                    "wrong type",
                )
                .note(fix()));
        }
    };
    match names.as_slice() {
        [(only, _)] if only == NONE => Ok(Vec::new()),
        _ => match names.iter().find(|(n, _)| n == NONE) {
            Some((_, at)) => Err(cx
                .error(
                    at.clone(),
                    "`none` cannot be listed with budgets".into(),
                    "not a budget",
                )
                .note("write budget = \"none\" for no budget, or list only budget names")),
            None => Ok(names.into_iter().map(|(n, _)| n).collect()),
        },
    }
}

/// A policy's breaker or concurrency limit (as `key` says): one name, or
/// `"none"` (from the environment, the word as it is, trimmed).
pub(super) fn breaker(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Option<String>, Diagnostic> {
    let fix = || format!("write it as: {}", cx.fix(key, key.example()));
    let (what, why) = match key {
        Key::Limit => (
            "concurrency limit",
            "every attempt holds a permit of a single limit: the one that guards the dependency the policy calls",
        ),
        _ => (
            "breaker",
            "every attempt asks a single breaker: the one that guards the dependency the policy calls",
        ),
    };
    let name = match value.get_ref() {
        DeValue::String(s) => s.trim(),
        DeValue::Array(_) => {
            return Err(cx
                .error(
                    value.span(),
                    format!("`{}` names one {what}, found an array", key.name()),
                    "one name expected",
                )
                .note(why)
                .note(fix()));
        }
        other => {
            return Err(cx
                .error(
                    value.span(),
                    format!(
                        "`{}` must be a {what} name or \"{NONE}\", found {}",
                        key.name(),
                        type_name(other)
                    ),
                    "wrong type",
                )
                .note(fix()));
        }
    };
    match name {
        NONE => Ok(None),
        "" => Err(cx
            .error(
                value.span(),
                format!(
                    "`{}` is empty: it must name a {what}, or be \"{NONE}\"",
                    key.name()
                ),
                "no name",
            )
            .note(fix())),
        name => Ok(Some(name.to_owned())),
    }
}
