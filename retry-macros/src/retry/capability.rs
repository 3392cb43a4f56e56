//! What the function's error type must be able to stand for, given its
//! policy: a timed-out attempt (`attempt_timeout`), an attempt a circuit
//! breaker refused (`breaker`). Each is checked twice: at build time
//! against the file the build sees (a bound on a marker trait, reported at
//! the return type), and at start-up by `init()` (a probe registered with
//! the call site, for a file or an override the build did not see).

use super::config::ConfigFile;
use super::validate::RetryArgs;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

/// One capability the build requires: the marker trait, and the words of
/// the compile error.
struct Capability {
    /// The marker trait in `__private::classify`.
    marker: &'static str,
    /// The local trait and function that carry the diagnostic (the
    /// compiler names them in its notes).
    local: (&'static str, &'static str),
    message: String,
    label: &'static str,
    note: String,
}

/// The compile error when the policy sets `attempt_timeout` (`at`: the
/// table that does): otherwise the engine could never cut an attempt short,
/// and the timeout would be silently ignored.
pub fn timeout_check(
    args: &RetryArgs,
    ret: &Type,
    at: &str,
    config: Option<&ConfigFile>,
) -> TokenStream {
    let policy = args.policy.value();
    let file = in_file(config);
    requirement(
        args,
        ret,
        &Capability {
            marker: "CarriesTimeout",
            local: ("__RetryTimesOut", "__retry_times_out"),
            message: format!(
                "policy `{policy}` sets `attempt_timeout` ({at}{file}), but `{{Self}}` cannot stand for a timed-out attempt, so the timeout could never be enforced"
            ),
            label: "this error type has no variant for a timed-out attempt",
            note: format!(
                "fix: add a unit variant marked `#[classify(timeout)]` (e.g. `TimedOut`) to the error type and derive `Classify`; for a hand-written `Classify` whose `from_timeout` returns `Some`, implement `retrykit_core::CarriesTimeout`; or set `attempt_timeout = \"none\"` for policy `{policy}`"
            ),
        },
    )
}

/// The compile error when the policy names a breaker (`at`: the table that
/// does; `breaker`: its name): otherwise the breaker could never hold the
/// function's attempts back.
pub fn breaker_check(
    args: &RetryArgs,
    ret: &Type,
    (at, breaker): (&str, &str),
    config: Option<&ConfigFile>,
) -> TokenStream {
    let policy = args.policy.value();
    let file = in_file(config);
    requirement(
        args,
        ret,
        &Capability {
            marker: "CarriesBreakerOpen",
            local: ("__RetryBreakerRefuses", "__retry_breaker_refuses"),
            message: format!(
                "policy `{policy}` names breaker `{breaker}` ({at}{file}), but `{{Self}}` cannot stand for an attempt the breaker refused, so the breaker could never hold its attempts back"
            ),
            label: "this error type has no variant for an attempt a circuit breaker refused",
            note: format!(
                "fix: add a variant marked `#[classify(breaker_open)]` to the error type and derive `Classify`; for a hand-written `Classify` whose `from_breaker_open` returns `Some`, implement `retrykit_core::CarriesBreakerOpen`; or set `breaker = \"none\"` for policy `{policy}`"
            ),
        },
    )
}

/// The probes registered with the call site, `Option<fn() -> bool>` each:
/// whether the error type can stand for a timed-out attempt, and for a
/// refused one. `None` when `ret` names the function's generics, which an
/// item inside it cannot (the build-time check is left to cover it).
pub fn probes(args: &RetryArgs, ret: &Type, generic: bool) -> (TokenStream, TokenStream) {
    let probe = |name: &str| {
        if generic {
            return quote! { ::core::option::Option::None };
        }
        let krate = &args.krate;
        let probe = Ident::new(name, Span::call_site());
        let local = Ident::new(&format!("__retry_{name}"), Span::call_site());
        quote! {
            ::core::option::Option::Some({
                fn #local() -> bool {
                    #[allow(unused_imports)]
                    use #krate::__private::classify::{ViaClassify as _, ViaTransient as _};
                    #krate::__private::classify::#probe::<#ret, _>(
                        (&&#krate::__private::classify::probe::<#ret>()).__retry_kind(),
                    )
                }
                #local
            })
        }
    };
    (probe("carries_timeout"), probe("carries_breaker_open"))
}

fn in_file(config: Option<&ConfigFile>) -> String {
    config.map_or_else(String::new, |c| format!(" in {}", c.path.display()))
}

/// A bound of `ret`'s error type on `cap.marker`, whose diagnostic is `cap`'s.
fn requirement(args: &RetryArgs, ret: &Type, cap: &Capability) -> TokenStream {
    let krate = &args.krate;
    let marker = Ident::new(cap.marker, Span::call_site());
    let local = Ident::new(cap.local.0, Span::call_site());
    let func = Ident::new(cap.local.1, Span::call_site());
    let (message, label, note) = (&cap.message, cap.label, &cap.note);
    let call = quote_spanned! {ret.span()=> #func::<#ret>(); };
    quote! {
        {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait #local {}
            impl<E: #krate::__private::classify::#marker> #local for E {}
            fn #func<R: #krate::__private::classify::IsResult>()
            where
                R::Err: #local,
            {
            }
            #call
        }
    }
}
