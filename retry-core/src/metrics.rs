//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature
//! `metrics`), recorded by the one retry loop, so every entry point counts
//! alike. Every metric but those of a budget, breaker or limit's own state
//! carries `retry.policy` (the policy's name, `<unnamed>` without one).
//! Names follow OpenTelemetry's style (dotted, durations in seconds).
//!
//! Each metric is a constant below, with its kind and labels; [`describe`]
//! gives each its unit and meaning. Recording allocates each metric's
//! labels, so with this feature on the success path is not allocation-free.
//! `retry.calls` gives the classic four kinds: succeeded or failed
//! (`retry.ending` `success` or not), with or without retry (`retry.retried`).
//!
//! ```
//! use metrics_util::debugging::{DebugValue, DebuggingRecorder};
//! use retrykit_core::{metrics::CALLS, Policy, Retry};
//! let (recorder, p) = (DebuggingRecorder::new(), Policy::builder().name("doc").build().unwrap());
//! let snapshotter = recorder.snapshotter();
//! metrics::with_local_recorder(&recorder, || Retry::blocking(&p).call_blocking(|| Ok::<_, std::io::Error>(())))?;
//! let snapshot = snapshotter.snapshot().into_vec();
//! let (key, .., value) = snapshot.iter().find(|(k, ..)| k.key().name() == CALLS).unwrap();
//! assert!(key.key().labels().any(|l| (l.key(), l.value()) == ("retry.ending", "success")));
//! assert_eq!(value, &DebugValue::Counter(1));
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::observe::{Event, Hinted, Observer};
use metrics::{
    SharedString, Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge,
    histogram,
};
use std::sync::Arc;

/// Counter: faults chaos injected in place of attempts, by `retry.chaos.class`.
pub const CHAOS_FAULTS: &str = "retry.chaos.faults";
/// Counter: attempts chaos delayed.
pub const CHAOS_DELAYS: &str = "retry.chaos.delays";
/// Counter: calls, by `retry.ending` ([`Ending::as_str`](crate::Ending::as_str)) and `retry.retried`.
pub const CALLS: &str = "retry.calls";
/// Histogram: attempts per call, the first included.
pub const ATTEMPTS: &str = "retry.call.attempts";
/// Counter: retries (waits begun).
pub const RETRIES: &str = "retry.retries";
/// Histogram: each wait before a retry, in seconds.
pub const WAIT: &str = "retry.wait.duration";
/// Counter: retries the shared budget refused.
pub const BUDGET_REFUSALS: &str = "retry.budget.refusals";
/// Counter: waits taken from a server hint, by `retry.hint` (`honoured`, `clamped`).
pub const HINTS: &str = "retry.hints";
/// Counter: fall-backs of a fleet budget to its local budget, by `retry.budget`.
pub const BUDGET_FAIL_OPEN: &str = "retry.budget.fail_open";
/// Gauge: 1 while a fleet budget falls back to its local budget, else 0, by `retry.budget`.
pub const BUDGET_FAILING_OPEN: &str = "retry.budget.failing_open";

/// Counter: hedges, by `retry.hedge`: `started`, `won` (a hedge's
/// result ended the call) and `cancelled` (dropped unfinished when another
/// attempt ended the call; the first attempt included).
pub const HEDGES: &str = "retry.hedges";

/// Gauge: a circuit breaker's state, by `retry.breaker`: 0 closed, 1 half-open, 2 open.
pub const BREAKER_STATE: &str = "retry.breaker.state";
/// Counter: a circuit breaker's state changes, by `retry.breaker` and `retry.breaker.to`.
pub const BREAKER_TRANSITIONS: &str = "retry.breaker.transitions";
/// Counter: attempts a circuit breaker refused (never sent).
pub const BREAKER_REFUSALS: &str = "retry.breaker.refusals";

