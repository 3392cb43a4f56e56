//! The exact schedules of a classic backoff library, reproduced through the
//! stateful oracle (no jitter, so every figure is exact).

use retrykit_core::{Backoff, Ending, Jitter, Oracle, OracleState, Policy, Verdict};
use std::time::{Duration, SystemTime};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + ms(n)
}

fn exponential(base: u64, cap: u64) -> Policy {
    Policy::builder()
        .backoff(Backoff::Exponential { factor: 2.0 })
        .base(ms(base))
        .cap(ms(cap))
        .jitter(Jitter::None)
        .max_attempts(1000)
        .build()
        .unwrap()
}

#[test]
fn ten_failures_then_three_successes() {
    let policy = exponential(1, 200);
    let mut oracle = Oracle::new(&policy);
    let waits: Vec<u64> = (0..10)
        .map(|_| oracle.failure(at(0)).wait().unwrap().as_millis() as u64)
        .collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 200, 200]);
    let after_success: Vec<Duration> = (0..3).map(|_| oracle.success(at(0))).collect();
    assert_eq!(after_success, [Duration::ZERO; 3]);
    // The count was reset: the next failure starts at the smallest wait again.
    assert_eq!(oracle.failure(at(0)), Verdict::Wait(ms(1)));
}

#[test]
fn initial_five_cap_one_hundred() {
    let policy = exponential(5, 100);
    let mut oracle = Oracle::new(&policy);
    let waits: Vec<u64> = (0..6)
        .map(|_| oracle.failure(at(0)).wait().unwrap().as_millis() as u64)
        .collect();
    assert_eq!(waits, [5, 10, 20, 40, 80, 100]);
}

#[test]
fn the_deadline_gives_up_when_the_next_wait_would_reach_it() {
    // The loop's boundary: a wait that would end at or past the deadline is
    // not started. With a 22 ms deadline, 3 + 6 + 12 = 21 fits, the next does not.
    let policy = exponential(3, 1_000_000)
        .to_builder()
        .deadline(Some(ms(22)))
        .build()
        .unwrap();
    let mut oracle = Oracle::new(&policy);
    let mut now = 0;
    let mut waits = Vec::new();
    // Each failure is reported exactly when the oracle said to retry.
    while let Verdict::Wait(w) = oracle.failure(at(now)) {
        waits.push(w.as_millis() as u64);
        now += w.as_millis() as u64;
        assert!(waits.len() < 10, "the limit never ended the schedule");
    }
    assert_eq!(waits, [3, 6, 12]);
    assert_eq!(now, 21);
    assert_eq!(oracle.failure(at(now)), Verdict::GiveUp(Ending::Deadline));

    // Ending exactly at the deadline is reaching it: 21 ms gives up after 3 + 6.
    let exact = policy.to_builder().deadline(Some(ms(21))).build().unwrap();
    let mut oracle = Oracle::new(&exact);
    assert_eq!(oracle.failure(at(0)), Verdict::Wait(ms(3)));
    assert_eq!(oracle.failure(at(3)), Verdict::Wait(ms(6)));
    assert_eq!(oracle.failure(at(9)), Verdict::GiveUp(Ending::Deadline));
}

#[test]
fn consider_actual_delay_credits_time_already_waited() {
    let policy = Policy::builder()
        .backoff(Backoff::Constant)
        .base(ms(2))
        .cap(ms(2))
        .jitter(Jitter::None)
        .max_attempts(1000)
        .build()
        .unwrap();
    let fresh = || {
        let mut o = Oracle::new(&policy).consider_actual_delay(true);
        assert_eq!(o.failure(at(0)), Verdict::Wait(ms(2)));
        o
    };
    // Reported immediately after the previous failure: the 2 still owed, plus 2.
    assert_eq!(fresh().failure(at(0)), Verdict::Wait(ms(4)));
    assert_eq!(fresh().failure(at(2)), Verdict::Wait(ms(2)));
    assert_eq!(fresh().failure(at(4)), Verdict::Wait(ms(0)));
    assert_eq!(fresh().failure(at(9)), Verdict::Wait(ms(0)));
}

#[test]
fn max_attempts_counts_calls_in_the_oracle_too() {
    let policy = Policy::builder().max_attempts(3).build().unwrap();
    let mut oracle = Oracle::new(&policy).seed(1);
    assert!(oracle.failure(at(0)).wait().is_some());
    assert!(oracle.failure(at(0)).wait().is_some());
    // The third call failed: no call is left.
    assert_eq!(oracle.failure(at(0)), Verdict::GiveUp(Ending::Exhausted));
    assert_eq!(oracle.failure(at(0)), Verdict::GiveUp(Ending::Exhausted));
}

#[test]
fn resuming_from_saved_state_continues_the_schedule() {
    let policy = exponential(1, 200);
    let mut first = Oracle::new(&policy);
    for _ in 0..4 {
        first.failure(at(0));
    }
    let saved: OracleState = first.state();
    let mut resumed = Oracle::resume(&policy, saved);
    assert_eq!(resumed.failure(at(0)), Verdict::Wait(ms(16)));
}

#[test]
fn a_time_before_the_first_failure_does_not_panic() {
    let policy = exponential(1, 200);
    let policy = policy
        .to_builder()
        .deadline(Some(ms(10_000)))
        .build()
        .unwrap();
    let mut oracle = Oracle::new(&policy).consider_actual_delay(true);
    assert_eq!(oracle.failure(at(1_000)), Verdict::Wait(ms(1)));
    // The clock went back 1 s: the caller owes the whole gap plus the next wait.
    assert_eq!(oracle.failure(at(0)), Verdict::Wait(ms(1_003)));
}

#[cfg(feature = "serde")]
#[test]
fn state_round_trips_through_serde() {
    let policy = exponential(1, 200);
    let mut oracle = Oracle::new(&policy);
    oracle.failure(at(5));
    oracle.failure(at(6));
    let json = serde_json::to_string(&oracle.state()).unwrap();
    let back: OracleState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, oracle.state());
    let mut resumed = Oracle::resume(&policy, back);
    assert_eq!(resumed.failure(at(7)), Verdict::Wait(ms(4)));
}
