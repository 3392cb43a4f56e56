//! Hooks: a call site's say in what is retried, and callbacks on each retry
//! and on giving up. Most callers build [`Hooks`] from closures; the loop
//! calls them through [`HookSet`], which a type of your own may implement.

use crate::report::Report;
use std::time::Duration;

/// Passed to `on_retry` before each wait; a test of a hook builds one with
/// [`RetryEvent::new`].
#[derive(Debug)]
#[non_exhaustive]
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
    /// Whether the failed attempt was a fault the policy's chaos injected
    /// (its closure was not called; docs/chaos.md).
    pub injected: bool,
}

impl<'a, E> RetryEvent<'a, E> {
    /// The event for attempt `attempt` failing with `error`, before a wait
    /// of `wait` that no server hint chose, under an unnamed policy.
    ///
    /// ```
    /// let e = retrykit_core::RetryEvent::new(2, &"boom", std::time::Duration::ZERO);
    /// assert_eq!((e.attempt, *e.error, e.policy, e.hinted), (2, "boom", None, false));
    /// ```
    pub const fn new(attempt: u32, error: &'a E, wait: Duration) -> Self {
        RetryEvent {
            policy: None,
            attempt,
            error,
            wait,
            hinted: false,
            injected: false,
        }
    }
}

/// Passed to `on_give_up` when the loop stops with an error; a test of a
/// hook builds one with [`GiveUpEvent::new`].
#[derive(Debug)]
#[non_exhaustive]
pub struct GiveUpEvent<'a, E> {
    /// The policy's name, if it has one.
    pub policy: Option<&'a str>,
    /// The error the call returns.
    pub error: &'a E,
    /// How the call ended and what it cost.
    pub report: &'a Report,
}

impl<'a, E> GiveUpEvent<'a, E> {
    /// The event for a call that returns `error`, ended as `report` says,
    /// under an unnamed policy.
    ///
    /// ```
    /// use retrykit_core::{Ending, GiveUpEvent, Report};
    /// let report = Report::new(Ending::Permanent, 1);
    /// let e = GiveUpEvent::new(&"not found", &report);
    /// assert_eq!((*e.error, e.report.ending), ("not found", Ending::Permanent));
    /// ```
    pub const fn new(error: &'a E, report: &'a Report) -> Self {
        GiveUpEvent {
            policy: None,
            error,
            report,
        }
    }
}

/// The hook points, as the loop calls them. Implemented by [`Hooks`]; a
/// type of your own may implement it too, to keep state across calls (every
/// method has a default).
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{hooks::HookSet, Policy, Retry, RetryEvent};
/// use std::{cell::Cell, io::{Error, ErrorKind}};
/// struct Log(Cell<u32>);
/// impl HookSet<Error> for &Log {
///     fn on_retry(&self, _: &RetryEvent<'_, Error>) { self.0.set(self.0.get() + 1); }
/// }
/// let (log, p) = (Log(Cell::new(0)), Policy::default());
/// let r: Result<(), Error> = Retry::new(&p).hooks(&log).call(|| async { Err(ErrorKind::ConnectionReset.into()) }).await;
/// assert_eq!((r.is_err(), log.0.get()), (true, 2)); // 3 attempts, 2 retries
/// # }
/// ```
pub trait HookSet<E> {
    /// Whether the call site allows retrying `error`; it can only narrow what
    /// the policy allows. `true` by default.
    fn retry_if(&self, error: &E) -> bool {
        let _ = error;
        true
    }
    /// Why the call's request cannot be sent again, asked after a failure
    /// the policy would retry; `None` (the default) when it can. The call
    /// then ends with that reason ([`Unrepeatable::ending`]). The HTTP
    /// integrations answer for a body they could not keep and a method that
    /// is not idempotent.
    fn unrepeatable(&self) -> Option<Unrepeatable> {
        None
    }
    /// Called before each wait.
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        let _ = event;
    }
    /// Called once when the loop stops with an error.
    fn on_give_up(&self, event: &GiveUpEvent<'_, E>) {
        let _ = event;
    }
    /// Whether [`on_give_up`](Self::on_give_up) looks at the event, so the
    /// loop must measure the report's `elapsed`. `true` by default.
    fn wants_give_up(&self) -> bool {
        true
    }
}