/// Gauge: attempts holding a permit of a concurrency limit, by `retry.limit`.
pub const LIMIT_IN_FLIGHT: &str = "retry.limit.in_flight";
/// Gauge: a concurrency limit's size now, by `retry.limit`.
pub const LIMIT_SIZE: &str = "retry.limit.size";
/// Gauge: calls queued for a permit, by `retry.limit`.
pub const LIMIT_WAITING: &str = "retry.limit.waiting";
/// Counter: calls a concurrency limit gave no permit in time, by `retry.limit`.
pub const LIMIT_REFUSALS: &str = "retry.limit.refusals";
/// Histogram: each wait in a limit's queue, in seconds, by `retry.limit` and `retry.limit.granted`.
pub const LIMIT_WAIT: &str = "retry.limit.wait.duration";

/// Describes each metric (unit and meaning) to the installed recorder.
///
/// ```
/// use metrics_util::debugging::DebuggingRecorder;
/// use retrykit_core::{metrics::CALLS, Policy, Retry};
/// let (recorder, p) = (DebuggingRecorder::new(), Policy::default());
/// let snapshotter = recorder.snapshotter();
/// metrics::with_local_recorder(&recorder, || {
///     retrykit_core::metrics::describe();
///     Retry::blocking(&p).call_blocking(|| Ok::<_, std::io::Error>(()))
/// })?;
/// let snapshot = snapshotter.snapshot().into_vec();
/// let (_, unit, description, _) = snapshot.iter().find(|(k, ..)| k.key().name() == CALLS).unwrap();
/// assert!(*unit == Some(metrics::Unit::Count) && description.is_some());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn describe() {
    let counters = [
        (
            CALLS,
            "retried calls, by end reason and whether they retried",
        ),
        (RETRIES, "retries (waits begun)"),
        (BUDGET_REFUSALS, "retries the shared retry budget refused"),
        (
            BUDGET_FAIL_OPEN,
            "times a fleet budget's store failed, so the host fell back to its local budget",
        ),
        (
            HEDGES,
            "hedged attempts: started, won, and attempts cancelled when another ended the call",
        ),
        (
            BREAKER_TRANSITIONS,
            "a circuit breaker's state changes, by the state entered",
        ),
        (
            BREAKER_REFUSALS,
            "attempts a circuit breaker refused (never sent)",
        ),
        (
            HINTS,
            "waits taken from a server hint: honoured, or clamped to max_retry_after",
        ),
        (
            LIMIT_REFUSALS,
            "calls a concurrency limit gave no permit in time (ended limit_full)",
        ),
        (
            CHAOS_FAULTS,
            "faults the policy's chaos injected in place of attempts",
        ),
        (CHAOS_DELAYS, "attempts the policy's chaos delayed"),
    ];
    for (name, what) in counters {
        describe_counter!(name, Unit::Count, what);
    }
    describe_histogram!(
        ATTEMPTS,
        Unit::Count,
        "attempts per call, the first included"
    );
    describe_histogram!(WAIT, Unit::Seconds, "each wait before a retry");
    describe_histogram!(
        LIMIT_WAIT,
        Unit::Seconds,
        "each wait in a concurrency limit's queue, granted or not"
    );
    let gauges = [
        (
            BUDGET_FAILING_OPEN,
            "1 while a fleet budget falls back to its local budget, else 0",
        ),
        (
            BREAKER_STATE,
            "a circuit breaker's state: 0 closed, 1 half-open, 2 open",
        ),
        (
            LIMIT_IN_FLIGHT,
            "attempts holding a permit of a concurrency limit",
        ),
        (
            LIMIT_SIZE,
            "a concurrency limit's size now (an adaptive limit's moves)",
        ),
        (
            LIMIT_WAITING,
            "calls queued for a concurrency limit's permit",
        ),
    ];
    for (name, what) in gauges {
        describe_gauge!(name, Unit::Count, what);
    }
}

inventory::submit! { Observer(record) }

/// A `retry.policy` or `retry.limit` label: the name, shared, not copied.
fn name(policy: Option<&Arc<str>>) -> SharedString {
    match policy {
        Some(name) => SharedString::from_shared(Arc::clone(name)),
        None => SharedString::const_str("<unnamed>"),
    }
}

