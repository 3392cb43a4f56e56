//! The sleeper and clock are injectable: a fake pair drives the async loop
//! with no runtime at all, and every shape's exact schedule shows through.

use retry_core::{Backoff, Class, Classify, Clock, Jitter, Policy, Retry, Sleeper};
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

/// A clock that only moves when the fake sleeper sleeps.
struct FakeTime {
    origin: Instant,
    now: Cell<Duration>,
    sleeps: RefCell<Vec<Duration>>,
}

impl Clock for &FakeTime {
    fn now(&self) -> Instant {
        self.origin + self.now.get()
    }
}

impl Sleeper for &FakeTime {
    type Sleep = Ready<()>;
    fn sleep(&self, d: Duration) -> Ready<()> {
        self.now.set(self.now.get() + d);
        self.sleeps.borrow_mut().push(d);
        ready(())
    }
}

fn run_to_end(policy: &Policy) -> (Vec<Duration>, Duration) {
    let time = FakeTime {
        origin: Instant::now(),
        now: Cell::new(Duration::ZERO),
        sleeps: RefCell::default(),
    };
    let fut = Retry::new(policy)
        .clock(&time)
        .sleeper(&time)
        .call(|| ready(Err::<(), _>(Down)));
    let mut cx = Context::from_waker(Waker::noop());
    // The fake sleeper completes at once, so one poll runs the whole loop.
    let Poll::Ready(result) = pin!(fut).poll(&mut cx) else {
        panic!("the fake sleeper never pends");
    };
    assert_eq!(result, Err(Down));
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
