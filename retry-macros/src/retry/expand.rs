//! Expansion: the function with its signature kept and its body turned into
//! a retry loop, reaching retrykit-core only through `__private`: `site` (the
//! call site's registration and policy cache), `run` (the loop: `drive!`
//! over a `Run` for an async fn, `Retry::call_blocking` for a plain `fn`),
//! `classify` (the error type's classification and the attempt's tagging)
//! and `hooks` (the `retry_if`/`on_retry` adapters).
//!
//! Each attempt re-runs the body. By-value arguments are re-supplied to each
//! attempt as a clone (the first attempt included, since a consumed value
//! cannot be got back); references are captured, never cloned.

use super::capability;
use super::config::ConfigFile;
use super::inputs::{Resupplied, clone_check, resupply_inputs, whole_borrows};
use super::validate::{RetryArgs, RetryFn};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

/// What the config file seen at build time asks of the function's error type.
pub struct FileChecks {
    /// A `retry_on` list of the policy that leaves out `transient`: the error
    /// type must then implement `Classify`, or nothing it returns could ever
    /// be retried.
    pub narrow_retry_on: Option<Vec<String>>,
    /// Where the policy gets an `attempt_timeout`: the error type must then
    /// be able to stand for a timed-out attempt.
    pub attempt_timeout_at: Option<String>,
    /// Where the policy names a breaker, and which: the error type must then
    /// be able to stand for an attempt the breaker refused.
    pub breaker_at: Option<(String, String)>,
    /// Without a file: the warning that names are not checked, or nothing.
    pub unchecked: TokenStream,
    /// Whether the policy sets `hedge_after` in some layer of the file: the
    /// async fn is then built with the hedged loop, whose attempts are made
    /// by a closure that can be called again (each owning its copies).
    pub hedged: bool,
}

/// The annotated function, expanded: its signature as written (by-value
/// parameters renamed where the attempts re-supply them), and a body that
/// registers the call site, runs the build-time checks, keeps the site's
/// policy cache and runs the retry loop.
pub fn expand(
    args: &RetryArgs,
    mut func: RetryFn,
    config: Option<&ConfigFile>,
    file_checks: &FileChecks,
) -> TokenStream {
    let krate = &args.krate;
    let ret = &func.output;
    let resupplied = resupply_inputs(&mut func.sig.inputs);
    let config_items = config_tracking(config);
    let unchecked = &file_checks.unchecked;
    let call_site = Ident::new("__RETRY_CALL_SITE", Span::mixed_site());
    let register = register(args, &func, config, file_checks, &call_site);
    let checks = build_checks(args, ret, config, file_checks, &resupplied);
    let kind = Ident::new("__retry_kind", Span::mixed_site());
    let attempt = Attempt::new(args, &func, &resupplied, &kind);
    let looped = if file_checks.hedged && func.sig.asyncness.is_some() {
        hedged_loop(&attempt)
    } else if func.sig.asyncness.is_some() {
        async_loop(&attempt)
    } else {
        blocking_loop(&attempt)
    };

    let RetryFn {
        attrs, vis, sig, ..
    } = &func;
    quote! {
        #(#attrs)*
        #vis #sig {
            #config_items
            #unchecked
            #register
            #checks
            // Where this call site's calls get their policy: no lookup by
            // name while the registry is unchanged.
            static __RETRY_POLICY: #krate::__private::site::PolicyCache =
                #krate::__private::site::PolicyCache::new(#call_site);
            let #kind = {
                #[allow(unused_imports)]
                use #krate::__private::classify::{ViaClassify as _, ViaTransient as _};
                (&&#krate::__private::classify::probe::<#ret>()).__retry_kind()
            };
            #looped
        }
    }
}

