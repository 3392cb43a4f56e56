//! The function's inputs as each attempt sees them: by-value arguments
//! re-supplied to every attempt as a clone (with a check that names the
//! argument when it is not `Clone`), and reference arguments borrowed whole.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, PatIdent, Type};

/// A by-value argument given to each attempt as a fresh clone.
pub struct Resupplied {
    /// The parameter as the signature now names it.
    pub outer: Ident,
    /// The pattern the body sees, as written (with `mut`).
    pub inner: Pat,
    /// The per-attempt copy, before the attempt takes it.
    pub copy: Ident,
    /// The local trait whose diagnostic names this argument when it is not `Clone`.
    pub check: Ident,
    /// The argument's name (or pattern) for messages.
    shown: String,
    pub span: Span,
}

/// Rewrites by-value parameters so each attempt gets its own copy: `mut` moves
/// from the parameter to the attempt's binding, and destructuring patterns
/// move into the attempt behind a generated parameter name.
pub fn resupply_inputs(
    inputs: &mut syn::punctuated::Punctuated<FnArg, syn::Token![,]>,
) -> Vec<Resupplied> {
    let mut out = Vec::new();
    for (index, input) in inputs.iter_mut().enumerate() {
        let FnArg::Typed(typed) = input else { continue };
        if matches!(&*typed.ty, Type::Reference(_)) || matches!(&*typed.pat, Pat::Wild(_)) {
            continue;
        }
        let span = typed.pat.span();
        let inner = (*typed.pat).clone();
        let (outer, shown) = match &mut *typed.pat {
            Pat::Ident(PatIdent {
                by_ref: None,
                subpat: None,
                ident,
                mutability,
                ..
            }) => {
                *mutability = None;
                (ident.clone(), ident.to_string())
            }
            other => {
                let shown = quote::ToTokens::to_token_stream(&*other).to_string();
                let outer = format_ident!("__retry_param{}", index, span = Span::mixed_site());
                *other = Pat::Ident(PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: None,
                    ident: outer.clone(),
                    subpat: None,
                });
                (outer, shown)
            }
        };
        out.push(Resupplied {
            outer,
            inner,
            copy: format_ident!("__retry_copy{}", index, span = Span::mixed_site()),
            check: format_ident!("__RetryResupply{}", index),
            shown,
            span,
        });
    }
    out
}

/// A local trait per by-value argument: its blanket impl clones, and its
/// diagnostic names the argument when the type is not `Clone`.
pub fn clone_check(r: &Resupplied) -> TokenStream {
    let message = format!(
        "`#[retry]` cannot give argument `{}` to a second attempt: `{{Self}}` is not `Clone`",
        r.shown
    );
    let label = format!(
        "`{}` is taken by value, so every attempt needs its own copy",
        r.shown
    );
    let note = format!(
        "fix: take `{}` by reference (`&{{Self}}`, or `&mut {{Self}}` to mutate it across attempts), or implement `Clone` for `{{Self}}`",
        r.shown
    );
    let check = &r.check;
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        trait #check: ::core::marker::Sized {
            fn __retry_resupply(&self) -> Self;
        }
        impl<T: ::core::clone::Clone> #check for T {
            #[inline]
            fn __retry_resupply(&self) -> Self {
                ::core::clone::Clone::clone(self)
            }
        }
    }
}

/// Whether any argument is a `&mut` borrow (`&mut self` included): two
/// attempts cannot hold it at once, so such a fn cannot hedge.
pub fn takes_mut(inputs: &syn::punctuated::Punctuated<FnArg, syn::Token![,]>) -> bool {
    inputs.iter().any(|input| match input {
        FnArg::Receiver(r) => r.reference.is_some() && r.mutability.is_some(),
        FnArg::Typed(t) => matches!(&*t.ty, Type::Reference(r) if r.mutability.is_some()),
    })
}

/// In an async attempt, borrows each reference argument (and `self`) as a
/// whole, as the function itself holds it. Without this, an attempt that
/// reads one field of a `&mut self` would hold `&Field` across an await, and
/// the future would need `Field: Sync` where the plain function needs only
/// `Self: Send`.
pub fn whole_borrows(
    inputs: &syn::punctuated::Punctuated<FnArg, syn::Token![,]>,
) -> Vec<TokenStream> {
    inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Receiver(r) if r.reference.is_some() => {
                let this = &r.self_token;
                Some(match r.mutability {
                    Some(_) => quote! { let _ = &mut *#this; },
                    None => quote! { let _ = &*#this; },
                })
            }
            FnArg::Typed(t) => match (&*t.pat, &*t.ty) {
                (Pat::Ident(p), Type::Reference(r)) if p.subpat.is_none() && p.by_ref.is_none() => {
                    let name = &p.ident;
                    Some(match r.mutability {
                        Some(_) => quote! { let _ = &mut *#name; },
                        None => quote! { let _ = &*#name; },
                    })
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect()
}
