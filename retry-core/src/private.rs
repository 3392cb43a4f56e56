//! Plumbing for the code that `#[retry]` and `#[derive(Classify)]` generate.
//! Not public API: anything here may change in any release. Generated code
//! reaches retry-core only through this module, so the public API carries no
//! macro plumbing.
//!
//! ```
//! // What an expansion does first: look the policy up (lock-free), falling back
//! // to a single attempt when the name is unknown at run time.
//! let policy = retry_core::__private::policy("no-such-policy-in-doc");
//! assert_eq!(policy.max_attempts(), Some(1));
//! ```

use crate::hooks::{Callback, RetryEvent, RetryIfSlot};
use crate::policy::Policy;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

pub use crate::classify::{AttemptTimeout, CarriesTimeout, Class, Classify};
pub use crate::decide::{Decider, Failure, Step};
pub use crate::hooks::Hooks;
pub use crate::registry::{CallSite, DeclaredClass};
pub use crate::retry::{Retry, Run};
pub use crate::site::SiteCache;
pub use inventory;

/// The policy named `name`, or a single-attempt policy when there is none.
/// Lock-free; allocates nothing after the first call.
///
/// ```
/// assert_eq!(retry_core::__private::policy("").max_attempts(), Some(1));
/// ```
pub fn policy(name: &str) -> Arc<Policy> {
    crate::site::policy_or_single(name)
}

/// Whether the error type of `R` (classified by `kind`, as the loop
/// classifies it) can stand for a timed-out attempt. `#[retry]` registers
/// this with its call site so `init()` can refuse a policy whose
/// `attempt_timeout` the function could never honour.
///
/// ```
/// use retry_core::__private::{carries_timeout, AllTransient, ByClassify};
/// assert!(carries_timeout::<Result<(), std::io::Error>, _>(ByClassify));
/// assert!(!carries_timeout::<Result<(), String>, _>(AllTransient));
/// ```
pub fn carries_timeout<R: IsResult, K>(kind: K) -> bool
where
    Tagged<R::Err, K>: Classify,
{
    let _ = kind;
    let probe = AttemptTimeout {
        attempt: 1,
        timeout: Duration::ZERO,
    };
    <Tagged<R::Err, K> as Classify>::from_timeout(probe).is_some()
}

/// Fixes the output type of an attempt's `async` block so `?` and `return`
/// inside the original body infer as they did in the function.
///
/// ```
/// let fut = retry_core::__private::typed::<Result<u8, std::io::Error>, _>(async { Ok(1) });
/// # drop(fut);
/// ```
pub fn typed<R, F: Future<Output = R>>(attempt: F) -> F {
    attempt
}

/// Names the error type of a function's declared `Result`.
///
/// ```
/// fn err_of<R: retry_core::__private::IsResult<Err = std::io::Error>>() {}
/// err_of::<std::io::Result<u8>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns `Result<T, E>`, found `{Self}`",
    label = "this is not a `Result`",
    note = "fix: return `Result<T, E>` (or an alias of it, such as `std::io::Result<T>`) so failed attempts can be retried"
)]
pub trait IsResult {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
}

impl<T, E> IsResult for Result<T, E> {
    type Ok = T;
    type Err = E;
}

/// The error type `E` of `R = Result<T, E>`, as a value-less marker.
///
/// ```
/// let _ = retry_core::__private::probe::<Result<(), String>>();
/// ```
pub fn probe<R: IsResult>() -> Probe<R::Err> {
    Probe(PhantomData)
}

/// A marker carrying an error type, for choosing how it is classified.
///
/// ```
/// let _: retry_core::__private::Probe<String> = retry_core::__private::probe::<Result<(), String>>();
/// ```
#[derive(Debug)]
pub struct Probe<E>(PhantomData<fn() -> E>);

/// The error type implements [`Classify`]: use it.
///
/// ```
/// let _ = retry_core::__private::ByClassify;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ByClassify;

/// The error type does not implement [`Classify`]: every error is transient.
///
/// ```
/// let _ = retry_core::__private::AllTransient;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AllTransient;

/// Chosen by method resolution when the error type implements [`Classify`]
/// (it wins because it needs one auto-reference less).
///
/// ```
/// use retry_core::__private::{probe, ViaClassify as _, ViaTransient as _};
/// let _kind: retry_core::__private::ByClassify = (&&probe::<Result<(), std::io::Error>>()).__retry_kind();
/// ```
pub trait ViaClassify {
    /// The classification strategy.
    fn __retry_kind(&self) -> ByClassify {
        ByClassify
    }
}

