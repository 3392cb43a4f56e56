//! Validation: turns what was written into what the expansion needs, or
//! into every problem at once, each on the token at fault with its fix.

use super::parse::{RawArg, RawFn};
use crate::suggest::{combine, hint};
use proc_macro2::Span;
use retrykit_schema::keys::{Key, POLICY_KEYS};
use syn::spanned::Spanned;
use syn::{Block, Expr, ExprLit, FnArg, Lit, LitStr, Path, ReturnType, Signature, Type};

/// The options a call site may give; nothing else is accepted.
const OPTIONS: [&str; 4] = ["policy", "retry_if", "on_retry", "crate"];

/// `#[retry(...)]`'s arguments, checked.
pub struct RetryArgs {
    /// The policy name, as the literal the user wrote (kept for its span).
    pub policy: LitStr,
    pub retry_if: Option<Path>,
    pub on_retry: Option<Path>,
    /// The path to retrykit-core (`::retrykit_core` unless `crate = "..."`).
    pub krate: Path,
}

/// Checks the arguments; collects every problem before failing.
pub fn args(raw: Vec<RawArg>) -> Result<RetryArgs, syn::Error> {
    let mut errors = Vec::new();
    let mut policy = None;
    let mut retry_if = None;
    let mut on_retry = None;
    let mut krate = None;
    let mut seen: Vec<String> = Vec::new();

    for arg in raw {
        let key = arg.key.to_string();
        if !OPTIONS.contains(&key.as_str()) {
            // People try to put the policy's keys in the attribute.
            let why = if Key::find(POLICY_KEYS, &key).is_some() {
                format!(
                    "; `{key}` is a policy setting: put it in retry.toml under `[policies.<name>]`"
                )
            } else {
                hint(&key, OPTIONS)
            };
            errors.push(syn::Error::new(
                arg.key.span(),
                format!(
                    "unknown option `{key}`{why}\n`#[retry]` accepts `policy = \"name\"`, `retry_if = path`, `on_retry = path` and `crate = \"path\"`; how it retries belongs in the policy (retry.toml)"
                ),
            ));
            continue;
        }
        if seen.contains(&key) {
            errors.push(syn::Error::new(
                arg.key.span(),
                format!("`{key}` is given more than once; fix: keep one `{key} = ...`"),
            ));
            continue;
        }
        seen.push(key.clone());
        let Some(value) = arg.value else {
            let example = match key.as_str() {
                "policy" => "policy = \"outbox\"",
                "retry_if" => "retry_if = is_retryable",
                "on_retry" => "on_retry = log_retry",
                _ => "crate = \"my_crate::retry\"",
            };
            errors.push(syn::Error::new(
                arg.key.span(),
                format!("`{key}` needs a value; fix: `{example}`"),
            ));
            continue;
        };
        match key.as_str() {
            "policy" => match policy_name(value) {
                Ok(lit) => policy = Some(lit),
                Err(e) => errors.push(e),
            },
            "retry_if" => match fn_path(&key, value, "fn(&E) -> bool", "is_retryable") {
                Ok(path) => retry_if = Some(path),
                Err(e) => errors.push(e),
            },
            "on_retry" => match fn_path(&key, value, "fn(&RetryEvent<'_, E>)", "log_retry") {
                Ok(path) => on_retry = Some(path),
                Err(e) => errors.push(e),
            },
            _ => match crate_path(value) {
                Ok(path) => krate = Some(path),
                Err(e) => errors.push(e),
            },
        }
    }

    if policy.is_none() && !seen.iter().any(|k| k == "policy") {
        errors.push(syn::Error::new(
            Span::call_site(),
            "missing `policy`: `#[retry]` needs the name of the policy that says how to retry; fix: `#[retry(policy = \"name\")]` with a name from retry.toml",
        ));
    }
    if let Some(error) = combine(errors) {
        return Err(error);
    }
    Ok(RetryArgs {
        policy: policy.expect("checked above"),
        retry_if,
        on_retry,
        krate: krate.unwrap_or_else(|| syn::parse_quote!(::retrykit_core)),
    })
}

