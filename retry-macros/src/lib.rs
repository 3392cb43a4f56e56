//! # retrykit-macros
//!
//! `#[retry(policy = "...")]` and `#[derive(Classify)]` for the retry
//! framework. Use them through retrykit-core's `macros` feature
//! (`use retrykit_core::{retry, Classify};`): the generated code refers to
//! `::retrykit_core`, or to the path given with `crate = "..."`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! use retrykit_core::{registry, retry, Classify, Policy, Registry};
//! use std::time::Duration;
//!
//! #[derive(Debug, Classify)]
//! enum FetchError {
//!     #[classify(transient)]
//!     Unavailable,
//!     #[classify(permanent)]
//!     NotFound,
//! }
//!
//! struct Client { calls: u32 }
//!
//! impl Client {
//!     /// Fails twice, then succeeds: retried by the `lib-doc` policy.
//!     #[retry(policy = "lib-doc")]
//!     async fn fetch(&mut self, id: u32) -> Result<u32, FetchError> {
//!         self.calls += 1;
//!         if self.calls < 3 { Err(FetchError::Unavailable) } else { Ok(id) }
//!     }
//! }
//!
//! let policy = Policy::builder().base(Duration::from_millis(10)).max_attempts(5).build().unwrap();
//! registry::install(Registry::builder().policy("lib-doc", policy).build());
//! let mut client = Client { calls: 0 };
//! assert_eq!(client.fetch(7).await.unwrap(), 7);
//! assert_eq!(client.calls, 3);
//! # }
//! ```
//!
//! ## How `#[retry]` expands
//! For an `async fn` (identifiers prefixed `__retry` and hygienic, so they
//! cannot clash with the body's):
//!
//! ```text
//! async fn name(&mut self, a: A, r: &R) -> Result<T, E> {   // signature, docs, attributes kept
//!     // a `__private::site::CallSite` for the start-up check (inventory)
//!     // when a retry.toml was found at build time: include_bytes!(it), so edits rebuild
//!     static POLICY: PolicyCache = PolicyCache::new(CALL_SITE); // the site's policy cache
//!     let kind = /* Classify if E implements it, else every error transient */;
//!     // the policy, taken as the call starts and held to its end; unknown name: one
//!     // attempt, with a warning
//!     let mut run = Run::for_site(&POLICY, /* retry_if, on_retry */);
//!     drive!(run, each {
//!         let a_copy = a.clone();                   // by-value arguments, per attempt
//!     } || tag_future(kind, async { let a = a_copy; /* the original body */ }))
//!     .map_err(Tagged::into_inner)
//! }
//! ```
//!
//! `drive!` is retrykit-core's one loop: round after round (the attempt, the
//! decision and its hooks, the wait) until the call ends.
//! A plain `fn` does the same through `Retry::blocking(..).call_blocking(..)`,
//! with the body in a closure. `return` and `?` in the body end the attempt,
//! typed as the function's declared return type.
//!
//! On a mistake the function is emitted unchanged next to the errors, so each
//! mistake gives one error, at the token at fault, with its fix.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod classify;
mod retry;
mod suggest;

use proc_macro::TokenStream;

