//! Chaos seen and counted: with the `metrics` feature, injected faults
//! and delays are counted apart from real failures (`retry.chaos.faults`
//! by class, `retry.chaos.delays`), and an `on_retry` hook hears which
//! failed attempts were injected. (The `tracing` event is chaos_traced.rs's,
//! alone in its binary: a subscriber set for one thread misses events whose
//! call site another test's thread registered first.)
#![cfg(feature = "metrics")]

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use retrykit_core::chaos::Chaos;
use retrykit_core::metrics::{CHAOS_DELAYS, CHAOS_FAULTS, RETRIES};
use retrykit_core::{Class, Hooks, Jitter, Policy, Retry, RetryEvent};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;
use support::paused_runtime;

#[test]
fn injected_faults_and_delays_are_counted_apart_and_marked_for_hooks() {
    let chaos = Chaos::new(Some(3))
        .fault(1.0, Class::TIMEOUT, None)
        .unwrap()
        .latency(1.0, Duration::from_millis(5), Duration::from_millis(5))
        .unwrap();
    let policy = Policy::builder()
        .name("observed")
        .base(Duration::from_millis(1))
        .jitter(Jitter::None)
        .max_attempts(3)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap();
    let marks = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&marks);
    let hooks = Hooks::new().on_retry(move |e: &RetryEvent<'_, std::io::Error>| {
        seen.lock().unwrap().push((e.attempt, e.injected));
    });
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        paused_runtime().block_on(async {
            let out = Retry::new(&policy)
                .hooks(hooks)
                .call(|| async { Ok::<(), std::io::Error>(()) })
                .await;
            assert_eq!(out.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
        })
    });
    assert_eq!(*marks.lock().unwrap(), [(1, true), (2, true)]);
    let snapshot = snapshotter.snapshot().into_vec();
    let value = |name: &str, label: Option<(&str, &str)>| {
        snapshot
            .iter()
            .find(|(k, ..)| {
                k.key().name() == name
                    && label.is_none_or(|l| k.key().labels().any(|x| (x.key(), x.value()) == l))
            })
            .map(|(.., v)| v)
    };
    assert_eq!(
        value(CHAOS_FAULTS, Some(("retry.chaos.class", "timeout"))),
        Some(&DebugValue::Counter(3))
    );
    assert_eq!(value(CHAOS_DELAYS, None), Some(&DebugValue::Counter(3)));
    assert_eq!(value(RETRIES, None), Some(&DebugValue::Counter(2)));
}
