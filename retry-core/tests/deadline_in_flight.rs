//! The deadline bounds the whole call, the attempt in flight included: an
//! attempt still running when the deadline comes is cut short, and the call
//! ends then with `Ending::Deadline` and the error standing for the cut
//! (`AttemptTimeout { deadline: true, .. }`), on a plain call and on a
//! hedged one, with or without an `attempt_timeout`. A blocking attempt
//! cannot be cut; the deadline still ends the call before a wait that
//! would reach it.
#![cfg(feature = "tokio")]

use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::{AttemptTimeout, Ending, Hooks, Jitter, Policy, Retry, RetryEvent};
use std::io;
use std::time::Duration;
use tokio::time::Instant;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// The `AttemptTimeout` inside an error the engine made for a cut attempt.
fn cut(error: &io::Error) -> AttemptTimeout {
    assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
    *error
        .get_ref()
        .and_then(|e| e.downcast_ref::<AttemptTimeout>())
        .expect("the error carries the AttemptTimeout")
}

/// Every attempt stalls for 1.5 s: the one in flight at 400 ms is cut.
#[tokio::test(start_paused = true)]
async fn a_stalled_attempt_is_cut_at_the_deadline() {
    for attempt_timeout in [None, Some(MS(1_000))] {
        let policy = Policy::builder()
            .deadline(Some(MS(400)))
            .attempt_timeout(attempt_timeout)
            .base(MS(10))
            .build()
            .unwrap();
        let started = Instant::now();
        let (result, report) = Retry::new(&policy)
            .call_with_report(|| async {
                tokio::time::sleep(MS(1_500)).await;
                Ok::<_, io::Error>(())
            })
            .await;
        let error = result.unwrap_err();
        assert_eq!(started.elapsed(), MS(400), "{attempt_timeout:?}");
        assert_eq!(report.ending, Ending::Deadline, "{attempt_timeout:?}");
        assert_eq!(report.attempts, 1);
        assert_eq!(cut(&error), AttemptTimeout::at_deadline(1, MS(400)));
        assert_eq!(
            error.to_string(),
            "attempt 1 was cut short at the call's deadline (400ms)"
        );
    }
}

/// The attempt timeout is nearer than what is left of the deadline: it
/// fires first and the call retries; the attempt in flight at the deadline
/// is cut there.
#[tokio::test(start_paused = true)]
async fn the_nearer_limit_fires() {
    let policy = Policy::builder()
        .deadline(Some(MS(400)))
        .attempt_timeout(Some(MS(150)))
        .base(MS(10))
        .jitter(Jitter::None)
        .max_attempts(10)
        .build()
        .unwrap();
    let started = Instant::now();
    let timeouts = std::cell::RefCell::new(Vec::new());
    let (result, report) = Retry::new(&policy)
        .hooks(Hooks::new().on_retry(|e: &RetryEvent<'_, io::Error>| {
            timeouts.borrow_mut().push(cut(e.error));
        }))
        .call_with_report(|| async {
            tokio::time::sleep(MS(1_500)).await;
            Ok::<_, io::Error>(())
        })
        .await;
    // 0-150 cut by its timeout, wait 10; 160-310 cut, wait 20; 330-400 cut
    // by the deadline.
    assert_eq!(started.elapsed(), MS(400));
    assert_eq!(report.ending, Ending::Deadline);
    assert_eq!(report.attempts, 3);
    assert_eq!(
        *timeouts.borrow(),
        [
            AttemptTimeout::new(1, MS(150)),
            AttemptTimeout::new(2, MS(150))
        ]
    );
    assert_eq!(
        cut(&result.unwrap_err()),
        AttemptTimeout::at_deadline(3, MS(400))
    );
}

/// A hedged call: the first attempt and its hedges all stall; every one in
/// flight is cut at the deadline and the call ends there.
#[tokio::test(start_paused = true)]
async fn a_hedged_call_ends_at_the_deadline() {
    let policy = Policy::builder()
        .deadline(Some(MS(400)))
        .hedge(Some(HedgeSettings::new(HedgeAfter::Fixed(MS(50)))))
        .build()
        .unwrap();
    // The hedge cap counts calls: give it room for this one's hedges.
    for _ in 0..100 {
        policy
            .hedging()
            .unwrap()
            .count_call(std::time::Instant::now());
    }
    let started = Instant::now();
    let (result, report) = Retry::new(&policy)
        .call_with_report(|| async {
            tokio::time::sleep(MS(1_500)).await;
            Ok::<_, io::Error>(())
        })
        .await;
    let error = result.unwrap_err();
    assert_eq!(started.elapsed(), MS(400));
    assert_eq!(report.ending, Ending::Deadline);
    assert!(report.hedges >= 1, "{report:?}");
    assert!(cut(&error).deadline, "{error}");
}

/// An attempt that finishes before the deadline is not touched, and a
/// policy without a deadline or timeout never cuts.
#[tokio::test(start_paused = true)]
async fn an_attempt_inside_the_deadline_runs_to_its_end() {
    let policy = Policy::builder().deadline(Some(MS(400))).build().unwrap();
    let out = Retry::new(&policy)
        .call(|| async {
            tokio::time::sleep(MS(399)).await;
            Ok::<_, io::Error>(7)
        })
        .await;
    assert_eq!(out.unwrap(), 7);
    let unbounded = Policy::builder().deadline(None).build().unwrap();
    let started = Instant::now();
    let out = Retry::new(&unbounded)
        .call(|| async {
            tokio::time::sleep(MS(5_000)).await;
            Ok::<_, io::Error>(8)
        })
        .await;
    assert_eq!((out.unwrap(), started.elapsed()), (8, MS(5_000)));
}
