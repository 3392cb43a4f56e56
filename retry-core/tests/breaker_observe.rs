//! A circuit breaker seen from outside: each state change said once on
//! stderr (and, with `tracing`, as one `warn` event of target `retry`)
//! naming the breaker, the states and the ratio; `status()` from code; and
//! 10,000 calls arriving at once at a half-open breaker on a multi-thread
//! runtime, of which exactly the configured probes reach the server. The
//! cases that read stderr run this binary again as a child, alone, since
//! other tests' breakers would speak on the same stream.
#![cfg(feature = "tokio")]

use retrykit_core::breaker::{BreakerOpen, BreakerState, CircuitBreaker};
use retrykit_core::{Ending, Jitter, Policy, Retry};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::time::{Duration, Instant};

mod support;
use support::{Answer, paused_runtime};

const CHILD: &str = "RETRYKIT_BREAKER_OBSERVE_CHILD";

/// Runs test `name` of this binary alone in a child; its stdout and stderr.
fn child(name: &str) -> (String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    (stdout, stderr)
}

fn breaker(name: &str, probes: u32, open_for: Duration) -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name(name)
        .min_calls(2)
        .failure_ratio(0.5)
        .window(Duration::from_secs(10))
        .open_for(open_for)
        .max_open_for(open_for * 4)
        .probe_every(open_for * 4)
        .open_jitter(0.0)
        .probes(probes)
        .build()
        .unwrap();
    Arc::new(b)
}

/// One attempt a call: each call's answer is the breaker's or the server's.
fn one_attempt(b: &Arc<CircuitBreaker>) -> Policy {
    Policy::builder()
        .name("observed-policy")
        .jitter(Jitter::None)
        .max_attempts(1)
        .breaker(Some(Arc::clone(b)))
        .build()
        .unwrap()
}

async fn call(p: &Policy, answer: fn() -> Result<(), Answer>) -> Ending {
    Retry::new(p)
        .call_with_report(|| async move { answer() })
        .await
        .1
        .ending
}

/// Every state change, through the loop: closed -> open (2 of 2 failed),
/// a refusal, open -> half-open -> open (the probe fails), open ->
/// half-open -> closed. Returns what `status()` said after each step.
fn lifecycle() -> Vec<(BreakerState, u32, Option<Duration>)> {
    let b = breaker("observed", 1, Duration::from_secs(1));
    let p = one_attempt(&b);
    let now = || tokio::time::Instant::now().into_std();
    let mut seen = Vec::new();
    paused_runtime().block_on(async {
        let status = |seen: &mut Vec<_>| {
            let s = b.status(now());
            // To the breaker's resolution (whole milliseconds of its own clock).
            let open_for = s
                .open_for
                .map(|d| Duration::from_millis((d.as_millis() as u64).div_ceil(10) * 10));
            seen.push((s.state, s.trips, open_for));
        };
        status(&mut seen);
        assert_eq!(call(&p, || Err(Answer::Down)).await, Ending::Exhausted);
        assert_eq!(call(&p, || Err(Answer::Down)).await, Ending::Exhausted);
        status(&mut seen);
        assert_eq!(call(&p, || Ok(())).await, Ending::BreakerOpen);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(call(&p, || Err(Answer::Down)).await, Ending::Exhausted);
        status(&mut seen);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(call(&p, || Ok(())).await, Ending::Success);
        status(&mut seen);
    });
    seen
}

#[test]
fn status_says_the_state_the_trips_and_the_break_left() {
    let seen = lifecycle();
    assert_eq!(
        seen,
        [
            (BreakerState::Closed, 0, None),
            (BreakerState::Open, 1, Some(Duration::from_secs(1))),
            (BreakerState::Open, 2, Some(Duration::from_secs(2))),
            (BreakerState::Closed, 0, None),
        ]
    );
}

