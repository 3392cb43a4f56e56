//! Reading the HTTP keys' lists: `retry_on_status` (status codes) and
//! `retry_methods` (method names). Which codes and names are acceptable is
//! retry-core's rule (its problems name the key); here, only the form.

// A rejected value is the cold path: boxing its diagnostic would only add noise.
#![allow(clippy::result_large_err)]

use super::{Cx, Key, type_name};
use crate::diagnostic::Diagnostic;
use toml::de::DeValue;

/// The items of a list value: a TOML array, or (from an environment
/// variable) a comma-separated string, each with its span.
fn items<'v>(
    key: Key,
    value: &'v toml::Spanned<DeValue<'v>>,
    cx: &Cx<'_>,
    what: &str,
) -> Result<Vec<Item<'v>>, Diagnostic> {
    match value.get_ref() {
        DeValue::Array(items) => Ok(items.iter().map(Item::Toml).collect()),
        DeValue::String(s) if cx.env_var.is_some() => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(|i| Item::Text(i.to_owned(), value.span()))
            .collect()),
        other => Err(cx
            .error(
                value.span(),
                format!(
                    "`{}` must be an array of {what}, found {}",
                    key.name(),
                    type_name(other)
                ),
                "wrong type",
            )
            .note(format!("write it as: {}", cx.fix(key, key.example())))),
    }
}

enum Item<'v> {
    Toml(&'v toml::Spanned<DeValue<'v>>),
    /// A comma-separated entry of an environment variable, and the variable's span.
    Text(String, std::ops::Range<usize>),
}

/// `retry_on_status`: whole numbers that can be status codes.
pub(super) fn statuses(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<u16>, Diagnostic> {
    let not_a_status = |range, found: String| {
        cx.error(
            range,
            format!("`{}` lists HTTP status codes, found {found}", key.name()),
            "not a status code",
        )
        .note(format!("write it as: {}", cx.fix(key, key.example())))
    };
    items(key, value, cx, "HTTP status codes")?
        .into_iter()
        .map(|item| match item {
            Item::Toml(item) => {
                let Some(int) = item.get_ref().as_integer() else {
                    return Err(not_a_status(
                        item.span(),
                        type_name(item.get_ref()).to_owned(),
                    ));
                };
                i128::from_str_radix(int.as_str(), int.radix())
                    .ok()
                    .and_then(|n| u16::try_from(n).ok())
                    .ok_or_else(|| not_a_status(item.span(), int.to_string()))
            }
            Item::Text(text, range) => text
                .parse()
                .map_err(|_| not_a_status(range, format!("`{text}`"))),
        })
        .collect()
}

/// `retry_methods`: strings (their form is retry-core's rule).
pub(super) fn methods(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<String>, Diagnostic> {
    items(key, value, cx, "HTTP method names")?
        .into_iter()
        .map(|item| match item {
            Item::Toml(item) => item.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                cx.error(
                    item.span(),
                    format!(
                        "`{}` lists HTTP method names (strings), found {}",
                        key.name(),
                        type_name(item.get_ref())
                    ),
                    "not a method name",
                )
                .note(format!("write it as: {}", cx.fix(key, key.example())))
            }),
            Item::Text(text, _) => Ok(text),
        })
        .collect()
}
