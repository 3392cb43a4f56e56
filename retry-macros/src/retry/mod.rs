//! `#[retry(...)]`: parse, validate, check the name against retry.toml, expand.

mod capability;
mod config;
mod expand;
mod inputs;
mod link;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The attribute's expansion. On any error: the item unchanged plus the
/// errors, so one mistake produces one error and not a cascade.
pub fn retry(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func = match syn::parse2::<parse::RawFn>(item.clone()) {
        Ok(func) => func,
        Err(e) => return with_errors(item, e),
    };
    let args = parse::args(attr).and_then(validate::args);
    let unchanged = unchanged(&func);
    let func = validate::function(func);
    // The file's verdict on the name joins the other mistakes, reported in one pass.
    let config = args.as_ref().ok().map(|_| config::find());
    let file_error = match (&args, &config) {
        (Ok(args), Some(config)) => config.check(&args.policy),
        _ => None,
    };
    let (args, func) = match (args, func, file_error) {
        (Ok(args), Ok(func), None) => (args, func),
        (args, func, file_error) => {
            let errors = [args.err(), file_error, func.err()]
                .into_iter()
                .flatten()
                .reduce(|mut all, e| {
                    all.combine(e);
                    all
                });
            return match errors {
                Some(errors) => with_errors(unchanged, errors),
                None => unchanged,
            };
        }
    };
    let config = config.unwrap_or(config::Search::Nothing);
    let name = args.policy.value();
    let file = config.file();
    let hedge_at = file.and_then(|c| c.hedge_after_set_at(&name));
    // Why the site runs one attempt at a time, and the change that lets it hedge.
    let one_at_a_time = if func.sig.asyncness.is_none() {
        Some((
            "is a blocking fn",
            "make the function async (taking shared references)",
        ))
    } else if inputs::takes_mut(&func.sig.inputs) {
        Some((
            "takes a `&mut` argument, which two attempts cannot hold at once",
            "take `&self` (and shared references) instead of `&mut`, keeping what the attempts change behind a lock (e.g. a tokio::sync::Mutex field)",
        ))
    } else {
        None
    };
    if let (Some(at), Some((why, change))) = (&hedge_at, one_at_a_time) {
        let path = file
            .map(|c| c.path.display().to_string())
            .unwrap_or_default();
        let error = syn::Error::new(
            func.sig.fn_token.span,
            format!(
                "policy `{name}` sets `hedge_after` ({at} in {path}), but `{}` {why}: it runs one attempt at a time, so it cannot hedge\n\
                 fix: {change}, use a policy without hedge_after, or set `hedge_after = \"none\"` for policy `{name}`",
                func.sig.ident
            ),
        );
        return with_errors(unchanged, error);
    }
    let checks = expand::FileChecks {
        narrow_retry_on: file.and_then(|c| c.retry_on_without_transient(&name)),
        attempt_timeout_at: file.and_then(|c| c.attempt_timeout_set_at(&name)),
        breaker_at: file.and_then(|c| c.breaker_set_at(&name)),
        unchecked: config.unchecked_warning(&args.policy),
        hedged: hedge_at.is_some(),
    };
    expand::expand(&args, func, file, &checks)
}

fn unchanged(func: &parse::RawFn) -> TokenStream {
    let mut out = TokenStream::new();
    for attr in &func.attrs {
        attr.to_tokens(&mut out);
    }
    func.vis.to_tokens(&mut out);
    func.sig.to_tokens(&mut out);
    match &func.body {
        Some(body) => body.to_tokens(&mut out),
        None => syn::token::Semi::default().to_tokens(&mut out),
    }
    out
}

fn with_errors(mut item: TokenStream, error: syn::Error) -> TokenStream {
    item.extend(error.to_compile_error());
    item
}