#[test]
fn each_state_change_is_said_once_naming_the_breaker_the_states_and_the_ratio() {
    if std::env::var_os(CHILD).is_some() {
        #[cfg(feature = "tracing")]
        let _guard = tracing::subscriber::set_default(events::Printer);
        lifecycle();
        return;
    }
    let (stdout, stderr) =
        child("each_state_change_is_said_once_naming_the_breaker_the_states_and_the_ratio");
    let said = |text: &str| stderr.matches(text).count();
    assert_eq!(
        said(
            "retry: circuit breaker `observed` opened (closed -> open): 2 of 2 attempts failed \
             (100% >= failure_ratio 50%) in the last 10s; no attempt is sent for 1s"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        said("circuit breaker `observed` half-open (open -> half-open): letting 1 probe"),
        2,
        "two half-open periods, each said once: {stderr}"
    );
    assert_eq!(
        said(
            "circuit breaker `observed` opened again (half-open -> open): a probe failed; no attempt is sent for 2s"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        said(
            "circuit breaker `observed` closed (half-open -> closed): 1 probe attempt(s) succeeded"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        said("circuit breaker `observed`"),
        5,
        "nothing else: {stderr}"
    );
    if cfg!(feature = "tracing") {
        // (The first may follow the harness's "test ... " on its line.)
        let events: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.find("EVENT ").map(|at| &l[at..]))
            .collect();
        assert_eq!(
            events,
            [
                "EVENT retry breaker=observed scope=local from=closed to=open ratio=1.0",
                "EVENT retry breaker=observed scope=local from=open to=half_open",
                "EVENT retry breaker=observed scope=local from=half_open to=open",
                "EVENT retry breaker=observed scope=local from=open to=half_open",
                "EVENT retry breaker=observed scope=local from=half_open to=closed",
            ],
            "{stdout}"
        );
    }
}

/// Prints each `warn` event of target `retry` with its fields, in order.
#[cfg(feature = "tracing")]
mod events {
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    pub struct Printer;

    impl Subscriber for Printer {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let meta = event.metadata();
            if meta.target() != "retry" || *meta.level() != tracing::Level::WARN {
                return;
            }
            let mut line = format!("EVENT {}", meta.target());
            event.record(&mut |f: &tracing::field::Field, v: &dyn std::fmt::Debug| {
                if f.name() != "message" {
                    line.push_str(&format!(" {}={v:?}", f.name()).replace('"', ""));
                }
            });
            println!("{line}");
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

#[cfg(feature = "metrics")]
#[test]
fn with_metrics_the_changes_the_refusals_and_the_state_are_recorded() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    use retrykit_core::metrics::{BREAKER_REFUSALS, BREAKER_STATE, BREAKER_TRANSITIONS};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        lifecycle();
    });
    let snapshot = snapshotter.snapshot().into_vec();
    let find = |name: &str, labels: &[(&str, &str)]| {
        snapshot
            .iter()
            .find(|(key, ..)| {
                let key = key.key();
                let mut have: Vec<(&str, &str)> =
                    key.labels().map(|l| (l.key(), l.value())).collect();
                have.sort();
                key.name() == name && have == labels
            })
            .map(|(.., value)| value)
    };
    let b = ("retry.breaker", "observed");
    for (to, n) in [("open", 2), ("half_open", 2), ("closed", 1)] {
        let labels = [b, ("retry.breaker.to", to)];
        assert_eq!(
            find(BREAKER_TRANSITIONS, &labels),
            Some(&DebugValue::Counter(n)),
            "to {to}: {snapshot:?}"
        );
    }
    let state = find(BREAKER_STATE, &[b]);
    assert_eq!(
        state,
        Some(&DebugValue::Gauge(0.0.into())),
        "closed at the end"
    );
    let refusals = find(BREAKER_REFUSALS, &[("retry.policy", "observed-policy")]);
    assert_eq!(refusals, Some(&DebugValue::Counter(1)));
}

#[test]
fn ten_thousand_calls_at_a_half_open_breaker_send_exactly_the_probes() {
    const CALLS: u32 = 10_000;
    const PROBES: u32 = 5;
    if std::env::var_os(CHILD).is_none() {
        let (_, stderr) =
            child("ten_thousand_calls_at_a_half_open_breaker_send_exactly_the_probes");
        let said = |text: &str| stderr.matches(text).count();
        // A transition is never lost nor made twice under contention.
        assert_eq!(said("`crowded` opened (closed -> open)"), 1, "{stderr}");
        assert_eq!(
            said("`crowded` half-open (open -> half-open)"),
            1,
            "{stderr}"
        );
        assert_eq!(
            said("`crowded` closed (half-open -> closed)"),
            1,
            "{stderr}"
        );
        return;
    }
    let b = breaker("crowded", PROBES, Duration::from_millis(1));
    let p = Arc::new(one_attempt(&b));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    for _ in 0..2 {
        let ticket = b.try_acquire(Instant::now()).unwrap();
        b.record(ticket, Instant::now(), true);
    }
    assert_eq!(b.state(), BreakerState::Open);
    std::thread::sleep(Duration::from_millis(3)); // the 1 ms break ends
    let reached = Arc::new(AtomicU32::new(0));
    let release = Arc::new(AtomicBool::new(false));
    let endings: Vec<Ending> = runtime.block_on(async {
        let calls: Vec<_> = (0..CALLS)
            .map(|_| {
                let (p, reached, release) = (p.clone(), reached.clone(), release.clone());
                tokio::spawn(async move {
                    let attempt = || {
                        let (reached, release) = (reached.clone(), release.clone());
                        async move {
                            reached.fetch_add(1, SeqCst);
                            // The server holds the probes until every call asked.
                            while !release.load(SeqCst) {
                                tokio::time::sleep(Duration::from_millis(1)).await;
                            }
                            Ok::<_, Answer>(())
                        }
                    };
                    Retry::new(&p).call_with_report(attempt).await.1.ending
                })
            })
            .collect();
        // Every call but the probes ends at once, refused.
        while reached.load(SeqCst) + refused(&calls) < CALLS {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        release.store(true, SeqCst);
        let mut endings = Vec::new();
        for call in calls {
            endings.push(call.await.unwrap());
        }
        endings
    });
    assert_eq!(
        reached.load(SeqCst),
        PROBES,
        "exactly the probes reached the server"
    );
    let ok = endings.iter().filter(|e| **e == Ending::Success).count();
    let open = endings
        .iter()
        .filter(|e| **e == Ending::BreakerOpen)
        .count();
    assert_eq!((ok, open), (PROBES as usize, (CALLS - PROBES) as usize));
    assert_eq!(b.state(), BreakerState::Closed);
}

/// How many of `calls` have ended (only refused calls end before release).
fn refused(calls: &[tokio::task::JoinHandle<Ending>]) -> u32 {
    calls.iter().filter(|c| c.is_finished()).count() as u32
}

#[test]
fn state_changes_and_refusals_say_durations_rounded() {
    let open_for = Duration::from_nanos(1_221_542_025);
    if std::env::var_os(CHILD).is_some() {
        let b = CircuitBreaker::builder()
            .name("rounded")
            .min_calls(2)
            .failure_ratio(0.5)
            .window(Duration::from_nanos(10_500_000_003))
            .open_for(open_for)
            .max_open_for(open_for * 4)
            .open_jitter(0.0)
            .build()
            .unwrap();
        let p = one_attempt(&Arc::new(b));
        paused_runtime().block_on(async {
            for _ in 0..2 {
                assert_eq!(call(&p, || Err(Answer::Down)).await, Ending::Exhausted);
            }
        });
        return;
    }
    let (_, stderr) = child("state_changes_and_refusals_say_durations_rounded");
    assert!(
        stderr.contains("in the last 10.5s; no attempt is sent for 1.2s"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("ns") && !stderr.contains("us "),
        "{stderr}"
    );
    let refused = BreakerOpen::new(
        Some("b"),
        BreakerState::Open,
        Duration::from_nanos(221_542_025),
    );
    assert_eq!(
        refused.to_string(),
        "circuit breaker `b` is open: no attempt is sent for another 222ms"
    );
}
