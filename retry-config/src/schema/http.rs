//! Reading the request keys' lists: `retry_on_status` (status codes),
//! `retry_methods` (method names) and `grpc_retry_on` (gRPC code names). Which codes and names are acceptable is
//! retrykit-core's rule (its problems name the key); here, only the form.

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
        DeValue::String(s) if cx.env_var.is_some() => {
            // Each entry at its own text, so that each bad one is shown where it is.
            let mut start = value.span().start;
            let mut out = Vec::new();
            for part in s.split(',') {
                let lead = part.len() - part.trim_start().len();
                let entry = part.trim();
                if !entry.is_empty() {
                    let at = start + lead..start + lead + entry.len();
                    out.push(Item::Text(entry.to_owned(), at));
                }
                start += part.len() + 1;
            }
            Ok(out)
        }
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
    /// A comma-separated entry of an environment variable, and its range.
    Text(String, std::ops::Range<usize>),
}

impl Item<'_> {
    /// The item as a string, and its range; else the error that item
    /// `index` of `key` must be `what` (a string).
    fn text(
        self,
        key: Key,
        index: usize,
        cx: &Cx<'_>,
        what: &str,
        label: &str,
    ) -> Result<(String, std::ops::Range<usize>), Diagnostic> {
        match self {
            Item::Toml(item) => match item.get_ref().as_str() {
                Some(s) => Ok((s.to_owned(), item.span())),
                None => Err(cx
                    .error(
                        item.span(),
                        format!(
                            "`{}[{index}]` must be {what} (a string), found {}",
                            key.name(),
                            type_name(item.get_ref())
                        ),
                        label,
                    )
                    .note(format!("write it as: {}", cx.fix(key, key.example())))),
            },
            Item::Text(text, range) => Ok((text, range)),
        }
    }
}

/// The statuses `retry_on_status` accepts: HTTP error statuses. This is
/// retrykit-core's rule (a unit test holds the two together); it is checked
/// here too so that every bad item is reported at once, each at its text.
const ERROR_STATUSES: std::ops::RangeInclusive<u16> = 400..=599;

/// Every item read, or every item's problem (not only the first).
fn each<T>(
    results: impl Iterator<Item = Result<T, Diagnostic>>,
) -> Result<Vec<T>, Vec<Diagnostic>> {
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for result in results {
        match result {
            Ok(v) => values.push(v),
            Err(d) => problems.push(d),
        }
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(problems)
    }
}

/// `retry_on_status`: HTTP error statuses; every item that is not one is
/// reported, with its index and the rule.
pub(super) fn statuses(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<u16>, Vec<Diagnostic>> {
    let name = key.name();
    let fix = || format!("write it as: {}", cx.fix(key, key.example()));
    let not_a_status = |index: usize, range, found: String| {
        cx.error(
            range,
            format!(
                "`{name}[{index}]` must be an HTTP status code from {} to {}, found {found}",
                ERROR_STATUSES.start(),
                ERROR_STATUSES.end()
            ),
            "not a status code",
        )
        .note(fix())
    };
    let not_an_error = |index: usize, range, code: &str| {
        cx.error(
            range,
            format!(
                "`{name}[{index}]` is {code}, but the list takes HTTP error statuses, from {} to {}",
                ERROR_STATUSES.start(),
                ERROR_STATUSES.end()
            ),
            "not an error status",
        )
        .note(format!(
            "remove {code} (the list adds error statuses to retry, such as 409; a success or redirect is never retried)"
        ))
    };
    let items = items(key, value, cx, "HTTP status codes").map_err(|d| vec![d])?;
    each(items.into_iter().enumerate().map(|(index, item)| {
        let (number, range, shown) = match item {
            Item::Toml(item) => {
                let Some(int) = item.get_ref().as_integer() else {
                    return Err(not_a_status(
                        index,
                        item.span(),
                        type_name(item.get_ref()).to_owned(),
                    ));
                };
                let number = i128::from_str_radix(int.as_str(), int.radix()).ok();
                (number, item.span(), int.to_string())
            }
            Item::Text(text, range) => {
                let shown = format!("`{}`", text.escape_debug());
                (text.parse::<i128>().ok(), range, shown)
            }
        };
        match number {
            None => Err(not_a_status(index, range, shown)),
            Some(n) => match u16::try_from(n).ok().filter(|c| ERROR_STATUSES.contains(c)) {
                Some(code) => Ok(code),
                None => Err(not_an_error(index, range, &n.to_string())),
            },
        }
    }))
}

/// Whether `method` is an HTTP method as RFC 9110 writes it (a token), in
/// upper case: retrykit-core's rule (a unit test holds the two together).
fn is_method(method: &str) -> bool {
    !method.is_empty()
        && method.bytes().all(|b| {
            b.is_ascii_uppercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b)
        })
}

