//! A retryable failure of a request the call site says cannot be sent again
//! ends the call with that reason, after one attempt; the error's class
//! still comes first.

use retrykit_core::hooks::{HookSet, Unrepeatable};
use retrykit_core::{Class, Classify, Ending, Policy, Retry};
use std::cell::Cell;

#[derive(Debug)]
struct Failed(Class);

impl Classify for Failed {
    fn class(&self) -> Class {
        self.0
    }
}

/// A call site whose request cannot be repeated for `why`.
struct Request {
    why: Option<Unrepeatable>,
}

impl HookSet<Failed> for Request {
    fn unrepeatable(&self) -> Option<Unrepeatable> {
        self.why
    }
}

async fn run(policy: &Policy, class: Class, why: Option<Unrepeatable>) -> (u32, Ending) {
    let calls = Cell::new(0);
    let (result, report) = Retry::new(policy)
        .seed(1)
        .hooks(Request { why })
        .call_with_report(|| {
            calls.set(calls.get() + 1);
            async move { Err::<(), _>(Failed(class)) }
        })
        .await;
    assert!(result.is_err());
    assert_eq!(report.attempts, calls.get());
    (calls.get(), report.ending)
}

#[tokio::test(start_paused = true)]
async fn a_retryable_failure_that_cannot_be_repeated_ends_with_the_reason() {
    let policy = Policy::builder().max_attempts(4).build().unwrap();
    let body = Some(Unrepeatable::BodyNotReplayable);
    let method = Some(Unrepeatable::NotIdempotent);
    assert_eq!(
        run(&policy, Class::TRANSIENT, body).await,
        (1, Ending::BodyNotReplayable)
    );
    assert_eq!(
        run(&policy, Class::THROTTLED, method).await,
        (1, Ending::NotIdempotent)
    );
    assert_eq!(
        run(&policy, Class::TIMEOUT, method).await,
        (1, Ending::NotIdempotent)
    );
    assert_eq!(
        run(&policy, Class::TRANSIENT, None).await,
        (4, Ending::Exhausted)
    );
}

#[tokio::test(start_paused = true)]
async fn the_class_is_judged_before_the_request() {
    let policy = Policy::builder().retry_on(["throttled"]).build().unwrap();
    let body = Some(Unrepeatable::BodyNotReplayable);
    assert_eq!(
        run(&policy, Class::Permanent, body).await,
        (1, Ending::Permanent)
    );
    assert_eq!(
        run(&policy, Class::TRANSIENT, body).await,
        (1, Ending::NotRetryable)
    );
}
