//! Validation: what a variant's attributes and its fields' markers say
//! together, checked into a plan, every problem collected.

use super::parse::{Chosen, ClassSpec, FIELD_KEYS, Said, read};
use crate::suggest::hint;
use proc_macro2::Span;
use retrykit_schema::classes::TIMEOUT;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Fields, Ident, Lit, Member, Path, Type};

/// The plan for one variant (or for a struct).
pub struct Plan {
    /// The variant's name; `None` for a struct.
    pub variant: Option<Ident>,
    pub class: Option<Chosen>,
    pub retry_after: Option<(Member, Type)>,
    pub source: Option<(Member, Type)>,
    /// Where `timeout` was written, when this variant stands for a timed-out attempt.
    pub timeout: Option<Span>,
    /// When this variant stands for an attempt a circuit breaker refused.
    pub breaker_open: Option<Refusal>,
    /// When this variant stands for a call a concurrency limit gave no permit.
    pub limit_full: Option<Refusal>,
    /// When this variant stands for a fault the policy's chaos injected.
    pub chaos: Option<Refusal>,
}

/// A `breaker_open`, `limit_full` or `chaos` variant: where the key was
/// written, and the field that holds the `BreakerOpen`, `LimitFull` or
/// `InjectedFault` (none for a unit variant, which `chaos` refuses).
pub struct Refusal {
    pub span: Span,
    pub field: Option<(Member, Type)>,
}

/// What a `breaker_open` variant may be: every misuse lists it.
pub const BREAKER_OPEN_CHOICES: &str = "valid: `#[classify(breaker_open)]` with no other class key (its class is always permanent: an outer retry must not hammer an open breaker), on a unit variant such as `BreakerOpen`, or on a variant whose one field is a `retrykit_core::breaker::BreakerOpen` (`Refused(BreakerOpen)`, `Refused { open: BreakerOpen }`); one such variant per type";

/// What a `limit_full` variant may be: every misuse lists it.
pub const LIMIT_FULL_CHOICES: &str = "valid: `#[classify(limit_full)]` with no other class key (its class is always permanent: the call already waited for a permit as long as its policy allows, and nothing was sent), on a unit variant such as `LimitFull`, or on a variant whose one field is a `retrykit_core::limit::LimitFull` (`Busy(LimitFull)`, `Busy { full: LimitFull }`); one such variant per type";

/// What a `chaos` variant may be: every misuse lists it.
pub const CHAOS_CHOICES: &str = "valid: `#[classify(chaos)]` with no other class key and no `retry_after` (the variant takes its class, transient, timeout, throttled or permanent, and its Retry-After from the injected fault, at run time), on a variant whose one field is a `retrykit_core::chaos::InjectedFault` (`Injected(InjectedFault)`, `Injected { fault: InjectedFault }`); one such variant per type";

/// The two refusals a variant may stand for: the key, what refused, the
/// type of its one field, and the choices every misuse lists.
#[derive(Clone, Copy)]
struct Refused {
    key: &'static str,
    by: &'static str,
    /// When the engine builds the variant.
    when: &'static str,
    field: &'static str,
    choices: &'static str,
}

const BREAKER_OPEN: Refused = Refused {
    key: "breaker_open",
    by: "an attempt the circuit breaker refused",
    when: "when the circuit breaker refuses an attempt",
    field: "retrykit_core::breaker::BreakerOpen",
    choices: BREAKER_OPEN_CHOICES,
};

const LIMIT_FULL: Refused = Refused {
    key: "limit_full",
    by: "a call the concurrency limit gave no permit in time",
    when: "when the concurrency limit gives a call no permit in time",
    field: "retrykit_core::limit::LimitFull",
    choices: LIMIT_FULL_CHOICES,
};

/// Container-level settings.
pub struct Container {
    pub default: Option<Chosen>,
    pub krate: Option<Path>,
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

