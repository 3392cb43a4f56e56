//! [`Retry`]: one call's policy, clock, sleeper, seed and hooks, and its
//! async and blocking entry points. Both run the one loop (`round`'s
//! `drive!`) over the call's `Run`: the same attempt, decision, hooks,
//! span, events, end reason and report, whichever the caller.

use crate::classify::Classify;
use crate::clock::{
    BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock, ThreadSleeper,
};
use crate::drive;
use crate::hooks::{HookSet, Hooks};
use crate::policy::Policy;
use crate::report::Report;
use crate::run::{Run, Setup};
use std::future::Future;
use std::pin::{Pin, pin};
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
    /// Not here, but the call it makes must run inside a tokio runtime with
    /// time enabled. Unlike a `#[retry]` fn, which checks that once per
    /// call site at its first call, a `Retry` does not check: outside such a
    /// runtime, tokio panics at the call's first wait, or at its first
    /// attempt when the policy sets `attempt_timeout`. To retry under
    /// another executor, give [`sleeper`](Retry::sleeper) that executor's
    /// sleeper.
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

    /// The per-call state; `timed` reads the clock at the first attempt even
    /// when neither a deadline nor a budget needs it, so the caller's report
    /// has `elapsed` (a give-up hook asks for the same).
    pub(crate) fn start(self, timed: bool) -> Run<&'p Policy, C, S, H>
    where
        S: Sleeper,
    {
        let setup = Setup {
            clock: self.clock,
            sleeper: self.sleeper,
            hooks: self.hooks,
            seed: self.seed,
            timed,
            cancellable: true,
        };
        Run::new(self.policy, setup)
    }

    /// Runs `op` until it succeeds or the policy gives up; returns its last result.
    ///
    /// Each attempt is a new future from `op`, sent when the policy's
    /// circuit breaker (if any) lets it through, raced against the policy's
    /// `attempt_timeout` (if any); a policy with `hedge_after` sends copies
    /// of a slow attempt and takes the first answer (see [`crate::hedge`]).
    ///
    /// # Errors
    ///
    /// The error of the last attempt, when the policy gives up: the error is
    /// permanent or not retried by the policy or the hooks, the attempts,
    /// the deadline or a retry budget ran out, or the request could not be
    /// sent again (see [`Ending`](crate::Ending) for every reason, and
    /// [`call_with_report`](Self::call_with_report) to be told which). An
    /// attempt that ran past `attempt_timeout` fails with the error
    /// [`Classify::from_timeout`] makes, and one the circuit breaker refused
    /// with the error [`Classify::from_breaker_open`] makes.
    ///
    /// # Panics
    ///
    /// With tokio's sleeper (the default, [`Retry::new`]), when polled
    /// outside a tokio runtime with time enabled, at the first wait (or the
    /// first attempt, under `attempt_timeout`): tokio's own panic.
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future ends the call where it is, and nothing
    /// of it runs on: the attempt in flight is dropped (every attempt in
    /// flight, for a hedged call: no hedge outlives the call), a pending
    /// wait is abandoned, no further attempt is made, and no hook is called
    /// (no `on_give_up`). Nothing is spawned, so there is nothing to
    /// cancel elsewhere. What a dropped attempt had already sent may still
    /// take effect on the server, as with any cancelled request. Counts
    /// already taken stay taken: the call counted in the retry budgets, a
    /// retry withdrawn for the wait it was dropped in, a hedge's share. A
    /// dropped attempt is not counted by the circuit breaker, and a
    /// half-open probe's place is given back.
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

    /// The blocking form: runs `op` until it succeeds or the policy gives up,
    /// through the same loop as [`call`](Self::call), sleeping the thread. A
    /// blocking attempt cannot be cancelled, so `attempt_timeout` is not
    /// enforced here (a warning says so, once per place in the code); the
    /// deadline is. A policy that hedges runs one attempt at a time here.
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
        self.blocking_run(op).0
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
    pub fn call_blocking_with_report<F, T, E>(self, op: F) -> (Result<T, E>, Report)
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        self.blocking_run(op)
    }

    /// The blocking entry: the async loop, with every attempt ready on its
    /// first poll and every wait a thread sleep, driven to its end here.
    #[track_caller]
    fn blocking_run<F, T, E>(self, mut op: F) -> (Result<T, E>, Report)
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
        let setup = Setup {
            clock: self.clock,
            sleeper: Blocked(&self.sleeper),
            hooks: self.hooks,
            seed: self.seed,
            timed: true,
            // A blocking attempt cannot be cancelled: no timeout is armed.
            cancellable: false,
        };
        let mut run = Run::new(self.policy, setup);
        let result = block_on(async { drive!(run, unhedged || std::future::ready(op())) });
        (result, run.report())
    }
}

/// A blocking sleeper seen as an async one whose sleep happens when first
/// polled, not when made.
#[derive(Debug)]
pub(crate) struct Blocked<'s, S>(&'s S);

impl<'s, S: BlockingSleeper> Sleeper for Blocked<'s, S> {
    type Sleep = ThreadSleep<'s, S>;
    fn sleep(&self, d: Duration) -> ThreadSleep<'s, S> {
        ThreadSleep {
            sleeper: self.0,
            wait: Some(d),
        }
    }
}

/// The future of one blocking wait.
#[derive(Debug)]
pub(crate) struct ThreadSleep<'s, S> {
    sleeper: &'s S,
    wait: Option<Duration>,
}

impl<S: BlockingSleeper> Future for ThreadSleep<'_, S> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if let Some(wait) = self.wait.take() {
            self.sleeper.sleep(wait);
        }
        Poll::Ready(())
    }
}

/// Polls `fut` to completion on this thread. The blocking loop's future is
/// ready at its first poll (blocking attempts, thread sleeps), so this
/// spins only if a caller's sleeper or hook returns a pending future.
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