/// `retry_methods`: upper-case HTTP method names; every item that is not
/// one is reported, with its index, the rule and (when one exists) the
/// spelling that would be.
pub(super) fn methods(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<String>, Vec<Diagnostic>> {
    let name = key.name();
    let rule = "an HTTP method is one word in upper case (methods are case-sensitive): letters A-Z, digits and !#$%&'*+-.^_`|~, e.g. PATCH";
    let items = items(key, value, cx, "HTTP method names").map_err(|d| vec![d])?;
    each(items.into_iter().enumerate().map(|(index, item)| {
        let (method, range) =
            item.text(key, index, cx, "an HTTP method name", "not a method name")?;
        if is_method(&method) {
            return Ok(method);
        }
        // Suggested only when it differs from what was written and is itself a method.
        let fixed = method.trim().to_ascii_uppercase();
        let suggestion = (fixed != method && is_method(&fixed)).then_some(fixed);
        let mut d = cx
            .error(
                range,
                format!(
                    "`{name}[{index}]` is `{}`, which is not an HTTP method name in upper case",
                    method.escape_debug()
                ),
                "not a method name",
            )
            .note(rule);
        d = match suggestion {
            Some(s) => d.suggest(Some(s)),
            None => d.note("remove it, or write the method's name as the server expects it"),
        };
        Err(d)
    }))
}

/// `grpc_retry_on`: gRPC status codes by name, as service configs write
/// them; every item that is not one is reported, with its index and the
/// code it was probably meant to be.
pub(super) fn grpc_codes(
    key: Key,
    value: &toml::Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> Result<Vec<u8>, Vec<Diagnostic>> {
    use retrykit_schema::grpc::{CODES, code_named, suggest_code};
    let name = key.name();
    let items = items(key, value, cx, "gRPC status code names").map_err(|d| vec![d])?;
    each(items.into_iter().enumerate().map(|(index, item)| {
        let (text, range) =
            item.text(key, index, cx, "a gRPC status code name", "not a code name")?;
        match code_named(&text) {
            Some(0) => Err(cx
                .error(
                    range,
                    format!("`{name}[{index}]` is OK, which is a success and never retried"),
                    "not a failure",
                )
                .note("remove it")),
            Some(code) => Ok(code),
            None => {
                let shown: String = text.chars().take(40).collect();
                let d = cx
                    .error(
                        range,
                        format!(
                            "`{name}[{index}]` is `{}`, which is not a gRPC status code name",
                            shown.escape_debug()
                        ),
                        "unknown code",
                    )
                    .suggest(
                        (text.len() <= 64)
                            .then(|| suggest_code(&text))
                            .flatten()
                            .filter(|s| s != "OK"),
                    );
                let names: Vec<&str> = CODES[1..].iter().map(|(n, _)| *n).collect();
                Err(d.note(format!(
                    "codes are written as service configs write them, in upper case: {}",
                    names.join(", ")
                )))
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_and_method_rules_are_retry_cores() {
        let builds = |codes: &[u16]| {
            retrykit_core::Policy::builder()
                .retry_on_status(codes.iter().copied())
                .build()
                .is_ok()
        };
        for code in [0, 200, 399, 400, 599, 600, u16::MAX] {
            assert_eq!(builds(&[code]), ERROR_STATUSES.contains(&code), "{code}");
        }
        for method in ["PATCH", "M-SEARCH", "post", "FOO BAR", "", " GET"] {
            let built = retrykit_core::Policy::builder()
                .retry_methods([method])
                .build()
                .is_ok();
            assert_eq!(built, is_method(method), "{method:?}");
        }
    }
}