    let breaker_open = said.breaker_open.map(|span| {
        let other = said.timeout.map(|_| "`timeout`");
        refusal(BREAKER_OPEN, span, &what, &mut class, other, fields, errors)
    });
    let limit_full = said.limit_full.map(|span| {
        let other = said.timeout.map(|_| "`timeout`");
        let other = said.breaker_open.map(|_| "`breaker_open`").or(other);
        refusal(LIMIT_FULL, span, &what, &mut class, other, fields, errors)
    });
    let chaos = said.chaos.map(|span| {
        let keys = [
            (said.timeout.is_some(), "`timeout`"),
            (said.breaker_open.is_some(), "`breaker_open`"),
            (said.limit_full.is_some(), "`limit_full`"),
            (
                said.retry_after.is_some() || retry_after.is_some(),
                "`retry_after`",
            ),
        ];
        let other = keys.iter().find(|(said, _)| *said).map(|(_, key)| *key);
        injected(span, &what, &mut class, other, fields, errors)
    });

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
                    spec: ClassSpec::Retryable(TIMEOUT.into()),
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
            spec: ClassSpec::Retryable(TIMEOUT.into()),
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
        breaker_open,
        limit_full,
        chaos,
    }
}

/// Checks a `breaker_open` or `limit_full` variant: no other class (nor
/// `other`, a key that is not a class), at most one field (its type is
/// checked where the expansion builds it). Its class is permanent.
fn refusal(
    refused: Refused,
    span: Span,
    what: &str,
    class: &mut Option<Chosen>,
    other: Option<&str>,
    fields: &Fields,
    errors: &mut Vec<syn::Error>,
) -> Refusal {
    let Refused {
        key,
        by,
        when,
        field,
        choices,
    } = refused;
    let other = match (&*class, other) {
        (Some(chosen), _) => Some(chosen.shown.clone()),
        (None, Some(other)) => Some(other.to_owned()),
        (None, None) => None,
    };
    if let Some(other) = other {
        errors.push(syn::Error::new(
            span,
            format!("`{key}` conflicts with {other} on {what}: the variant that stands for {by} has no other class; fix: keep only one of them\n{choices}"),
        ));
    }
    if fields.len() > 1 {
        let short = field.rsplit("::").next().unwrap_or(field);
        errors.push(syn::Error::new(
            span,
            format!("`{key}` marks the variant the engine builds {when}, so it holds at most the `{short}`, but {what} has {} fields; fix: keep one field of type `{field}`, or none\n{choices}", fields.len()),
        ));
    }
    class.get_or_insert(Chosen {
        spec: ClassSpec::Permanent,
        span,
        shown: format!("`{key}`"),
    });
    let field = match fields.iter().next() {
        Some(f) if fields.len() == 1 => Some((member(f, 0), f.ty.clone())),
        _ => None,
    };
    Refusal { span, field }
}

/// Checks a `chaos` variant: no other class key (nor `other`, a key that is
/// not a class) and exactly one field, the fault (its type is checked where
/// the expansion builds it). Its class is the fault's.
fn injected(
    span: Span,
    what: &str,
    class: &mut Option<Chosen>,
    other: Option<&str>,
    fields: &Fields,
    errors: &mut Vec<syn::Error>,
) -> Refusal {
    let other = class.as_ref().map(|c| c.shown.as_str()).or(other);
    if let Some(other) = other {
        errors.push(syn::Error::new(
            span,
            format!("`chaos` conflicts with {other} on {what}: the variant that stands for a fault the policy's chaos injected takes its class and its Retry-After from the fault; fix: keep only one of them\n{CHAOS_CHOICES}"),
        ));
    }
    match fields.len() {
        0 => errors.push(syn::Error::new(
            span,
            format!("`chaos` needs a field for the injected fault, but {what} has none: the variant takes its class (transient, timeout, throttled or permanent) from the fault at run time, and a variant without it would lose that class; fix: give it one field of type `retrykit_core::chaos::InjectedFault`, as in `Injected(InjectedFault)`\n{CHAOS_CHOICES}"),
        )),
        1 => {}
        n => errors.push(syn::Error::new(
            span,
            format!("`chaos` marks the variant the engine builds for a fault the policy's chaos injects, so it holds only the `InjectedFault`, but {what} has {n} fields; fix: keep one field of type `retrykit_core::chaos::InjectedFault`\n{CHAOS_CHOICES}"),
        )),
    }
    class.get_or_insert(Chosen {
        spec: ClassSpec::Chaos,
        span,
        shown: "`chaos`".into(),
    });
    let field = match fields.iter().next() {
        Some(f) if fields.len() == 1 => Some((member(f, 0), f.ty.clone())),
        _ => None,
    };
    Refusal { span, field }
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
