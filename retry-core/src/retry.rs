//! [`Retry`]: one call's policy, clock, sleeper, seed and hooks, and its
//! async and blocking entry points, which both run `round`'s `drive!`.

use crate::classify::Classify;
use crate::clock::{
    BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock, ThreadSleeper,
};
use crate::drive;
use crate::hooks::{HookSet, Hooks};
use crate::policy::Policy;
use crate::report::Report;
use crate::run::Run;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// One retried call: a policy plus the clock, sleeper, seed and hooks to use.
///
/// Build it with [`Retry::new`] (async, on tokio's timer) or
/// [`Retry::blocking`] (a thread sleep between attempts), adjust it with
/// [`clock`](Retry::clock), [`sleeper`](Retry::sleeper),
/// [`hooks`](Retry::hooks) and [`seed`](Retry::seed), then run the
/// operation with [`call`](Retry::call) or
/// [`call_blocking`](Retry::call_blocking) (or their `_with_report` forms).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{Policy, Retry};
/// use std::io::{Error, ErrorKind};
///
/// let policy = Policy::builder().max_attempts(5).build().unwrap();
/// let mut calls = 0;
/// let result = Retry::new(&policy)
///     .call(|| {
///         calls += 1;
///         let n = calls;
///         async move { if n < 3 { Err(Error::from(ErrorKind::ConnectionReset)) } else { Ok(n) } }
///     })
///     .await;
/// assert_eq!(result.unwrap(), 3);
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a Retry does nothing until `.call(...)`"]
pub struct Retry<'p, C = DefaultClock, S = DefaultSleeper, H = Hooks> {
    policy: &'p Policy,
    clock: C,
    sleeper: S,
    hooks: H,
    seed: Option<u64>,
}

impl<'p> Retry<'p> {
    /// An async retry of `policy` on tokio's clock and timer.
    ///
    /// # Panics
    ///
    /// Not here, but the call must run inside a tokio runtime with time
    /// enabled (unlike a `#[retry]` fn, a `Retry` does not check first):
    /// outside one, tokio panics at the first wait, or at the first attempt
    /// under `attempt_timeout`. Under another executor, give
    /// [`sleeper`](Retry::sleeper) that executor's sleeper.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{Jitter, Policy, Retry};
    /// use std::time::Duration;
    /// let policy = Policy::builder().jitter(Jitter::None).build().unwrap();
    /// let start = tokio::time::Instant::now();
    /// let r = Retry::new(&policy).call(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) }).await;
    /// assert!(r.is_err());
    /// assert_eq!(start.elapsed(), Duration::from_millis(100 + 200)); // on tokio's (paused) clock
    /// # }
    /// ```
    pub fn new(policy: &'p Policy) -> Self {
        Retry {
            policy,
            clock: DefaultClock::default(),
            sleeper: DefaultSleeper::default(),
            hooks: Hooks::new(),
            seed: None,
        }
    }
}

impl<'p> Retry<'p, SystemClock, ThreadSleeper> {
    /// A blocking retry of `policy` on the system clock and `std::thread::sleep`.
    ///
    /// ```
    /// use retrykit_core::{Jitter, Policy, Retry};
    /// let policy = Policy::builder().base(std::time::Duration::from_micros(1))
    ///     .jitter(Jitter::None).build().unwrap();
    /// let mut n = 0;
    /// let r: Result<u32, std::io::Error> = Retry::blocking(&policy).call_blocking(|| {
    ///     n += 1;
    ///     if n < 2 { Err(std::io::ErrorKind::Interrupted.into()) } else { Ok(n) }
    /// });
    /// assert_eq!(r.unwrap(), 2);
    /// ```
    pub fn blocking(policy: &'p Policy) -> Self {
        Retry {
            policy,
            clock: SystemClock,
            sleeper: ThreadSleeper,
            hooks: Hooks::new(),
            seed: None,
        }
    }
}

