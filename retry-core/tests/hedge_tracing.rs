//! With the `tracing` feature: a hedged call has one `attempt` span per
//! attempt, each inside the call's `retry` span; a fixed `hedge_after`
//! below the median latency seen is one warning.
#![cfg(feature = "tracing")]

use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::{Policy, Retry};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

mod support;
use support::{first_stuck, hedging, paused_runtime};

/// Every span made (its id, name and explicit parent), and every event's message.
#[derive(Default)]
struct Spans(
    Mutex<Vec<(u64, &'static str, Option<u64>)>>,
    Mutex<Vec<String>>,
);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

struct Recorder(Arc<Spans>);

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut spans = self.0.0.lock().unwrap();
        let id = spans.len() as u64 + 1;
        let parent = attrs.parent().map(Id::into_u64);
        spans.push((id, attrs.metadata().name(), parent));
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0.1.lock().unwrap().push(message);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn each_attempt_of_a_hedged_call_has_its_span_inside_the_calls() {
    let policy = hedging(20, 3).build().unwrap();
    let spans = Arc::new(Spans::default());
    let runtime = paused_runtime();
    tracing::subscriber::with_default(Recorder(spans.clone()), || {
        runtime.block_on(async {
            let mut n = 0;
            let answer = Retry::new(&policy)
                .call(|| {
                    n += 1;
                    first_stuck::<std::io::Error>(n)
                })
                .await;
            assert_eq!(answer.unwrap(), 2);
        })
    });
    let spans = spans.0.lock().unwrap().clone();
    let call: Vec<u64> = spans
        .iter()
        .filter(|s| s.1 == "retry")
        .map(|s| s.0)
        .collect();
    assert_eq!(call.len(), 1, "{spans:?}");
    let attempts: Vec<Option<u64>> = spans
        .iter()
        .filter(|s| s.1 == "attempt")
        .map(|s| s.2)
        .collect();
    assert_eq!(attempts, vec![Some(call[0]); 2], "{spans:?}");
}

#[test]
fn a_fixed_hedge_after_below_the_median_seen_is_one_warning() {
    let hedge = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(2)));
    let policy = Policy::builder()
        .name("eager")
        .hedge(Some(hedge))
        .max_attempts(2)
        .build()
        .unwrap();
    let spans = Arc::new(Spans::default());
    let runtime = paused_runtime();
    tracing::subscriber::with_default(Recorder(spans.clone()), || {
        runtime.block_on(async {
            for _ in 0..300 {
                let answer = Retry::new(&policy)
                    .call(|| async {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        Ok::<_, std::io::Error>(())
                    })
                    .await;
                assert!(answer.is_ok());
            }
        })
    });
    let events = spans.1.lock().unwrap();
    let warnings: Vec<_> = events
        .iter()
        .filter(|m| m.contains("below the median"))
        .collect();
    assert_eq!(warnings.len(), 1, "{events:?}");
    assert!(
        warnings[0].contains("`eager`") && warnings[0].contains("fix:"),
        "{}",
        warnings[0]
    );
}

#[cfg(feature = "tower")]
#[test]
fn a_tower_layer_named_for_a_hedging_policy_hedges_without_a_warning() {
    use retrykit_core::{Registry, registry};
    use tower::{Layer, ServiceExt};
    let policy = hedging(20, 3).build().unwrap();
    registry::install(Registry::builder().policy("hedged-tower", policy).build());
    let spans = Arc::new(Spans::default());
    let runtime = paused_runtime();
    tracing::subscriber::with_default(Recorder(spans.clone()), || {
        runtime.block_on(async {
            let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
            let server = tower::service_fn(move |n: u32| {
                let k = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    tokio::time::sleep(Duration::from_millis(if k == 0 { 1000 } else { 5 })).await;
                    Ok::<_, std::io::Error>(n + k)
                }
            });
            let layer = retrykit_core::tower::RetryLayer::policy("hedged-tower");
            assert_eq!(
                layer.layer(server).oneshot(1).await.unwrap(),
                2,
                "the hedge answered"
            );
        })
    });
    let events = spans.1.lock().unwrap();
    assert!(!events.iter().any(|m| m.contains("hedge")), "{events:?}");
}