/// The call site's registration: a `CallSite` constant (the policy's name,
/// where the function is, the file checked at build time, what its error
/// type can carry, which loop it was built with), submitted to the
/// registry's inventory.
fn register(
    args: &RetryArgs,
    func: &RetryFn,
    config: Option<&ConfigFile>,
    file_checks: &FileChecks,
    call_site: &Ident,
) -> TokenStream {
    let krate = &args.krate;
    let policy = &args.policy;
    let ret = &func.output;
    let fn_name = func.sig.ident.to_string();
    let checked_file = match config {
        Some(c) => {
            let path = c.path.to_string_lossy().into_owned();
            quote! { ::core::option::Option::Some(#path) }
        }
        None => quote! { ::core::option::Option::None },
    };
    let loader = match super::link::retrykit_config() {
        Some(name) => {
            let name = Ident::new(&name, Span::call_site());
            quote! { ::core::option::Option::Some(::#name::__private::lazy_load) }
        }
        None => quote! { ::core::option::Option::None },
    };
    // An item inside the function cannot name the function's generics:
    // then the run-time checks are left to the build-time ones.
    let generic = mentions_outer_generics(ret, &func.sig.generics);
    let (carries, carries_breaker_open) = capability::probes(args, ret, generic);
    let blocking = func.sig.asyncness.is_none();
    let hedged = file_checks.hedged && !blocking;
    // An async fn's waits run on tokio's timer: its first call checks for it.
    let waits_on_tokio = !blocking;
    quote_spanned! {policy.span()=>
        const #call_site: #krate::__private::site::CallSite = #krate::__private::site::CallSite {
            config: #checked_file,
            loader: #loader,
            carries_timeout: #carries,
            carries_breaker_open: #carries_breaker_open,
            blocking: #blocking,
            hedged: #hedged,
            waits_on_tokio: #waits_on_tokio,
            ..#krate::__private::site::CallSite::new(
                #policy,
                ::core::file!(),
                ::core::line!(),
                ::core::concat!(::core::module_path!(), "::", #fn_name),
            )
        };
        #krate::__private::inventory::submit! { #call_site }
    }
}

/// The build-time checks: each by-value argument is `Clone`, and the error
/// type can do what the policy in the file asks of it (say its class, stand
/// for a timed-out attempt, or for one the breaker refused).
fn build_checks(
    args: &RetryArgs,
    ret: &Type,
    config: Option<&ConfigFile>,
    file_checks: &FileChecks,
    resupplied: &[Resupplied],
) -> TokenStream {
    let clones = resupplied.iter().map(clone_check);
    let classified = file_checks
        .narrow_retry_on
        .as_deref()
        .map(|list| classified_check(args, ret, list));
    let timeout_check = file_checks
        .attempt_timeout_at
        .as_deref()
        .map(|at| capability::timeout_check(args, ret, at, config));
    let breaker_check = file_checks
        .breaker_at
        .as_ref()
        .map(|(at, name)| capability::breaker_check(args, ret, (at, name), config));
    quote! {
        #(#clones)*
        #classified
        #timeout_check
        #breaker_check
    }
}

/// What every shape of loop makes its attempts from: the body, the copies
/// of the by-value arguments, and the hooks and error tagging.
struct Attempt<'a> {
    krate: &'a syn::Path,
    ret: &'a Type,
    /// The local holding how the error type is classified.
    kind: &'a Ident,
    hooks: TokenStream,
    /// Each by-value argument's copy for one attempt, made from the parameter.
    copies: Vec<TokenStream>,
    /// Each copy bound to the pattern the body was written against.
    unpack: Vec<TokenStream>,
    /// The reference arguments, borrowed whole (see [`whole_borrows`]).
    whole: Vec<TokenStream>,
    body: &'a [syn::Stmt],
}

impl<'a> Attempt<'a> {
    fn new(
        args: &'a RetryArgs,
        func: &'a RetryFn,
        resupplied: &[Resupplied],
        kind: &'a Ident,
    ) -> Self {
        let copies = resupplied
            .iter()
            .map(|r| {
                let (check, outer, copy) = (&r.check, &r.outer, &r.copy);
                quote_spanned! {r.span=>
                    let #copy = #check::__retry_resupply(&#outer);
                }
            })
            .collect();
        let unpack = resupplied
            .iter()
            .map(|r| {
                let (inner, copy) = (&r.inner, &r.copy);
                quote! { let #inner = #copy; }
            })
            .collect();
        Attempt {
            krate: &args.krate,
            ret: &func.output,
            kind,
            hooks: hooks(args, &func.output),
            copies,
            unpack,
            whole: whole_borrows(&func.sig.inputs),
            body: &func.body.stmts,
        }
    }

    /// The attempt's future, written once: one call of the body. A hedged
    /// site's attempts own their copies (hedges run at once); a plain site's
    /// borrow them from the round.
    fn future(&self, owned: bool) -> TokenStream {
        let Attempt {
            krate,
            ret,
            kind,
            whole,
            unpack,
            body,
            ..
        } = self;
        let movement = owned.then(|| quote! { move });
        quote! {
            #krate::__private::classify::tag_future(
                #kind,
                #krate::__private::classify::typed::<#ret, _>(async #movement {
                    #(#whole)*
                    #(#unpack)*
                    #(#body)*
                }),
            )
        }
    }
}

