//! A fixed concurrency limit inside the one retry loop, on tokio's paused
//! clock (the blocking entry point on short real waits): every attempt
//! holds a permit while in flight, hedges included; the wait for one
//! counts against the deadline; a call that gets none in time ends with
//! `Ending::LimitFull` and sends nothing; permits come back when a call is
//! dropped or panics; the breaker does not count a refusal.
#![cfg(feature = "tokio")]

use retrykit_core::breaker::{BreakerOpen, BreakerState, CircuitBreaker};
use retrykit_core::limit::{ConcurrencyLimit, LimitFull};
use retrykit_core::{
    Class, Classify, Ending, GiveUpEvent, Hooks, Jitter, Policy, PolicyBuilder, Report, Retry,
};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;
use support::{hedging, paused_runtime};

/// What the dependency answers, and what a refusal becomes.
#[derive(Debug)]
enum Answer {
    Down,
    Full(LimitFull),
    Open,
}

impl Classify for Answer {
    fn class(&self) -> Class {
        match self {
            Answer::Down => Class::TRANSIENT,
            Answer::Full(_) | Answer::Open => Class::Permanent,
        }
    }
    fn from_limit_full(full: LimitFull) -> Option<Self> {
        Some(Answer::Full(full))
    }
    fn from_breaker_open(_: BreakerOpen) -> Option<Self> {
        Some(Answer::Open)
    }
}

/// How many attempts are in flight now, and the most ever.
#[derive(Default)]
struct Gauge {
    now: AtomicU32,
    peak: AtomicU32,
    sent: AtomicU32,
}

impl Gauge {
    /// An attempt that is in flight for `ms`, then answers `answer`.
    async fn attempt<T>(&self, ms: u64, answer: Result<T, Answer>) -> Result<T, Answer> {
        self.sent.fetch_add(1, SeqCst);
        let now = self.now.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(now, SeqCst);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.now.fetch_sub(1, SeqCst);
        answer
    }
}

fn limited(limit: &Arc<ConcurrencyLimit>) -> PolicyBuilder {
    Policy::builder()
        .jitter(Jitter::None)
        .limit(Some(Arc::clone(limit)))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn many_concurrent_calls_never_exceed_max_in_flight() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(3, None, 100).unwrap());
        let policy = Arc::new(limited(&limit).max_attempts(2).build().unwrap());
        let gauge = Arc::new(Gauge::default());
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..40u32 {
            let (policy, gauge) = (Arc::clone(&policy), Arc::clone(&gauge));
            calls.spawn(async move {
                let mut n = 0;
                Retry::new(&policy)
                    .call_with_report(|| {
                        n += 1;
                        // Every third call fails once first, and retries.
                        let answer = if i % 3 == 0 && n == 1 {
                            Err(Answer::Down)
                        } else {
                            Ok(i)
                        };
                        let gauge = Arc::clone(&gauge);
                        async move { gauge.attempt(10, answer).await }
                    })
                    .await
            });
        }
        let mut ok = 0;
        while let Some(joined) = calls.join_next().await {
            let (result, report) = joined.unwrap();
            assert!(result.is_ok(), "{report:?}");
            ok += 1;
        }
        assert_eq!(ok, 40);
        assert_eq!(
            gauge.peak.load(SeqCst),
            3,
            "the limit was filled, never passed"
        );
        assert_eq!(gauge.sent.load(SeqCst), 40 + 14);
        assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    });
}

#[test]
fn the_wait_for_a_permit_counts_against_the_deadline() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 8).unwrap());
        let policy = limited(&limit).deadline(Some(ms(50))).build().unwrap();
        let held = limit.try_acquire().unwrap();
        let gauge = Gauge::default();
        let start = tokio::time::Instant::now();
        let (result, report) = Retry::new(&policy)
            .call_with_report(|| gauge.attempt(1, Ok(())))
            .await;
        assert!(matches!(result, Err(Answer::Full(_))), "{result:?}");
        assert_eq!(report.ending, Ending::LimitFull);
        assert_eq!((report.attempts, gauge.sent.load(SeqCst)), (0, 0));
        assert_eq!((start.elapsed(), report.elapsed), (ms(50), ms(50)));
        assert_eq!(limit.waiting(), 0);
        drop(held);
    });
}

#[test]
fn an_attempt_that_waited_has_only_the_rest_of_the_deadline() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 8).unwrap());
        let policy = limited(&limit)
            .deadline(Some(ms(50)))
            .max_attempts(1)
            .build()
            .unwrap();
        let held = limit.try_acquire().unwrap();
        let release = async move {
            tokio::time::sleep(ms(30)).await;
            drop(held);
        };
        let start = tokio::time::Instant::now();
        let call = Retry::new(&policy).call_with_report(|| async {
            tokio::time::sleep(ms(40)).await;
            Ok::<_, std::io::Error>(())
        });
        let ((result, report), ()) = tokio::join!(call, release);
        let error = result.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
        assert_eq!((report.attempts, start.elapsed()), (1, ms(50)));
        assert_eq!(limit.in_flight(), 0);
    });
}

