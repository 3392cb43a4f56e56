//! Adaptive concurrency limits inside the one retry loop, on tokio's paused
//! clock: each attempt's latency and outcome reach the limit's controller
//! as its permit is given back. AIMD grows on good answers and is cut by
//! each kind of drop (a timeout, a throttled answer, an answer slower than
//! `drop_above`), within its bounds; the gradient settles near the
//! capacity of a dependency with a fixed service time; permits above a
//! lowered limit drain, and no waiter is let in until they have.
#![cfg(feature = "tokio")]

use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
use retrykit_core::limit::{ConcurrencyLimit, LimitFull, LimitKind};
use retrykit_core::{AttemptTimeout, Class, Classify, Jitter, Policy, Retry};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

mod support;
use support::paused_runtime;

#[derive(Debug)]
enum Answer {
    Down,
    Throttled,
    TimedOut,
    Full,
}

impl Classify for Answer {
    fn class(&self) -> Class {
        match self {
            Answer::Down => Class::TRANSIENT,
            Answer::Throttled => Class::THROTTLED,
            Answer::TimedOut => Class::TIMEOUT,
            Answer::Full => Class::Permanent,
        }
    }
    fn from_timeout(_: AttemptTimeout) -> Option<Self> {
        Some(Answer::TimedOut)
    }
    fn from_limit_full(_: LimitFull) -> Option<Self> {
        Some(Answer::Full)
    }
}

/// What each attempt answers.
type Answering = fn() -> Result<(), Answer>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn aimd(initial: u32, min: u32, max: u32) -> Arc<ConcurrencyLimit> {
    let settings = AimdSettings {
        initial,
        min,
        max,
        decrease: 0.5,
        drop_above: Some(ms(50)),
        ..AimdSettings::default()
    };
    let limit = ConcurrencyLimit::new(Some("dep"), LimitKind::Aimd(settings), None, 1000);
    Arc::new(limit.unwrap())
}

fn policy(limit: &Arc<ConcurrencyLimit>) -> Arc<Policy> {
    let policy = Policy::builder()
        .name("adaptive")
        .jitter(Jitter::None)
        .max_attempts(1)
        .attempt_timeout(Some(ms(200)))
        .limit(Some(Arc::clone(limit)));
    Arc::new(policy.build().unwrap())
}

