//! The async loop under tokio's paused clock: every figure is virtual time,
//! so the assertions are exact and the tests take no real time.

use retrykit_core::{
    AttemptTimeout, Class, Classify, Ending, GiveUpEvent, Hooks, Jitter, Policy, Retry,
    RetryBudget, RetryEvent,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, PartialEq)]
enum TestError {
    Transient,
    Throttled(Option<Duration>),
    Fatal,
    Other,
    TimedOut(u32),
}

impl Classify for TestError {
    fn class(&self) -> Class {
        match self {
            TestError::Transient => Class::TRANSIENT,
            TestError::Throttled(_) => Class::THROTTLED,
            TestError::Fatal => Class::Permanent,
            TestError::Other => Class::Retryable("other"),
            TestError::TimedOut(_) => Class::TIMEOUT,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            TestError::Throttled(hint) => *hint,
            _ => None,
        }
    }
    fn from_timeout(t: AttemptTimeout) -> Option<Self> {
        Some(TestError::TimedOut(t.attempt))
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn fixed(base: u64, cap: u64, attempts: u32) -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .base(ms(base))
        .cap(ms(cap))
        .jitter(Jitter::None)
        .max_attempts(attempts)
}

/// Runs `policy` against an operation that fails with `errors[i]` on call
/// `i` (and succeeds after the list runs out); returns the result, the
/// report, the calls made and the virtual time the whole call took.
async fn drive(
    policy: &Policy,
    errors: Vec<TestError>,
) -> (Result<u32, TestError>, retrykit_core::Report, u32, Duration) {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    let (result, report) = Retry::new(policy)
        .call_with_report(|| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            let outcome = errors.get(n as usize).cloned();
            async move {
                match outcome {
                    Some(e) => Err(e),
                    None => Ok(n + 1),
                }
            }
        })
        .await;
    (
        result,
        report,
        calls.load(Ordering::SeqCst),
        start.elapsed(),
    )
}

#[tokio::test(start_paused = true)]
async fn attempts_and_virtual_time_follow_the_schedule() {
    let p = fixed(100, 10_000, 5).build().unwrap();
    let (result, report, calls, took) = drive(&p, vec![TestError::Transient; 3]).await;
    assert_eq!(result, Ok(4));
    assert_eq!(calls, 4);
    assert_eq!(took, ms(100 + 200 + 400));
    assert_eq!(report.waited, took);
    assert_eq!((report.ending, report.attempts), (Ending::Success, 4));
}

#[tokio::test(start_paused = true)]
async fn max_attempts_counts_calls_including_the_first() {
    let p = fixed(10, 1_000, 3).build().unwrap();
    let (result, report, calls, took) = drive(&p, vec![TestError::Transient; 10]).await;
    assert_eq!(result, Err(TestError::Transient));
    assert_eq!(calls, 3);
    assert_eq!(took, ms(10 + 20));
    assert_eq!(report.ending, Ending::Exhausted);

    let once = fixed(10, 1_000, 1).build().unwrap();
    let (_, report, calls, took) = drive(&once, vec![TestError::Transient; 10]).await;
    assert_eq!(
        (calls, took, report.ending),
        (1, Duration::ZERO, Ending::Exhausted)
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_counts_attempt_time_and_is_never_passed() {
    // Each attempt takes 300 ms; waits are 100, 200, 400, ...
    let p = fixed(100, 10_000, 0)
        .deadline(Some(ms(1_500)))
        .build()
        .unwrap();
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    let (result, report) = Retry::new(&p)
        .call_with_report(|| {
            calls.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(ms(300)).await;
                Err::<(), _>(TestError::Transient)
            }
        })
        .await;
    // t=300 fail, wait 100 → 400; t=700 fail, wait 200 → 900; t=1200 fail,
    // a 400 ms wait would end at 1600 ≥ 1500: give up at 1200.
    assert!(result.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), ms(1_200));
    assert_eq!(report.ending, Ending::Deadline);
    assert_eq!(report.elapsed, ms(1_200));
}

#[tokio::test(start_paused = true)]
async fn a_wait_ending_exactly_at_the_deadline_is_not_started() {
    let p = fixed(100, 100, 10).deadline(Some(ms(100))).build().unwrap();
    let (_, report, calls, took) = drive(&p, vec![TestError::Transient; 10]).await;
    assert_eq!(
        (calls, took, report.ending),
        (1, Duration::ZERO, Ending::Deadline)
    );
}

