//! The sleeper and clock are injectable: a fake pair drives the async loop
//! with no runtime at all, and every shape's exact schedule shows through.

use retrykit_core::clock::{BlockingSleeper, Clock, Sleeper};
use retrykit_core::{Backoff, Class, Classify, GiveUpEvent, Hooks, Jitter, Policy, Report, Retry};
use std::cell::{Cell, RefCell};
use std::future::{Ready, ready};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

#[derive(Debug, PartialEq)]
struct Down;

impl Classify for Down {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// A clock that only moves when the fake sleeper sleeps (or a test moves
/// it), and counts how often it is read.
struct FakeTime {
    origin: Instant,
    now: Cell<Duration>,
    sleeps: RefCell<Vec<Duration>>,
    reads: Cell<u32>,
}

impl FakeTime {
    fn new() -> Self {
        FakeTime {
            origin: Instant::now(),
            now: Cell::new(Duration::ZERO),
            sleeps: RefCell::default(),
            reads: Cell::new(0),
        }
    }

    fn advance(&self, d: Duration) {
        self.now.set(self.now.get() + d);
    }
}

impl Clock for &FakeTime {
    fn now(&self) -> Instant {
        self.reads.set(self.reads.get() + 1);
        self.origin + self.now.get()
    }
}

impl Sleeper for &FakeTime {
    type Sleep = Ready<()>;
    fn sleep(&self, d: Duration) -> Ready<()> {
        BlockingSleeper::sleep(self, d);
        ready(())
    }
}

impl BlockingSleeper for &FakeTime {
    fn sleep(&self, d: Duration) {
        self.advance(d);
        self.sleeps.borrow_mut().push(d);
    }
}

/// Polls a future that never pends (the fake sleeper completes at once).
fn poll_once<F: Future>(fut: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let Poll::Ready(out) = pin!(fut).poll(&mut cx) else {
        panic!("the fake sleeper never pends");
    };
    out
}

fn run_to_end(policy: &Policy) -> (Vec<Duration>, Duration) {
    let time = FakeTime::new();
    let fut = Retry::new(policy)
        .clock(&time)
        .sleeper(&time)
        .call(|| ready(Err::<(), _>(Down)));
    // The fake sleeper completes at once, so one poll runs the whole loop.
    assert_eq!(poll_once(fut), Err(Down));
    let sleeps = time.sleeps.borrow().clone();
    (sleeps, time.now.get())
}

fn ms(v: &[u64]) -> Vec<Duration> {
    v.iter().copied().map(Duration::from_millis).collect()
}

#[test]
fn constant_linear_and_exponential_schedules_are_exact() {
    let base = Policy::builder()
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(45))
        .jitter(Jitter::None)
        .max_attempts(6);
    let constant = base.clone().backoff(Backoff::Constant).build().unwrap();
    let linear = base.clone().backoff(Backoff::Linear).build().unwrap();
    let exponential = base
        .clone()
        .backoff(Backoff::Exponential { factor: 1.5 })
        .build()
        .unwrap();
    assert_eq!(run_to_end(&constant).0, ms(&[10, 10, 10, 10, 10]));
    assert_eq!(run_to_end(&linear).0, ms(&[10, 20, 30, 40, 45]));
    let exp: Vec<f64> = run_to_end(&exponential)
        .0
        .iter()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    assert_eq!(exp, [10.0, 15.0, 22.5, 33.75, 45.0]);
}

#[test]
fn min_delay_floors_every_jittered_wait() {
    let p = Policy::builder()
        .base(Duration::from_millis(10))
        .cap(Duration::from_millis(100))
        .min_delay(Duration::from_millis(8))
        .jitter(Jitter::Full)
        .max_attempts(200)
        .build()
        .unwrap();
    let (sleeps, _) = run_to_end(&p);
    assert_eq!(sleeps.len(), 199);
    assert!(sleeps.iter().all(|d| *d >= Duration::from_millis(8)));
    assert!(sleeps.iter().any(|d| *d == Duration::from_millis(8)));
}

#[test]
fn the_deadline_reads_the_injected_clock() {
    let p = Policy::builder()
        .base(Duration::from_secs(1))
        .cap(Duration::from_secs(1))
        .jitter(Jitter::None)
        .max_attempts(0)
        .deadline(Some(Duration::from_millis(4_500)))
        .build()
        .unwrap();
    let (sleeps, total) = run_to_end(&p);
    // Waits ending at 1, 2, 3, 4 s fit; one ending at 5 s would not.
    assert_eq!(sleeps.len(), 4);
    assert_eq!(total, Duration::from_secs(4));
}

/// Waits of 10 ms then 20 ms, three attempts, no deadline and no budget:
/// nothing in the policy needs the clock.
fn untimed_policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(10))
        .cap(Duration::from_secs(1))
        .jitter(Jitter::None)
        .max_attempts(3)
        .build()
        .unwrap()
}

#[test]
fn a_give_up_hook_is_told_the_time_the_call_took() {
    // Each attempt takes 5 ms; the waits are 10 and 20 ms: 45 ms in all.
    let p = untimed_policy();
    let attempt = Duration::from_millis(5);
    let expected = Duration::from_millis(5 + 10 + 5 + 20 + 5);

    let time = FakeTime::new();
    let seen = Cell::new(None::<Report>);
    let hooks = Hooks::new().on_give_up(|e: &GiveUpEvent<'_, Down>| seen.set(Some(*e.report)));
    let fut = Retry::new(&p)
        .clock(&time)
        .sleeper(&time)
        .hooks(hooks)
        .call(|| {
            time.advance(attempt);
            ready(Err::<(), _>(Down))
        });
    assert_eq!(poll_once(fut), Err(Down));
    let report = seen.take().expect("the loop gave up");
    assert_eq!(
        (report.attempts, report.waited),
        (3, Duration::from_millis(30))
    );
    assert_eq!(report.elapsed, expected);

    // The blocking loop, the same (the hooks are `Copy`: one closure, both loops).
    let time = FakeTime::new();
    let result = Retry::blocking(&p)
        .clock(&time)
        .sleeper(&time)
        .hooks(hooks)
        .call_blocking(|| {
            time.advance(attempt);
            Err::<(), _>(Down)
        });
    assert_eq!(result, Err(Down));
    assert_eq!(seen.take().expect("the loop gave up").elapsed, expected);
}

#[test]
fn the_success_path_reads_no_clock_unless_a_report_is_wanted() {
    let p = untimed_policy();
    let time = FakeTime::new();
    let ok = Retry::new(&p)
        .clock(&time)
        .sleeper(&time)
        .call(|| ready(Ok::<_, Down>(1)));
    assert_eq!(poll_once(ok), Ok(1));
    let ok = Retry::new(&p)
        .clock(&time)
        .sleeper(&time)
        .hooks(Hooks::new().on_retry(|_: &retrykit_core::RetryEvent<'_, Down>| {}))
        .call(|| ready(Ok::<_, Down>(2)));
    assert_eq!(poll_once(ok), Ok(2));
    assert_eq!(
        time.reads.get(),
        0,
        "the clock was read on the success path"
    );

    // A caller that asks for the report gets the time measured.
    let (ok, report) = poll_once(Retry::new(&p).clock(&time).sleeper(&time).call_with_report(
        || {
            time.advance(Duration::from_millis(7));
            ready(Ok::<_, Down>(3))
        },
    ));
    assert_eq!((ok, report.elapsed), (Ok(3), Duration::from_millis(7)));
}
