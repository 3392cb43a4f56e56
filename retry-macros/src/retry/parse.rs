//! Parsing: the attribute's `key = value` list and the annotated item, as
//! written. Nothing is judged here; `validate` decides what is allowed.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Block, Expr, Ident, Signature, Token, Visibility};

/// One `key = value` (or bare `key`) inside `#[retry(...)]`.
pub struct RawArg {
    pub key: Ident,
    pub value: Option<Expr>,
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `Ident::parse_any` accepts the keyword `crate` as a key.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(RawArg { key, value })
    }
}

/// Every argument, in order.
pub fn args(tokens: TokenStream) -> syn::Result<Vec<RawArg>> {
    let parser = Punctuated::<RawArg, Token![,]>::parse_terminated;
    Ok(syn::parse::Parser::parse2(parser, tokens)?
        .into_iter()
        .collect())
}

/// A function as written: free, a method, or a trait method with or without
/// a body (a missing body is reported by `validate`).
pub struct RawFn {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: Option<Block>,
}

impl Parse for RawFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        if !looks_like_fn(input) {
            let what = input.cursor().token_tree().map(|(tt, _)| tt);
            let message = "`#[retry]` goes on a function: `fn` or `async fn` with a body returning `Result<T, E>`";
            return Err(match what {
                Some(tt) => syn::Error::new_spanned(tt, message),
                None => input.error(message),
            });
        }
        let sig: Signature = input.parse()?;
        let body = if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            None
        } else {
            Some(input.parse()?)
        };
        Ok(RawFn {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// `const`/`async`/`unsafe`/`extern "C"` in any order allowed before `fn`,
/// then `fn`; but not `const NAME` or `unsafe impl`.
fn looks_like_fn(input: ParseStream) -> bool {
    let fork = input.fork();
    loop {
        if fork.peek(Token![fn]) {
            return true;
        }
        if fork.peek(Token![const]) || fork.peek(Token![async]) || fork.peek(Token![unsafe]) {
            let _ = fork.parse::<proc_macro2::TokenTree>();
        } else if fork.peek(Token![extern]) {
            let _ = fork.parse::<proc_macro2::TokenTree>();
            if fork.peek(syn::LitStr) {
                let _ = fork.parse::<proc_macro2::TokenTree>();
            }
        } else {
            return false;
        }
    }
}