impl<'p, C, S, H> Retry<'p, C, S, H> {
    /// Uses another clock (for the deadline and the budget window).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{clock::Clock, Ending, Policy, Retry};
    /// use std::{cell::Cell, time::{Duration, Instant}};
    /// struct Leaping(Cell<Instant>); // each reading is 10 s after the last
    /// impl Clock for Leaping {
    ///     fn now(&self) -> Instant { self.0.set(self.0.get() + Duration::from_secs(10)); self.0.get() }
    /// }
    /// let p = Policy::builder().deadline(Some(Duration::from_secs(5))).build().unwrap();
    /// let (_, report) = Retry::new(&p).clock(Leaping(Cell::new(Instant::now())))
    ///     .call_with_report(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) }).await;
    /// assert_eq!((report.ending, report.attempts), (Ending::Deadline, 1));
    /// # }
    /// ```
    pub fn clock<C2: Clock>(self, clock: C2) -> Retry<'p, C2, S, H> {
        Retry {
            policy: self.policy,
            clock,
            sleeper: self.sleeper,
            hooks: self.hooks,
            seed: self.seed,
        }
    }

    /// Uses another sleeper.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{clock::Sleeper, Jitter, Policy, Retry};
    /// use std::{cell::RefCell, future::{ready, Ready}, time::Duration};
    /// struct Record(RefCell<Vec<Duration>>); // records the waits instead of sleeping
    /// impl Sleeper for &Record {
    ///     type Sleep = Ready<()>;
    ///     fn sleep(&self, d: Duration) -> Ready<()> { self.0.borrow_mut().push(d); ready(()) }
    /// }
    /// let (waits, p) = (Record(RefCell::new(vec![])), Policy::builder().jitter(Jitter::None).build().unwrap());
    /// let _ = Retry::new(&p).sleeper(&waits).call(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) }).await;
    /// assert_eq!(*waits.0.borrow(), [100, 200].map(Duration::from_millis));
    /// # }
    /// ```
    pub fn sleeper<S2>(self, sleeper: S2) -> Retry<'p, C, S2, H> {
        Retry {
            policy: self.policy,
            clock: self.clock,
            sleeper,
            hooks: self.hooks,
            seed: self.seed,
        }
    }

    /// Uses other hooks (see [`Hooks`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{Hooks, Policy, Retry};
    /// let p = Policy::default();
    /// let (_, report) = Retry::new(&p).hooks(Hooks::new().retry_if(|_: &std::io::Error| false))
    ///     .call_with_report(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) }).await;
    /// assert_eq!(report.attempts, 1); // the hook vetoed every retry
    /// # }
    /// ```
    pub fn hooks<H2>(self, hooks: H2) -> Retry<'p, C, S, H2> {
        Retry {
            policy: self.policy,
            clock: self.clock,
            sleeper: self.sleeper,
            hooks,
            seed: self.seed,
        }
    }

    /// Seeds the jitter so the schedule repeats exactly.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retrykit_core::Policy::default(); // full jitter
    /// let run = || retrykit_core::Retry::new(&p).seed(42).call_with_report(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) });
    /// let ((_, a), (_, b)) = (run().await, run().await);
    /// assert_eq!(a.waited, b.waited);
    /// # }
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The per-call state; `timed` reads the clock at the first attempt
    /// even when nothing else needs it, so the report has `elapsed`.
    pub(crate) fn start(self, timed: bool) -> Run<&'p Policy, C, S, H>
    where
        S: Sleeper,
    {
        let mut run = Run::new(self.policy, self.clock, self.sleeper, self.hooks, self.seed);
        run.timed = timed;
        run
    }

    /// Runs `op` until it succeeds or the policy gives up; returns its last result.
    ///
    /// Each attempt is a new future from `op`, sent when the policy's
    /// circuit breaker lets it through, raced against its `attempt_timeout`;
    /// under `hedge_after`, copies of a slow attempt race it (see
    /// [`crate::hedge`]).
    ///
    /// # Errors
    ///
    /// The last attempt's error, when the policy gives up (see
    /// [`Ending`](crate::Ending) for every reason, and
    /// [`call_with_report`](Self::call_with_report) to be told which). An
    /// attempt past `attempt_timeout` fails with the error
    /// [`Classify::from_timeout`] makes, one the breaker refused with
    /// [`Classify::from_breaker_open`]'s.
    ///
    /// # Panics
    ///
    /// With tokio's sleeper, outside a tokio runtime with time enabled (see
    /// [`Retry::new`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future ends the call where it is: every
    /// attempt in flight is dropped (nothing is spawned, so no hedge
    /// outlives the call), a pending wait is abandoned, and no hook is
    /// called. What a dropped attempt had sent may still take effect on the
    /// server. Counts already taken in the retry budgets stay taken; the
    /// circuit breaker does not count a dropped attempt, and a half-open
    /// probe's place is given back.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retrykit_core::Policy::default();
    /// let r = retrykit_core::Retry::new(&p).call(|| async { Ok::<_, std::io::Error>(1) }).await;
    /// assert_eq!(r.unwrap(), 1);
    /// # }
    /// ```
    pub fn call<F, Fut, T, E>(self, op: F) -> impl Future<Output = Result<T, E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        C: Clock,
        S: Sleeper,
        H: HookSet<E>,
    {
        let mut run = self.start(false);
        let mut op = op;
        async move { drive!(run, op) }
    }

    /// Like [`call`](Self::call), also returning how the call ended.
    ///
    /// The result's error and the panics are [`call`](Self::call)'s, and so
    /// is cancel safety: a dropped call makes no report.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retrykit_core::{Ending, Policy, Retry};
    /// let p = Policy::builder().max_attempts(2).build().unwrap();
    /// let (r, report) = Retry::new(&p)
    ///     .call_with_report(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::BrokenPipe)) })
    ///     .await;
    /// assert!(r.is_err());
    /// assert_eq!((report.ending, report.attempts), (Ending::Exhausted, 2));
    /// # }
    /// ```
    pub fn call_with_report<F, Fut, T, E>(
        self,
        op: F,
    ) -> impl Future<Output = (Result<T, E>, Report)>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        C: Clock,
        S: Sleeper,
        H: HookSet<E>,
    {
        let mut run = self.start(true);
        let mut op = op;
        async move {
            let result = drive!(run, op);
            (result, run.report())
        }
    }

    /// The blocking form of [`call`](Self::call), sleeping the thread. A
    /// blocking attempt cannot be cancelled, so `attempt_timeout` is not
    /// enforced (a warning says so, once per place in the code); the
    /// deadline is. A hedging policy runs one attempt at a time here.
    ///
    /// # Errors
    ///
    /// The error of the last attempt when the policy gives up, as for
    /// [`call`](Self::call) (no attempt times out here).
    ///
    /// ```
    /// use retrykit_core::{Policy, Retry};
    /// let p = Policy::builder().max_attempts(1).build().unwrap();
    /// let r: Result<(), std::io::Error> =
    ///     Retry::blocking(&p).call_blocking(|| Err(std::io::ErrorKind::NotFound.into()));
    /// assert!(r.is_err());
    /// ```
    #[track_caller]
    pub fn call_blocking<F, T, E>(self, op: F) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        self.call_blocking_with_report(op).0
    }

    /// Like [`call_blocking`](Self::call_blocking), also returning how the call ended.
    ///
    /// The result's error is [`call_blocking`](Self::call_blocking)'s.
    ///
    /// ```
    /// use retrykit_core::{Ending, Policy, Retry};
    /// let p = Policy::default();
    /// let (r, report) = Retry::blocking(&p).call_blocking_with_report(|| Ok::<_, std::io::Error>(5));
    /// assert_eq!((r.unwrap(), report.ending), (5, Ending::Success));
    /// ```
    #[track_caller]
    pub fn call_blocking_with_report<F, T, E>(self, mut op: F) -> (Result<T, E>, Report)
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        if crate::site::limits(self.policy).is_some() {
            crate::site::warn_blocking_timeout(std::panic::Location::caller(), self.policy);
        }
        let sleeper = Blocked(&self.sleeper);
        let mut run = Run::new(self.policy, self.clock, sleeper, self.hooks, self.seed);
        run.timed = true;
        run.cancellable = false;
        let result = block_on(async { drive!(run, unhedged || std::future::ready(op())) });
        (result, run.report())
    }
}

/// A blocking sleeper as an async one: the thread sleeps as the loop asks
/// for the wait, which is then ready at once.
#[derive(Debug)]
struct Blocked<'s, S>(&'s S);

impl<S: BlockingSleeper> Sleeper for Blocked<'_, S> {
    type Sleep = std::future::Ready<()>;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        self.0.sleep(d);
        std::future::ready(())
    }
}

/// Polls `fut` to completion on this thread (the blocking loop's future is
/// ready at its first poll: its attempts and waits block).
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}