#[tokio::test(start_paused = true)]
async fn attempt_timeouts_cancel_the_attempt_and_are_retried() {
    let p = fixed(10, 1_000, 3)
        .attempt_timeout(Some(ms(50)))
        .retry_on(["transient"]) // timeouts are retried even when not listed
        .build()
        .unwrap();
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    let (result, report) = Retry::new(&p)
        .call_with_report(|| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                Ok::<_, TestError>(n)
            }
        })
        .await;
    assert_eq!(result, Ok(2));
    assert_eq!(start.elapsed(), ms(50 + 10 + 50 + 20));
    assert_eq!(report.attempts, 3);
}

#[tokio::test(start_paused = true)]
async fn the_last_timed_out_attempt_returns_the_timeout_error() {
    let p = fixed(10, 1_000, 2)
        .attempt_timeout(Some(ms(50)))
        .build()
        .unwrap();
    let result: Result<(), TestError> = Retry::new(&p)
        .call(|| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        })
        .await;
    assert_eq!(result, Err(TestError::TimedOut(2)));
}

#[tokio::test(start_paused = true)]
async fn an_error_type_without_timeouts_is_never_cancelled() {
    #[derive(Debug)]
    struct Plain;
    impl Classify for Plain {
        fn class(&self) -> Class {
            Class::TRANSIENT
        }
    }
    let p = fixed(10, 1_000, 2)
        .attempt_timeout(Some(ms(50)))
        .build()
        .unwrap();
    let start = Instant::now();
    let r: Result<u8, Plain> = Retry::new(&p)
        .call(|| async {
            tokio::time::sleep(ms(500)).await;
            Ok(1)
        })
        .await;
    assert_eq!(r.unwrap(), 1);
    assert_eq!(start.elapsed(), ms(500));
}

#[tokio::test(start_paused = true)]
async fn a_longer_hint_replaces_the_computed_wait() {
    let p = fixed(100, 200, 3).build().unwrap();
    let (result, _, calls, took) = drive(&p, vec![TestError::Throttled(Some(ms(5_000)))]).await;
    assert_eq!((result, calls, took), (Ok(2), 2, ms(5_000)));
}

#[tokio::test(start_paused = true)]
async fn a_shorter_hint_never_shortens_the_computed_wait() {
    let p = fixed(100, 200, 3).build().unwrap();
    let (_, _, _, took) = drive(&p, vec![TestError::Throttled(Some(ms(1)))]).await;
    assert_eq!(took, ms(100));
}

#[tokio::test(start_paused = true)]
async fn hints_are_clamped_by_max_retry_after_not_by_cap() {
    let p = fixed(100, 200, 3)
        .max_retry_after(Some(ms(2_000)))
        .build()
        .unwrap();
    let hint = TestError::Throttled(Some(Duration::from_secs(365 * 86_400)));
    let (_, _, _, took) = drive(&p, vec![hint]).await;
    assert_eq!(took, ms(2_000));
}

#[tokio::test(start_paused = true)]
async fn a_hint_that_does_not_fit_the_deadline_ends_the_call_now() {
    let p = fixed(100, 200, 5)
        .deadline(Some(ms(1_000)))
        .build()
        .unwrap();
    let (result, report, calls, took) =
        drive(&p, vec![TestError::Throttled(Some(ms(30_000)))]).await;
    assert_eq!(result, Err(TestError::Throttled(Some(ms(30_000)))));
    assert_eq!(
        (calls, took, report.ending),
        (1, Duration::ZERO, Ending::Deadline)
    );
}

#[tokio::test(start_paused = true)]
async fn permanent_errors_end_after_one_call() {
    let p = fixed(10, 100, 5).build().unwrap();
    let (result, report, calls, _) = drive(&p, vec![TestError::Fatal]).await;
    assert_eq!(
        (result, calls, report.ending),
        (Err(TestError::Fatal), 1, Ending::Permanent)
    );
}

