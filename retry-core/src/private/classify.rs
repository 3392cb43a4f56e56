//! How `#[retry]` classifies its function's error type: by method
//! resolution on a [`Probe`] ("autoref specialisation"), [`ViaClassify`]
//! when the type implements [`Classify`], else [`ViaTransient`] (every
//! error transient). Each attempt's result is [`tag`]ged with the choice,
//! so the loop sees a [`Classify`] type either way.
//!
//! ```
//! use retrykit_core::Class;
//! use retrykit_core::__private::classify::{probe, tag, ViaClassify as _, ViaTransient as _};
//! use retrykit_core::Classify as _;
//!
//! let kind = (&&probe::<Result<(), String>>()).__retry_kind();
//! let tagged = tag(kind, Err::<(), _>("boom".to_owned())).unwrap_err();
//! assert_eq!(tagged.class(), Class::TRANSIENT);
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

pub use crate::class::Class;
pub use crate::classify::{AttemptTimeout, CarriesBreakerOpen, CarriesTimeout, Classify};

/// Whether the error type of `R`, classified by `kind`, can stand for a
/// timed-out attempt (registered with the call site, for `init()`'s checks).
pub fn carries_timeout<R: IsResult, K>(_: K) -> bool
where
    Tagged<R::Err, K>: Classify,
{
    crate::site::stands_for_timeout::<Tagged<R::Err, K>>()
}

/// Whether the error type of `R`, classified by `kind`, can stand for an
/// attempt a circuit breaker refused (as [`carries_timeout`]).
pub fn carries_breaker_open<R: IsResult, K>(_: K) -> bool
where
    Tagged<R::Err, K>: Classify,
{
    crate::site::stands_for_refusal::<Tagged<R::Err, K>>(None)
}

/// Fixes the output type of an attempt's `async` block so `?` and `return`
/// inside the original body infer as they did in the function.
pub fn typed<R, F: Future<Output = R>>(attempt: F) -> F {
    attempt
}

/// Names the error type of a function's declared `Result`.
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
pub fn probe<R: IsResult>() -> Probe<R::Err> {
    Probe(PhantomData)
}

/// A marker carrying an error type, for choosing how it is classified.
#[derive(Debug)]
pub struct Probe<E>(PhantomData<fn() -> E>);

/// The error type implements [`Classify`]: use it.
#[derive(Debug, Clone, Copy)]
pub struct ByClassify;

/// The error type does not implement [`Classify`]: every error is transient.
#[derive(Debug, Clone, Copy)]
pub struct AllTransient;

/// Chosen by method resolution when the error type implements [`Classify`]
/// (it wins because it needs one auto-reference less).
pub trait ViaClassify {
    /// The classification strategy.
    fn __retry_kind(&self) -> ByClassify {
        ByClassify
    }
}

impl<E: Classify> ViaClassify for &Probe<E> {}

/// The fallback when the error type does not implement [`Classify`].
pub trait ViaTransient {
    /// The classification strategy.
    fn __retry_kind(&self) -> AllTransient {
        AllTransient
    }
}

impl<E> ViaTransient for Probe<E> {}

/// An error on its way through the loop, classified by strategy `K`.
#[derive(Debug)]
pub struct Tagged<E, K> {
    error: E,
    kind: PhantomData<K>,
}

impl<E, K> Tagged<E, K> {
    /// The user's error back.
    pub fn into_inner(self) -> E {
        self.error
    }

    /// The user's error, for the call site's hooks.
    pub(crate) fn inner(&self) -> &E {
        &self.error
    }

    fn new(error: E) -> Self {
        Tagged {
            error,
            kind: PhantomData,
        }
    }
}

/// Tags an attempt's result with the classification strategy.
pub fn tag<T, E, K>(_: K, result: Result<T, E>) -> Result<T, Tagged<E, K>> {
    result.map_err(Tagged::new)
}

// Not offered in a user's "`Classify` is not implemented" error.
#[diagnostic::do_not_recommend]
impl<E: Classify> Classify for Tagged<E, ByClassify> {
    fn class(&self) -> Class {
        self.error.class()
    }
    fn retry_after(&self) -> Option<Duration> {
        self.error.retry_after()
    }
    fn from_timeout(timeout: AttemptTimeout) -> Option<Self> {
        E::from_timeout(timeout).map(Tagged::new)
    }
    fn from_breaker_open(open: crate::breaker::BreakerOpen) -> Option<Self> {
        E::from_breaker_open(open).map(Tagged::new)
    }
    fn from_limit_full(full: crate::limit::LimitFull) -> Option<Self> {
        E::from_limit_full(full).map(Tagged::new)
    }
    fn from_chaos(fault: crate::chaos::InjectedFault) -> Option<Self> {
        E::from_chaos(fault).map(Tagged::new)
    }
}

#[diagnostic::do_not_recommend]
impl<E> Classify for Tagged<E, AllTransient> {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// Runs a blocking attempt's body as a closure, so `return` and `?` in the
/// body end the attempt with the function's declared type.
pub fn run_once<R>(attempt: impl FnOnce() -> R) -> R {
    attempt()
}

/// Tags the result of an async attempt as it completes; no state of its
/// own, `Send` when the attempt is.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use retrykit_core::__private::classify::{tag_future, AllTransient};
/// let attempt = async { Ok::<u8, &str>(1) };
/// let r = tag_future(AllTransient, attempt).await;
/// assert_eq!(r.unwrap(), 1);
/// assert_eq!(size_of_val(&tag_future(AllTransient, async { Ok::<u8, &str>(1) })),
///            size_of_val(&async { Ok::<u8, &str>(1) }));
/// # }
/// ```
pub fn tag_future<F, K>(_: K, attempt: F) -> TaggedFuture<F, K> {
    TaggedFuture {
        attempt,
        kind: PhantomData,
    }
}

pin_project_lite::pin_project! {
    /// An attempt whose error comes out [`Tagged`] (see [`tag_future`]).
    #[must_use = "an attempt does nothing until awaited"]
    pub struct TaggedFuture<F, K> {
        #[pin]
        attempt: F,
        kind: PhantomData<fn() -> K>,
    }
}

impl<F, K, T, E> Future for TaggedFuture<F, K>
where
    F: Future<Output = Result<T, E>>,
{
    type Output = Result<T, Tagged<E, K>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = ready!(self.project().attempt.poll(cx));
        Poll::Ready(result.map_err(Tagged::new))
    }
}
