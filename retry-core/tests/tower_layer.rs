//! The tower layer over in-process services, on tokio's paused clock:
//! `poll_ready` before each attempt, cancellation by drop, the registry
//! lookup (a reload is seen, a missing name warns once and runs once),
//! hooks and the report.
#![cfg(feature = "tower")]

use retrykit_core::tower::RetryLayer;
use retrykit_core::{Ending, GiveUpEvent, Hooks, Jitter, Policy, Registry, registry};
use std::io::{Error, ErrorKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

mod support;
use std::time::Duration;
use tower::{Layer, Service, ServiceExt};

/// A service that logs `poll_ready` and `call`, failing the first `fails` calls.
#[derive(Clone)]
struct Logged {
    log: Arc<Mutex<Vec<&'static str>>>,
    fails: Arc<AtomicU32>,
}

impl Logged {
    fn new(fails: u32) -> Self {
        Logged {
            log: Arc::default(),
            fails: Arc::new(AtomicU32::new(fails)),
        }
    }
    fn log(&self) -> Vec<&'static str> {
        self.log.lock().unwrap().clone()
    }
    fn calls(&self) -> usize {
        self.log().iter().filter(|e| **e == "call").count()
    }
}

impl Service<u32> for Logged {
    type Response = u32;
    type Error = Error;
    type Future = std::future::Ready<Result<u32, Error>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.log.lock().unwrap().push("ready");
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, n: u32) -> Self::Future {
        self.log.lock().unwrap().push("call");
        let failing = self
            .fails
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
            .is_ok();
        std::future::ready(if failing {
            Err(Error::from(ErrorKind::ConnectionReset))
        } else {
            Ok(n + 1)
        })
    }
}

fn fixed(max_attempts: u32) -> Policy {
    Policy::builder()
        .jitter(Jitter::None)
        .base(Duration::from_secs(1))
        .cap(Duration::from_secs(60))
        .max_attempts(max_attempts)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn poll_ready_comes_before_each_attempt() {
    let inner = Logged::new(2);
    let service = RetryLayer::new(fixed(5)).layer(inner.clone());
    assert_eq!(service.oneshot(1).await.unwrap(), 2);
    // The caller's poll_ready, then one before each of the three attempts.
    assert_eq!(
        inner.log(),
        ["ready", "ready", "call", "ready", "call", "ready", "call"]
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_response_future_stops_the_retrying() {
    let inner = Logged::new(u32::MAX);
    let mut service = RetryLayer::new(fixed(10)).layer(inner.clone());
    let call = service.ready().await.unwrap().call(1);
    // Attempts at 0 s and 1 s; the call is dropped during the 2 s wait.
    let cut = tokio::time::timeout(Duration::from_millis(1_500), call).await;
    assert!(cut.is_err());
    assert_eq!(inner.calls(), 2);
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(inner.calls(), 2, "no attempt after the future was dropped");
}

#[tokio::test(start_paused = true)]
async fn a_named_policy_is_looked_up_per_call_and_a_reload_is_seen() {
    let install = |n| {
        registry::install(
            Registry::builder()
                .policy("tower-layer-named", fixed(n))
                .build(),
        )
    };
    install(2);
    let layer = RetryLayer::policy("tower-layer-named");
    let inner = Logged::new(u32::MAX);
    let mut service = layer.layer(inner.clone());
    assert!(service.ready().await.unwrap().call(1).await.is_err());
    assert_eq!(inner.calls(), 2);
    install(4);
    assert!(service.ready().await.unwrap().call(1).await.is_err());
    assert_eq!(inner.calls(), 2 + 4);
}

#[tokio::test(start_paused = true)]
async fn hooks_see_the_give_up_with_the_report() {
    let ended = Arc::new(Mutex::new(None));
    let seen = ended.clone();
    let hooks = Hooks::new().on_give_up(move |e: &GiveUpEvent<'_, Error>| {
        *seen.lock().unwrap() = Some(*e.report);
    });
    let service = RetryLayer::new(fixed(3)).hooks(hooks).layer(Logged::new(9));
    assert!(service.oneshot(1).await.is_err());
    let report = ended.lock().unwrap().expect("on_give_up ran");
    assert_eq!((report.ending, report.attempts), (Ending::Exhausted, 3));
    assert_eq!(report.waited, Duration::from_secs(1 + 2));
}

#[cfg(feature = "tracing")]
mod warnings {
    use super::*;
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    struct Warnings(Arc<Mutex<Vec<String>>>);

    impl Subscriber for Warnings {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            if *event.metadata().level() == tracing::Level::WARN {
                let mut text = String::new();
                event.record(&mut |_: &tracing::field::Field, v: &dyn std::fmt::Debug| {
                    text.push_str(&format!("{v:?} "));
                });
                self.0.lock().unwrap().push(text);
            }
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn a_missing_policy_runs_once_and_warns_once_naming_the_layer() {
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let subscriber = Warnings(warnings.clone());
        tracing::subscriber::with_default(subscriber, || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            runtime.block_on(async {
                let inner = Logged::new(u32::MAX);
                let mut service = RetryLayer::policy("tower-layer-missing").layer(inner.clone());
                for _ in 0..3 {
                    assert!(service.ready().await.unwrap().call(1).await.is_err());
                }
                assert_eq!(inner.calls(), 3, "one attempt per call");
            });
        });
        let warnings = warnings.lock().unwrap();
        let ours: Vec<&String> = warnings
            .iter()
            .filter(|w| w.contains("tower-layer-missing"))
            .collect();
        assert_eq!(ours.len(), 1, "{warnings:?}");
        assert!(
            ours[0].contains("`tower RetryLayer` at retry-core/tests/tower_layer.rs"),
            "{}",
            ours[0]
        );
        assert!(ours[0].contains("runs once, without retry"), "{}", ours[0]);
    }
}

#[tokio::test(start_paused = true)]
async fn a_hedging_policy_sends_a_hedge_through_a_clone_of_the_service() {
    let policy = support::hedging(20, 3).build().unwrap();
    // The first call is stuck for a second; the service's clones share the count.
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let server = tower::service_fn(move |n: u32| {
        let k = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_millis(if k == 0 { 1000 } else { 5 })).await;
            Ok::<_, Error>(n * 10 + k)
        }
    });
    let start = tokio::time::Instant::now();
    let answer = RetryLayer::new(policy)
        .layer(server)
        .oneshot(4)
        .await
        .unwrap();
    assert_eq!(answer, 41, "the hedge (the second call) answered");
    assert_eq!(start.elapsed(), Duration::from_millis(25));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