#[tokio::test(start_paused = true)]
async fn classes_outside_retry_on_end_after_one_call() {
    let p = fixed(10, 100, 5)
        .retry_on(["transient", "throttled"])
        .build()
        .unwrap();
    let (result, report, calls, _) = drive(&p, vec![TestError::Other]).await;
    assert_eq!(
        (result, calls, report.ending),
        (Err(TestError::Other), 1, Ending::NotRetryable)
    );
    let (result, _, calls, _) = drive(&p, vec![TestError::Throttled(None)]).await;
    assert_eq!((result, calls), (Ok(2), 2));
}

#[tokio::test(start_paused = true)]
async fn retry_if_narrows_and_hooks_see_every_retry_and_the_give_up() {
    let p = fixed(10, 100, 4).build().unwrap();
    let retries = Mutex::new(Vec::new());
    let gave_up = Mutex::new(None);
    let hooks = Hooks::new()
        .retry_if(|e: &TestError| *e != TestError::Other)
        .on_retry(|e: &RetryEvent<'_, TestError>| retries.lock().unwrap().push((e.attempt, e.wait)))
        .on_give_up(|e: &GiveUpEvent<'_, TestError>| {
            *gave_up.lock().unwrap() = Some((e.error.clone(), e.report.ending))
        });
    let errors = [TestError::Transient, TestError::Transient, TestError::Other];
    let calls = AtomicU32::new(0);
    let r: Result<(), TestError> = Retry::new(&p)
        .hooks(hooks)
        .call(|| {
            let e = errors[calls.fetch_add(1, Ordering::SeqCst) as usize].clone();
            async move { Err(e) }
        })
        .await;
    assert_eq!(r, Err(TestError::Other));
    assert_eq!(*retries.lock().unwrap(), [(1, ms(10)), (2, ms(20))]);
    assert_eq!(
        *gave_up.lock().unwrap(),
        Some((TestError::Other, Ending::NotRetryable))
    );
}