/// An async fn whose policy may hedge: the driver chooses plain or hedged
/// rounds as the call starts, making each attempt with a closure that can be
/// called again (each call owning its copies). No argument is `&mut` (the
/// build refuses that).
fn hedged_loop(a: &Attempt) -> TokenStream {
    let (krate, hooks, copies) = (a.krate, &a.hooks, &a.copies);
    let run = Ident::new("__retry_run", Span::mixed_site());
    let make = Ident::new("__retry_make", Span::mixed_site());
    let attempt = a.future(true);
    quote! {
        let mut #run = #krate::__private::run::Run::for_site(&__RETRY_POLICY, #hooks);
        let mut #make = || {
            #(#copies)*
            #attempt
        };
        #krate::__private::run::drive!(#run, #make)
            .map_err(#krate::__private::classify::Tagged::into_inner)
    }
}

/// An async fn that runs one attempt at a time: each round's copies are made
/// in the loop's scope and the attempt by a closure written in place, so it
/// is `FnOnce` and may hand out borrows of `&mut` arguments; the attempt's
/// future is made inside the round, so it is held once.
fn async_loop(a: &Attempt) -> TokenStream {
    let (krate, hooks, copies) = (a.krate, &a.hooks, &a.copies);
    let run = Ident::new("__retry_run", Span::mixed_site());
    let attempt = a.future(false);
    quote! {
        let mut #run = #krate::__private::run::Run::for_site(&__RETRY_POLICY, #hooks);
        #krate::__private::run::drive!(#run, unhedged each { #(#copies)* } || { #attempt })
        .map_err(#krate::__private::classify::Tagged::into_inner)
    }
}

/// A blocking fn: the call runs on the policy borrowed from this thread's
/// view of the registry (no reference count, and a reload cannot reach it),
/// each attempt a closure over the body.
fn blocking_loop(a: &Attempt) -> TokenStream {
    let Attempt {
        krate,
        ret,
        kind,
        hooks,
        copies,
        unpack,
        body,
        ..
    } = a;
    let policy = Ident::new("__retry_policy", Span::mixed_site());
    quote! {
        __RETRY_POLICY.with_policy(|#policy| {
            #krate::__private::run::Retry::blocking(#policy)
                .hooks(#hooks)
                .call_blocking(|| {
                    #(#copies)*
                    #krate::__private::classify::tag(
                        #kind,
                        #krate::__private::classify::run_once(|| -> #ret {
                            #(#unpack)*
                            #(#body)*
                        }),
                    )
                })
        })
        .map_err(#krate::__private::classify::Tagged::into_inner)
    }
}

/// The hooks: `retry_if` and `on_retry` checked against the function's error
/// type at the path the user wrote, so a wrong signature is reported there.
fn hooks(args: &RetryArgs, ret: &Type) -> TokenStream {
    let krate = &args.krate;
    let mut hooks = quote! { #krate::__private::hooks::Hooks::new() };
    if let Some(path) = &args.retry_if {
        hooks = quote_spanned! {path.span()=>
            #hooks.retry_if(#krate::__private::hooks::retry_if::<#ret>(#path))
        };
    }
    if let Some(path) = &args.on_retry {
        hooks = quote_spanned! {path.span()=>
            #hooks.on_retry(#krate::__private::hooks::on_retry::<#ret>(#path))
        };
    }
    hooks
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
            impl<E: #krate::__private::classify::Classify> __RetryClassified for E {}
            fn __retry_classified<R: #krate::__private::classify::IsResult>()
            where
                R::Err: __RetryClassified,
            {
            }
            #call
        }
    }
}

/// Whether `ty` names a generic parameter or lifetime of the function (or
/// `Self`, or `impl Trait`), which an item nested in the function cannot name.
fn mentions_outer_generics(ty: &Type, generics: &syn::Generics) -> bool {
    use proc_macro2::TokenTree;
    let params: Vec<String> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    fn walk(tokens: TokenStream, params: &[String], after_quote: &mut bool) -> bool {
        for token in tokens {
            match token {
                TokenTree::Group(g) => {
                    if walk(g.stream(), params, after_quote) {
                        return true;
                    }
                }
                TokenTree::Ident(ident) => {
                    let name = ident.to_string();
                    // Any lifetime but 'static belongs to the function or its impl.
                    if std::mem::take(after_quote) && name != "static" {
                        return true;
                    }
                    if name == "Self" || name == "impl" || params.contains(&name) {
                        return true;
                    }
                }
                TokenTree::Punct(p) => *after_quote = p.as_char() == '\'',
                TokenTree::Literal(_) => *after_quote = false,
            }
        }
        false
    }
    walk(quote!(#ty), &params, &mut false)
}