#[test]
fn max_wait_ends_the_call_as_limit_full_and_hooks_hear_it() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, Some(ms(20)), 8).unwrap());
        let policy = limited(&limit).deadline(Some(ms(500))).build().unwrap();
        let _held = limit.try_acquire().unwrap();
        let said = Mutex::new(None::<Report>);
        let hooks = Hooks::new()
            .on_give_up(|e: &GiveUpEvent<'_, Answer>| *said.lock().unwrap() = Some(*e.report));
        let start = tokio::time::Instant::now();
        let (result, report) = Retry::new(&policy)
            .hooks(hooks)
            .call_with_report(|| async { Ok::<_, Answer>(()) })
            .await;
        let Err(Answer::Full(full)) = result else {
            panic!("{result:?}");
        };
        assert_eq!(
            full.to_string(),
            "concurrency limit `<unnamed>` is full (1 in flight)"
        );
        assert_eq!(
            (report.ending, start.elapsed()),
            (Ending::LimitFull, ms(20))
        );
        assert_eq!(
            said.lock().unwrap().map(|r| r.ending),
            Some(Ending::LimitFull)
        );
        assert_eq!(Ending::LimitFull.as_str(), "limit_full");
    });
}

#[test]
fn a_full_queue_ends_the_call_at_once() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 1).unwrap());
        let policy = Arc::new(limited(&limit).build().unwrap());
        let _held = limit.try_acquire().unwrap();
        let queued = {
            let policy = Arc::clone(&policy);
            tokio::spawn(async move {
                Retry::new(&policy)
                    .call(|| async { Ok::<_, Answer>(()) })
                    .await
            })
        };
        tokio::task::yield_now().await;
        assert_eq!(limit.waiting(), 1);
        let start = tokio::time::Instant::now();
        let (result, report) = Retry::new(&policy)
            .call_with_report(|| async { Ok::<_, Answer>(()) })
            .await;
        assert!(matches!(result, Err(Answer::Full(_))));
        assert_eq!(
            (report.ending, start.elapsed()),
            (Ending::LimitFull, Duration::ZERO)
        );
        queued.abort();
        let _ = queued.await;
        assert_eq!(limit.waiting(), 0, "an aborted waiter leaves the queue");
    });
}

#[test]
fn a_dropped_call_gives_its_permit_back() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 4).unwrap());
        let policy = Arc::new(limited(&limit).build().unwrap());
        let gauge = Arc::new(Gauge::default());
        let stuck = {
            let (policy, gauge) = (Arc::clone(&policy), Arc::clone(&gauge));
            tokio::spawn(async move {
                Retry::new(&policy)
                    .call(|| gauge.attempt(60_000, Ok::<_, Answer>(())))
                    .await
            })
        };
        tokio::time::sleep(ms(5)).await;
        assert_eq!((limit.in_flight(), gauge.now.load(SeqCst)), (1, 1));
        // A second call waits; the first is dropped; the second runs.
        let next = Retry::new(&policy).call_with_report(|| async { Ok::<_, Answer>(7) });
        let abort = async {
            tokio::time::sleep(ms(5)).await;
            assert_eq!(limit.waiting(), 1);
            stuck.abort();
        };
        let ((result, report), ()) = tokio::join!(next, abort);
        assert_eq!((result.unwrap(), report.elapsed), (7, ms(5)));
        assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    });
}

#[test]
fn a_panicking_attempt_gives_its_permit_back() {
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 4).unwrap());
        let policy = Arc::new(limited(&limit).build().unwrap());
        let panicking = {
            let policy = Arc::clone(&policy);
            tokio::spawn(async move {
                Retry::new(&policy)
                    .call(|| async {
                        tokio::time::sleep(ms(5)).await;
                        if true {
                            panic!("the attempt panics");
                        }
                        Ok::<_, Answer>(())
                    })
                    .await
            })
        };
        tokio::time::sleep(ms(1)).await;
        assert_eq!(limit.in_flight(), 1);
        assert!(panicking.await.unwrap_err().is_panic());
        assert_eq!(limit.in_flight(), 0);
        let result = Retry::new(&policy)
            .call(|| async { Ok::<_, Answer>(1) })
            .await;
        assert_eq!(result.unwrap(), 1);
    });
}

#[test]
fn hedges_hold_permits_and_are_not_sent_without_one() {
    paused_runtime().block_on(async {
        let unlimited = hedging(20, 3).jitter(Jitter::None).build().unwrap();
        let gauge = Gauge::default();
        let (_, report) = Retry::new(&unlimited)
            .call_with_report(|| gauge.attempt(1000, Ok::<_, Answer>(())))
            .await;
        let free = report.hedges;
        assert!(free >= 1, "the policy hedges: {report:?}");
        for max_in_flight in 1..=3 {
            let limit =
                std::sync::Arc::new(ConcurrencyLimit::fixed(max_in_flight, None, 4).unwrap());
            let policy = hedging(20, 3)
                .jitter(Jitter::None)
                .limit(Some(Arc::clone(&limit)))
                .build()
                .unwrap();
            let gauge = Gauge::default();
            let (result, report) = Retry::new(&policy)
                .call_with_report(|| gauge.attempt(1000, Ok::<_, Answer>(())))
                .await;
            result.unwrap();
            let hedges = free.min(max_in_flight - 1);
            assert_eq!(report.hedges, hedges, "limit {max_in_flight}");
            assert_eq!(gauge.peak.load(SeqCst), hedges + 1);
            assert_eq!(limit.in_flight(), 0);
        }
    });
}

