//! The adapters that give `#[retry(retry_if = ..., on_retry = ...)]`
//! functions the user's error, not the loop's [`Tagged`] one.

use super::classify::{IsResult, Tagged};
use crate::hooks::RetryEvent;

pub use crate::hooks::Hooks;
use crate::hooks::{Callback, RetryIfSlot};

/// A `retry_if = path` predicate (a `fn` pointer: a wrong signature is one
/// type error at the path).
pub struct RetryIf<E>(fn(&E) -> bool);

impl<E> std::fmt::Debug for RetryIf<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryIf")
    }
}

/// Checks that `predicate` is a `fn(&E) -> bool` for the function's error type.
pub fn retry_if<R: IsResult>(predicate: fn(&R::Err) -> bool) -> RetryIf<R::Err> {
    RetryIf(predicate)
}

impl<E, K> RetryIfSlot<Tagged<E, K>> for RetryIf<E> {
    fn allows(&self, error: &Tagged<E, K>) -> bool {
        (self.0)(error.inner())
    }
}

/// An `on_retry = path` callback, given the event with the user's error.
pub struct OnRetry<E>(fn(&RetryEvent<'_, E>));

impl<E> std::fmt::Debug for OnRetry<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnRetry")
    }
}

/// Checks that `callback` is a `fn(&RetryEvent<'_, E>)` for the function's error type.
pub fn on_retry<R: IsResult>(callback: fn(&RetryEvent<'_, R::Err>)) -> OnRetry<R::Err> {
    OnRetry(callback)
}

impl<'a, E, K> Callback<RetryEvent<'a, Tagged<E, K>>> for OnRetry<E> {
    fn call(&self, event: &RetryEvent<'a, Tagged<E, K>>) {
        (self.0)(&RetryEvent {
            policy: event.policy,
            attempt: event.attempt,
            error: event.error.inner(),
            wait: event.wait,
            hinted: event.hinted,
            injected: event.injected,
        });
    }
}
