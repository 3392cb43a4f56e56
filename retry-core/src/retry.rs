//! The retry loops: [`Retry`] configures one call; [`Run`] is its per-call
//! state, exposed so generated code (and callers with unusual control flow,
//! such as `&mut self` methods) can drive the loop themselves.

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{BlockingSleeper, Clock, DefaultClock, SystemClock, ThreadSleeper};
use crate::decide::{Decider, Failure, Step};
use crate::hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent};
use crate::policy::Policy;
use crate::report::{Ending, Report};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// The sleeper async retries use by default: tokio's timer.
#[cfg(feature = "tokio")]
pub type DefaultSleeper = crate::clock::TokioSleeper;
/// Without the `tokio` feature there is no default async sleeper: set one
/// with [`Retry::sleeper`].
#[cfg(not(feature = "tokio"))]
pub type DefaultSleeper = crate::hooks::Unset;

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
    /// let _ = retry_core::Retry::new(&p).clock(retry_core::SystemClock);
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
    /// let _ = retry_core::Retry::new(&p).sleeper(retry_core::TokioSleeper);
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

    /// The per-call state, to drive the loop by hand.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let mut run = retry_core::Retry::new(&p).start();
    /// let value = loop {
    ///     match run.attempt(async { Ok::<_, std::io::Error>(7) }).await {
    ///         Ok(v) => break v,
    ///         Err(e) => run.recover(e).await.unwrap(),
    ///     }
    /// };
    /// assert_eq!(value, 7);
    /// # }
    /// ```
    pub fn start(self) -> Run<'p, C, S, H> {
        self.start_run(false)
    }

    /// The per-call state; `timed` reads the clock at the first attempt even
    /// when neither a deadline nor a budget needs it, so reports have `elapsed`.
    fn start_run(self, timed: bool) -> Run<'p, C, S, H> {
        Run {
            policy: self.policy,
            clock: self.clock,
            sleeper: self.sleeper,
            hooks: self.hooks,
            decider: Decider::new(self.seed),
            ending: None,
            timed,
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
        S: crate::Sleeper,
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
        S: crate::Sleeper,
        H: HookSet<E>,
    {
        self.start_run(true)
            .run_to_end(op, |result, run| (result, run.report()))
    }

    /// The blocking loop: runs `op` until it succeeds or the policy gives up.
    /// A blocking attempt cannot be cancelled, so `attempt_timeout` is not
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
        self.call_blocking_with_report(op).0
    }

    /// Like [`call_blocking`](Self::call_blocking), also returning how the call ended.
    ///
    /// ```
    /// use retry_core::{Ending, Policy, Retry};
    /// let p = Policy::default();
    /// let (r, report) = Retry::blocking(&p).call_blocking_with_report(|| Ok::<_, std::io::Error>(5));
    /// assert_eq!((r.unwrap(), report.ending), (5, Ending::Success));
    /// ```
    pub fn call_blocking_with_report<F, T, E>(self, mut op: F) -> (Result<T, E>, Report)
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        #[cfg(feature = "tracing")]
        let _span = tracing::debug_span!("retry", policy = run_name(self.policy)).entered();
        let mut run = self.start_run(true);
        let result = loop {
            run.begin_attempt();
            match op() {
                Ok(v) => break Ok(v),
                Err(e) => match run.decide(e) {
                    Ok(wait) => run.sleeper.sleep(wait),
                    Err(e) => break Err(e),
                },
            }
        };
        let report = run.report();
        (result, report)
    }
}

#[cfg(feature = "tracing")]
fn run_name(policy: &Policy) -> &str {
    policy.name().unwrap_or("<unnamed>")
}

/// The state of one call in progress. Get one from [`Retry::start`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{Ending, Policy, Retry};
/// let p = Policy::builder().max_attempts(1).build().unwrap();
/// let mut run = Retry::new(&p).start();
/// let e = run.attempt(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::NotFound)) }).await.unwrap_err();
/// assert!(run.recover(e).await.is_err());
/// assert_eq!(run.report().ending, Ending::Permanent);
/// # }
/// ```
#[derive(Debug)]
pub struct Run<'p, C, S, H> {
    policy: &'p Policy,
    clock: C,
    sleeper: S,
    hooks: H,
    decider: Decider,
    ending: Option<Ending>,
    timed: bool,
}