/// Retries the function with the named policy from the registry (usually
/// loaded from `retry.toml`): `#[retry(policy = "name")]`.
///
/// # Options
/// - `policy = "name"` (required): a non-empty string literal.
/// - `retry_if = path`: a `fn(&E) -> bool`; it can only narrow what the policy allows.
/// - `on_retry = path`: a `fn(&RetryEvent<'_, E>)`, called with the attempt, the
///   error and the chosen wait before each wait.
/// - `crate = "path"`: where retrykit-core is, for crates that re-export it.
///
/// # What it does
/// - Works on `async fn` (an async loop on tokio's timer) and plain `fn` (a
///   blocking loop), free functions and `&self`/`&mut self` methods, with
///   generics, lifetimes, `impl Trait` arguments and where clauses. The
///   signature, docs and other attributes stay as written.
/// - The policy is looked up once per call (lock-free); a reload is seen by
///   the next call. A name the registry lacks at run time gives a single
///   attempt (and is listed by `init()`'s start-up check).
/// - Each attempt re-runs the body. **Arguments taken by value are cloned for
///   each attempt** (the first included: a value the body consumes cannot be
///   got back), so they must be `Clone`; take `&T`/`&mut T` to avoid the
///   clone. References and the receiver are borrowed, never cloned. Nothing
///   else allocates or boxes, and the future is `Send` when the body's is.
/// - Errors are classified through `Classify` when `E` implements it; an
///   error type without it is still accepted and every error counts as
///   transient (generic `E` counts as classified only with an `E: Classify`
///   bound). A policy's `attempt_timeout` cancels an async attempt only when
///   the error type can stand for a timeout (`Classify::from_timeout`; with the
///   derive, a `#[classify(timeout)]` variant); a blocking attempt is never
///   cancelled.
/// - A policy that names a circuit breaker (`breaker = "NAME"` in the file
///   the build sees, under any profile) needs an error type that can stand
///   for an attempt the breaker refused (`retrykit_core::CarriesBreakerOpen`:
///   a `#[classify(breaker_open)]` variant, or `io::Error`): a compile error
///   at the return type otherwise, and `init()` refuses such a call site
///   when the build did not see the breaker.
/// - A function taking `&mut self` (or another `&mut` argument) cannot return
///   a borrow of it: each attempt reborrows it, and the borrow checker cannot
///   see that only the last attempt's borrow escapes. That is a compile error
///   with this explanation.
/// - When `retry.toml` sits next to the crate's `Cargo.toml` (or
///   `RETRY_CONFIG` names a file at build time), a name the file lacks is a
///   compile error, and editing the file rebuilds. A file `RETRY_CONFIG`
///   names that does not exist (or is a directory) is a compile error on
///   the policy string. When there is no file at all, nothing is checked
///   and the build warns once per crate, with how to turn the check on:
///   set `RETRY_CONFIG` (the build follows the variable), or add the file
///   and then `cargo clean -p` the crate or touch a source file (on stable
///   Rust a macro cannot make the build depend on a file that does not
///   exist yet). A crate whose policies come only from code silences it
///   with `[package.metadata.retry] expect-config = false` in its
///   `Cargo.toml` (or `#[allow(deprecated)]` on the function). If the file gives the
///   policy a `retry_on` list without `transient` (in the base file, a
///   profile, through `extends` or `[defaults]`), the error type must
///   implement `Classify`: an unclassified error counts as transient and would
///   never be retried. Every call site also registers its policy name, file
///   and line for `init()`'s start-up check.
///
/// # Errors
/// The function returns the error of its last attempt when the policy gives
/// up (`retrykit_core::Ending` lists the reasons), as `Retry::call` does.
///
/// # Panics
/// An `async fn`'s call checks, at the site's first call, that it runs
/// inside a tokio runtime with time enabled, and panics naming the function
/// and the fix when not (rather than let tokio panic at the first retry);
/// such a site panics at each call until one runs inside such a runtime.
/// In strict mode (`RETRY_STRICT=1`, or retrykit-config's `Setup::strict`)
/// a call whose policy is missing ends the process with exit code 1 after
/// saying why, instead of running once without retry.
///
/// # Cancel safety
/// Dropping an `async fn`'s future ends the call where it is: the attempt
/// in flight (the body's future) is dropped, and under a hedging policy
/// every hedge in flight with it; nothing was spawned, so no attempt runs
/// on, no further attempt starts, and no hook is called. What a dropped
/// attempt had already done or sent stays done. A blocking `fn` cannot be
/// cancelled. The details are `retrykit_core::Retry::call`'s.
///
/// ```
/// use retrykit_core::{registry, retry, Policy, Registry};
/// use std::io::{Error, ErrorKind};
///
/// fn not_found_is_final(e: &Error) -> bool {
///     e.kind() != ErrorKind::NotFound
/// }
///
/// #[retry(policy = "attr-doc", retry_if = not_found_is_final)]
/// fn read(tries: &mut u32) -> Result<u32, Error> {
///     *tries += 1;
///     Err(ErrorKind::NotFound.into())
/// }
///
/// registry::install(Registry::builder().policy("attr-doc", Policy::default()).build());
/// let mut tries = 0;
/// assert!(read(&mut tries).is_err());
/// assert_eq!(tries, 1); // NotFound is permanent for io::Error: one attempt
/// ```
#[proc_macro_attribute]
pub fn retry(attr: TokenStream, item: TokenStream) -> TokenStream {
    retry::retry(attr.into(), item.into()).into()
}

