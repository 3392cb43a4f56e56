//! One test per rule of the hedging decision (`next_hedge`).

use super::*;
use crate::budget::RetryBudget;
use crate::class::Class;
use crate::hedge::{HedgeAfter, HedgeSettings};
use crate::kernel::Failure;
use crate::policy::Policy;
use std::sync::Arc;

const MS: Duration = Duration::from_millis(1);

fn fixed(ms: u64) -> HedgeSettings {
    HedgeSettings::new(HedgeAfter::Fixed(MS * ms as u32))
}

fn policy(max_attempts: u32, deadline: Option<Duration>) -> Policy {
    Policy::builder()
        .hedge(Some(fixed(10)))
        .max_attempts(max_attempts)
        .deadline(deadline)
        .build()
        .unwrap()
}

fn view(started: u32, in_flight: u32, since_last_ms: u64) -> HedgeView {
    HedgeView {
        started,
        in_flight,
        failed_since_last_start: false,
        pushback: false,
        elapsed: MS * (since_last_ms as u32 + 10 * (started - 1)),
        since_last_start: MS * since_last_ms as u32,
        delay: MS * 10,
    }
}

fn never() -> Admission {
    panic!("admit asked when no hedge is due")
}

#[test]
fn hedges_start_hedge_after_apart_while_nothing_finished() {
    let p = policy(3, None);
    assert_eq!(
        next_hedge(&p, &view(1, 1, 0), never),
        HedgeStep::Wait(MS * 10)
    );
    assert_eq!(next_hedge(&p, &view(1, 1, 9), never), HedgeStep::Wait(MS));
    assert_eq!(
        next_hedge(&p, &view(1, 1, 10), || Admission::Admitted),
        HedgeStep::Start
    );
    assert_eq!(
        next_hedge(&p, &view(2, 2, 3), never),
        HedgeStep::Wait(MS * 7)
    );
}

#[test]
fn a_non_fatal_failure_makes_the_next_hedge_due_at_once() {
    let p = policy(3, None);
    let mut v = view(1, 0, 2);
    assert_eq!(next_hedge(&p, &v, || Admission::Admitted), HedgeStep::Start);
    v = view(2, 1, 2);
    v.failed_since_last_start = true;
    assert_eq!(next_hedge(&p, &v, || Admission::Admitted), HedgeStep::Start);
}

#[test]
fn hedges_count_against_max_attempts() {
    let p = policy(3, None);
    assert_eq!(
        next_hedge(&p, &view(3, 3, 50), never),
        HedgeStep::Stop(HedgeStop::Attempts)
    );
}

#[test]
fn a_hedge_due_at_or_past_the_deadline_is_not_sent() {
    let p = policy(3, Some(MS * 15));
    // Due at 10 ms: sent. Due at 20 ms, past 15 ms: stop.
    assert_eq!(
        next_hedge(&p, &view(1, 1, 10), || Admission::Admitted),
        HedgeStep::Start
    );
    assert_eq!(
        next_hedge(&p, &view(2, 2, 0), never),
        HedgeStep::Stop(HedgeStop::Deadline)
    );
}

#[test]
fn a_refusing_budget_or_cap_stops_hedging() {
    let p = policy(3, None);
    let v = view(1, 1, 10);
    assert_eq!(
        next_hedge(&p, &v, || Admission::BudgetEmpty),
        HedgeStep::Stop(HedgeStop::BudgetEmpty)
    );
    assert_eq!(
        next_hedge(&p, &v, || Admission::CapSpent),
        HedgeStep::Stop(HedgeStop::CapSpent)
    );
    assert_eq!(HedgeStop::BudgetEmpty.ending(), crate::Ending::BudgetEmpty);
}

#[test]
fn server_pushback_stops_further_hedges() {
    let p = policy(3, None);
    let mut v = view(1, 1, 10);
    v.pushback = true;
    v.failed_since_last_start = true;
    assert_eq!(
        next_hedge(&p, &v, never),
        HedgeStep::Stop(HedgeStop::Pushback)
    );
}

#[test]
fn a_policy_without_hedging_sends_none() {
    let p = Policy::default();
    assert_eq!(
        next_hedge(&p, &view(1, 1, 999), never),
        HedgeStep::Stop(HedgeStop::NotHedging)
    );
}

#[test]
fn fatal_is_what_a_retry_would_not_follow() {
    let p = Policy::builder()
        .hedge(Some(fixed(5)))
        .retry_on(["throttled"])
        .build()
        .unwrap();
    let f = |class, allowed| Failure {
        class,
        hint: None,
        allowed,
    };
    assert!(is_fatal(&p, f(Class::Permanent, true)));
    assert!(is_fatal(&p, f(Class::TRANSIENT, true)), "outside retry_on");
    assert!(
        is_fatal(&p, f(Class::THROTTLED, false)),
        "the site's predicate said no"
    );
    assert!(!is_fatal(&p, f(Class::THROTTLED, true)));
    assert!(
        !is_fatal(&p, f(Class::TIMEOUT, true)),
        "a timed-out attempt is never fatal"
    );
}

#[test]
fn the_cap_holds_hedges_under_the_share_of_calls() {
    let p = Policy::builder().hedge(Some(fixed(5))).build().unwrap();
    let now = Instant::now();
    let mut admitted = 0;
    for _ in 0..1000 {
        let mut d = crate::kernel::Decider::new(Some(1));
        d.begin_attempt(&p, now); // counts the call in the cap
        if p.admit_hedge(now) == Admission::Admitted {
            admitted += 1;
        }
    }
    assert_eq!(admitted, 100);
}

#[test]
fn hedges_take_from_the_retry_budget_too() {
    let budget = Arc::new(
        RetryBudget::builder()
            .ratio(0.0)
            .min_per_sec(0.1)
            .window(Duration::from_secs(10))
            .build()
            .unwrap(),
    );
    let mut settings = fixed(5);
    settings.share = 1.0;
    let p = Policy::builder()
        .hedge(Some(settings))
        .budget(Some(budget.clone()))
        .build()
        .unwrap();
    let now = Instant::now();
    for _ in 0..10 {
        p.hedging().unwrap().count_call(now);
    }
    assert_eq!(p.admit_hedge(now), Admission::Admitted); // the budget's one retry
    assert_eq!(p.admit_hedge(now), Admission::BudgetEmpty);
    assert_eq!(budget.totals(now).1, 1);
}