/// `callers` tasks, each making calls one after another until `calls`
/// have been made in all, each attempt taking `ms` and answering `answer`;
/// the most attempts in flight at once.
async fn load(policy: &Arc<Policy>, callers: u32, calls: u32, ms: u64, answer: Answering) -> u32 {
    let (made, now, peak) = (
        Arc::new(AtomicU32::new(0)),
        Arc::new(AtomicU32::new(0)),
        Arc::new(AtomicU32::new(0)),
    );
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..callers {
        let (policy, made, now, peak) = (
            Arc::clone(policy),
            Arc::clone(&made),
            Arc::clone(&now),
            Arc::clone(&peak),
        );
        tasks.spawn(async move {
            while made.fetch_add(1, SeqCst) < calls {
                let _ = Retry::new(&policy)
                    .call(|| {
                        let (now, peak) = (Arc::clone(&now), Arc::clone(&peak));
                        async move {
                            peak.fetch_max(now.fetch_add(1, SeqCst) + 1, SeqCst);
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            now.fetch_sub(1, SeqCst);
                            answer()
                        }
                    })
                    .await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    peak.load(SeqCst)
}

#[test]
fn aimd_grows_on_good_answers_up_to_its_max() {
    paused_runtime().block_on(async {
        let limit = aimd(4, 2, 12);
        let peak = load(&policy(&limit), 20, 400, 10, || Ok(())).await;
        assert_eq!(limit.max_in_flight(), 12, "grown to max, no further");
        assert_eq!(peak, 12, "the attempts in flight followed the limit");
        assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    });
}

#[test]
fn aimd_is_cut_by_timeouts_throttles_and_slow_answers_down_to_its_min() {
    let drops: [(&str, u64, Answering); 3] = [
        ("timeout", 300, || Ok(())),
        ("throttled", 10, || Err(Answer::Throttled)),
        ("slower than drop_above", 60, || Ok(())),
    ];
    for (what, ms, answer) in drops {
        paused_runtime().block_on(async {
            let limit = aimd(16, 3, 20);
            let policy = policy(&limit);
            load(&policy, 16, 1, ms, answer).await;
            assert_eq!(limit.max_in_flight(), 8, "{what}: one drop halves 16");
            load(&policy, 16, 200, ms, answer).await;
            assert_eq!(limit.max_in_flight(), 3, "{what}: bounded by min");
        });
    }
}

#[test]
fn aimd_ignores_failures_of_other_classes() {
    paused_runtime().block_on(async {
        let limit = aimd(8, 2, 20);
        load(&policy(&limit), 8, 200, 10, || Err(Answer::Down)).await;
        assert_eq!(limit.max_in_flight(), 8);
    });
}

#[test]
fn permits_above_a_lowered_limit_drain_before_a_waiter_gets_one() {
    paused_runtime().block_on(async {
        let limit = aimd(4, 1, 20);
        let policy = policy(&limit);
        let start = tokio::time::Instant::now();
        let mut calls = tokio::task::JoinSet::new();
        // Four calls fill the limit; the first is throttled after 10 ms,
        // the others answer after 20, 30 and 40 ms.
        for i in 1..=4u64 {
            let policy = Arc::clone(&policy);
            calls.spawn(async move {
                Retry::new(&policy)
                    .call(|| async move {
                        tokio::time::sleep(ms(10 * i)).await;
                        if i == 1 {
                            Err(Answer::Throttled)
                        } else {
                            Ok(())
                        }
                    })
                    .await
                    .ok();
                0
            });
        }
        tokio::task::yield_now().await;
        assert_eq!(limit.in_flight(), 4);
        let queued = Arc::clone(&policy);
        calls.spawn(async move {
            let began = Retry::new(&queued)
                .call(|| async move { Ok::<_, Answer>(start.elapsed().as_millis()) })
                .await
                .unwrap();
            began as u64
        });
        tokio::time::sleep(ms(15)).await;
        assert_eq!(limit.max_in_flight(), 2, "the throttle halved 4");
        assert_eq!(
            (limit.in_flight(), limit.waiting()),
            (3, 1),
            "none taken back"
        );
        tokio::time::sleep(ms(10)).await;
        assert_eq!(
            (limit.in_flight(), limit.waiting()),
            (2, 1),
            "2 of 2: still full"
        );
        let mut began = Vec::new();
        while let Some(joined) = calls.join_next().await {
            began.push(joined.unwrap());
        }
        assert_eq!(began.iter().max(), Some(&30), "let in when the third ended");
        assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    });
}

/// A dependency that serves `capacity` attempts at once, each in `service`,
/// and queues the rest first come first served.
async fn serve(server: &tokio::sync::Semaphore, service: Duration) {
    let _slot = server.acquire().await.unwrap();
    tokio::time::sleep(service).await;
}

#[test]
fn gradient_settles_near_the_capacity_of_a_fixed_service_time() {
    for capacity in [10u32, 40] {
        paused_runtime().block_on(async {
            let kind = LimitKind::Gradient(GradientSettings {
                initial: 5,
                ..GradientSettings::default()
            });
            let limit = Arc::new(ConcurrencyLimit::new(Some("dep"), kind, None, 1000).unwrap());
            let policy = policy(&limit);
            let server = Arc::new(tokio::sync::Semaphore::new(capacity as usize));
            let service = ms(10);
            let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
            let calls = 400 * capacity;
            let made = Arc::new(AtomicU32::new(0));
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..4 * capacity {
                let (policy, server, sizes, made, limit) = (
                    Arc::clone(&policy),
                    Arc::clone(&server),
                    Arc::clone(&sizes),
                    Arc::clone(&made),
                    Arc::clone(&limit),
                );
                tasks.spawn(async move {
                    while made.fetch_add(1, SeqCst) < calls {
                        let server = Arc::clone(&server);
                        Retry::new(&policy)
                            .call(|| {
                                let server = Arc::clone(&server);
                                async move {
                                    serve(&server, service).await;
                                    Ok::<_, Answer>(())
                                }
                            })
                            .await
                            .unwrap();
                        sizes.lock().unwrap().push(limit.max_in_flight());
                    }
                });
            }
            while tasks.join_next().await.is_some() {}
            let mut sizes = std::mem::take(&mut *sizes.lock().unwrap());
            // The second half: settled.
            let mut settled = sizes.split_off(sizes.len() / 2);
            settled.sort();
            let typical = f64::from(settled[settled.len() / 2]);
            let c = f64::from(capacity);
            assert!(
                (0.8 * c..=1.5 * c).contains(&typical),
                "capacity {capacity}: typical limit {typical}"
            );
            assert!(
                f64::from(*settled.last().unwrap()) <= 1.5 * c,
                "capacity {capacity}: {settled:?}"
            );
        });
    }
}

#[test]
fn a_blocking_call_feeds_the_controller_too() {
    let limit = aimd(8, 2, 20);
    let policy = policy(&limit);
    for _ in 0..2 {
        let _ = Retry::blocking(&policy).call_blocking(|| Err::<(), _>(Answer::Throttled));
    }
    assert_eq!(
        limit.max_in_flight(),
        4,
        "one cut: the second is in the same window"
    );
    assert_eq!(limit.in_flight(), 0);
}

#[cfg(feature = "metrics")]
#[test]
fn with_metrics_a_limit_reports_in_flight_size_waiting_refusals_and_waits() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    use retrykit_core::metrics::{
        LIMIT_IN_FLIGHT, LIMIT_REFUSALS, LIMIT_SIZE, LIMIT_WAIT, LIMIT_WAITING,
    };
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let settings = AimdSettings {
        initial: 2,
        min: 1,
        decrease: 0.5,
        ..AimdSettings::default()
    };
    let kind = LimitKind::Aimd(settings);
    let limit = Arc::new(ConcurrencyLimit::new(Some("metered"), kind, Some(ms(5)), 1).unwrap());
    let policy = policy(&limit);
    metrics::with_local_recorder(&recorder, || {
        paused_runtime().block_on(async {
            let mut calls = tokio::task::JoinSet::new();
            // Two fill the limit; one waits 5 ms in vain; one finds the queue full.
            for i in 0..4u64 {
                let policy = Arc::clone(&policy);
                calls.spawn(async move {
                    tokio::time::sleep(ms(i)).await;
                    Retry::new(&policy)
                        .call(|| async {
                            tokio::time::sleep(ms(20)).await;
                            Err::<(), _>(Answer::Throttled)
                        })
                        .await
                });
            }
            while calls.join_next().await.is_some() {}
        });
    });
    let snapshot = snapshotter.snapshot().into_vec();
    let value = |name: &str| {
        let found = snapshot.iter().find(|(key, ..)| {
            key.key().name() == name
                && key
                    .key()
                    .labels()
                    .any(|l| l.key() == "retry.limit" && l.value() == "metered")
        });
        found.map(|(.., value)| value)
    };
    assert_eq!(value(LIMIT_IN_FLIGHT), Some(&DebugValue::Gauge(0.0.into())));
    assert_eq!(value(LIMIT_WAITING), Some(&DebugValue::Gauge(0.0.into())));
    assert_eq!(
        value(LIMIT_SIZE),
        Some(&DebugValue::Gauge(1.0.into())),
        "2 halved by the first throttle, and never below min"
    );
    assert_eq!(value(LIMIT_REFUSALS), Some(&DebugValue::Counter(2)));
    let Some(DebugValue::Histogram(waits)) = value(LIMIT_WAIT) else {
        panic!("{snapshot:?}");
    };
    assert_eq!(waits.len(), 1, "the queue-full call did not wait");
    assert!((waits[0].into_inner() - 0.005).abs() < 1e-9, "{waits:?}");
}

#[cfg(feature = "tracing")]
#[test]
fn with_tracing_each_change_of_an_adaptive_limit_is_an_event() {
    use std::sync::Mutex;
    use tracing::field::{Field, Visit};

    #[derive(Default, Clone)]
    struct Changes(Arc<Mutex<Vec<(u64, u64)>>>);
    struct Fields(Option<u64>, Option<u64>, bool);
    impl Visit for Fields {
        fn record_u64(&mut self, field: &Field, value: u64) {
            match field.name() {
                "from" => self.0 = Some(value),
                "to" => self.1 = Some(value),
                _ => {}
            }
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.2 |= field.name() == "limit" && value == "traced";
        }
        fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
    }
    impl tracing::Subscriber for Changes {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let mut fields = Fields(None, None, false);
            event.record(&mut fields);
            if let Fields(Some(from), Some(to), true) = fields {
                self.0.lock().unwrap().push((from, to));
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    let changes = Changes::default();
    let settings = AimdSettings {
        initial: 2,
        decrease: 0.5,
        ..AimdSettings::default()
    };
    let kind = LimitKind::Aimd(settings);
    let limit = Arc::new(ConcurrencyLimit::new(Some("traced"), kind, None, 0).unwrap());
    let policy = policy(&limit);
    tracing::subscriber::with_default(changes.clone(), || {
        // Another test's thread may have registered the event's call site
        // first, with no subscriber: ask again, now that this one is set.
        tracing::callsite::rebuild_interest_cache();
        let call = |answer: Answering| {
            let _ = Retry::blocking(&policy).call_blocking(answer);
        };
        call(|| Err(Answer::Throttled));
        // A good answer at a limit of 1 makes it 2; the next, 2.5: no change.
        call(|| Ok(()));
        call(|| Ok(()));
        // Not a sample that moves it: no event.
        call(|| Err(Answer::Down));
    });
    assert_eq!(*changes.0.lock().unwrap(), [(2, 1), (1, 2)]);
}
