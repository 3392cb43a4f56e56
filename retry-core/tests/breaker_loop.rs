//! A circuit breaker inside the one retry loop, on tokio's paused clock:
//! one test (or a few) per step of the order docs/guarantees.md documents
//! (deadline, budget, breaker, attempt). Each counts the attempts that
//! reach the "server" (the closure) and reads the call's report.
#![cfg(feature = "tokio")]

use retrykit_core::breaker::{BreakerOpen, BreakerState, CircuitBreaker};
use retrykit_core::{
    Class, Classify, Ending, HookSet, Hooks, Jitter, Policy, PolicyBuilder, Report, Retry,
    RetryBudget, RetryEvent,
};
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;
use support::{hedging, paused_runtime};

/// What the server answers, and what the breaker's refusal becomes.
#[derive(Debug)]
enum Answer {
    Down,
    Poison,
    Refused(BreakerOpen),
}

impl Classify for Answer {
    fn class(&self) -> Class {
        match self {
            Answer::Down => Class::TRANSIENT,
            Answer::Poison | Answer::Refused(_) => Class::Permanent,
        }
    }
    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(Answer::Refused(open))
    }
}

const OPEN_FOR: Duration = Duration::from_secs(1);

/// A breaker that opens on 2 failures of 2 attempts, for 1 s (no jitter),
/// doubling up to 8 s, letting `probes` through when half-open. Built before the paused
/// runtime starts, so the runtime's clock never reads earlier than its origin.
fn breaker(probes: u32) -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name("dep")
        .min_calls(2)
        .failure_ratio(0.5)
        .window(Duration::from_secs(10))
        .open_for(OPEN_FOR)
        .max_open_for(Duration::from_secs(8))
        .probe_every(Duration::from_secs(8))
        .open_jitter(0.0)
        .probes(probes)
        .build()
        .unwrap();
    Arc::new(b)
}

fn policy(b: &Arc<CircuitBreaker>, max_attempts: u32) -> PolicyBuilder {
    Policy::builder()
        .name("loop")
        .jitter(Jitter::None)
        .base(Duration::from_millis(100))
        .max_attempts(max_attempts)
        .breaker(Some(Arc::clone(b)))
}

fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Opens the closed `b` with failed attempts, outside any call.
fn trip(b: &Arc<CircuitBreaker>) {
    while b.state() == BreakerState::Closed {
        let ticket = b.try_acquire(now()).unwrap();
        b.record(ticket, now(), true);
    }
    assert_eq!(b.state(), BreakerState::Open);
}

/// One call through `p` whose `n`-th attempt (from 1) is `attempt(n)`:
/// its result, its report, and how many attempts reached the server.
async fn sends<T, Fut>(p: &Policy, attempt: impl Fn(u32) -> Fut) -> (Result<T, Answer>, Report, u32)
where
    Fut: Future<Output = Result<T, Answer>>,
{
    let sent = AtomicU32::new(0);
    let (result, report) = Retry::new(p)
        .call_with_report(|| attempt(sent.fetch_add(1, SeqCst) + 1))
        .await;
    (result, report, sent.load(SeqCst))
}

/// A server that answers at once.
async fn up(_: u32) -> Result<(), Answer> {
    Ok(())
}

/// `a` and `b` within the breaker's millisecond resolution.
fn near(a: Duration, b: Duration) -> bool {
    a.abs_diff(b) <= Duration::from_millis(2)
}

/// The waits the loop chose, through the call's `on_retry` hook.
fn recorded_waits() -> (impl HookSet<Answer>, Arc<Mutex<Vec<Duration>>>) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&waits);
    let hooks = Hooks::new().on_retry(move |e: &RetryEvent<'_, Answer>| {
        seen.lock().unwrap().push(e.wait);
    });
    (hooks, waits)
}

// Step 1: the deadline.

