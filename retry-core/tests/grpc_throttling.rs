//! gRFC A6's retry throttling (`RetryBudget::grpc_throttling`) is fed by the
//! one loop, whatever the entry point: `Retry::call` here, as the tower
//! layer's gRPC mode, `#[retry]` and the HTTP layers. A failure the policy
//! would retry drains a token, a success fills `token_ratio`, and retries
//! stop while half the tokens or fewer are left.

use retrykit_core::{Ending, Policy, Report, Retry, RetryBudget};
use std::sync::Arc;
use std::time::Duration;

fn failing(kind: std::io::ErrorKind) -> std::io::Result<u8> {
    Err(kind.into())
}

#[tokio::test(start_paused = true)]
async fn retry_call_drains_and_fills_a_grpc_throttling_bucket() {
    // maxTokens 4, tokenRatio 1: retries while more than 2 tokens are left.
    let budget = Arc::new(RetryBudget::grpc_throttling(4.0, 1.0).unwrap());
    let tokens = || budget.throttling().unwrap().tokens();
    let policy = Policy::builder()
        .max_attempts(10)
        .base(Duration::from_millis(10))
        .budget(Some(Arc::clone(&budget)))
        .build()
        .unwrap();
    let call = |kind| {
        let policy = &policy;
        async move {
            let (out, report): (_, Report) = Retry::new(policy)
                .call_with_report(|| async move { failing(kind) })
                .await;
            (out.is_err(), report.ending, report.attempts)
        }
    };
    // 4 -> 3 (a retry is allowed) -> 2 (not more than half: no retry).
    let reset = std::io::ErrorKind::ConnectionReset;
    assert_eq!(call(reset).await, (true, Ending::BudgetEmpty, 2));
    assert_eq!(tokens(), 2.0);
    // A failure the policy would not retry leaves the bucket alone.
    let denied = std::io::ErrorKind::PermissionDenied;
    assert_eq!(call(denied).await.1, Ending::Permanent);
    assert_eq!(tokens(), 2.0);
    // Successes fill it back, up to max_tokens; then retries resume.
    for _ in 0..3 {
        let out: std::io::Result<u8> = Retry::new(&policy).call(|| async { Ok(1) }).await;
        assert_eq!(out.unwrap(), 1);
    }
    assert_eq!(tokens(), 4.0);
    let mut failures = 1;
    let out: std::io::Result<u8> = Retry::new(&policy)
        .call(|| {
            failures -= 1;
            let fail = failures >= 0;
            async move { if fail { failing(reset) } else { Ok(2) } }
        })
        .await;
    assert_eq!(out.unwrap(), 2);
    assert_eq!(tokens(), 4.0, "one failure (-1) and one success (+1)");
}

/// Hedging, as grpc-java's `RetriableStream` counts it for A6: each
/// attempt of a hedged call that fails with a non-fatal code drains a
/// token, the first attempt included; a fatal one does not. The call's
/// success fills `token_ratio` once.
#[tokio::test(start_paused = true)]
async fn each_failed_hedge_drains_a_token_and_a_success_fills_once() {
    use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
    let budget = Arc::new(RetryBudget::grpc_throttling(100.0, 1.0).unwrap());
    let tokens = || budget.throttling().unwrap().tokens();
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(10)));
    hedge.share = 2.0;
    let policy = Policy::builder()
        .max_attempts(3)
        .hedge(Some(hedge))
        .budget(Some(Arc::clone(&budget)))
        .build()
        .unwrap();
    // Three attempts, 10 ms apart, each failing after 25 ms: all non-fatal.
    let (out, report): (std::io::Result<u8>, Report) = Retry::new(&policy)
        .call_with_report(|| async {
            tokio::time::sleep(Duration::from_millis(25)).await;
            failing(std::io::ErrorKind::ConnectionReset)
        })
        .await;
    assert!(out.is_err());
    assert_eq!((report.attempts, report.hedges), (3, 2), "{report:?}");
    assert_eq!(tokens(), 97.0, "one token per failed attempt");
    // A fatal failure ends the round and drains nothing.
    let (out, _) = Retry::new(&policy)
        .call_with_report(|| async { failing(std::io::ErrorKind::PermissionDenied) })
        .await;
    assert!(out.is_err());
    assert_eq!(tokens(), 97.0);
    // Two hedges fail, the third attempt succeeds: -2 then +1.
    let n = std::sync::atomic::AtomicU32::new(0);
    let out: std::io::Result<u8> = Retry::new(&policy)
        .call(|| {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move {
                tokio::time::sleep(Duration::from_millis(25)).await;
                if i < 2 {
                    failing(std::io::ErrorKind::ConnectionReset)
                } else {
                    Ok(7)
                }
            }
        })
        .await;
    assert_eq!(out.unwrap(), 7);
    assert_eq!(tokens(), 96.0);
}

/// A server's hint on a failure the policy does not retry drains nothing:
/// grpc-go reads the code before it counts (`shouldRetry`).
#[tokio::test(start_paused = true)]
async fn a_hint_on_a_failure_not_retried_drains_nothing() {
    #[derive(Debug)]
    struct Refused;
    impl retrykit_core::Classify for Refused {
        fn class(&self) -> retrykit_core::Class {
            retrykit_core::Class::Permanent
        }
        fn retry_after(&self) -> Option<Duration> {
            Some(Duration::from_millis(100))
        }
    }
    let budget = Arc::new(RetryBudget::grpc_throttling(10.0, 1.0).unwrap());
    let policy = Policy::builder()
        .budget(Some(Arc::clone(&budget)))
        .build()
        .unwrap();
    let (out, report) = Retry::new(&policy)
        .call_with_report(|| async { Err::<u8, _>(Refused) })
        .await;
    assert!(out.is_err());
    assert_eq!(report.ending, Ending::Permanent);
    assert_eq!(budget.throttling().unwrap().tokens(), 10.0);
}
