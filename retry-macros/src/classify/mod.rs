//! `#[derive(Classify)]`: per-variant classes, server hints, delegation to a
//! source field, and the variants that stand for a timed-out attempt, for an
//! attempt a circuit breaker refused, for a call a concurrency limit gave no
//! permit, and for a fault the policy's chaos injected.

mod expand;
mod parse;
mod validate;

use parse::{ENUM_KEYS, VARIANT_KEYS};
use proc_macro2::TokenStream;
use syn::{Data, DeriveInput};

/// The derive's expansion, or every error at once.
pub fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    match plan(&input) {
        Ok((container, plans)) => expand::expand(&input, &container, &plans),
        Err(e) => e.to_compile_error(),
    }
}

/// Remembers `variant` as the one that stands for `what` (marked `key` at
/// `span`), or says that another one already does.
fn only_one<'v>(
    first: &mut Option<&'v syn::Ident>,
    span: Option<proc_macro2::Span>,
    variant: &'v syn::Ident,
    key: &str,
    what: &str,
    choices: &str,
    errors: &mut Vec<syn::Error>,
) {
    let Some(span) = span else { return };
    if let Some(first) = first {
        errors.push(syn::Error::new(
            span,
            format!("only one variant can stand for {what}, and `{first}` already does; fix: remove `{key}` from one of them{choices}"),
        ));
    }
    first.get_or_insert(variant);
}

fn plan(input: &DeriveInput) -> Result<(validate::Container, Vec<validate::Plan>), syn::Error> {
    let mut errors = Vec::new();
    let plans = match &input.data {
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "`Classify` cannot be derived for a union: a union does not know which of its fields holds the error; fix: use an enum, or implement `Classify` by hand",
            ));
        }
        Data::Enum(data) => {
            let said = parse::read(&input.attrs, &ENUM_KEYS, "enum", &mut errors);
            // A mistake on the enum may be the missing default: do not also
            // report every variant as unclassified.
            let enum_quiet = !errors.is_empty();
            let container = validate::Container {
                default: said.default,
                krate: said.krate,
            };
            let mut plans = Vec::new();
            let mut timeout: Option<&syn::Ident> = None;
            let mut breaker_open: Option<&syn::Ident> = None;
            let mut limit_full: Option<&syn::Ident> = None;
            let mut chaos: Option<&syn::Ident> = None;
            for v in &data.variants {
                let before = errors.len();
                let said = parse::read(&v.attrs, &VARIANT_KEYS, "variant", &mut errors);
                let said = parse::Said {
                    quiet: enum_quiet || errors.len() > before,
                    ..said
                };
                let p = validate::plan(
                    Some(&v.ident),
                    v.ident.span(),
                    said,
                    &v.fields,
                    container.default.as_ref(),
                    &mut errors,
                );
                let refusal = p.breaker_open.as_ref().map(|r| r.span);
                only_one(
                    &mut timeout,
                    p.timeout,
                    &v.ident,
                    "timeout",
                    "a timed-out attempt",
                    "",
                    &mut errors,
                );
                let choices = format!("\n{}", validate::BREAKER_OPEN_CHOICES);
                only_one(
                    &mut breaker_open,
                    refusal,
                    &v.ident,
                    "breaker_open",
                    "an attempt the circuit breaker refused",
                    &choices,
                    &mut errors,
                );
                let full = p.limit_full.as_ref().map(|r| r.span);
                let choices = format!("\n{}", validate::LIMIT_FULL_CHOICES);
                only_one(
                    &mut limit_full,
                    full,
                    &v.ident,
                    "limit_full",
                    "a call the concurrency limit gave no permit in time",
                    &choices,
                    &mut errors,
                );
                let injected = p.chaos.as_ref().map(|r| r.span);
                let choices = format!("\n{}", validate::CHAOS_CHOICES);
                only_one(
                    &mut chaos,
                    injected,
                    &v.ident,
                    "chaos",
                    "a fault the policy's chaos injected",
                    &choices,
                    &mut errors,
                );
                plans.push(p);
            }
            (container, plans)
        }
        Data::Struct(data) => {
            let keys: Vec<&str> = VARIANT_KEYS
                .iter()
                .chain(ENUM_KEYS.iter())
                .copied()
                .collect();
            let before = errors.len();
            let mut said = parse::read(&input.attrs, &keys, "struct", &mut errors);
            said.quiet = errors.len() > before;
            let container = validate::Container {
                default: said.default.take(),
                krate: said.krate.take(),
            };
            let p = validate::plan(
                None,
                input.ident.span(),
                said,
                &data.fields,
                container.default.as_ref(),
                &mut errors,
            );
            (container, vec![p])
        }
    };
    match crate::suggest::combine(errors) {
        Some(e) => Err(e),
        None => Ok(plans),
    }
}