impl<E: Classify> ViaClassify for &Probe<E> {}

/// The fallback when the error type does not implement [`Classify`].
///
/// ```
/// use retry_core::__private::{probe, ViaClassify as _, ViaTransient as _};
/// let _kind: retry_core::__private::AllTransient = (&&probe::<Result<(), String>>()).__retry_kind();
/// let _kind: retry_core::__private::ByClassify = (&&probe::<Result<(), std::io::Error>>()).__retry_kind();
/// ```
pub trait ViaTransient {
    /// The classification strategy.
    fn __retry_kind(&self) -> AllTransient {
        AllTransient
    }
}

impl<E> ViaTransient for Probe<E> {}

/// An error on its way through the loop, classified by strategy `K`.
///
/// ```
/// use retry_core::{Class, Classify, __private::{tag, AllTransient}};
/// let tagged = tag(AllTransient, Err::<(), _>("boom")).unwrap_err();
/// assert_eq!(tagged.class(), Class::TRANSIENT);
/// assert_eq!(tagged.into_inner(), "boom");
/// ```
#[derive(Debug)]
pub struct Tagged<E, K> {
    error: E,
    kind: PhantomData<K>,
}

impl<E, K> Tagged<E, K> {
    /// The user's error back.
    ///
    /// ```
    /// let t = retry_core::__private::tag(retry_core::__private::AllTransient, Err::<(), _>(1)).unwrap_err();
    /// assert_eq!(t.into_inner(), 1);
    /// ```
    pub fn into_inner(self) -> E {
        self.error
    }
}

/// Tags an attempt's result with the classification strategy.
///
/// ```
/// use retry_core::__private::{tag, AllTransient};
/// let r: Result<(), _> = tag(AllTransient, Err::<(), _>("boom"));
/// assert!(r.is_err());
/// ```
pub fn tag<T, E, K>(_: K, result: Result<T, E>) -> Result<T, Tagged<E, K>> {
    result.map_err(|error| Tagged {
        error,
        kind: PhantomData,
    })
}

impl<E: Classify> Classify for Tagged<E, ByClassify> {
    fn class(&self) -> Class {
        self.error.class()
    }
    fn retry_after(&self) -> Option<Duration> {
        self.error.retry_after()
    }
    fn from_timeout(timeout: AttemptTimeout) -> Option<Self> {
        E::from_timeout(timeout).map(|error| Tagged {
            error,
            kind: PhantomData,
        })
    }
}

impl<E> Classify for Tagged<E, AllTransient> {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// A `retry_if = path` predicate, applied to the user's error. A plain `fn`
/// pointer: a wrong signature is one type error at the path, nothing more.
///
/// ```
/// fn any(_: &String) -> bool { true }
/// let _: retry_core::__private::RetryIf<String> = retry_core::__private::retry_if::<Result<(), String>>(any);
/// ```
pub struct RetryIf<E>(fn(&E) -> bool);

impl<E> std::fmt::Debug for RetryIf<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryIf")
    }
}

/// Checks that `predicate` is a `fn(&E) -> bool` for the function's error type.
///
/// ```
/// fn any(_: &String) -> bool { true }
/// let _ = retry_core::__private::retry_if::<Result<(), String>>(any);
/// ```
pub fn retry_if<R: IsResult>(predicate: fn(&R::Err) -> bool) -> RetryIf<R::Err> {
    RetryIf(predicate)
}

impl<E, K> RetryIfSlot<Tagged<E, K>> for RetryIf<E> {
    fn allows(&self, error: &Tagged<E, K>) -> bool {
        (self.0)(&error.error)
    }
}

/// An `on_retry = path` callback, given the event with the user's error.
///
/// ```
/// fn log(_: &retry_core::RetryEvent<'_, String>) {}
/// let _: retry_core::__private::OnRetry<String> = retry_core::__private::on_retry::<Result<(), String>>(log);
/// ```
pub struct OnRetry<E>(fn(&RetryEvent<'_, E>));

impl<E> std::fmt::Debug for OnRetry<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnRetry")
    }
}

