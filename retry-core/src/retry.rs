//! The retry loop. [`Retry`] configures one call; `Run` is its per-call
//! state, and one round of the loop (`round::poll_round`) is what async
//! calls, blocking calls and `#[retry]` functions all run through: the same
//! attempt, the same decision (the kernel in `decide`), the same hooks,
//! span, events, end reason and report, whichever the caller.

use crate::classify::Classify;
use crate::clock::{
    BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock, ThreadSleeper,
};
use crate::decide::{Decider, Failure, Step, in_policy};
use crate::hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent};
use crate::policy::Policy;
use crate::report::{Ending, Report};
use crate::round::{Call, Round};
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

/// One retried call: a policy plus the clock, sleeper, seed and hooks to use.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{Policy, Retry};
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
    /// ```
    /// let policy = retry_core::Policy::default();
    /// let _ = retry_core::Retry::new(&policy);
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
    /// use retry_core::{Jitter, Policy, Retry};
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
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Retry::new(&p).clock(retry_core::clock::SystemClock);
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
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Retry::new(&p).sleeper(retry_core::clock::TokioSleeper);
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
    /// use retry_core::{Hooks, Policy, Retry};
    /// let p = Policy::default();
    /// let _ = Retry::new(&p).hooks(Hooks::new().retry_if(|_: &std::io::Error| false));
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
    /// let p = retry_core::Policy::default();
    /// let _ = retry_core::Retry::new(&p).seed(42);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The per-call state, for code that drives [`Run::round`] itself
    /// (`#[retry]`, whose attempts borrow the function's arguments).
    #[doc(hidden)]
    pub fn start(self) -> Run<'p, C, S, H> {
        self.start_run(false)
    }

    /// The per-call state; `timed` reads the clock at the first attempt even
    /// when neither a deadline nor a budget needs it, so the caller's report
    /// has `elapsed` (a give-up hook asks for the same in [`Run::round`]).
    fn start_run(self, timed: bool) -> Run<'p, C, S, H> {
        Run {
            policy: self.policy,
            clock: self.clock,
            sleeper: self.sleeper,
            hooks: self.hooks,
            decider: Decider::new(self.seed),
            ending: None,
            timed,
            #[cfg(feature = "tracing")]
            span: tracing::debug_span!("retry", policy = run_name(self.policy)),
        }
    }

    /// Runs `op` until it succeeds or the policy gives up; returns its last result.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let r = retry_core::Retry::new(&p).call(|| async { Ok::<_, std::io::Error>(1) }).await;
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
        self.start_run(false).run_to_end(op, |result, _| result)
    }

    /// Like [`call`](Self::call), also returning how the call ended.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{Ending, Policy, Retry};
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
        self.start_run(true)
            .run_to_end(op, |result, run| (result, run.report()))
    }

    /// The blocking form: runs `op` until it succeeds or the policy gives up,
    /// through the same loop as [`call`](Self::call), sleeping the thread. A
    /// blocking attempt cannot be cancelled, so `attempt_timeout` is not
    /// enforced here; the deadline is.
    ///
    /// ```
    /// use retry_core::{Policy, Retry};
    /// let p = Policy::builder().max_attempts(1).build().unwrap();
    /// let r: Result<(), std::io::Error> =
    ///     Retry::blocking(&p).call_blocking(|| Err(std::io::ErrorKind::NotFound.into()));
    /// assert!(r.is_err());
    /// ```
    pub fn call_blocking<F, T, E>(self, op: F) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        self.blocking_run(op, |result, _| result)
    }

    /// Like [`call_blocking`](Self::call_blocking), also returning how the call ended.
    ///
    /// ```
    /// use retry_core::{Ending, Policy, Retry};
    /// let p = Policy::default();
    /// let (r, report) = Retry::blocking(&p).call_blocking_with_report(|| Ok::<_, std::io::Error>(5));
    /// assert_eq!((r.unwrap(), report.ending), (5, Ending::Success));
    /// ```
    pub fn call_blocking_with_report<F, T, E>(self, op: F) -> (Result<T, E>, Report)
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        self.blocking_run(op, |result, run| (result, run.report()))
    }

    /// The blocking entry: the async loop, with every attempt ready on its
    /// first poll and every wait a thread sleep, driven to its end here.
    fn blocking_run<F, T, E, R>(
        self,
        mut op: F,
        finish: impl for<'r> FnOnce(Result<T, E>, &Run<'p, C, Blocked<'r, S>, H>) -> R,
    ) -> R
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        let Retry {
            policy,
            clock,
            sleeper,
            hooks,
            seed,
        } = self;
        let run = Retry {
            policy,
            clock,
            sleeper: Blocked(&sleeper),
            hooks,
            seed,
        }
        .start_run(true);
        block_on(run.run_to_end(|| std::future::ready(op()), finish))
    }
}

/// A blocking sleeper seen as an async one whose sleep happens when first
/// polled (never when made: the attempt-timeout timer is made, not polled,
/// for an attempt that is always ready at once).
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

#[cfg(feature = "tracing")]
fn run_name(policy: &Policy) -> &str {
    policy.name().unwrap_or("<unnamed>")
}

/// The state of one call in progress. Not public API: `#[retry]` drives it
/// through [`Run::round`].
#[derive(Debug)]
#[doc(hidden)]
pub struct Run<'p, C, S, H> {
    policy: &'p Policy,
    clock: C,
    sleeper: S,
    hooks: H,
    decider: Decider,
    ending: Option<Ending>,
    timed: bool,
    /// The call's `retry` span: every round runs inside it.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