fn policy_name(value: Expr) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            if lit.value().trim().is_empty() {
                Err(syn::Error::new(
                    lit.span(),
                    "the policy name is empty; fix: name a policy from retry.toml, e.g. `policy = \"outbox\"`",
                ))
            } else {
                Ok(lit)
            }
        }
        other => {
            let shown = quote::ToTokens::to_token_stream(&other).to_string();
            let fix = match &other {
                Expr::Path(p) if p.path.get_ident().is_some() => format!("policy = \"{shown}\""),
                _ => "policy = \"outbox\"".to_owned(),
            };
            Err(syn::Error::new_spanned(
                &other,
                format!(
                    "`policy` must be a string literal, so the name can be checked against retry.toml at compile time; fix: `{fix}`"
                ),
            ))
        }
    }
}

fn fn_path(key: &str, value: Expr, signature: &str, example: &str) -> syn::Result<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path),
        other => Err(syn::Error::new_spanned(
            &other,
            format!(
                "`{key}` takes the path of a function `{signature}`; fix: move the code into a named function and write `{key} = {example}`"
            ),
        )),
    }
}

fn crate_path(value: Expr) -> syn::Result<Path> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => lit.parse::<Path>().map_err(|_| {
            syn::Error::new(
                lit.span(),
                format!(
                    "`crate` must name a path, but `{}` is not one; fix: `crate = \"my_crate::retry\"`",
                    lit.value()
                ),
            )
        }),
        other => Err(syn::Error::new_spanned(
            &other,
            "`crate` takes the path as a string literal; fix: `crate = \"my_crate::retry\"`",
        )),
    }
}

/// The annotated function, checked.
pub struct RetryFn {
    pub attrs: Vec<syn::Attribute>,
    pub vis: syn::Visibility,
    pub sig: Signature,
    pub body: Block,
    /// The declared return type (`Result<T, E>` or an alias of it).
    pub output: Type,
}

/// Checks the function; collects every problem before failing.
pub fn function(raw: RawFn) -> Result<RetryFn, syn::Error> {
    let mut errors = Vec::new();
    let sig = &raw.sig;
    if let Some(token) = sig.constness {
        errors.push(syn::Error::new(
            token.span,
            "`#[retry]` cannot go on a `const fn`: retrying waits between attempts, which a const context cannot do; fix: remove `const`",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new(
            variadic.span(),
            "`#[retry]` cannot re-supply C variadic arguments to a second attempt; fix: wrap the call in a function with fixed arguments",
        ));
    }
    for input in &sig.inputs {
        if let FnArg::Receiver(receiver) = input
            && receiver.reference.is_none()
            && !matches!(&*receiver.ty, Type::Reference(_))
        {
            errors.push(syn::Error::new(
                receiver.self_token.span,
                "`#[retry]` runs the body once per attempt, but `self` taken by value can be given to only one attempt; fix: take `&self` or `&mut self`",
            ));
        }
    }
    let output = match &sig.output {
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.ident.span(),
                format!(
                    "`#[retry]` needs a function that returns `Result<T, E>`, but `{}` returns `()`; fix: add `-> Result<T, E>`, so a failed attempt can be told from a successful one",
                    sig.ident
                ),
            ));
            None
        }
        ReturnType::Type(_, ty) => match return_type_problem(ty) {
            Some(e) => {
                errors.push(e);
                None
            }
            None => Some((**ty).clone()),
        },
    };
    if let Some(ty) = output.as_ref()
        && returns_mut_borrow(sig, ty)
    {
        errors.push(syn::Error::new_spanned(
            ty,
            "`#[retry]` cannot return a borrow of a `&mut` argument (or of `&mut self`): each attempt reborrows it, and the borrow checker cannot tell that only the last attempt's borrow is returned; fix: return an owned value, or take a shared reference",
        ));
    }
    let body = match raw.body {
        Some(body) => Some(body),
        None => {
            errors.push(syn::Error::new(
                sig.ident.span(),
                "`#[retry]` needs the function's body to re-run it; fix: put the attribute on the function's implementation, not on its declaration",
            ));
            None
        }
    };
    if let Some(error) = combine(errors) {
        return Err(error);
    }
    Ok(RetryFn {
        attrs: raw.attrs,
        vis: raw.vis,
        sig: raw.sig,
        body: body.expect("checked above"),
        output: output.expect("checked above"),
    })
}

