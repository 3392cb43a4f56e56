//! What `#[derive(Classify)]` expands to names: the trait and its types,
//! checks on the fields it delegates to, and [`DeclaredClass`].

use std::time::Duration;

pub use crate::breaker::BreakerOpen;
pub use crate::chaos::InjectedFault;
pub use crate::class::Class;
pub use crate::classify::{AttemptTimeout, CarriesBreakerOpen, CarriesTimeout, Classify};
pub use crate::limit::LimitFull;
pub use crate::registry::linked::DeclaredClass;

/// A `#[classify(retry_after = field)]` field: a `Duration` or an
/// `Option<Duration>`.
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

/// The field of a `#[classify(breaker_open)]` variant: the
/// [`BreakerOpen`] itself.
#[diagnostic::on_unimplemented(
    message = "the field of a `#[classify(breaker_open)]` variant must be a `retrykit_core::breaker::BreakerOpen`, found `{Self}`",
    label = "the engine puts the breaker's refusal here",
    note = "valid: `#[classify(breaker_open)]` on a unit variant such as `BreakerOpen`, or on a variant whose one field is a `retrykit_core::breaker::BreakerOpen` (`Refused(BreakerOpen)`, `Refused {{ open: BreakerOpen }}`)"
)]
pub trait BreakerOpenField: Sized {
    /// The field holding `open`.
    fn from_breaker_open(open: BreakerOpen) -> Self;
}

impl BreakerOpenField for BreakerOpen {
    fn from_breaker_open(open: BreakerOpen) -> Self {
        open
    }
}

/// The field of a `#[classify(limit_full)]` variant: the [`LimitFull`] itself.
#[diagnostic::on_unimplemented(
    message = "the field of a `#[classify(limit_full)]` variant must be a `retrykit_core::limit::LimitFull`, found `{Self}`",
    label = "the engine puts the limit's refusal here",
    note = "valid: `#[classify(limit_full)]` on a unit variant such as `LimitFull`, or on a variant whose one field is a `retrykit_core::limit::LimitFull` (`Busy(LimitFull)`, `Busy {{ full: LimitFull }}`)"
)]
pub trait LimitFullField: Sized {
    /// The field holding `full`.
    fn from_limit_full(full: LimitFull) -> Self;
}

impl LimitFullField for LimitFull {
    fn from_limit_full(full: LimitFull) -> Self {
        full
    }
}

/// The field of a `#[classify(chaos)]` variant: the [`InjectedFault`]
/// itself, which gives the variant its class and its Retry-After.
#[diagnostic::on_unimplemented(
    message = "the field of a `#[classify(chaos)]` variant must be a `retrykit_core::chaos::InjectedFault`, found `{Self}`",
    label = "the engine puts the injected fault here, and the variant takes its class from it",
    note = "valid: `#[classify(chaos)]` on a variant whose one field is a `retrykit_core::chaos::InjectedFault` (`Injected(InjectedFault)`, `Injected {{ fault: InjectedFault }}`)"
)]
pub trait ChaosField: Sized {
    /// The field holding `fault`.
    fn from_chaos(fault: InjectedFault) -> Self;
    /// The fault's class: the variant's class.
    fn chaos_class(&self) -> Class;
    /// The fault's Retry-After: the variant's hint.
    fn chaos_retry_after(&self) -> Option<Duration>;
}

impl ChaosField for InjectedFault {
    fn from_chaos(fault: InjectedFault) -> Self {
        fault
    }
    fn chaos_class(&self) -> Class {
        self.class
    }
    fn chaos_retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

/// A `#[classify(source)]` field: it must classify itself.
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
