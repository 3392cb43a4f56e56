//! Adaptive budgets (client-side rate limiting) in the retry loop, on
//! tokio's paused clock: a throttled service slows every caller sharing the
//! budget to the limiter's fill rate, successes restore the rate, a window
//! budget and an adaptive one both apply, and a pacing wait past the
//! deadline ends the call.

use retrykit_core::{AttemptTimeout, Class, Classify, Ending, Jitter, Policy, Retry, RetryBudget};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, PartialEq)]
enum ServiceError {
    Throttled,
    Unavailable,
}

impl Classify for ServiceError {
    fn class(&self) -> Class {
        match self {
            ServiceError::Throttled => Class::THROTTLED,
            ServiceError::Unavailable => Class::TRANSIENT,
        }
    }
    fn from_timeout(_: AttemptTimeout) -> Option<Self> {
        None
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn policy(attempts: u32, budgets: Vec<Arc<RetryBudget>>) -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .base(ms(1))
        .cap(ms(1))
        .jitter(Jitter::None)
        .max_attempts(attempts)
        .budgets(budgets)
}

/// A service that answers in 10 ms and throttles every call while
/// `throttling` is set; it logs when each attempt reached it.
#[derive(Clone, Default)]
struct Service {
    throttling: Arc<AtomicBool>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Service {
    async fn call(&self) -> Result<(), ServiceError> {
        self.arrivals.lock().unwrap().push(Instant::now());
        tokio::time::sleep(ms(10)).await;
        if self.throttling.load(Ordering::SeqCst) {
            Err(ServiceError::Throttled)
        } else {
            Ok(())
        }
    }

    /// Attempts that arrived in `[from, to)` after `start`.
    fn arrivals_between(&self, start: Instant, from: Duration, to: Duration) -> usize {
        let arrivals = self.arrivals.lock().unwrap();
        arrivals
            .iter()
            .filter(|t| (start + from..start + to).contains(*t))
            .count()
    }
}

/// Ten callers, each making one call after another (one attempt each, so
/// every attempt is a first attempt) under `policy`, for `run`.
async fn ten_callers(policy: Policy, service: &Service, run: Duration) {
    let policy = Arc::new(policy);
    let end = Instant::now() + run;
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let (policy, service) = (policy.clone(), service.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let _ = Retry::new(&policy).call(|| service.call()).await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_throttled_service_slows_callers_to_the_fill_rate_and_success_restores_it() {
    let budget = Arc::new(RetryBudget::adaptive());
    let limiter_budget = budget.clone();
    let service = Service::default();
    service.throttling.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let recovery = {
        let service = service.clone();
        tokio::spawn(async move {
            tokio::time::sleep(secs(10)).await;
            let fill_rate_throttled = limiter_budget.limiter().unwrap().fill_rate();
            service.throttling.store(false, Ordering::SeqCst);
            tokio::time::sleep(secs(20)).await;
            (
                fill_rate_throttled,
                limiter_budget.limiter().unwrap().fill_rate(),
            )
        })
    };
    ten_callers(policy(1, vec![budget]).build().unwrap(), &service, secs(30)).await;
    let (throttled_rate, restored_rate) = recovery.await.unwrap();

    // While throttled the limiter is at its floor (0.5 tokens/s) and each
    // attempt takes a token: from 2 s on, 8 s hold at most 4 tokens plus the
    // bucket (at most one token). Unpaced, ten callers would send ~8,000.
    assert_eq!(throttled_rate, 0.5);
    let throttled = service.arrivals_between(start, secs(2), secs(10));
    assert!(
        (3..=5).contains(&throttled),
        "{throttled} attempts in 8 s at 0.5/s"
    );

    // After the service recovers, successes grow the fill rate back along
    // the CUBIC curve, and the callers' rate follows it.
    assert!(restored_rate > 100.0, "fill rate {restored_rate}");
    let restored = service.arrivals_between(start, secs(29), secs(30));
    assert!(
        restored >= 900,
        "{restored} attempts in the last second (demand: 1,000)"
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_adaptive_budget_callers_are_not_slowed() {
    // The control for the test above: the same callers and service.
    let service = Service::default();
    service.throttling.store(true, Ordering::SeqCst);
    let start = Instant::now();
    ten_callers(policy(1, Vec::new()).build().unwrap(), &service, secs(3)).await;
    let unpaced = service.arrivals_between(start, secs(2), secs(3));
    assert!(unpaced >= 900, "{unpaced}");
}

#[tokio::test(start_paused = true)]
async fn a_window_budget_and_an_adaptive_budget_both_apply() {
    // The window allows one retry per minute; the adaptive budget makes
    // each retry after a throttle wait for its 10 tokens at 0.5 per second.
    let window = RetryBudget::builder()
        .ratio(0.0)
        .min_per_sec(1.0 / 60.0)
        .window(secs(60))
        .build()
        .unwrap();
    let budgets = vec![Arc::new(window), Arc::new(RetryBudget::adaptive())];
    let p = policy(5, budgets).build().unwrap();
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let (result, report) = Retry::new(&p)
        .call_with_report(|| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>(ServiceError::Throttled) }
        })
        .await;
    assert_eq!(result, Err(ServiceError::Throttled));
    // The adaptive budget paced the one retry: 10 tokens at 0.5/s, not 1 ms.
    assert_eq!(report.waited, secs(20));
    assert_eq!(started.elapsed(), secs(20));
    // The window budget refused the second retry.
    assert_eq!((report.ending, report.attempts), (Ending::BudgetEmpty, 2));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_pacing_wait_past_the_deadline_ends_the_call_as_rate_limited() {
    let p = policy(5, vec![Arc::new(RetryBudget::adaptive())])
        .deadline(Some(secs(5)))
        .build()
        .unwrap();
    let started = Instant::now();
    let (result, report) = Retry::new(&p)
        .call_with_report(|| async { Err::<(), _>(ServiceError::Throttled) })
        .await;
    assert_eq!(result, Err(ServiceError::Throttled));
    assert_eq!((report.ending, report.attempts), (Ending::RateLimited, 1));
    assert_eq!(report.ending.as_str(), "rate_limited");
    assert_eq!(started.elapsed(), Duration::ZERO, "no wait was begun");
}

#[tokio::test(start_paused = true)]
async fn first_attempts_wait_for_the_limiter_too() {
    let budget = Arc::new(RetryBudget::adaptive());
    let p = policy(1, vec![budget.clone()]).build().unwrap();
    // One throttle: the bucket is empty and fills at 0.5 tokens per second.
    let _ = Retry::new(&p)
        .call(|| async { Err::<(), _>(ServiceError::Throttled) })
        .await;
    let sent = Mutex::new(Vec::new());
    let started = Instant::now();
    for _ in 0..3 {
        Retry::new(&p)
            .call(|| {
                sent.lock().unwrap().push(started.elapsed());
                async { Ok::<_, ServiceError>(()) }
            })
            .await
            .unwrap();
    }
    // A first attempt takes 1 token: the first waits 2 s at 0.5 tokens/s;
    // each success then lifts the fill rate, so the gaps shrink.
    let sent = sent.into_inner().unwrap();
    assert_eq!(sent[0], secs(2), "{sent:?}");
    let gaps = [sent[1] - sent[0], sent[2] - sent[1]];
    assert!(gaps[0] > Duration::ZERO && gaps[0] < secs(2), "{sent:?}");
    assert!(gaps[1] < gaps[0], "{sent:?}");
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_whose_wait_would_reach_the_deadline_goes_at_once() {
    let budget = Arc::new(RetryBudget::adaptive());
    budget
        .limiter()
        .unwrap()
        .record(Instant::now().into_std(), true);
    let p = policy(1, vec![budget])
        .deadline(Some(secs(1)))
        .build()
        .unwrap();
    let started = Instant::now();
    // The limiter asks for 2 s, past the 1 s deadline: there is no error to
    // end the call with yet, so the attempt is sent (and a warning given).
    let (result, report) = Retry::new(&p)
        .call_with_report(|| async { Ok::<_, ServiceError>(7) })
        .await;
    assert_eq!(result, Ok(7));
    assert_eq!((report.ending, report.attempts), (Ending::Success, 1));
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn other_failures_do_not_slow_callers() {
    let budget = Arc::new(RetryBudget::adaptive());
    let p = policy(3, vec![budget.clone()]).build().unwrap();
    let started = Instant::now();
    let (_, report) = Retry::new(&p)
        .call_with_report(|| async { Err::<(), _>(ServiceError::Unavailable) })
        .await;
    assert_eq!((report.ending, report.attempts), (Ending::Exhausted, 3));
    assert_eq!(started.elapsed(), ms(2), "only the backoff");
    assert!(!budget.limiter().unwrap().is_limiting());
}

#[test]
fn blocking_calls_are_paced_too() {
    let budget = Arc::new(RetryBudget::adaptive());
    let p = Policy::builder()
        .base(Duration::from_micros(1))
        .cap(Duration::from_micros(1))
        .jitter(Jitter::None)
        .max_attempts(2)
        .budgets([budget.clone()])
        .deadline(Some(ms(500)))
        .build()
        .unwrap();
    // The retry after a throttle would wait 20 s: past the deadline.
    let (result, report) =
        Retry::blocking(&p).call_blocking_with_report(|| Err::<(), _>(ServiceError::Throttled));
    assert!(result.is_err());
    assert_eq!(report.ending, Ending::RateLimited);
    assert!(report.elapsed < ms(400), "{:?}", report.elapsed);
}