/// Checks that `callback` is a `fn(&RetryEvent<'_, E>)` for the function's error type.
///
/// ```
/// fn log(_: &retry_core::RetryEvent<'_, String>) {}
/// let _ = retry_core::__private::on_retry::<Result<(), String>>(log);
/// ```
pub fn on_retry<R: IsResult>(callback: fn(&RetryEvent<'_, R::Err>)) -> OnRetry<R::Err> {
    OnRetry(callback)
}

impl<'a, E, K> Callback<RetryEvent<'a, Tagged<E, K>>> for OnRetry<E> {
    fn call(&self, event: &RetryEvent<'a, Tagged<E, K>>) {
        (self.0)(&RetryEvent {
            policy: event.policy,
            attempt: event.attempt,
            error: &event.error.error,
            wait: event.wait,
            hinted: event.hinted,
        });
    }
}

/// A `#[classify(retry_after = field)]` field: a `Duration` or an
/// `Option<Duration>`.
///
/// ```
/// use retry_core::__private::RetryAfterField;
/// use std::time::Duration;
/// assert_eq!(Duration::from_secs(1).retry_after(), Some(Duration::from_secs(1)));
/// assert_eq!(None::<Duration>.retry_after(), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "a `retry_after` field must be a `Duration` or an `Option<Duration>`, found `{Self}`",
    label = "not a `std::time::Duration` or `Option<Duration>`",
    note = "fix: point `#[classify(retry_after = ...)]` at a field of type `std::time::Duration` or `Option<std::time::Duration>`"
)]
pub trait RetryAfterField {
    /// The server's hint.
    fn retry_after(&self) -> Option<Duration>;
}

impl RetryAfterField for Duration {
    fn retry_after(&self) -> Option<Duration> {
        Some(*self)
    }
}

impl RetryAfterField for Option<Duration> {
    fn retry_after(&self) -> Option<Duration> {
        *self
    }
}

/// A `#[classify(source)]` field: it must classify itself.
///
/// ```
/// use retry_core::{Class, __private::SourceField};
/// let io = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
/// assert_eq!(io.source_class(), Class::TRANSIENT);
/// ```
#[diagnostic::on_unimplemented(
    message = "a `#[classify(source)]` field must implement `Classify`, but `{Self}` does not",
    label = "its class is delegated to this field",
    note = "fix: derive or implement `Classify` for `{Self}`, or classify this variant directly (`#[classify(transient)]`, `#[classify(permanent)]`, `#[classify(class = \"...\")]`)"
)]
pub trait SourceField {
    /// The field's class.
    fn source_class(&self) -> Class;
    /// The field's hint.
    fn source_retry_after(&self) -> Option<Duration>;
}

impl<E: Classify + ?Sized> SourceField for E {
    fn source_class(&self) -> Class {
        self.class()
    }
    fn source_retry_after(&self) -> Option<Duration> {
        self.retry_after()
    }
}

/// Runs a blocking attempt's body as a closure, so `return` and `?` in the
/// body end the attempt with the function's declared type.
///
/// ```
/// let r = retry_core::__private::run_once(|| -> Result<u8, String> { Ok(3) });
/// assert_eq!(r, Ok(3));
/// ```
pub fn run_once<R>(attempt: impl FnOnce() -> R) -> R {
    attempt()
}

/// Tags the result of an async attempt that `make` creates; no allocation,
/// `Send` when the attempt is. Making the future inside (rather than taking
/// it as an argument) means it is held once; with `Run::round` an expansion
/// holds the body's future once.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use retry_core::__private::{tag_future_with, AllTransient};
/// let r = tag_future_with(AllTransient, || async { Ok::<u8, &str>(1) }).await;
/// assert_eq!(r.unwrap(), 1);
/// # }
/// ```
pub async fn tag_future_with<M, F, T, E, K>(kind: K, make: M) -> Result<T, Tagged<E, K>>
where
    M: FnOnce() -> F,
    F: Future<Output = Result<T, E>>,
{
    tag(kind, make().await)
}

/// The wait before retry `retry` after a previous wait `prev`, with jitter
/// drawn from this thread's generator as the retry loop draws it (for
/// benchmarks and tools that sample a policy's schedule).
///
/// ```
/// let p = retry_core::Policy::default();
/// let d = retry_core::__private::next_delay(&p, 2, p.base());
/// assert!(d <= p.cap());
/// ```
pub fn next_delay(policy: &Policy, retry: u32, prev: Duration) -> Duration {
    policy.delay(retry, prev, crate::rng::JitterRng::Thread.unit(retry))
}
