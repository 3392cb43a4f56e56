//! The call's timers against an attempt that spends tokio's cooperative
//! budget on every poll (issue 40, point 6): the attempt timeout, the
//! hedge delay, a hedged attempt's own timeout and the deadline still end
//! or move the call when they are due, as `tokio::time::timeout` ends such
//! a future.
//!
//! The attempt receives, forever, from a channel that always holds an item:
//! every `recv` takes from the task's budget, so each poll of the attempt
//! ends with the budget spent (the channel then returns `Pending` and wakes
//! the task at once), and a tokio sleep polled after it is refused for
//! want of budget unless it is polled outside it.
//!
//! Such an attempt keeps the runtime busy, so the paused clock never moves
//! on its own (tokio advances it only when the runtime is idle): a task
//! beside the call moves it 1 ms each time it runs, standing for the real
//! time that passes while the attempt spins. Every call is bounded by an
//! outer 3 s `tokio::time::timeout`, so a timer that starves fails the test
//! instead of hanging it.
#![cfg(feature = "tokio")]

use retrykit_core::{
    AttemptTimeout, Class, Classify, Ending, Jitter, Policy, PolicyBuilder, Retry,
};
use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

mod support;

#[derive(Debug, Clone, PartialEq)]
enum Fault {
    TimedOut(u32),
}

impl Classify for Fault {
    fn class(&self) -> Class {
        Class::TIMEOUT
    }
    fn from_timeout(t: AttemptTimeout) -> Option<Self> {
        Some(Fault::TimedOut(t.attempt))
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// An attempt that never ends on its own: it receives from a channel that
/// always holds an item, spending the task's budget on every poll.
async fn spin<T>() -> Result<T, Fault> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    loop {
        tx.send(()).unwrap();
        rx.recv().await;
    }
}

/// Runs `call` with the clock moving 1 ms at a time, for at most 3 s of
/// virtual time: its output (`None` when the outer timeout ended it) and
/// the virtual time it took.
async fn run<F: Future>(call: F) -> (Option<F::Output>, Duration) {
    let ticker = tokio::spawn(async {
        loop {
            tokio::time::advance(ms(1)).await;
        }
    });
    let start = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(3), call)
        .await
        .ok();
    let took = start.elapsed();
    ticker.abort();
    (out, took)
}

/// `a` within the clock's 1 ms steps of `b`.
fn near(a: Duration, b: Duration) -> bool {
    a.abs_diff(b) <= ms(2)
}

/// Fixed 10 ms waits, `attempts` attempts of at most 50 ms each.
fn timed(attempts: u32) -> PolicyBuilder {
    Policy::builder()
        .base(ms(10))
        .jitter(Jitter::None)
        .max_attempts(attempts)
        .attempt_timeout(Some(ms(50)))
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_ends_an_attempt_that_spends_the_budget() {
    let p = timed(2).build().unwrap();
    let (out, took) = run(Retry::new(&p).call_with_report(spin::<()>)).await;
    let (result, report) = out.expect("the attempt timeouts never fired");
    assert_eq!(result, Err(Fault::TimedOut(2)));
    assert_eq!(report.attempts, 2);
    assert!(near(took, ms(50 + 10 + 50)), "took {took:?}");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_call_whose_attempts_spend_the_budget() {
    // Attempts at 0 and 60 ms time out at 50 and 110 ms; the next wait
    // would reach the 120 ms deadline.
    let p = timed(0).deadline(Some(ms(120))).build().unwrap();
    let (out, took) = run(Retry::new(&p).call_with_report(spin::<()>)).await;
    let (result, report) = out.expect("the attempt timeouts never fired");
    assert_eq!(result, Err(Fault::TimedOut(2)));
    assert_eq!((report.attempts, report.ending), (2, Ending::Deadline));
    assert!(near(took, ms(110)), "took {took:?}");
}

/// The race reads the clock each time it is polled, and an attempt that
/// spends the budget has the task polled again at once, so the hedge is
/// sent when due even if the hedge delay's sleep is refused (this holds
/// without polling that sleep outside the budget too).
#[tokio::test(start_paused = true)]
async fn a_hedge_is_sent_at_the_hedge_delay_while_the_first_attempt_spends_the_budget() {
    let p = support::hedging(20, 2).build().unwrap();
    let start = Instant::now();
    let began = RefCell::new(Vec::new());
    let call = Retry::new(&p).call_with_report(|| {
        let n = {
            let mut began = began.borrow_mut();
            began.push(start.elapsed());
            began.len() as u32
        };
        async move {
            match n {
                1 => spin().await,
                n => Ok(n),
            }
        }
    });
    let (out, took) = run(call).await;
    let (result, report) = out.expect("the hedge was never sent");
    assert_eq!(result, Ok(2), "the hedge answers at once");
    assert_eq!((report.hedges, report.winner), (1, 2));
    let began = began.into_inner();
    assert_eq!(began.len(), 2);
    assert!(near(began[1], ms(20)), "the hedge began at {:?}", began[1]);
    assert!(near(took, ms(20)), "took {took:?}");
}

#[tokio::test(start_paused = true)]
async fn hedged_attempts_that_spend_the_budget_time_out_on_their_own_timeouts() {
    // The first attempt times out at 50 ms, the hedge sent at 20 ms at 70.
    let p = support::hedging(20, 2)
        .jitter(Jitter::None)
        .attempt_timeout(Some(ms(50)))
        .build()
        .unwrap();
    let (out, took) = run(Retry::new(&p).call_with_report(spin::<()>)).await;
    let (result, report) = out.expect("the hedged attempts never timed out");
    assert_eq!(result, Err(Fault::TimedOut(2)));
    assert_eq!((report.attempts, report.hedges), (2, 1));
    assert!(near(took, ms(70)), "took {took:?}");
}
