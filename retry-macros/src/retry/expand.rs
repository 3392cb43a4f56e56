//! Expansion: the function with its signature kept and its body turned into
//! a retry loop over retry-core's low-level `Run` API (async) or
//! `call_blocking` (plain `fn`), reaching retry-core only through
//! `__private`.
//!
//! Each attempt re-runs the body. By-value arguments are re-supplied to each
//! attempt as a clone (the first attempt included, since a consumed value
//! cannot be got back); references are captured, never cloned.

use super::config::ConfigFile;
use super::validate::{RetryArgs, RetryFn};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, PatIdent, Type};

/// A by-value argument given to each attempt as a fresh clone.
struct Resupplied {
    /// The parameter as the signature now names it.
    outer: Ident,
    /// The pattern the body sees, as written (with `mut`).
    inner: Pat,
    /// The per-attempt copy, before the attempt takes it.
    copy: Ident,
    /// The local trait whose diagnostic names this argument when it is not `Clone`.
    check: Ident,
    /// The argument's name (or pattern) for messages.
    shown: String,
    span: Span,
}

/// The annotated function, expanded.
///
/// `narrow_retry_on` is a `retry_on` list of the policy, from the config file
/// seen at build time, that leaves out `transient`: the error type must then
/// implement `Classify`, or nothing it returns could ever be retried.
pub fn expand(
    args: &RetryArgs,
    mut func: RetryFn,
    config: Option<&ConfigFile>,
    narrow_retry_on: Option<&[String]>,
) -> TokenStream {
    let krate = &args.krate;
    let policy = &args.policy;
    let ret = &func.output;
    let resupplied = resupply_inputs(&mut func.sig.inputs);

    let config_items = config_tracking(config);
    let fn_name = func.sig.ident.to_string();
    let register = quote_spanned! {policy.span()=>
        #krate::__private::inventory::submit! {
            #krate::__private::CallSite {
                policy: #policy,
                file: ::core::file!(),
                line: ::core::line!(),
                function: ::core::concat!(::core::module_path!(), "::", #fn_name),
            }
        }
    };
    let classified = narrow_retry_on.map(|list| classified_check(args, ret, list));
    let checks = resupplied.iter().map(clone_check);
    let copies: Vec<TokenStream> = resupplied
        .iter()
        .map(|r| {
            let (check, outer, copy) = (&r.check, &r.outer, &r.copy);
            quote_spanned! {r.span=> let #copy = #check::__retry_resupply(&#outer); }
        })
        .collect();
    let unpack: Vec<TokenStream> = resupplied
        .iter()
        .map(|r| {
            let (inner, copy) = (&r.inner, &r.copy);
            quote! { let #inner = #copy; }
        })
        .collect();

    let whole = whole_borrows(&func.sig.inputs);
    let hooks = hooks(args, ret);
    let site = Span::mixed_site();
    let policy_var = Ident::new("__retry_policy", site);
    let kind = Ident::new("__retry_kind", site);
    let run = Ident::new("__retry_run", site);
    let body = &func.body.stmts;

    let looped = if func.sig.asyncness.is_some() {
        let value = Ident::new("__retry_value", site);
        let error = Ident::new("__retry_error", site);
        let wait = Ident::new("__retry_wait", site);
        quote! {
            let mut #run = #krate::__private::Retry::new(&*#policy_var).hooks(#hooks).start();
            loop {
                #(#copies)*
                // The attempt's future is made inside `attempt_with`, so the
                // loop's future holds it once rather than as an argument too.
                // The closures are written in place so they are inferred as
                // `FnOnce` and may hand out borrows of `&mut` arguments.
                let #error = match #run.attempt_with(|| #krate::__private::tag_future_with(#kind, || {
                    #krate::__private::typed::<#ret, _>(async {
                        #(#whole)*
                        #(#unpack)*
                        #(#body)*
                    })
                })).await {
                    ::core::result::Result::Ok(#value) => break ::core::result::Result::Ok(#value),
                    ::core::result::Result::Err(#error) => #error,
                };
                // Decide first, sleep after: the error is not held across the
                // sleep, so a `!Send` error leaves the future `Send`.
                let #wait = match #run.next_wait(#error) {
                    ::core::result::Result::Ok(#wait) => #wait,
                    ::core::result::Result::Err(#error) => break ::core::result::Result::Err(#error.into_inner()),
                };
                #run.sleep(#wait).await;
            }
        }
    } else {
        quote! {
            #krate::__private::Retry::blocking(&*#policy_var)
                .hooks(#hooks)
                .call_blocking(|| {
                    #(#copies)*
                    #krate::__private::tag(
                        #kind,
                        #krate::__private::run_once(|| -> #ret {
                            #(#unpack)*
                            #(#body)*
                        }),
                    )
                })
                .map_err(#krate::__private::Tagged::into_inner)
        }
    };

    let RetryFn {
        attrs, vis, sig, ..
    } = &func;
    quote! {
        #(#attrs)*
        #vis #sig {
            #config_items
            #register
            #(#checks)*
            #classified
            let #policy_var = {
                // This call site's per-thread cache of its policy: one atomic
                // load while the registry is unchanged, a lookup after a reload.
                ::std::thread_local! {
                    static __RETRY_SITE: #krate::__private::SiteCache =
                        const { #krate::__private::SiteCache::new() };
                }
                #krate::__private::SiteCache::lookup(&__RETRY_SITE, #policy)
            };
            let #kind = {
                #[allow(unused_imports)]
                use #krate::__private::{ViaClassify as _, ViaTransient as _};
                (&&#krate::__private::probe::<#ret>()).__retry_kind()
            };
            #looped
        }
    }
}