/// Records `event` to the installed recorder.
fn record(event: &Event<'_>) {
    match *event {
        Event::Retried { policy, wait, hint } => {
            let policy_name = name(policy);
            counter!(RETRIES, "retry.policy" => policy_name.clone()).increment(1);
            histogram!(WAIT, "retry.policy" => policy_name.clone()).record(wait.as_secs_f64());
            if let Some(hint) = hint {
                let kind = match hint {
                    Hinted::Clamped => "clamped",
                    Hinted::Honoured => "honoured",
                };
                counter!(HINTS, "retry.policy" => policy_name, "retry.hint" => kind).increment(1);
            }
        }
        Event::Ended {
            policy,
            ending,
            budget_empty,
            attempts,
        } => {
            let policy_name = name(policy);
            let retried = if attempts > 1 { "true" } else { "false" };
            counter!(
                CALLS,
                "retry.policy" => policy_name.clone(),
                "retry.ending" => ending,
                "retry.retried" => retried
            )
            .increment(1);
            histogram!(ATTEMPTS, "retry.policy" => policy_name.clone()).record(f64::from(attempts));
            if budget_empty {
                counter!(BUDGET_REFUSALS, "retry.policy" => policy_name).increment(1);
            }
        }
        Event::Hedged {
            policy,
            started,
            won,
            cancelled,
        } => {
            let policy_name = name(policy);
            for (kind, count) in [
                ("started", started),
                ("won", u32::from(won)),
                ("cancelled", cancelled),
            ] {
                if count > 0 {
                    counter!(HEDGES, "retry.policy" => policy_name.clone(), "retry.hedge" => kind)
                        .increment(u64::from(count));
                }
            }
        }
        Event::FleetFailingOpen { budget, failing } => {
            let label = SharedString::from(budget.to_owned());
            if failing {
                counter!(BUDGET_FAIL_OPEN, "retry.budget" => label.clone()).increment(1);
            }
            gauge!(BUDGET_FAILING_OPEN, "retry.budget" => label).set(f64::from(u8::from(failing)));
        }
        Event::BreakerState { breaker, state } => {
            let label = SharedString::from(breaker.unwrap_or("<unnamed>").to_owned());
            counter!(BREAKER_TRANSITIONS, "retry.breaker" => label.clone(), "retry.breaker.to" => state)
                .increment(1);
            let value = match state {
                "closed" => 0.0,
                "half_open" => 1.0,
                _ => 2.0,
            };
            gauge!(BREAKER_STATE, "retry.breaker" => label).set(value);
        }
        Event::LimitState {
            limit,
            in_flight,
            waiting,
            size,
        } => {
            let label = name(limit);
            gauge!(LIMIT_IN_FLIGHT, "retry.limit" => label.clone()).set(f64::from(in_flight));
            gauge!(LIMIT_WAITING, "retry.limit" => label.clone()).set(f64::from(waiting));
            gauge!(LIMIT_SIZE, "retry.limit" => label).set(f64::from(size));
        }
        Event::LimitWaited {
            limit,
            policy,
            wait,
            granted,
        } => {
            let granted = if granted { "true" } else { "false" };
            histogram!(
                LIMIT_WAIT,
                "retry.policy" => name(policy),
                "retry.limit" => name(limit),
                "retry.limit.granted" => granted
            )
            .record(wait.as_secs_f64());
        }
        Event::LimitRefused { limit, policy } => {
            counter!(LIMIT_REFUSALS, "retry.policy" => name(policy), "retry.limit" => name(limit))
                .increment(1);
        }
        Event::BreakerRefused { policy } => {
            counter!(BREAKER_REFUSALS, "retry.policy" => name(policy)).increment(1);
        }
        Event::ChaosInjected {
            policy,
            fault,
            delay,
        } => {
            if let Some(class) = fault {
                counter!(CHAOS_FAULTS, "retry.policy" => name(policy), "retry.chaos.class" => class)
                    .increment(1);
            }
            if delay.is_some() {
                counter!(CHAOS_DELAYS, "retry.policy" => name(policy)).increment(1);
            }
        }
    }
}
