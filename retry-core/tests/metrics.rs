//! With the `metrics` feature: a scripted series of calls through the loop
//! gives exact counts in metrics-util's debugging recorder.
#![cfg(feature = "metrics")]

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use retrykit_core::metrics::{ATTEMPTS, BUDGET_REFUSALS, CALLS, HINTS, RETRIES, WAIT};
use retrykit_core::{Class, Classify, Jitter, Policy, Retry, RetryBudget};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

mod support;
use support::{first_stuck, hedging, paused_runtime};

/// A failure with an optional server hint.
#[derive(Debug, Clone, Copy)]
struct Failure(Class, Option<Duration>);

impl Classify for Failure {
    fn class(&self) -> Class {
        self.0
    }
    fn retry_after(&self) -> Option<Duration> {
        self.1
    }
}

const DOWN: Failure = Failure(Class::TRANSIENT, None);

/// One call whose attempts fail as scripted, then succeed.
async fn call(policy: &Policy, script: &[Failure]) {
    let mut script: VecDeque<Failure> = script.iter().copied().collect();
    let _ = Retry::new(policy)
        .call(|| {
            let next = script.pop_front();
            async move { next.map_or(Ok(()), Err) }
        })
        .await;
}

/// One snapshot, as (name, sorted labels, value): taking a snapshot drains
/// the debugging recorder, so a test takes one and reads it.
type Metrics = Vec<(String, Vec<(String, String)>, DebugValue)>;

fn take(snapshotter: &Snapshotter) -> Metrics {
    let metrics = snapshotter.snapshot().into_vec().into_iter();
    metrics
        .map(|(key, _, _, value)| {
            let key = key.key();
            let mut labels: Vec<(String, String)> = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            (key.name().to_owned(), labels, value)
        })
        .collect()
}

/// The value of the metric `name` with exactly `labels` besides `retry.policy`.
fn value<'m>(
    metrics: &'m Metrics,
    name: &str,
    policy: &str,
    labels: &[(&str, &str)],
) -> Option<&'m DebugValue> {
    let mut want: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    want.push(("retry.policy".into(), policy.into()));
    want.sort();
    metrics
        .iter()
        .find(|(n, l, _)| n == name && *l == want)
        .map(|(_, _, v)| v)
}

fn count(metrics: &Metrics, name: &str, policy: &str, labels: &[(&str, &str)]) -> u64 {
    match value(metrics, name, policy, labels) {
        Some(DebugValue::Counter(n)) => *n,
        None => 0,
        other => panic!("{name} is not a counter: {other:?}"),
    }
}

fn samples(metrics: &Metrics, name: &str, policy: &str) -> Vec<f64> {
    match value(metrics, name, policy, &[]) {
        Some(DebugValue::Histogram(values)) => {
            let mut values: Vec<f64> = values.iter().map(|v| v.into_inner()).collect();
            values.sort_by(f64::total_cmp);
            values
        }
        other => panic!("{name} is not a histogram: {other:?}"),
    }
}

#[test]
fn a_scripted_run_gives_exact_counts() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let metered = Policy::builder()
        .name("metered")
        .jitter(Jitter::None)
        .base(Duration::from_millis(100))
        .max_attempts(3)
        .max_retry_after(Some(Duration::from_secs(5)))
        .build()
        .unwrap();
    let empty = RetryBudget::builder()
        .ratio(0.0)
        .min_per_sec(0.0)
        .build()
        .unwrap();
    let starved = metered
        .to_builder()
        .name("starved")
        .budget(Some(Arc::new(empty)))
        .build()
        .unwrap();
    let runtime = paused_runtime();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            call(&metered, &[]).await; // succeeds at once
            call(&metered, &[DOWN]).await; // succeeds on the 2nd attempt
            call(&metered, &[DOWN, DOWN, DOWN]).await; // exhausts its 3 attempts
            call(&metered, &[Failure(Class::Permanent, None)]).await; // fails at once
            let asks_2s = Failure(Class::THROTTLED, Some(Duration::from_secs(2)));
            call(&metered, &[asks_2s]).await; // a hint honoured
            let asks_60s = Failure(Class::THROTTLED, Some(Duration::from_secs(60)));
            call(&metered, &[asks_60s]).await; // a hint clamped to 5 s
            call(&starved, &[DOWN]).await; // the budget refuses the retry
        })
    });
    let snapshot = take(&snapshotter);
    let calls = |ending, retried| {
        count(
            &snapshot,
            CALLS,
            "metered",
            &[("retry.ending", ending), ("retry.retried", retried)],
        )
    };
    assert_eq!(calls("success", "false"), 1);
    assert_eq!(calls("success", "true"), 3);
    assert_eq!(calls("attempts_exhausted", "true"), 1);
    assert_eq!(calls("permanent", "false"), 1);
    assert_eq!(count(&snapshot, RETRIES, "metered", &[]), 1 + 2 + 1 + 1);
    let attempts = samples(&snapshot, ATTEMPTS, "metered");
    assert_eq!(attempts, [1.0, 1.0, 2.0, 2.0, 2.0, 3.0]);
    let waits = samples(&snapshot, WAIT, "metered");
    assert_eq!(waits, [0.1, 0.1, 0.2, 2.0, 5.0]);
    assert_eq!(
        count(&snapshot, HINTS, "metered", &[("retry.hint", "honoured")]),
        1
    );
    assert_eq!(
        count(&snapshot, HINTS, "metered", &[("retry.hint", "clamped")]),
        1
    );
    assert_eq!(count(&snapshot, BUDGET_REFUSALS, "metered", &[]), 0);

    let starved_calls = count(
        &snapshot,
        CALLS,
        "starved",
        &[("retry.ending", "budget_empty"), ("retry.retried", "false")],
    );
    assert_eq!(starved_calls, 1);
    assert_eq!(count(&snapshot, BUDGET_REFUSALS, "starved", &[]), 1);
    assert_eq!(count(&snapshot, RETRIES, "starved", &[]), 0);
}

#[test]
fn hedges_started_won_and_cancelled_are_counted() {
    use retrykit_core::metrics::HEDGES;
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let policy = hedging(20, 3).name("hedged").build().unwrap();
    let runtime = paused_runtime();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            // The first attempt hangs for a second; the hedge answers in 5 ms.
            let mut n = 0;
            let answer = Retry::new(&policy)
                .call(|| {
                    n += 1;
                    first_stuck::<Failure>(n)
                })
                .await;
            assert_eq!(answer.unwrap(), 2);
        })
    });
    let snapshot = take(&snapshotter);
    let hedges = |kind| count(&snapshot, HEDGES, "hedged", &[("retry.hedge", kind)]);
    assert_eq!(
        (hedges("started"), hedges("won"), hedges("cancelled")),
        (1, 1, 1)
    );
}
