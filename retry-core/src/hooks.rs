//! Hooks: a call site's say in what is retried, and callbacks on each retry
//! and on giving up. Each part is a type parameter, so unused hooks cost
//! nothing and the retry future stays `Send` when the hooks are.

use crate::report::Report;
use std::time::Duration;

/// Passed to `on_retry` before each wait.
///
/// ```
/// use retry_core::RetryEvent;
/// use std::time::Duration;
/// let e = RetryEvent { policy: Some("db"), attempt: 1, error: &"boom", wait: Duration::ZERO, hinted: false };
/// assert_eq!(e.attempt, 1);
/// ```
#[derive(Debug)]
pub struct RetryEvent<'a, E> {
    /// The policy's name, if it has one.
    pub policy: Option<&'a str>,
    /// The attempt that just failed (1 is the first call).
    pub attempt: u32,
    /// Its error.
    pub error: &'a E,
    /// The wait chosen before the next attempt.
    pub wait: Duration,
    /// Whether the wait came from the error's server hint.
    pub hinted: bool,
}

/// Passed to `on_give_up` when the loop stops with an error.
///
/// ```
/// use retry_core::{Ending, GiveUpEvent, Report};
/// let report = Report { ending: Ending::Exhausted, attempts: 3, waited: Default::default(), elapsed: Default::default(), budget_failing_open: false };
/// let e = GiveUpEvent { policy: None, error: &"boom", report: &report };
/// assert_eq!(e.report.attempts, 3);
/// ```
#[derive(Debug)]
pub struct GiveUpEvent<'a, E> {
    /// The policy's name, if it has one.
    pub policy: Option<&'a str>,
    /// The error the call returns.
    pub error: &'a E,
    /// How the call ended and what it cost.
    pub report: &'a Report,
}

/// The three hook points. Implemented by [`Hooks`]; write your own to bundle
/// them in one type.
///
/// ```
/// use retry_core::{HookSet, RetryEvent};
/// struct Log;
/// impl HookSet<std::io::Error> for Log {
///     fn on_retry(&self, e: &RetryEvent<'_, std::io::Error>) { eprintln!("retrying after {:?}", e.wait); }
/// }
/// ```
pub trait HookSet<E> {
    /// Whether the call site allows retrying `error`; it can only narrow what
    /// the policy allows. `true` by default.
    fn retry_if(&self, error: &E) -> bool {
        let _ = error;
        true
    }
    /// Called before each wait.
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        let _ = event;
    }
    /// Called once when the loop stops with an error.
    fn on_give_up(&self, event: &GiveUpEvent<'_, E>) {
        let _ = event;
    }
}

/// A hook slot that is not set.
///
/// ```
/// let _ = retry_core::Unset;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Unset;

/// Closures (or `fn` items) in each slot; [`Unset`] where none was given.
///
/// ```
/// use retry_core::{HookSet, Hooks};
/// let hooks = Hooks::new().retry_if(|e: &std::io::Error| e.kind() != std::io::ErrorKind::NotFound);
/// let not_found = std::io::Error::from(std::io::ErrorKind::NotFound);
/// assert!(!HookSet::retry_if(&hooks, &not_found));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks<R = Unset, O = Unset, G = Unset> {
    retry_if: R,
    on_retry: O,
    on_give_up: G,
}

impl Hooks {
    /// No hooks.
    ///
    /// ```
    /// let _ = retry_core::Hooks::new();
    /// ```
    pub const fn new() -> Self {
        Hooks {
            retry_if: Unset,
            on_retry: Unset,
            on_give_up: Unset,
        }
    }
}

impl<R, O, G> Hooks<R, O, G> {
    /// Sets the predicate that narrows which errors are retried.
    ///
    /// ```
    /// let _ = retry_core::Hooks::new().retry_if(|_: &std::io::Error| true);
    /// ```
    pub fn retry_if<F>(self, f: F) -> Hooks<F, O, G> {
        Hooks {
            retry_if: f,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
        }
    }

    /// Sets the callback run before each wait.
    ///
    /// ```
    /// let _ = retry_core::Hooks::new().on_retry(|_: &retry_core::RetryEvent<'_, std::io::Error>| {});
    /// ```
    pub fn on_retry<F>(self, f: F) -> Hooks<R, F, G> {
        Hooks {
            retry_if: self.retry_if,
            on_retry: f,
            on_give_up: self.on_give_up,
        }
    }

    /// Sets the callback run when the loop gives up.
    ///
    /// ```
    /// let _ = retry_core::Hooks::new().on_give_up(|_: &retry_core::GiveUpEvent<'_, std::io::Error>| {});
    /// ```
    pub fn on_give_up<F>(self, f: F) -> Hooks<R, O, F> {
        Hooks {
            retry_if: self.retry_if,
            on_retry: self.on_retry,
            on_give_up: f,
        }
    }
}

/// The `on_retry` and `on_give_up` slots: [`Unset`] does nothing; any
/// `Fn(&Arg)` runs.
///
/// ```
/// use retry_core::{Callback, Unset};
/// let seen = std::cell::Cell::new(0);
/// (|n: &u32| seen.set(*n)).call(&7);
/// Unset.call(&8u32);
/// assert_eq!(seen.get(), 7);
/// ```
pub trait Callback<Arg: ?Sized> {
    /// Runs the callback.
    fn call(&self, arg: &Arg);
}

impl<Arg: ?Sized> Callback<Arg> for Unset {
    fn call(&self, _: &Arg) {}
}

impl<Arg: ?Sized, F: Fn(&Arg)> Callback<Arg> for F {
    fn call(&self, arg: &Arg) {
        self(arg)
    }
}

impl<E, R, O, G> HookSet<E> for Hooks<R, O, G>
where
    R: RetryIfSlot<E>,
    O: for<'a> Callback<RetryEvent<'a, E>>,
    G: for<'a> Callback<GiveUpEvent<'a, E>>,
{
    fn retry_if(&self, error: &E) -> bool {
        self.retry_if.allows(error)
    }
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        self.on_retry.call(event);
    }
    fn on_give_up(&self, event: &GiveUpEvent<'_, E>) {
        self.on_give_up.call(event);
    }
}

/// The `retry_if` slot: [`Unset`] allows everything; any `Fn(&E) -> bool`
/// decides.
///
/// ```
/// use retry_core::{RetryIfSlot, Unset};
/// assert!(RetryIfSlot::<u8>::allows(&Unset, &1));
/// assert!(!(|e: &u8| *e > 5).allows(&1));
/// ```
pub trait RetryIfSlot<E> {
    /// Whether `error` may be retried.
    fn allows(&self, error: &E) -> bool;
}

impl<E> RetryIfSlot<E> for Unset {
    fn allows(&self, _: &E) -> bool {
        true
    }
}

impl<E, F: Fn(&E) -> bool> RetryIfSlot<E> for F {
    fn allows(&self, error: &E) -> bool {
        self(error)
    }
}
