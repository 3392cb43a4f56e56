//! With the `tracing` feature: one span per call and one event per retry.
#![cfg(feature = "tracing")]

use retrykit_core::{Class, Classify, Jitter, Policy, Retry};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Default)]
struct Counts {
    spans: AtomicUsize,
    retry_events: AtomicUsize,
    give_up_events: AtomicUsize,
    missing_policy_warnings: AtomicUsize,
    blocking_timeout_warnings: AtomicUsize,
}

struct Counter(Arc<Counts>);

impl Subscriber for Counter {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        if attrs.metadata().name() == "retry" {
            self.0.spans.fetch_add(1, Ordering::SeqCst);
        }
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = String::new();
        event.record(
            &mut |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                if field.name() == "message" {
                    message = format!("{value:?}");
                }
            },
        );
        if *event.metadata().level() == tracing::Level::WARN
            && message.contains("uses retry policy `traced-missing`, which is not defined")
        {
            self.0
                .missing_policy_warnings
                .fetch_add(1, Ordering::SeqCst);
        }
        if *event.metadata().level() == tracing::Level::WARN
            && message.contains("runs under retry policy `traced-blocking`, which sets attempt_timeout (1s); a blocking call cannot cut an attempt short at it")
        {
            self.0
                .blocking_timeout_warnings
                .fetch_add(1, Ordering::SeqCst);
        }
        match message.as_str() {
            "retrying" => self.0.retry_events.fetch_add(1, Ordering::SeqCst),
            "giving up" => self.0.give_up_events.fetch_add(1, Ordering::SeqCst),
            _ => 0,
        };
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

#[test]
fn a_span_per_call_and_an_event_per_retry() {
    let counts = Arc::new(Counts::default());
    let policy = Policy::builder()
        .name("traced")
        .base(Duration::ZERO)
        .jitter(Jitter::None)
        .max_attempts(4)
        .build()
        .unwrap();
    tracing::subscriber::with_default(Counter(counts.clone()), || {
        for _ in 0..2 {
            let r: Result<(), Flaky> = Retry::blocking(&policy).call_blocking(|| Err(Flaky));
            assert!(r.is_err());
        }
    });
    assert_eq!(counts.spans.load(Ordering::SeqCst), 2);
    assert_eq!(counts.retry_events.load(Ordering::SeqCst), 6);
    assert_eq!(counts.give_up_events.load(Ordering::SeqCst), 2);
}

#[test]
fn a_missing_policy_is_one_warning_event_per_call_site() {
    use retrykit_core::__private::site::{CallSite, PolicyCache};
    const CALL: CallSite = CallSite::new("traced-missing", "src/jobs.rs", 3, "jobs::run");
    static SITE: PolicyCache = PolicyCache::new(CALL);
    let counts = Arc::new(Counts::default());
    tracing::subscriber::with_default(Counter(counts.clone()), || {
        for _ in 0..3 {
            // A reload in between makes every lookup a miss that re-checks the site.
            retrykit_core::registry::install(retrykit_core::Registry::default());
            assert_eq!(SITE.policy().max_attempts(), Some(1));
        }
    });
    assert_eq!(counts.missing_policy_warnings.load(Ordering::SeqCst), 1);
}

#[test]
fn a_blocking_call_whose_policy_sets_an_attempt_timeout_is_one_warning_per_place() {
    let policy = Policy::builder()
        .name("traced-blocking")
        .attempt_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    let counts = Arc::new(Counts::default());
    tracing::subscriber::with_default(Counter(counts.clone()), || {
        for _ in 0..3 {
            let r = Retry::blocking(&policy).call_blocking(|| Ok::<_, Flaky>(1));
            assert_eq!(r.ok(), Some(1));
        }
    });
    assert_eq!(counts.blocking_timeout_warnings.load(Ordering::SeqCst), 1);
}
