//! `#[retry(...)]`: parse, validate, check the name against retry.toml, expand.

mod config;
mod expand;
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
    let (args, func) = match (args, func) {
        (Ok(args), Ok(func)) => (args, func),
        (Err(mut a), Err(f)) => {
            a.combine(f);
            return with_errors(unchanged, a);
        }
        (Err(e), _) | (_, Err(e)) => return with_errors(unchanged, e),
    };
    let config = config::find();
    if let Some(e) = config.as_ref().and_then(|c| c.check(&args.policy)) {
        return with_errors(unchanged, e);
    }
    let name = args.policy.value();
    let checks = expand::FileChecks {
        narrow_retry_on: config
            .as_ref()
            .and_then(|c| c.retry_on_without_transient(&name)),
        attempt_timeout_at: config
            .as_ref()
            .and_then(|c| c.attempt_timeout_set_at(&name)),
    };
    expand::expand(&args, func, config.as_ref(), &checks)
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