/// Return types that cannot be a `Result` whatever the aliases in scope;
/// paths are checked by the compiler (through `__private::IsResult`).
fn return_type_problem(ty: &Type) -> Option<syn::Error> {
    match ty {
        Type::Path(path) if path.qself.is_none() && is_known_non_result(&path.path) => {
            Some(syn::Error::new_spanned(
                ty,
                format!(
                    "`#[retry]` needs a function that returns `Result<T, E>`, found `{}`; fix: return `Result<T, E>`, so a failed attempt can be told from a successful one",
                    quote::ToTokens::to_token_stream(ty)
                        .to_string()
                        .replace(' ', "")
                ),
            ))
        }
        Type::Path(_) | Type::Group(_) | Type::Paren(_) | Type::Macro(_) => {
            if contains_impl_trait(ty) {
                Some(syn::Error::new_spanned(
                    ty,
                    "`#[retry]` needs to name the return type, but it contains `impl Trait`; fix: name the concrete type (or box it: `Box<dyn Trait>`)",
                ))
            } else {
                None
            }
        }
        other => Some(syn::Error::new_spanned(
            other,
            format!(
                "`#[retry]` needs a function that returns `Result<T, E>`, found `{}`; fix: return `Result<T, E>`",
                quote::ToTokens::to_token_stream(other)
            ),
        )),
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'a> syn::visit::Visit<'a> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'a syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

/// Standard types that are certainly not a `Result`, rejected here with one
/// clear error; any other path (an alias, say) is left to the compiler.
fn is_known_non_result(path: &Path) -> bool {
    const NOT_RESULT: [&str; 28] = [
        "Option", "Vec", "String", "Box", "Arc", "Rc", "Pin", "Poll", "Cow", "HashMap", "BTreeMap",
        "HashSet", "BTreeSet", "VecDeque", "bool", "char", "str", "u8", "u16", "u32", "u64",
        "u128", "usize", "i8", "i16", "i32", "i64", "isize",
    ];
    path.segments
        .last()
        .is_some_and(|last| NOT_RESULT.contains(&last.ident.to_string().as_str()))
}

/// Whether the return type borrows from a `&mut` input: it names that
/// input's lifetime, or the input's lifetime is elided and so is one in the
/// return type.
fn returns_mut_borrow(sig: &Signature, ret: &Type) -> bool {
    let (elided, named) = lifetimes(ret);
    sig.inputs.iter().any(|input| {
        let lifetime = match input {
            FnArg::Receiver(r) => match (&r.reference, r.mutability) {
                (Some((_, lifetime)), Some(_)) => Some(lifetime.as_ref()),
                _ => None,
            },
            FnArg::Typed(t) => match &*t.ty {
                Type::Reference(r) if r.mutability.is_some() => Some(r.lifetime.as_ref()),
                _ => None,
            },
        };
        match lifetime {
            Some(Some(l)) => named.contains(&l.ident.to_string()),
            Some(None) => elided,
            None => false,
        }
    })
}

/// Whether `ty` has elided lifetimes, and the named ones it mentions.
fn lifetimes(ty: &Type) -> (bool, Vec<String>) {
    struct Finder(bool, Vec<String>);
    impl<'a> syn::visit::Visit<'a> for Finder {
        fn visit_type_reference(&mut self, r: &'a syn::TypeReference) {
            if r.lifetime.is_none() {
                self.0 = true;
            }
            syn::visit::visit_type_reference(self, r);
        }
        fn visit_lifetime(&mut self, l: &'a syn::Lifetime) {
            if l.ident == "_" {
                self.0 = true;
            } else {
                self.1.push(l.ident.to_string());
            }
        }
    }
    let mut finder = Finder(false, Vec::new());
    syn::visit::Visit::visit_type(&mut finder, ty);
    (finder.0, finder.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_for(attr: &str) -> String {
        let raw = super::super::parse::args(attr.parse().unwrap()).unwrap();
        match args(raw) {
            Ok(_) => panic!("`{attr}` was accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_policy_setting_is_sent_to_retry_toml_by_its_real_name() {
        for key in retrykit_schema::keys::POLICY_KEYS {
            let message = error_for(&format!("policy = \"a\", {} = 1", key.name()));
            assert!(message.contains("is a policy setting"), "{message}");
        }
        // Not keys of the file: no claim that they belong in it.
        for word in ["attempts", "timeout"] {
            let message = error_for(&format!("policy = \"a\", {word} = 1"));
            assert!(
                message.contains(&format!("unknown option `{word}`")),
                "{message}"
            );
            assert!(!message.contains("is a policy setting"), "{message}");
        }
    }
}