#[test]
fn deadline_a_reopening_past_the_deadline_ends_the_call_at_once() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        let p = policy(&b, 5)
            .deadline(Some(Duration::from_millis(500)))
            .build()
            .unwrap();
        let (result, report, sent) = sends(&p, up).await;
        let Err(Answer::Refused(open)) = result else {
            panic!("{result:?}")
        };
        assert_eq!(
            (open.breaker(), open.state()),
            (Some("dep"), BreakerState::Open)
        );
        assert_eq!(sent, 0, "a refused attempt is never sent");
        assert_eq!(report.ending, Ending::BreakerOpen);
        assert_eq!((report.attempts, report.refused), (1, 1));
        assert_eq!(
            (report.waited, report.elapsed),
            (Duration::ZERO, Duration::ZERO)
        );
    });
}

#[test]
fn deadline_a_failure_whose_wait_reaches_it_ends_the_call_before_the_breaker_is_asked() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = policy(&b, 5)
            .deadline(Some(Duration::from_millis(50)))
            .build()
            .unwrap();
        // One failure counted already: the call's failure opens the breaker.
        let ticket = b.try_acquire(now()).unwrap();
        b.record(ticket, now(), true);
        let (result, report) = Retry::new(&p)
            .call_with_report(|| async { Err::<(), _>(Answer::Down) })
            .await;
        assert!(matches!(result, Err(Answer::Down)));
        assert_eq!(b.state(), BreakerState::Open);
        assert_eq!(
            report.ending,
            Ending::Deadline,
            "not BreakerOpen: the deadline came first"
        );
        assert_eq!((report.attempts, report.refused), (1, 0));
    });
}

// Step 2: the retry budget, asked when a failure's retry is decided.

#[test]
fn budget_a_refused_attempt_withdraws_nothing_and_waits_even_when_the_budget_is_empty() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let empty = Arc::new(
            RetryBudget::builder()
                .ratio(0.0)
                .min_per_sec(0.0)
                .build()
                .unwrap(),
        );
        // 100 ms doubling, 5 attempts: a total wait of 1.5 s, past the break.
        let p = policy(&b, 5)
            .budget(Some(Arc::clone(&empty)))
            .build()
            .unwrap();
        trip(&b);
        let (result, report, sent) = sends(&p, up).await;
        assert!(result.is_ok(), "{result:?}");
        assert_eq!(sent, 1, "only the probe after the break");
        assert_eq!((report.attempts, report.refused), (2, 1));
        assert_eq!(report.ending, Ending::Success);
        let (_, retries) = empty.totals(now());
        assert_eq!(retries, 0, "the wait for the breaker took no retry token");
        // A real failure under the same budget is refused a retry.
        let (_, report) = Retry::new(&p)
            .call_with_report(|| async { Err::<(), _>(Answer::Down) })
            .await;
        assert_eq!(report.ending, Ending::BudgetEmpty);
    });
}

// Step 3: the breaker, asked as each attempt is due.

#[test]
fn breaker_the_call_waits_for_the_reopening_when_it_fits() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        // A total wait of 1.5 s (100 ms doubling, 5 attempts): the 1 s break fits.
        let p = policy(&b, 5).build().unwrap();
        let (result, report, sent) = sends(&p, |_| async { Ok(7) }).await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(sent, 1, "the refused attempt was not sent");
        assert_eq!((report.attempts, report.refused), (2, 1));
        assert!(near(report.elapsed, OPEN_FOR), "{:?}", report.elapsed);
        assert!(near(report.waited, OPEN_FOR), "{:?}", report.waited);
        assert_eq!(b.state(), BreakerState::Closed, "the probe closed it");
    });
}

#[test]
fn breaker_a_policy_with_no_wait_the_call_ends_with_breaker_open_at_once() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        let p = policy(&b, 1).build().unwrap();
        let (result, report, sent) = sends(&p, up).await;
        assert!(matches!(result, Err(Answer::Refused(_))), "{result:?}");
        assert_eq!(sent, 0);
        assert_eq!(report.ending, Ending::BreakerOpen);
        assert_eq!(report.elapsed, Duration::ZERO, "ended at once");
    });
}