/// The hooks: `retry_if` and `on_retry` checked against the function's error
/// type at the path the user wrote, so a wrong signature is reported there.
fn hooks(args: &RetryArgs, ret: &Type) -> TokenStream {
    let krate = &args.krate;
    let mut hooks = quote! { #krate::__private::Hooks::new() };
    if let Some(path) = &args.retry_if {
        hooks = quote_spanned! {path.span()=>
            #hooks.retry_if(#krate::__private::retry_if::<#ret>(#path))
        };
    }
    if let Some(path) = &args.on_retry {
        hooks = quote_spanned! {path.span()=>
            #hooks.on_retry(#krate::__private::on_retry::<#ret>(#path))
        };
    }
    hooks
}

/// Rewrites by-value parameters so each attempt gets its own copy: `mut` moves
/// from the parameter to the attempt's binding, and destructuring patterns
/// move into the attempt behind a generated parameter name.
fn resupply_inputs(
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
fn clone_check(r: &Resupplied) -> TokenStream {
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

/// Makes the build depend on the config file (so editing it re-runs the
/// check) and on `RETRY_CONFIG` (so pointing it elsewhere does too).
fn config_tracking(config: Option<&ConfigFile>) -> TokenStream {
    let file = config.map(|c| {
        let path = c.path.to_string_lossy().into_owned();
        quote! { const _: &[u8] = ::core::include_bytes!(#path); }
    });
    quote! {
        #file
        const _: ::core::option::Option<&str> = ::core::option_env!("RETRY_CONFIG");
    }
}

/// In an async attempt, borrows each reference argument (and `self`) as a
/// whole, as the function itself holds it. Without this, an attempt that
/// reads one field of a `&mut self` would hold `&Field` across an await, and
/// the future would need `Field: Sync` where the plain function needs only
/// `Self: Send`.
fn whole_borrows(inputs: &syn::punctuated::Punctuated<FnArg, syn::Token![,]>) -> Vec<TokenStream> {
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

/// The error type must implement `Classify` when the policy's `retry_on`
/// leaves out `transient`: reported at the policy name, with the list.
fn classified_check(args: &RetryArgs, ret: &Type, retry_on: &[String]) -> TokenStream {
    let krate = &args.krate;
    let policy = args.policy.value();
    let list = retry_on
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!(
        "policy `{policy}` retries only {list} (its `retry_on`), but `{{Self}}` does not implement `Classify`: every error of it counts as `transient`, so none would ever be retried"
    );
    let label = "the error type of this function does not say which class its errors are in";
    let note = format!(
        "fix: return an error type that implements `Classify` (`#[derive(Classify)]` on your own error type; for a generic error, an `E: Classify` bound), or add \"transient\" to the `retry_on` of policy `{policy}`"
    );
    let call = quote_spanned! {args.policy.span()=> __retry_classified::<#ret>(); };
    quote! {
        {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait __RetryClassified {}
            impl<E: #krate::__private::Classify> __RetryClassified for E {}
            fn __retry_classified<R: #krate::__private::IsResult>()
            where
                R::Err: __RetryClassified,
            {
            }
            #call
        }
    }
}
