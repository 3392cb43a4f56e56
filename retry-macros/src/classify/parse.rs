//! `#[classify(...)]` attributes as written: each list read into what it
//! says at its level (enum, variant or struct, field). Key-level mistakes are
//! collected here; `validate` judges the combination.

use crate::suggest::hint;
use proc_macro2::Span;
use retrykit_schema::classes;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Path};

/// Keys on a variant (or on a struct).
pub const VARIANT_KEYS: [&str; 9] = [
    "transient",
    "permanent",
    "class",
    "retry_after",
    "source",
    "timeout",
    "breaker_open",
    "limit_full",
    "chaos",
];
/// Keys on an enum.
pub const ENUM_KEYS: [&str; 2] = ["default", "crate"];
/// Keys on a field.
pub const FIELD_KEYS: [&str; 2] = ["source", "retry_after"];

/// What a variant's class is.
#[derive(Clone)]
pub enum ClassSpec {
    Permanent,
    Retryable(String),
    /// Delegated to a field.
    Source,
    /// The class of the injected fault the variant's field holds, at run time.
    Chaos,
}

/// The class a key chose, where it was written, for conflict messages.
#[derive(Clone)]
pub struct Chosen {
    pub spec: ClassSpec,
    pub span: Span,
    pub shown: String,
}

/// What one `#[classify(...)]` list said at a given level, before checks.
#[derive(Default)]
pub struct Said {
    pub class: Option<Chosen>,
    pub retry_after: Option<(Expr, Span)>,
    pub source: Option<Span>,
    pub timeout: Option<Span>,
    pub breaker_open: Option<Span>,
    pub limit_full: Option<Span>,
    pub chaos: Option<Span>,
    pub default: Option<Chosen>,
    pub krate: Option<Path>,
    /// An error was already reported for these attributes: do not add
    /// "not classified" on top of it (one mistake, one error).
    pub quiet: bool,
}

