//! What the loop and the shared state report as it happens: an [`Event`]
//! is emitted to every `Observer` linked into the program (with
//! `inventory`). An event carries plain values only, so every layer may emit
//! one and no layer names the observers.

use std::sync::Arc;
use std::time::Duration;

/// One thing that happened, as the observers hear of it.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event<'a> {
    /// A retry was decided: its wait, and whether a hint set it.
    Retried {
        policy: Option<&'a Arc<str>>,
        wait: Duration,
        hint: Option<Hinted>,
    },
    /// A call ended after `attempts` attempts, with `ending`
    /// ([`Ending::as_str`](crate::Ending::as_str)); `budget_empty` when the
    /// budget refused its retry.
    Ended {
        policy: Option<&'a Arc<str>>,
        ending: &'static str,
        budget_empty: bool,
        attempts: u32,
    },
    /// A hedged call's race ended: hedges begun, whether a hedge won, and
    /// attempts dropped unfinished.
    Hedged {
        policy: Option<&'a Arc<str>>,
        started: u32,
        won: bool,
        cancelled: u32,
    },
    /// A breaker entered `state` (`closed`, `half_open`, `open`).
    BreakerState {
        breaker: Option<&'a str>,
        state: &'static str,
    },
    /// A breaker refused an attempt of `policy`.
    BreakerRefused { policy: Option<&'a Arc<str>> },
    /// A concurrency limit's counts after a change: attempts holding a
    /// permit, calls queued for one, and its size.
    LimitState {
        limit: Option<&'a Arc<str>>,
        in_flight: u32,
        waiting: u32,
        size: u32,
    },
    /// A call of `policy` waited `wait` in a limit's queue, and got a
    /// permit (`granted`) or not.
    LimitWaited {
        limit: Option<&'a Arc<str>>,
        policy: Option<&'a Arc<str>>,
        wait: Duration,
        granted: bool,
    },
    /// A limit gave a call of `policy` no permit in time: it ends `limit_full`.
    LimitRefused {
        limit: Option<&'a Arc<str>>,
        policy: Option<&'a Arc<str>>,
    },
    /// The policy's chaos faulted an attempt (`fault`: the class name)
    /// and/or delayed it (`delay`).
    ChaosInjected {
        policy: Option<&'a Arc<str>>,
        fault: Option<&'static str>,
        delay: Option<Duration>,
    },
    /// A fleet budget began (`true`) or stopped falling back to its local
    /// budget.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    FleetFailingOpen { budget: &'a str, failing: bool },
}

/// How a hinted wait was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hinted {
    /// As the server gave it.
    Honoured,
    /// Cut to `max_retry_after`.
    Clamped,
}

/// A function that hears every [`Event`]; submitted with
/// `inventory::submit!`. The `metrics` feature's is the only one.
#[cfg(feature = "metrics")]
pub(crate) struct Observer(pub(crate) fn(&Event<'_>));

#[cfg(feature = "metrics")]
inventory::collect!(Observer);

/// Tells every `Observer` of `event`; without the `metrics` feature there
/// is none, and nothing is done.
pub(crate) fn emit(event: Event<'_>) {
    #[cfg(feature = "metrics")]
    for observer in inventory::iter::<Observer> {
        (observer.0)(&event);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = event;
}
