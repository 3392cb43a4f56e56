//! With `tracing` (and `metrics`, whose observer emits it), each chaos
//! injection is a `chaos injected` event with the attempt, the fault's
//! class and the delay. Alone in its test binary: a subscriber set as the
//! thread's default misses events whose call site another test's thread
//! registered first, with no subscriber.
#![cfg(all(feature = "metrics", feature = "tracing"))]

use retrykit_core::chaos::Chaos;
use retrykit_core::{Class, Policy, Retry};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;
use support::paused_runtime;

/// With `tracing`, each injection is a `chaos injected` event with the
/// attempt, the fault's class and the delay.
#[test]
fn each_injection_is_a_tracing_event() {
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    struct Seen(Arc<Mutex<Vec<String>>>);
    impl Subscriber for Seen {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut fields = Vec::new();
            event.record(&mut |f: &tracing::field::Field, v: &dyn std::fmt::Debug| {
                fields.push(format!("{}={v:?}", f.name()));
            });
            self.0.lock().unwrap().push(fields.join(" "));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    let chaos = Chaos::new(Some(3))
        .fault(1.0, Class::THROTTLED, None)
        .unwrap()
        .latency(1.0, Duration::from_millis(7), Duration::from_millis(7))
        .unwrap();
    let policy = Policy::builder()
        .max_attempts(1)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = Seen(Arc::clone(&lines));
    tracing::subscriber::with_default(subscriber, || {
        paused_runtime().block_on(async {
            let out = Retry::new(&policy)
                .call(|| async { Ok::<(), std::io::Error>(()) })
                .await;
            assert!(out.is_err());
        })
    });
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l == "message=chaos injected attempt=1 fault=\"throttled\" delay_ms=7"),
        "{lines:?}"
    );
}