impl<'p, C: Clock, S, H> Run<'p, C, S, H> {
    /// Runs the loop (round after round), then `finish` makes the output
    /// from the result and the run (for its report). The returned future is
    /// the loop itself (a `round::Call`), owning the run: no wrapper around
    /// it holds a second copy of the per-call state.
    fn run_to_end<F, Fut, T, E, R>(
        self,
        op: F,
        finish: impl FnOnce(Result<T, E>, &Self) -> R,
    ) -> impl Future<Output = R>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        S: Sleeper,
        H: HookSet<E>,
    {
        Call::new(self, op, finish)
    }

    /// One round of the one retry loop, for `#[retry]`: an attempt made by
    /// `make` (in place, so it may borrow the function's arguments, and the
    /// caller's future holds it once); on failure the decision with its
    /// hooks, event and end reason; then the wait. `Break` carries the
    /// call's result. The same round as every other entry point's
    /// (`round::poll_round`), inside the call's `retry` span.
    pub fn round<'r, M, Fut, T, E>(&'r mut self, make: M) -> Round<'r, 'p, C, S, H, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        S: Sleeper,
        H: HookSet<E>,
    {
        let stage = crate::round::attempt::<_, _, _, _, T, E>(self, make);
        Round::new(self, stage)
    }

    /// The policy this call runs under.
    pub(crate) fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// The call's sleeper.
    pub(crate) fn sleeper(&self) -> &S {
        &self.sleeper
    }

    /// Attempts begun so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.decider.attempts()
    }

    /// The call's `retry` span.
    #[cfg(feature = "tracing")]
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Begins an attempt. A give-up hook is handed a report, whose
    /// `elapsed` needs the start time: only then (or when the caller asked
    /// for the report, or the policy needs the time) is the clock read as the
    /// call starts.
    pub(crate) fn begin_attempt<E>(&mut self)
    where
        H: HookSet<E>,
    {
        let timed = self.timed || self.hooks.wants_give_up();
        let clock = &self.clock;
        self.decider
            .begin_attempt_lazily(self.policy, timed, || clock.now());
    }

    /// How long an adaptive budget makes the call's first attempt wait (see
    /// `Decider::pace_first_attempt`); one branch for a policy without one.
    #[inline]
    pub(crate) fn pace_first_attempt(&mut self) -> Option<Duration> {
        if !self.policy.budgets.paces() {
            return None;
        }
        let now = self.clock.now();
        self.decider.pace_first_attempt(self.policy, now)
    }

    /// The decision and its hooks, without the sleep.
    pub(crate) fn decide<E>(&mut self, error: E) -> Result<Duration, E>
    where
        E: Classify,
        H: HookSet<E>,
    {
        let allowed = self.hooks.retry_if(&error);
        let unrepeatable = HookSet::<E>::unrepeatable(&self.hooks);
        let failure = Failure {
            class: error.class(),
            hint: error.retry_after(),
            allowed: allowed && unrepeatable.is_none(),
        };
        // The clock is read only if the verdict or the report needs it.
        let clock = &self.clock;
        let mut read = None;
        let step = self
            .decider
            .after_failure_lazily(self.policy, failure, || *read.insert(clock.now()));
        match step {
            Step::Retry { wait, hinted } => {
                let event = RetryEvent {
                    policy: self.policy.name(),
                    attempt: self.decider.attempts(),
                    error: &error,
                    wait,
                    hinted,
                };
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    attempt = event.attempt,
                    class = failure.class.name(),
                    wait_ms = wait.as_millis() as u64,
                    hinted,
                    "retrying"
                );
                self.hooks.on_retry(&event);
                #[cfg(feature = "metrics")]
                crate::metrics::retried(self.policy, wait, failure.hint, hinted);
                Ok(wait)
            }
            Step::GiveUp(ending) => {
                // The kernel refuses a request that cannot be sent again as
                // it refuses any disallowed retry; the call says which it was.
                let ending = match unrepeatable {
                    Some(why) if allowed && in_policy(self.policy, failure.class) => why.ending(),
                    _ => ending,
                };
                self.ending = Some(ending);
                #[cfg(feature = "metrics")]
                crate::metrics::ended(self.policy, ending, self.decider.attempts());
                let now = read.unwrap_or_else(|| self.clock.now());
                let report = self.decider.report(ending, now).budget_state(self.policy);
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    ending = ending.as_str(),
                    attempts = report.attempts,
                    waited_ms = report.waited.as_millis() as u64,
                    "giving up"
                );
                self.hooks.on_give_up(&GiveUpEvent {
                    policy: self.policy.name(),
                    error: &error,
                    report: &report,
                });
                Err(error)
            }
        }
    }

    /// The call ended in success. With `decide`'s giving up, the one place
    /// that records how calls end (for metrics), whichever entry point.
    #[inline]
    pub(crate) fn succeeded(&self) {
        if self.policy.budgets.paces() {
            self.policy.budgets.record(self.clock.now(), false);
        }
        #[cfg(feature = "metrics")]
        crate::metrics::ended(self.policy, Ending::Success, self.decider.attempts());
    }

    /// How the call has gone so far; `Success` unless it gave up.
    pub fn report(&self) -> Report {
        self.decider
            .report(self.ending.unwrap_or(Ending::Success), self.clock.now())
            .budget_state(self.policy)
    }
}
