//! Hedged calls through `Retry::call` (gRPC A6's rules, on tokio's paused
//! clock): a slow first attempt is overtaken by a hedge, a fatal error ends
//! the race, a non-fatal failure starts the next hedge at once, pushback
//! stops hedging, and the attempt limit counts hedges.

use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::{Class, Classify, Ending, Policy, Retry};
use std::cell::RefCell;
use std::time::Duration;
use tokio::time::{Instant, sleep};

mod support;

#[derive(Debug, Clone, PartialEq)]
enum Fault {
    Busy,
    Gone,
    Pushback(Duration),
}

impl Classify for Fault {
    fn class(&self) -> Class {
        match self {
            Fault::Gone => Class::Permanent,
            _ => Class::TRANSIENT,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::Pushback(d) => Some(*d),
            _ => None,
        }
    }
}

/// [`support::hedging`] with fixed 100 ms waits after a failure.
fn hedging(after_ms: u64, max_attempts: u32) -> Policy {
    support::hedging(after_ms, max_attempts)
        .base(Duration::from_millis(100))
        .jitter(retrykit_core::Jitter::None)
        .build()
        .unwrap()
}

/// Runs a call whose attempt `n` (1-based) takes `script[n-1]`'s time and
/// gives its result; returns the result, the report, when it ended (ms) and
/// when each attempt began (ms).
async fn run(
    policy: &Policy,
    script: &[(u64, Result<u32, Fault>)],
) -> (Result<u32, Fault>, retrykit_core::Report, u64, Vec<u64>) {
    let start = Instant::now();
    let began = RefCell::new(Vec::new());
    let (result, report) = Retry::new(policy)
        .call_with_report(|| {
            let n = began.borrow().len();
            began.borrow_mut().push(start.elapsed().as_millis() as u64);
            let (ms, outcome) = script[n.min(script.len() - 1)].clone();
            async move {
                sleep(Duration::from_millis(ms)).await;
                outcome
            }
        })
        .await;
    let ended = start.elapsed().as_millis() as u64;
    (result, report, ended, began.into_inner())
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_attempt_is_overtaken_by_a_hedge() {
    let policy = hedging(20, 3);
    let (result, report, ended, began) = run(&policy, &[(1000, Ok(1)), (5, Ok(2))]).await;
    assert_eq!(result, Ok(2));
    assert_eq!(began, vec![0, 20]);
    assert_eq!(ended, 25, "the hedge's answer, not the first attempt's");
    assert_eq!((report.attempts, report.hedges, report.winner), (2, 1, 2));
    assert_eq!(report.ending, Ending::Success);
}

/// Calls that answer at once, each adding `share` of a hedge to the
/// policy's cap (hedges are at most `hedge_share` × calls).
async fn warm_up(policy: &Policy, calls: usize) {
    for _ in 0..calls {
        assert_eq!(run(policy, &[(1, Ok(0))]).await.1.hedges, 0);
    }
}

#[tokio::test(start_paused = true)]
async fn hedges_start_hedge_after_apart_up_to_the_attempt_limit() {
    let policy = hedging(20, 3);
    warm_up(&policy, 2).await;
    let (result, report, ended, began) =
        run(&policy, &[(1000, Ok(1)), (1000, Ok(2)), (1000, Ok(3))]).await;
    assert_eq!(began, vec![0, 20, 40], "max_attempts counts hedges");
    assert_eq!((result, ended), (Ok(1), 1000), "the first to answer wins");
    assert_eq!((report.attempts, report.hedges, report.winner), (3, 2, 1));
}

#[tokio::test(start_paused = true)]
async fn a_fatal_error_ends_the_race_and_cancels_the_rest() {
    let policy = hedging(20, 3);
    let (result, report, ended, began) =
        run(&policy, &[(1000, Ok(1)), (5, Err(Fault::Gone))]).await;
    assert_eq!((result, ended), (Err(Fault::Gone), 25));
    assert_eq!(began, vec![0, 20]);
    assert_eq!((report.ending, report.winner), (Ending::Permanent, 2));
}

#[tokio::test(start_paused = true)]
async fn a_non_fatal_failure_starts_the_next_hedge_at_once() {
    let policy = hedging(20, 3);
    warm_up(&policy, 2).await;
    let (result, _, ended, began) =
        run(&policy, &[(1000, Ok(1)), (5, Err(Fault::Busy)), (5, Ok(3))]).await;
    assert_eq!(
        began,
        vec![0, 20, 25],
        "the third starts as the second fails"
    );
    assert_eq!((result, ended), (Ok(3), 30));
}

#[tokio::test(start_paused = true)]
async fn pushback_stops_further_hedges() {
    let policy = hedging(20, 4);
    warm_up(&policy, 3).await;
    let pushback = Fault::Pushback(Duration::from_millis(500));
    let (result, _, ended, began) =
        run(&policy, &[(1000, Ok(1)), (5, Err(pushback)), (5, Ok(3))]).await;
    assert_eq!(began, vec![0, 20], "no hedge after the server pushed back");
    assert_eq!(
        (result, ended),
        (Ok(1), 1000),
        "the attempt in flight runs on"
    );
}

#[tokio::test(start_paused = true)]
async fn when_every_attempt_fails_the_call_gives_up_with_the_last_failure() {
    let policy = hedging(20, 2);
    let (result, report, ended, began) =
        run(&policy, &[(30, Err(Fault::Busy)), (30, Err(Fault::Busy))]).await;
    assert_eq!(began, vec![0, 20]);
    assert_eq!((result, ended), (Err(Fault::Busy), 50));
    assert_eq!(
        (report.ending, report.attempts, report.hedges),
        (Ending::Exhausted, 2, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn a_fast_call_sends_no_hedge() {
    let policy = hedging(20, 3);
    let (result, report, ended, began) = run(&policy, &[(5, Ok(1))]).await;
    assert_eq!((result, ended, began), (Ok(1), 5, vec![0]));
    assert_eq!((report.attempts, report.hedges, report.winner), (1, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn a_spent_cap_stops_hedging_never_the_call() {
    let mut settings = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(20)));
    settings.share = 0.5;
    let policy = Policy::builder()
        .hedge(Some(settings))
        .max_attempts(3)
        .build()
        .unwrap();
    // A brown-out: every call is slow. Half a hedge per call at most.
    let mut hedges = 0;
    for _ in 0..10 {
        let (result, report, ended, _) = run(&policy, &[(1000, Ok(1)), (1000, Ok(2))]).await;
        assert_eq!((result, ended), (Ok(1), 1000), "the call still ends");
        hedges += report.hedges;
    }
    assert_eq!(hedges, 5, "hedges stay within hedge_share of calls");
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_is_counted_in_the_policy_budget_that_pays_for_its_hedges() {
    // Hedges take from the retry budget, which only calls fill: the first
    // call must be counted in it, or its hedge would find it empty.
    let budget = retrykit_core::RetryBudget::builder()
        .ratio(1.0)
        .min_per_sec(0.0)
        .build()
        .unwrap();
    let policy = support::hedging(20, 2)
        .budget(Some(std::sync::Arc::new(budget)))
        .build()
        .unwrap();
    let (result, report, ended, began) = run(&policy, &[(1000, Ok(1)), (5, Ok(2))]).await;
    assert_eq!(began, vec![0, 20], "the hedge was paid for");
    assert_eq!((result, ended, report.hedges), (Ok(2), 25, 1));
}
