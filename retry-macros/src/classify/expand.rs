//! The `Classify` impl: `class`, `retry_after` and, when a variant is marked
//! `timeout`, `breaker_open`, `limit_full` or `chaos`, `from_timeout`,
//! `from_breaker_open`, `from_limit_full` or `from_chaos` (with the marker
//! traits `CarriesTimeout` and `CarriesBreakerOpen`). A `chaos` variant's
//! class and hint are its fault's.

use super::parse::ClassSpec;
use super::validate::{Container, Plan};
use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::{DeriveInput, GenericParam, Type};

pub fn expand(input: &DeriveInput, container: &Container, plans: &[Plan]) -> TokenStream {
    let krate = container
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::retrykit_core));
    let private = quote! { #krate::__private::derive };
    let name = &input.ident;
    let mut generics = input.generics.clone();
    let type_params: Vec<String> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect();
    // A generic source field must classify itself: say so in the bounds.
    for plan in plans {
        if let (Some((_, ty)), Some(ClassSpec::Source)) =
            (&plan.source, plan.class.as_ref().map(|c| &c.spec))
            && mentions(ty, &type_params)
        {
            generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote!(#ty: #private::Classify));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let path = |plan: &Plan| match &plan.variant {
        Some(v) => quote! { Self::#v },
        None => quote! { Self },
    };
    let class_arms = plans.iter().map(|plan| {
        let pat = path(plan);
        match plan.class.as_ref().map(|c| &c.spec) {
            Some(ClassSpec::Source) => {
                let (member, ty) = plan.source.as_ref().expect("validated: source has a field");
                let call = on_field(ty, quote! { #private::SourceField }, "source_class");
                quote! { #pat { #member: __retry_field, .. } => #call, }
            }
            Some(ClassSpec::Chaos) => match plan.chaos.as_ref().and_then(|c| c.field.as_ref()) {
                Some((member, ty)) => {
                    let call = on_field(ty, quote! { #private::ChaosField }, "chaos_class");
                    quote! { #pat { #member: __retry_field, .. } => #call, }
                }
                // Validation refuses a `chaos` variant without its field.
                None => quote! { #pat { .. } => #private::Class::Permanent, },
            },
            Some(ClassSpec::Permanent) => quote! { #pat { .. } => #private::Class::Permanent, },
            Some(ClassSpec::Retryable(class)) => {
                quote! { #pat { .. } => #private::Class::Retryable(#class), }
            }
            None => quote! { #pat { .. } => #private::Class::Permanent, },
        }
    });
    let hint_arms = plans.iter().filter_map(|plan| {
        let pat = path(plan);
        if let Some((member, ty)) = plan.chaos.as_ref().and_then(|c| c.field.as_ref()) {
            let call = on_field(ty, quote! { #private::ChaosField }, "chaos_retry_after");
            return Some(quote! { #pat { #member: __retry_field, .. } => #call, });
        }
        if let Some((member, ty)) = &plan.retry_after {
            let call = on_field(ty, quote! { #private::RetryAfterField }, "retry_after");
            return Some(quote! { #pat { #member: __retry_field, .. } => #call, });
        }
        if let (Some((member, ty)), Some(ClassSpec::Source)) =
            (&plan.source, plan.class.as_ref().map(|c| &c.spec))
        {
            let call = on_field(ty, quote! { #private::SourceField }, "source_retry_after");
            return Some(quote! { #pat { #member: __retry_field, .. } => #call, });
        }
        None
    });
    let hint_arms: Vec<_> = hint_arms.collect();
    let retry_after = if hint_arms.is_empty() {
        quote! {}
    } else {
        let rest =
            (hint_arms.len() < plans.len()).then(|| quote! { _ => ::core::option::Option::None, });
        quote! {
            fn retry_after(&self) -> ::core::option::Option<::core::time::Duration> {
                match self { #(#hint_arms)* #rest }
            }
        }
    };
    let from_timeout = plans.iter().find(|p| p.timeout.is_some()).map(|plan| {
        let pat = path(plan);
        let build = if plan.variant.is_some() {
            quote! { #pat }
        } else {
            quote! { Self }
        };
        quote! {
            fn from_timeout(_: #private::AttemptTimeout) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#build)
            }
        }
    });
    let from_breaker_open = plans.iter().find_map(|plan| {
        let refusal = plan.breaker_open.as_ref()?;
        let pat = path(plan);
        let build = match &refusal.field {
            Some((member, ty)) => {
                let call = on_field(ty, quote! { #private::BreakerOpenField }, "from_breaker_open");
                quote! { #pat { #member: #call } }
            }
            None => quote! { #pat {} },
        };
        Some(quote! {
            fn from_breaker_open(__retry_field: #private::BreakerOpen) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#build)
            }
        })
    });
    let from_limit_full = plans.iter().find_map(|plan| {
        let refusal = plan.limit_full.as_ref()?;
        let pat = path(plan);
        let build = match &refusal.field {
            Some((member, ty)) => {
                let call = on_field(ty, quote! { #private::LimitFullField }, "from_limit_full");
                quote! { #pat { #member: #call } }
            }
            None => quote! { #pat {} },
        };
        Some(quote! {
            fn from_limit_full(__retry_field: #private::LimitFull) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#build)
            }
        })
    });
    let from_chaos = plans.iter().find_map(|plan| {
        let (member, ty) = plan.chaos.as_ref()?.field.as_ref()?;
        let pat = path(plan);
        let call = on_field(ty, quote! { #private::ChaosField }, "from_chaos");
        Some(quote! {
            fn from_chaos(__retry_field: #private::InjectedFault) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#pat { #member: #call })
            }
        })
    });
    let class_body = if plans.is_empty() {
        quote! { match *self {} }
    } else {
        quote! { match self { #(#class_arms)* } }
    };
    // Register every retryable class this type declares, so a config's
    // `retry_on` can be checked against what the program produces.
    let mut classes: Vec<&str> = plans
        .iter()
        .filter_map(|p| match p.class.as_ref().map(|c| &c.spec) {
            Some(ClassSpec::Retryable(name)) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    classes.sort_unstable();
    classes.dedup();
    let type_name = name.to_string();
    let declared = classes.iter().map(|class| {
        quote! {
            #krate::__private::inventory::submit! {
                #private::DeclaredClass {
                    name: #class,
                    by: ::core::concat!(::core::module_path!(), "::", #type_name),
                }
            }
        }
    });
    // A type with a timeout variant can carry a policy's `attempt_timeout`.
    let carries = from_timeout.is_some().then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::CarriesTimeout for #name #ty_generics #where_clause {}
        }
    });
    // A type with a breaker_open variant can stand for a breaker's refusal.
    let carries_refusal = from_breaker_open.is_some().then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::CarriesBreakerOpen for #name #ty_generics #where_clause {}
        }
    });
    quote! {
        const _: () = {
            #(#declared)*
        };

        #carries
        #carries_refusal

        #[automatically_derived]
        impl #impl_generics #private::Classify for #name #ty_generics #where_clause {
            fn class(&self) -> #private::Class {
                #class_body
            }
            #retry_after
            #from_timeout
            #from_breaker_open
            #from_limit_full
            #from_chaos
        }
    }
}

/// Whether `ty` names one of the type's generic parameters.
fn mentions(ty: &Type, params: &[String]) -> bool {
    quote::ToTokens::to_token_stream(ty).into_iter().any(
        |tt| matches!(&tt, proc_macro2::TokenTree::Ident(i) if params.contains(&i.to_string())),
    )
}

/// `<FieldType as Trait>::method(__retry_field)`, with the first and last
/// tokens carrying the field type's first and last spans, so an unmet bound
/// underlines the whole field type.
fn on_field(ty: &Type, trait_path: TokenStream, method: &str) -> TokenStream {
    let tokens: Vec<_> = ty.to_token_stream().into_iter().collect();
    let first = tokens.first().map_or_else(Span::call_site, |t| t.span());
    let last = tokens.last().map_or(first, |t| t.span());
    let method = syn::Ident::new(method, last);
    let open = quote_spanned! {first=> < };
    let close = quote_spanned! {last=> > };
    quote! { #open #ty as #trait_path #close :: #method (__retry_field) }
}