/// Implements `Classify` for an enum or a struct.
///
/// - On a variant (or on a struct): `#[classify(transient)]`,
///   `#[classify(permanent)]`, `#[classify(class = "throttled")]`,
///   `#[classify(source)]` (delegate to the field that is itself `Classify`:
///   the one marked `#[classify(source)]`, else thiserror's `#[source]`/`#[from]`
///   field, else the only field), `#[classify(retry_after = field)]` (a
///   `Duration` or `Option<Duration>` field, or a tuple index), and
///   `#[classify(timeout)]` on a unit variant (what `from_timeout` builds, so
///   the policy's `attempt_timeout` can cancel attempts; class `timeout` unless
///   given), and `#[classify(breaker_open)]` on a unit variant or on one whose
///   single field is a `retrykit_core::breaker::BreakerOpen` (what
///   `from_breaker_open` builds when the policy's circuit breaker refuses an
///   attempt, so the breaker can hold attempts back; also implements
///   `CarriesBreakerOpen`). Its class is always **permanent**: the call that
///   gets it has already waited for the breaker as long as its policy allows,
///   and a retry around it must not hammer an open breaker. It takes no other
///   class key. `#[classify(limit_full)]` is its like for a concurrency
///   limit: on a unit variant or on one whose single field is a
///   `retrykit_core::limit::LimitFull` (what `from_limit_full` builds when
///   the policy's limit gives a call no permit in time, so the call can end
///   `limit_full`); permanent, and with no other class key either.
/// - `#[classify(chaos)]` on a variant whose single field is a
///   `retrykit_core::chaos::InjectedFault` (tuple or named): what
///   `from_chaos` builds when the policy's chaos injects a fault in place of
///   an attempt (docs/chaos.md). Its class is the fault's own, at run time
///   (transient, timeout, throttled or permanent), and its `retry_after` is
///   the fault's Retry-After, so an injected fault is handled as a real one.
///   It takes no other class key and no `retry_after`; a unit variant is
///   refused (it would lose the fault's class). Without such a variant,
///   `from_chaos` gives `None`: the policy's faults are not injected into
///   calls returning the type, and a warning says so once.
/// - On an enum: `#[classify(default = "transient")]` for variants without
///   their own, and `#[classify(crate = "path")]`.
/// - It reads only `classify` attributes, so it composes with `thiserror`.
///
/// ```
/// use retrykit_core::{Class, Classify};
/// use std::time::Duration;
///
/// #[derive(Debug, thiserror::Error, Classify)]
/// #[classify(default = "transient")]
/// enum ApiError {
///     #[error("unavailable")]
///     Unavailable,
///     #[error("slow down")]
///     #[classify(class = "throttled", retry_after = wait)]
///     RateLimited { wait: Option<Duration> },
///     #[error("bad request")]
///     #[classify(permanent)]
///     BadRequest,
///     #[error("timed out")]
///     #[classify(timeout)]
///     TimedOut,
///     #[error("{0}")]
///     #[classify(breaker_open)]
///     Refused(retrykit_core::breaker::BreakerOpen),
///     #[error("{0}")]
///     #[classify(limit_full)]
///     Busy(retrykit_core::limit::LimitFull),
///     #[error("{fault}")]
///     #[classify(chaos)]
///     Injected { fault: retrykit_core::chaos::InjectedFault },
///     #[error(transparent)]
///     #[classify(source)]
///     Io(#[from] std::io::Error),
/// }
///
/// let limited = ApiError::RateLimited { wait: Some(Duration::from_secs(2)) };
/// assert_eq!(limited.class(), Class::THROTTLED);
/// assert_eq!(limited.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(ApiError::Unavailable.class(), Class::TRANSIENT);
/// assert_eq!(ApiError::BadRequest.class(), Class::Permanent);
/// assert_eq!(ApiError::from(std::io::Error::from(std::io::ErrorKind::NotFound)).class(), Class::Permanent);
/// assert!(matches!(ApiError::from_timeout(retrykit_core::AttemptTimeout::new(
///     1, Duration::from_secs(1))), Some(ApiError::TimedOut)));
/// use retrykit_core::breaker::{BreakerOpen, BreakerState};
/// let open = BreakerOpen::new(Some("api"), BreakerState::Open, Duration::from_secs(5));
/// let refused = ApiError::from_breaker_open(open).unwrap();
/// assert!(matches!(&refused, ApiError::Refused(o) if o.breaker() == Some("api")));
/// assert_eq!(refused.class(), Class::Permanent);
/// let full = retrykit_core::limit::LimitFull::new(Some("api"), 8);
/// let busy = ApiError::from_limit_full(full).unwrap();
/// assert!(matches!(&busy, ApiError::Busy(f) if f.name() == Some("api")));
/// assert_eq!(busy.class(), Class::Permanent);
/// use retrykit_core::chaos::InjectedFault;
/// let fault = InjectedFault::new(Class::THROTTLED, Some(Duration::from_secs(3)), 2);
/// let injected = ApiError::from_chaos(fault).unwrap();
/// assert!(matches!(&injected, ApiError::Injected { fault: f } if f.attempt == 2));
/// assert_eq!(injected.class(), Class::THROTTLED, "the fault's own class");
/// assert_eq!(injected.retry_after(), Some(Duration::from_secs(3)));
/// ```
#[proc_macro_derive(Classify, attributes(classify))]
pub fn derive_classify(input: TokenStream) -> TokenStream {
    classify::derive(input.into()).into()
}