/// Issue 42: a refusal is not an attempt. A call of 2 attempts (4 s base,
/// so a total wait of 4 s) is refused by a 1 s break, waits it, and still
/// has both attempts: the probe fails, and the second succeeds.
#[test]
fn breaker_a_refusal_uses_none_of_the_policys_attempts() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        let p = policy(&b, 2)
            .base(Duration::from_secs(4))
            .deadline(Some(Duration::from_secs(10)))
            .build()
            .unwrap();
        let (result, report, sent) = sends(&p, |n| async move {
            if n == 1 { Err(Answer::Down) } else { Ok(n) }
        })
        .await;
        assert_eq!(result.unwrap(), 2, "{report:?}");
        assert_eq!(sent, 2, "both attempts were sent");
        assert_eq!((report.attempts, report.refused), (3, 1));
        assert_eq!(report.ending, Ending::Success);
    });
}

/// A clock that moves only when the blocking loop sleeps.
struct FakeTime {
    origin: Instant,
    now: std::cell::Cell<Duration>,
}

impl retrykit_core::clock::Clock for &FakeTime {
    fn now(&self) -> Instant {
        self.origin + self.now.get()
    }
}

impl retrykit_core::clock::Sleeper for &FakeTime {
    type Sleep = std::future::Ready<()>;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        self.now.set(self.now.get() + d);
        std::future::ready(())
    }
}

impl retrykit_core::clock::BlockingSleeper for &FakeTime {
    fn sleep(&self, d: Duration) {
        self.now.set(self.now.get() + d);
    }
}

/// The same rule in the blocking loop, on a clock that moves only when it
/// sleeps: the refused attempt waits the 1 s break and both attempts are sent.
#[test]
fn breaker_the_blocking_loop_keeps_its_attempts_too() {
    let b = breaker(1);
    trip(&b);
    let time = FakeTime {
        origin: now(),
        now: std::cell::Cell::new(Duration::ZERO),
    };
    let p = policy(&b, 2).base(Duration::from_secs(4)).build().unwrap();
    let sent = AtomicU32::new(0);
    let (result, report) = Retry::blocking(&p)
        .clock(&time)
        .sleeper(&time)
        .call_blocking_with_report(|| match sent.fetch_add(1, SeqCst) {
            0 => Err(Answer::Down),
            n => Ok(n + 1),
        });
    assert_eq!(result.unwrap(), 2, "{report:?}");
    assert_eq!(sent.load(SeqCst), 2);
    assert_eq!((report.attempts, report.refused), (3, 1));
    // The break (1 s), then the backoff after the probe's failure (4 s).
    assert!(
        near(time.now.get(), Duration::from_secs(5)),
        "{:?}",
        time.now.get()
    );
}

/// A held-back call waits no longer in all than its policy's total wait
/// (100 ms + 200 ms for 3 attempts): the last hold is cut to what is left,
/// and then it ends with `BreakerOpen`, having sent nothing.
#[test]
fn breaker_a_hold_ends_when_the_policys_total_wait_is_spent() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        let p = policy(&b, 3).build().unwrap();
        let (result, report, sent) = sends(&p, up).await;
        assert!(matches!(result, Err(Answer::Refused(_))), "{result:?}");
        assert_eq!(sent, 0);
        assert_eq!(report.ending, Ending::BreakerOpen);
        assert_eq!((report.attempts, report.refused), (2, 2));
        assert_eq!(report.waited, Duration::from_millis(300));
        assert_eq!(report.elapsed, Duration::from_millis(300));
    });
}