/// Why a request cannot be sent again (see [`HookSet::unrepeatable`]).
///
/// ```
/// use retrykit_core::{Ending, hooks::Unrepeatable};
/// assert_eq!(Unrepeatable::BodyNotReplayable.ending(), Ending::BodyNotReplayable);
/// assert_eq!(Unrepeatable::NotIdempotent.ending().as_str(), "not_idempotent");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unrepeatable {
    /// Its body is larger than `max_replay_body`, or a stream.
    BodyNotReplayable,
    /// Its method is not idempotent and the policy does not opt it in.
    NotIdempotent,
    /// Its response had begun streaming before it failed.
    Committed,
}

impl Unrepeatable {
    /// The end reason a call gets when this stops it.
    pub const fn ending(self) -> crate::Ending {
        match self {
            Unrepeatable::BodyNotReplayable => crate::Ending::BodyNotReplayable,
            Unrepeatable::NotIdempotent => crate::Ending::NotIdempotent,
            Unrepeatable::Committed => crate::Ending::Committed,
        }
    }
}

/// A hook slot that is not set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unset;

/// A call's hooks, each a closure: a `retry_if` predicate that can only
/// narrow what the policy retries, an `on_retry` callback run before each
/// wait, and an `on_give_up` callback given the error and the call's
/// [`Report`]. Each slot is a type parameter, [`Unset`] when empty.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{GiveUpEvent, Hooks, Policy, Retry, RetryEvent};
/// use std::io::{Error, ErrorKind};
/// use std::sync::Mutex;
///
/// let retries = Mutex::new(0);
/// let gave_up = Mutex::new(None);
/// let hooks = Hooks::new()
///     .retry_if(|e: &Error| e.kind() != ErrorKind::NotFound)
///     .on_retry(|_: &RetryEvent<'_, Error>| *retries.lock().unwrap() += 1)
///     .on_give_up(|e: &GiveUpEvent<'_, Error>| *gave_up.lock().unwrap() = Some(e.report.attempts));
/// let policy = Policy::builder().max_attempts(3).build().unwrap();
/// let r: Result<(), Error> = Retry::new(&policy)
///     .hooks(hooks)
///     .call(|| async { Err(ErrorKind::ConnectionReset.into()) })
///     .await;
/// assert!(r.is_err());
/// assert_eq!((*retries.lock().unwrap(), *gave_up.lock().unwrap()), (2, Some(3)));
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks<R = Unset, O = Unset, G = Unset> {
    retry_if: R,
    on_retry: O,
    on_give_up: G,
}

impl Hooks {
    /// No hooks.
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
    /// use retrykit_core::{hooks::HookSet, Hooks};
    /// use std::io::{Error, ErrorKind};
    /// let hooks = Hooks::new().retry_if(|e: &Error| e.kind() != ErrorKind::NotFound);
    /// assert!(!HookSet::retry_if(&hooks, &ErrorKind::NotFound.into()));
    /// assert!(HookSet::retry_if(&hooks, &ErrorKind::ConnectionReset.into()));
    /// ```
    pub fn retry_if<F>(self, f: F) -> Hooks<F, O, G> {
        Hooks {
            retry_if: f,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
        }
    }

    /// Sets the callback run before each wait.
    pub fn on_retry<F>(self, f: F) -> Hooks<R, F, G> {
        Hooks {
            retry_if: self.retry_if,
            on_retry: f,
            on_give_up: self.on_give_up,
        }
    }

    /// Sets the callback run when the loop gives up.
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
pub trait Callback<Arg: ?Sized> {
    /// Runs the callback.
    fn call(&self, arg: &Arg);
    /// Whether there is a callback to run ([`Unset`] has none).
    fn is_set(&self) -> bool {
        true
    }
}

impl<Arg: ?Sized> Callback<Arg> for Unset {
    fn call(&self, _: &Arg) {}
    fn is_set(&self) -> bool {
        false
    }
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
    fn wants_give_up(&self) -> bool {
        Callback::<GiveUpEvent<'_, E>>::is_set(&self.on_give_up)
    }
}

/// The `retry_if` slot: [`Unset`] allows everything; any `Fn(&E) -> bool`
/// decides.
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