#[test]
fn the_breaker_does_not_count_a_refused_permit() {
    paused_runtime().block_on(async {
        let breaker = Arc::new(
            CircuitBreaker::builder()
                .min_calls(2)
                .failure_ratio(0.5)
                .build()
                .unwrap(),
        );
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, Some(ms(10)), 4).unwrap());
        let policy = limited(&limit)
            .breaker(Some(Arc::clone(&breaker)))
            .build()
            .unwrap();
        let held = limit.try_acquire().unwrap();
        for _ in 0..5 {
            let (result, report) = Retry::new(&policy)
                .call_with_report(|| async { Ok::<_, Answer>(()) })
                .await;
            assert!(matches!(result, Err(Answer::Full(_))));
            assert_eq!(report.ending, Ending::LimitFull);
        }
        assert_eq!(breaker.state(), BreakerState::Closed);
        drop(held);
        let (result, report) = Retry::new(&policy)
            .call_with_report(|| async { Ok::<_, Answer>(()) })
            .await;
        assert!(result.is_ok());
        assert_eq!(report.attempts, 1);
    });
}

#[test]
fn a_type_that_cannot_say_limit_full_sends_without_a_permit() {
    #[derive(Debug)]
    struct Plain;
    impl Classify for Plain {
        fn class(&self) -> Class {
            Class::TRANSIENT
        }
    }
    paused_runtime().block_on(async {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 0).unwrap());
        let policy = limited(&limit).build().unwrap();
        let _held = limit.try_acquire().unwrap();
        let result = Retry::new(&policy)
            .call(|| async { Ok::<_, Plain>(3) })
            .await;
        assert_eq!(result.unwrap(), 3);
        assert_eq!(limit.in_flight(), 1, "only the permit held here");
    });
}

#[test]
fn blocking_calls_hold_permits_and_wait_on_their_thread() {
    let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(2, None, 16).unwrap());
    let policy = Arc::new(limited(&limit).build().unwrap());
    let gauge = Arc::new(Gauge::default());
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let (policy, gauge) = (Arc::clone(&policy), Arc::clone(&gauge));
            std::thread::spawn(move || {
                Retry::blocking(&policy).call_blocking(|| {
                    gauge.sent.fetch_add(1, SeqCst);
                    let now = gauge.now.fetch_add(1, SeqCst) + 1;
                    gauge.peak.fetch_max(now, SeqCst);
                    std::thread::sleep(ms(2));
                    gauge.now.fetch_sub(1, SeqCst);
                    Ok::<_, Answer>(())
                })
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    assert!(gauge.peak.load(SeqCst) <= 2);
    assert_eq!((gauge.sent.load(SeqCst), limit.in_flight()), (6, 0));

    let short = std::sync::Arc::new(ConcurrencyLimit::fixed(1, Some(ms(3)), 1).unwrap());
    let policy = limited(&short).build().unwrap();
    let _held = short.try_acquire().unwrap();
    let started = std::time::Instant::now();
    let (result, report) =
        Retry::blocking(&policy).call_blocking_with_report(|| Ok::<_, Answer>(()));
    assert!(matches!(result, Err(Answer::Full(_))));
    assert_eq!(report.ending, Ending::LimitFull);
    assert!(started.elapsed() >= ms(3));
}

#[cfg(feature = "metrics")]
#[test]
fn with_metrics_a_call_ended_limit_full_is_counted_by_its_ending() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let limit = Arc::new(ConcurrencyLimit::fixed(1, None, 0).unwrap());
    let policy = limited(&limit).name("limited-policy").build().unwrap();
    let _held = limit.try_acquire().unwrap();
    metrics::with_local_recorder(&recorder, || {
        paused_runtime().block_on(async {
            let result = Retry::new(&policy)
                .call(|| async { Ok::<_, Answer>(()) })
                .await;
            assert!(matches!(result, Err(Answer::Full(_))));
        });
    });
    let snapshot = snapshotter.snapshot().into_vec();
    let counted = snapshot.iter().find(|(key, ..)| {
        let key = key.key();
        key.name() == retrykit_core::metrics::CALLS
            && key
                .labels()
                .any(|l| l.key() == "retry.ending" && l.value() == "limit_full")
    });
    assert_eq!(
        counted.map(|(.., value)| value),
        Some(&DebugValue::Counter(1)),
        "{snapshot:?}"
    );
}