#[tokio::test(start_paused = true)]
async fn the_give_up_report_says_how_long_the_call_took() {
    // No deadline and no budget, so nothing in the policy needs the clock;
    // the report must still not claim the call took no time.
    let p = fixed(100, 1_000, 3).build().unwrap();
    let report = Mutex::new(None);
    let hooks = Hooks::new().on_give_up(|e: &GiveUpEvent<'_, TestError>| {
        *report.lock().unwrap() = Some(*e.report);
    });
    let start = Instant::now();
    let r: Result<(), TestError> = Retry::new(&p)
        .hooks(hooks)
        .call(|| async {
            tokio::time::sleep(ms(50)).await;
            Err(TestError::Transient)
        })
        .await;
    assert_eq!(r, Err(TestError::Transient));
    // Three 50 ms attempts and waits of 100 and 200 ms.
    assert_eq!(start.elapsed(), ms(450));
    let report = report.lock().unwrap().expect("the loop gave up");
    assert_eq!((report.ending, report.waited), (Ending::Exhausted, ms(300)));
    assert_eq!(report.elapsed, ms(450));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_stops_at_once() {
    let p = fixed(1_000, 1_000, 100).build().unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let task = tokio::spawn(async move {
        Retry::new(&p)
            .call(|| {
                c.fetch_add(1, Ordering::SeqCst);
                async { Err::<(), _>(TestError::Transient) }
            })
            .await
    });
    tokio::time::sleep(ms(2_500)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_shared_budget_refuses_retries_beyond_its_share() {
    let budget = Arc::new(
        RetryBudget::builder()
            .ratio(0.2)
            .min_per_sec(0.0)
            .window(Duration::from_secs(60))
            .build()
            .unwrap(),
    );
    let p = fixed(1, 1, 3).budget(Some(budget)).build().unwrap();
    let mut endings = Vec::new();
    let mut total_calls = 0;
    for _ in 0..10 {
        let (_, report, calls, _) = drive(&p, vec![TestError::Transient; 10]).await;
        endings.push(report.ending);
        total_calls += calls;
    }
    // 10 calls deposit 10 × 0.2 = 2 retries in all (the budget grows as
    // calls arrive: the 5th and the 10th call get one each). Every call then
    // asks for a retry the budget cannot give, and says so.
    let retries = total_calls - 10;
    assert_eq!(retries, 2, "{endings:?}");
    assert!(
        endings.iter().all(|e| *e == Ending::BudgetEmpty),
        "{endings:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn seeded_runs_repeat_exactly() {
    let p = Policy::builder()
        .base(ms(100))
        .cap(ms(5_000))
        .jitter(Jitter::Full)
        .max_attempts(6)
        .build()
        .unwrap();
    let mut totals = Vec::new();
    for seed in [9, 9, 10] {
        let (_, report) = Retry::new(&p)
            .seed(seed)
            .call_with_report(|| async { Err::<(), _>(TestError::Transient) })
            .await;
        totals.push(report.waited);
    }
    assert_eq!(totals[0], totals[1]);
    assert_ne!(totals[0], totals[2]);
}

#[test]
fn the_retry_future_is_send_when_the_operation_is() {
    fn assert_send<T: Send>(_: &T) {}
    let p = Policy::default();
    let fut = Retry::new(&p).call(|| async { Ok::<_, TestError>(()) });
    assert_send(&fut);
    let fut = Retry::new(&p)
        .hooks(Hooks::new().on_retry(|_: &RetryEvent<'_, TestError>| {}))
        .call_with_report(|| async { Ok::<_, TestError>(()) });
    assert_send(&fut);
}

#[test]
fn the_blocking_loop_follows_the_same_rules() {
    let p = fixed(0, 0, 4).build().unwrap();
    let mut calls = 0;
    let (r, report) = Retry::blocking(&p).call_blocking_with_report(|| {
        calls += 1;
        if calls < 3 {
            Err::<(), _>(TestError::Transient)
        } else {
            Err(TestError::Fatal)
        }
    });
    assert_eq!(r, Err(TestError::Fatal));
    assert_eq!((calls, report.ending), (3, Ending::Permanent));
}

/// An attempt's timeout counts from the attempt's start, but is armed (its
/// sleep made) only when the attempt first returns `Pending`, for what is
/// left of it: an attempt ready at once makes no sleep, as
/// `tokio::time::timeout` registers no timer for a future ready at once.
#[test]
fn an_attempt_timeout_is_armed_at_the_first_pending_for_what_is_left() {
    use std::cell::{Cell, RefCell};
    use std::task::{Context, Poll, Waker};
    /// Each reading one second after the last.
    struct Leaping(Cell<std::time::Instant>);
    impl retrykit_core::clock::Clock for Leaping {
        fn now(&self) -> std::time::Instant {
            self.0.set(self.0.get() + Duration::from_secs(1));
            self.0.get()
        }
    }
    /// Records each sleep asked for; none ever ends.
    struct Recording<'a>(&'a RefCell<Vec<Duration>>);
    impl retrykit_core::clock::Sleeper for Recording<'_> {
        type Sleep = std::future::Pending<()>;
        fn sleep(&self, d: Duration) -> Self::Sleep {
            self.0.borrow_mut().push(d);
            std::future::pending()
        }
    }
    let policy = fixed(0, 0, 3)
        .attempt_timeout(Some(Duration::from_secs(5)))
        .build()
        .unwrap();
    let sleeps = RefCell::new(Vec::new());
    let call = |pending_polls: u32| {
        let retry = Retry::new(&policy)
            .clock(Leaping(Cell::new(std::time::Instant::now())))
            .sleeper(Recording(&sleeps));
        let mut polls = 0;
        let mut fut = std::pin::pin!(retry.call(move || {
            std::future::poll_fn(move |_| {
                polls += 1;
                match polls > pending_polls {
                    true => Poll::Ready(Ok::<_, TestError>(polls)),
                    false => Poll::Pending,
                }
            })
        }));
        let mut cx = Context::from_waker(Waker::noop());
        (0..=pending_polls).fold(Poll::Pending, |_, _| fut.as_mut().poll(&mut cx))
    };
    assert_eq!(call(0), Poll::Ready(Ok(1)));
    assert_eq!(
        *sleeps.borrow(),
        [],
        "an attempt ready at once makes no sleep"
    );
    assert_eq!(call(2), Poll::Ready(Ok(3)));
    assert_eq!(
        *sleeps.borrow(),
        [Duration::from_secs(4)],
        "armed once, at the first Pending, one second (one clock reading) into the attempt"
    );
}
