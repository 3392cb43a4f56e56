//! `#[classify(...)]` attributes: parsed and checked into a plan per variant,
//! collecting every problem before reporting them together.

use crate::suggest::hint;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Fields, Ident, Lit, LitStr, Member, Path, Type};

/// Keys on a variant (or on a struct).
pub const VARIANT_KEYS: [&str; 6] = [
    "transient",
    "permanent",
    "class",
    "retry_after",
    "source",
    "timeout",
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
}

/// The class a key chose, where it was written, for conflict messages.
#[derive(Clone)]
pub struct Chosen {
    pub spec: ClassSpec,
    pub span: Span,
    pub shown: String,
}

/// The plan for one variant (or for a struct).
pub struct Plan {
    /// The variant's name; `None` for a struct.
    pub variant: Option<Ident>,
    pub class: Option<Chosen>,
    pub retry_after: Option<(Member, Type)>,
    pub source: Option<(Member, Type)>,
    /// Where `timeout` was written, when this variant stands for a timed-out attempt.
    pub timeout: Option<Span>,
}

/// Container-level settings.
pub struct Container {
    pub default: Option<Chosen>,
    pub krate: Option<Path>,
}

/// What one `#[classify(...)]` list said at a given level, before checks.
#[derive(Default)]
pub struct Said {
    pub class: Option<Chosen>,
    pub retry_after: Option<(Expr, Span)>,
    pub source: Option<Span>,
    pub timeout: Option<Span>,
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
                        ClassSpec::Retryable("transient".into())
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
    if name == "permanent" {
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

/// The plan for one variant or struct: its own attributes, its fields'
/// markers, and the container's default.
pub fn plan(
    variant: Option<&Ident>,
    name_span: Span,
    said: Said,
    fields: &Fields,
    default: Option<&Chosen>,
    errors: &mut Vec<syn::Error>,
) -> Plan {
    let what = match variant {
        Some(v) => format!("variant `{v}`"),
        None => "this struct".to_owned(),
    };
    let mut class = said.class;
    let mut source = None;
    let mut retry_after = None;

    // Field markers.
    for (index, field) in fields.iter().enumerate() {
        let field_said = read(&field.attrs, &FIELD_KEYS, "field", errors);
        let member = member(field, index);
        if let Some(span) = field_said.source {
            if source.is_some() {
                errors.push(syn::Error::new(
                    span,
                    format!("{what} marks more than one `source` field; fix: keep one"),
                ));
            }
            source = Some((member.clone(), field.ty.clone()));
            if class.is_none() {
                class = Some(Chosen {
                    spec: ClassSpec::Source,
                    span,
                    shown: "`source`".into(),
                });
            } else if !matches!(class.as_ref().map(|c| &c.spec), Some(ClassSpec::Source)) {
                let first = class.as_ref().map(|c| c.shown.clone()).unwrap_or_default();
                errors.push(syn::Error::new(
                    span,
                    format!("`source` conflicts with {first} on {what}: the class comes either from a field or from the variant; fix: keep only one of them"),
                ));
            }
        }
        if field_said.retry_after.is_some() {
            retry_after = Some((member, field.ty.clone()));
        }
    }

    // `source` on the variant: the marked field, else thiserror's
    // `#[source]`/`#[from]` field, else the only field.
    if matches!(class.as_ref().map(|c| &c.spec), Some(ClassSpec::Source)) && source.is_none() {
        let marked: Vec<_> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.attrs
                    .iter()
                    .any(|a| a.path().is_ident("source") || a.path().is_ident("from"))
            })
            .collect();
        let pick = match (marked.as_slice(), fields.len()) {
            ([(i, f)], _) => Some((member(f, *i), f.ty.clone())),
            ([], 1) => fields.iter().next().map(|f| (member(f, 0), f.ty.clone())),
            _ => None,
        };
        match pick {
            Some(p) => source = Some(p),
            None => errors.push(syn::Error::new(
                said.source.unwrap_or(name_span),
                format!(
                    "`source` needs the field to delegate to, but {what} has {} fields and none is marked; fix: put `#[classify(source)]` on that field",
                    fields.len()
                ),
            )),
        }
    }

    if let Some((expr, span)) = said.retry_after {
        match find_field(&expr, fields, &what) {
            Ok(found) => retry_after = Some(found),
            Err(e) => errors.push(e),
        }
        if matches!(class.as_ref().map(|c| &c.spec), Some(ClassSpec::Permanent)) {
            errors.push(syn::Error::new(
                span,
                format!("`retry_after` on a permanent {what} has no effect: a permanent error is never retried; fix: remove `retry_after`, or classify the variant as retryable"),
            ));
        }
    }

    let timeout = match said.timeout {
        Some(span) if !fields.is_empty() => {
            errors.push(syn::Error::new(
                span,
                format!("`timeout` marks the variant the engine builds when an attempt times out, so it must have no fields, but {what} has some; fix: put `#[classify(timeout)]` on a unit variant such as `TimedOut`"),
            ));
            if class.is_none() {
                class = Some(Chosen {
                    spec: ClassSpec::Retryable("timeout".into()),
                    span,
                    shown: "`timeout`".into(),
                });
            }
            None
        }
        other => other,
    };
    if timeout.is_some() && class.is_none() {
        class = Some(Chosen {
            spec: ClassSpec::Retryable("timeout".into()),
            span: name_span,
            shown: "`timeout`".into(),
        });
    }
    if class.is_none() {
        class = default.cloned();
    }
    if class.is_none() && !said.quiet {
        let fix = match variant {
            Some(_) => {
                "add `#[classify(transient)]`, `#[classify(permanent)]`, `#[classify(class = \"...\")]` or `#[classify(source)]` to it, or `#[classify(default = \"transient\")]` to the enum"
            }
            None => {
                "add `#[classify(transient)]`, `#[classify(permanent)]`, `#[classify(class = \"...\")]` or `#[classify(source)]` to the struct"
            }
        };
        errors.push(syn::Error::new(
            name_span,
            format!("{what} is not classified; fix: {fix}"),
        ));
    }
    Plan {
        variant: variant.cloned(),
        class,
        retry_after,
        source,
        timeout,
    }
}

fn member(field: &syn::Field, index: usize) -> Member {
    match &field.ident {
        Some(ident) => Member::Named(ident.clone()),
        None => Member::Unnamed(syn::Index {
            index: index as u32,
            span: field.ty.span(),
        }),
    }
}

/// The field `retry_after = <expr>` names.
fn find_field(expr: &Expr, fields: &Fields, what: &str) -> syn::Result<(Member, Type)> {
    let names: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.ident
                .as_ref()
                .map_or_else(|| i.to_string(), |id| id.to_string())
        })
        .collect();
    let wanted = match expr {
        Expr::Path(p) if p.path.get_ident().is_some() => p.path.get_ident().map(|i| i.to_string()),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => Some(i.base10_digits().to_owned()),
        _ => None,
    };
    let Some(wanted) = wanted else {
        return Err(syn::Error::new(
            expr.span(),
            "`retry_after` takes a field name (or a tuple index); fix: `retry_after = wait`",
        ));
    };
    match names.iter().position(|n| *n == wanted) {
        Some(i) => {
            let field = fields.iter().nth(i).expect("position is in range");
            Ok((member(field, i), field.ty.clone()))
        }
        None => Err(syn::Error::new(
            expr.span(),
            format!(
                "{what} has no field `{wanted}`{}\nfix: name the field that holds the server's hint",
                hint(&wanted, names.iter().map(String::as_str))
            ),
        )),
    }
}