#[test]
fn breaker_a_refusal_is_not_retried_as_a_failure_the_backoff_does_not_move() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = policy(&b, 6).build().unwrap();
        let (hooks, waits) = recorded_waits();
        let counted = AtomicU32::new(0);
        let (result, report) = Retry::new(&p)
            .hooks(hooks)
            .call_with_report(|| {
                let n = counted.fetch_add(1, SeqCst) + 1;
                let b = Arc::clone(&b);
                async move {
                    match n {
                        // The first attempt fails; then another caller's
                        // failures open the breaker during the wait.
                        1 => {
                            tokio::spawn(async move {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                trip(&b);
                            });
                            Err(Answer::Down)
                        }
                        // The probe after the break fails too.
                        2 => Err(Answer::Down),
                        _ => Ok(()),
                    }
                }
            })
            .await;
        assert!(result.is_ok(), "{result:?}");
        let waits = waits.lock().unwrap().clone();
        assert_eq!(waits.len(), 4, "{waits:?}");
        assert_eq!(waits[0], Duration::from_millis(100), "backoff, 1st failure");
        assert!(
            near(waits[1], Duration::from_millis(950)),
            "until the break ends: {waits:?}"
        );
        assert_eq!(
            waits[2],
            Duration::from_millis(200),
            "backoff after the 2nd failure: the refusal did not move it"
        );
        // The failed probe opened the breaker for 2 s (the 2nd trip in a row).
        assert!(near(waits[3], Duration::from_millis(1800)), "{waits:?}");
        assert_eq!(counted.load(SeqCst), 3);
        assert_eq!((report.attempts, report.refused), (5, 2));
    });
}

#[test]
fn breaker_half_open_lets_only_the_probes_through_and_the_others_wait_or_end() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        tokio::time::sleep(OPEN_FOR).await;
        let waits = policy(&b, 3).build().unwrap();
        let ends = policy(&b, 1).build().unwrap();
        let ramp = b.release_ramp();
        let counted = AtomicU32::new(0);
        let attempt = || {
            counted.fetch_add(1, SeqCst);
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, Answer>(())
            }
        };
        let (probe, waited, ended) = tokio::join!(
            Retry::new(&waits).call_with_report(attempt),
            Retry::new(&waits).call_with_report(attempt),
            Retry::new(&ends).call_with_report(attempt),
        );
        assert_eq!((probe.1.ending, probe.1.refused), (Ending::Success, 0));
        // Refused while the probe is out, it asks again every release_ramp
        // (20 ms) until the probe's success at 100 ms closes the breaker.
        assert_eq!(waited.1.ending, Ending::Success);
        assert_eq!(waited.1.refused, 5, "{:?}", waited.1);
        assert_eq!(waited.1.waited, ramp * 5);
        let Err(Answer::Refused(open)) = ended.0 else {
            panic!("{:?}", ended.0)
        };
        assert_eq!(open.state(), BreakerState::HalfOpen);
        assert_eq!(ended.1.ending, Ending::BreakerOpen);
        assert_eq!(
            counted.load(SeqCst),
            2,
            "the probe, then the waiter once closed"
        );
    });
}

#[test]
fn breaker_hedges_ask_it_and_a_refused_hedge_is_not_sent() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        tokio::time::sleep(OPEN_FOR).await;
        let p = hedging(20, 3)
            .breaker(Some(Arc::clone(&b)))
            .build()
            .unwrap();
        let (result, report, sent) = sends(&p, support::first_stuck).await;
        assert_eq!(result.unwrap(), 1, "the probe's own answer");
        assert_eq!(sent, 1, "the hedge due at 20 ms was refused, not sent");
        assert_eq!((report.hedges, report.refused), (0, 0));
        assert_eq!(b.state(), BreakerState::Closed);
    });
}

#[test]
fn breaker_a_hedged_call_whose_first_attempt_is_refused_waits_for_the_reopening() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        trip(&b);
        // A total wait of 1.5 s at most (5 attempts): the break fits.
        let p = hedging(20, 5)
            .breaker(Some(Arc::clone(&b)))
            .build()
            .unwrap();
        let (result, report, sent) = sends(&p, up).await;
        assert!(result.is_ok());
        assert_eq!(sent, 1);
        assert_eq!((report.attempts, report.refused), (2, 1));
        assert!(near(report.elapsed, OPEN_FOR), "{:?}", report.elapsed);
    });
}