/// Reads every `#[classify(...)]` among `attrs`, accepting `keys`.
pub fn read(attrs: &[Attribute], keys: &[&str], level: &str, errors: &mut Vec<syn::Error>) -> Said {
    let mut said = Said::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("classify")) {
        let result = attr.parse_nested_meta(|meta| {
            let Some(ident) = meta.path.get_ident() else {
                errors.push(meta.error("expected a key such as `transient`"));
                return skip_value(&meta);
            };
            let key = ident.to_string();
            if !keys.contains(&key.as_str()) {
                let elsewhere = if level == "enum" && VARIANT_KEYS.contains(&key.as_str()) {
                    format!("; `{key}` goes on each variant (or name a class for all of them with `default = \"...\"`)")
                } else if level != "enum" && ENUM_KEYS.contains(&key.as_str()) {
                    "; this key goes on the enum".to_owned()
                } else {
                    hint(&key, keys.iter().copied())
                };
                errors.push(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown key `{key}` on {}{level}{elsewhere}\naccepted here: {}",
                        if level == "enum" { "an " } else { "a " },
                        keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                ));
                return skip_value(&meta);
            }
            let span = ident.span();
            match key.as_str() {
                "transient" | "permanent" => {
                    let spec = if key == "permanent" {
                        ClassSpec::Permanent
                    } else {
                        ClassSpec::Retryable(classes::TRANSIENT.into())
                    };
                    choose(&mut said.class, Chosen { spec, span, shown: format!("`{key}`") }, errors);
                }
                "source" => {
                    duplicate(&mut said.source, span, "source", errors);
                    if level != "field" {
                        let chosen = Chosen { spec: ClassSpec::Source, span, shown: "`source`".into() };
                        choose(&mut said.class, chosen, errors);
                    }
                }
                "timeout" => duplicate(&mut said.timeout, span, "timeout", errors),
                "breaker_open" => duplicate(&mut said.breaker_open, span, "breaker_open", errors),
                "limit_full" => duplicate(&mut said.limit_full, span, "limit_full", errors),
                "chaos" => duplicate(&mut said.chaos, span, "chaos", errors),
                "class" | "default" => {
                    let lit = string_value(&meta, &key, "\"throttled\"")?;
                    if let Some(chosen) = class_name(&key, &lit, errors) {
                        if key == "default" {
                            if said.default.is_some() {
                                errors.push(twice(span, &key));
                            }
                            said.default = Some(chosen);
                        } else {
                            choose(&mut said.class, chosen, errors);
                        }
                    }
                }
                "crate" => {
                    let lit = string_value(&meta, &key, "\"my_crate::retry\"")?;
                    match lit.parse::<Path>() {
                        Ok(path) => said.krate = Some(path),
                        Err(_) => errors.push(syn::Error::new(
                            lit.span(),
                            "`crate` must name a path; fix: `crate = \"my_crate::retry\"`",
                        )),
                    }
                }
                _ => {
                    // retry_after
                    if said.retry_after.is_some() {
                        errors.push(twice(span, &key));
                    }
                    let value = if meta.input.peek(syn::Token![=]) {
                        Some(meta.value()?.parse::<Expr>()?)
                    } else {
                        None
                    };
                    match (level, value) {
                        ("field", None) => said.retry_after = Some((syn::parse_quote!(_), span)),
                        ("field", Some(v)) => errors.push(syn::Error::new(
                            v.span(),
                            "on a field, `retry_after` takes no value: it marks this field; fix: `#[classify(retry_after)]`",
                        )),
                        (_, Some(v)) => said.retry_after = Some((v, span)),
                        (_, None) => errors.push(syn::Error::new(
                            span,
                            "`retry_after` needs the field that holds the server's hint; fix: `#[classify(retry_after = wait)]` (or `retry_after = 0` for a tuple field)",
                        )),
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    said
}

fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn twice(span: Span, key: &str) -> syn::Error {
    syn::Error::new(
        span,
        format!("`{key}` is given more than once; fix: keep one"),
    )
}

fn duplicate(slot: &mut Option<Span>, span: Span, key: &str, errors: &mut Vec<syn::Error>) {
    if slot.is_some() {
        errors.push(twice(span, key));
    }
    *slot = Some(span);
}

fn choose(slot: &mut Option<Chosen>, chosen: Chosen, errors: &mut Vec<syn::Error>) {
    if let Some(first) = slot {
        let message = if matches!(first.spec, ClassSpec::Permanent)
            || matches!(chosen.spec, ClassSpec::Permanent)
        {
            format!(
                "{} conflicts with {} on the same variant: a permanent error is never retried, so it has no retry class; fix: keep only one of them",
                chosen.shown, first.shown
            )
        } else {
            format!(
                "{} conflicts with {} on the same variant: each variant has exactly one class; fix: keep only one of them",
                chosen.shown, first.shown
            )
        };
        errors.push(syn::Error::new(chosen.span, message));
        return;
    }
    *slot = Some(chosen);
}

fn string_value(
    meta: &syn::meta::ParseNestedMeta,
    key: &str,
    example: &str,
) -> syn::Result<LitStr> {
    let value: Expr = meta.value()?.parse()?;
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a string literal; fix: `{key} = {example}`"),
        )),
    }
}

/// A class name from `class = "..."` or `default = "..."`.
fn class_name(key: &str, lit: &LitStr, errors: &mut Vec<syn::Error>) -> Option<Chosen> {
    let name = lit.value();
    let shown = format!("`{key} = \"{name}\"`");
    if name == classes::PERMANENT {
        if key == "class" {
            errors.push(syn::Error::new(
                lit.span(),
                "`permanent` is not a retry class; fix: write `#[classify(permanent)]` instead of `class = \"permanent\"`",
            ));
            return None;
        }
        return Some(Chosen {
            spec: ClassSpec::Permanent,
            span: lit.span(),
            shown,
        });
    }
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !valid {
        errors.push(syn::Error::new(
            lit.span(),
            format!(
                "`{name}` is not a class name: use lowercase letters, digits, `_` or `-`, as in a policy's `retry_on` list; fix: `{key} = \"throttled\"`"
            ),
        ));
        return None;
    }
    Some(Chosen {
        spec: ClassSpec::Retryable(name),
        span: lit.span(),
        shown,
    })
}