impl<C: Clock, S, H> Run<'_, C, S, H> {
    /// The loop itself: attempt, recover, until success or the end; then
    /// `finish` makes the output from the result and the run (for its
    /// report).
    ///
    /// It owns the run and returns its own future, so the caller's future is
    /// this one: an `async fn` wrapper would hold a second copy of the
    /// per-call state and move it on the first poll, which was most of the
    /// success path's cost (see examples/benches).
    fn run_to_end<F, Fut, T, E, R>(
        mut self,
        mut op: F,
        finish: impl FnOnce(Result<T, E>, &Self) -> R,
    ) -> impl Future<Output = R>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        S: crate::Sleeper,
        H: HookSet<E>,
    {
        #[cfg(feature = "tracing")]
        let policy = self.policy;
        let looped = async move {
            let result = loop {
                match self.attempt_with(&mut op).await {
                    Ok(v) => break Ok(v),
                    Err(e) => {
                        if let Err(e) = self.recover(e).await {
                            break Err(e);
                        }
                    }
                }
            };
            finish(result, &self)
        };
        #[cfg(feature = "tracing")]
        let looped = async move {
            let span = tracing::debug_span!("retry", policy = run_name(policy));
            tracing::Instrument::instrument(looped, span).await
        };
        looped
    }

    fn begin_attempt(&mut self) {
        let clock = &self.clock;
        self.decider
            .begin_attempt_with(self.policy, self.timed, || clock.now());
    }

    /// Runs one attempt, cancelling it when it outlives the policy's
    /// `attempt_timeout` (if the error type can say so: see
    /// [`Classify::from_timeout`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let mut run = retry_core::Retry::new(&p).start();
    /// assert_eq!(run.attempt(async { Ok::<_, std::io::Error>(1) }).await.unwrap(), 1);
    /// # }
    /// ```
    pub fn attempt<Fut, T, E>(&mut self, fut: Fut) -> impl Future<Output = Result<T, E>>
    where
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        S: crate::Sleeper,
    {
        self.attempt_with(move || fut)
    }

    /// Like [`attempt`](Self::attempt), but makes the attempt's future itself,
    /// with `make`. The returned future then holds the attempt's future once;
    /// one passed in by value is held twice (as the argument and as what is
    /// awaited), which doubles the size for a large future (a client holding
    /// a buffer across an await). [`Retry::call`] uses this.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let mut run = retry_core::Retry::new(&p).start();
    /// let fetch = || async { Ok::<_, std::io::Error>([7u8; 1024][0]) };
    /// assert_eq!(run.attempt_with(fetch).await.unwrap(), 7);
    /// # }
    /// ```
    pub async fn attempt_with<M, Fut, T, E>(&mut self, make: M) -> Result<T, E>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        S: crate::Sleeper,
    {
        self.begin_attempt();
        let Some(limit) = self.policy.attempt_timeout() else {
            return make().await;
        };
        let info = AttemptTimeout {
            attempt: self.decider.attempts(),
            timeout: limit,
        };
        let mut fut = pin!(make());
        let mut timer = pin!(self.sleeper.sleep(limit));
        let mut armed = true;
        // `move`: the closure owns the pinned references and the flag, so
        // the future does not also keep them as locals.
        poll_fn(move |cx| {
            if let Poll::Ready(result) = fut.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
            if armed && timer.as_mut().poll(cx).is_ready() {
                armed = false;
                if let Some(err) = E::from_timeout(info) {
                    return Poll::Ready(Err(err));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// After a failed attempt: waits and returns `Ok(())` when another attempt
    /// should follow, or gives the error back when the call is over.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let mut run = retry_core::Retry::new(&p).start();
    /// let err = run.attempt(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)) }).await.unwrap_err();
    /// assert!(run.recover(err).await.is_ok());
    /// # }
    /// ```
    pub async fn recover<E>(&mut self, error: E) -> Result<(), E>
    where
        E: Classify,
        S: crate::Sleeper,
        H: HookSet<E>,
    {
        let wait = self.decide(error)?;
        self.sleeper.sleep(wait).await;
        Ok(())
    }

    /// [`recover`](Self::recover) in two steps: the decision (with its hooks)
    /// now, the sleep after. Returns the wait before the next attempt, or the
    /// error back when the call is over. Callers whose future must stay `Send`
    /// with a `!Send` error (such as `Box<dyn Error>`) use this, so the error
    /// is not held across the sleep; `#[retry]` does.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::builder().max_attempts(2).build().unwrap();
    /// let mut run = retry_core::Retry::new(&p).start();
    /// let err = run.attempt(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)) }).await.unwrap_err();
    /// let wait = run.next_wait(err).unwrap();
    /// run.sleep(wait).await;
    /// let err = run.attempt(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)) }).await.unwrap_err();
    /// assert!(run.next_wait(err).is_err()); // two attempts made: over
    /// # }
    /// ```
    pub fn next_wait<E>(&mut self, error: E) -> Result<Duration, E>
    where
        E: Classify,
        H: HookSet<E>,
    {
        self.decide(error)
    }

    /// Waits `wait` on this run's sleeper (the wait [`next_wait`](Self::next_wait) chose).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let p = retry_core::Policy::default();
    /// let run = retry_core::Retry::new(&p).start();
    /// run.sleep(std::time::Duration::from_millis(5)).await;
    /// # }
    /// ```
    pub fn sleep(&self, wait: Duration) -> S::Sleep
    where
        S: crate::Sleeper,
    {
        self.sleeper.sleep(wait)
    }

    /// The decision and its hooks, without the sleep.
    fn decide<E>(&mut self, error: E) -> Result<Duration, E>
    where
        E: Classify,
        H: HookSet<E>,
    {
        let failure = Failure {
            class: error.class(),
            hint: error.retry_after(),
            allowed: self.hooks.retry_if(&error),
        };
        // The clock is read only if the verdict or the report needs it.
        let clock = &self.clock;
        let mut read = None;
        let step = self
            .decider
            .after_failure_with(self.policy, failure, || *read.insert(clock.now()));
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
                Ok(wait)
            }
            Step::GiveUp(ending) => {
                self.ending = Some(ending);
                let now = read.unwrap_or_else(|| self.clock.now());
                let report = self.decider.report(ending, now);
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

    /// How the call has gone so far; `Success` unless it gave up.
    ///
    /// ```
    /// let p = retry_core::Policy::default();
    /// let run = retry_core::Retry::new(&p).start();
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    pub fn report(&self) -> Report {
        self.decider
            .report(self.ending.unwrap_or(Ending::Success), self.clock.now())
    }
}