// Step 4: the attempt, and what its outcome tells the breaker.

#[test]
fn attempt_a_permanent_error_never_opens_it() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = policy(&b, 3).build().unwrap();
        for _ in 0..20 {
            let (_, report) = Retry::new(&p)
                .call_with_report(|| async { Err::<(), _>(Answer::Poison) })
                .await;
            assert_eq!(report.ending, Ending::Permanent);
        }
        let status = b.status(now());
        assert_eq!(status.state, BreakerState::Closed);
        assert_eq!(
            (status.attempts, status.failures),
            (20, 0),
            "answered: successes"
        );
    });
}

#[test]
fn attempt_failures_through_the_loop_open_it() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = policy(&b, 5).build().unwrap();
        let (result, report, sent) = sends(&p, |_| async { Err::<(), _>(Answer::Down) }).await;
        assert!(result.is_err());
        // Two failures open it; the third attempt is refused, waits the
        // break, and the probe fails (opening it for 2 s); the fifth is
        // refused, and the policy's total wait (1.5 s) is spent.
        assert_eq!(sent, 3, "{report:?}");
        assert_eq!(report.attempts - report.refused, 3, "{report:?}");
        assert_eq!(report.waited, Duration::from_millis(1500), "the total wait");
        assert_eq!(report.ending, Ending::BreakerOpen);
        assert_eq!(b.status(now()).trips, 2);
    });
}

#[test]
fn attempt_a_cancelled_attempt_counts_nothing_and_gives_a_probe_back() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = policy(&b, 3).build().unwrap();
        let hang = || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, Answer>(())
        };
        let cut = Duration::from_millis(10);
        assert!(
            tokio::time::timeout(cut, Retry::new(&p).call(hang))
                .await
                .is_err()
        );
        let status = b.status(now());
        assert_eq!(
            (status.attempts, status.failures),
            (0, 0),
            "closed: nothing counted"
        );
        trip(&b);
        tokio::time::sleep(OPEN_FOR).await;
        // The probe's call is dropped: its place is free for the next call.
        assert!(
            tokio::time::timeout(cut, Retry::new(&p).call(hang))
                .await
                .is_err()
        );
        assert_eq!(b.state(), BreakerState::HalfOpen);
        let (result, report) = Retry::new(&p)
            .call_with_report(|| async { Ok::<_, Answer>(()) })
            .await;
        assert!(result.is_ok());
        assert_eq!(report.refused, 0, "the probe's place was given back");
        assert_eq!(b.state(), BreakerState::Closed);
    });
}

#[test]
fn attempt_a_lost_hedge_is_not_counted() {
    let b = breaker(1);
    paused_runtime().block_on(async {
        let p = hedging(20, 3)
            .breaker(Some(Arc::clone(&b)))
            .build()
            .unwrap();
        let (result, report, sent) = sends(&p, support::first_stuck).await;
        assert_eq!(result.unwrap(), 2, "the hedge won");
        assert_eq!(sent, 2);
        assert_eq!(report.hedges, 1);
        let status = b.status(now());
        assert_eq!(
            status.attempts, 1,
            "only the winner is counted; the loser was cancelled"
        );
    });
}

/// An error that is not `Send`.
#[derive(Debug)]
struct Local(#[allow(dead_code)] std::rc::Rc<()>);

impl Classify for Local {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// A `!Send` error must not make the call `!Send`: the error a refusal
/// stands for is built when the refused attempt is polled, never kept in
/// the attempt across an await (as `#[retry]` expands an unhedged site).
#[test]
fn attempt_a_refusal_keeps_a_call_with_a_non_send_error_send() {
    use retrykit_core::__private::run::{Run, drive};
    fn assert_send<T: Send>(_: &T) {}
    let p = Arc::new(Policy::default());
    let call = async move {
        let mut run = Run::for_policy(p, Hooks::new());
        let out: Result<(), Local> =
            drive!(run, unhedged || async { Err(Local(Default::default())) });
        out.is_err()
    };
    assert_send(&call);
}
