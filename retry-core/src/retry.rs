//! The retry loop. [`Retry`] configures one call; `Run` is its per-call
//! state, and one round of the loop (`round::poll_round`) is what async
//! calls, blocking calls and `#[retry]` functions all run through: the same
//! attempt, the same decision (the kernel in `decide`), the same hooks,
//! span, events, end reason and report, whichever the caller.

use crate::call_policy::{CallPolicy, Lent};
#[cfg(feature = "tokio")]
use crate::call_policy::{Site, SitePolicy};
use crate::classify::Classify;
use crate::clock::{
    BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock, ThreadSleeper,
};
use crate::decide::{Failure, Owed, Step, Tally, decide, in_policy};
use crate::hooks::{GiveUpEvent, HookSet, Hooks, RetryEvent};
use crate::policy::Policy;
use crate::report::{Ending, Report};
use crate::rng::JitterRng;
use crate::round::{Call, Round};
use crate::start::Start;
use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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
    pub fn start(self) -> Run<Lent<'p>, C, S, H>
    where
        S: Sleeper,
    {
        self.start_run(false)
    }

    /// The per-call state; `timed` reads the clock at the first attempt even
    /// when neither a deadline nor a budget needs it, so the caller's report
    /// has `elapsed` (a give-up hook asks for the same in [`Run::round`]).
    fn start_run(self, timed: bool) -> Run<Lent<'p>, C, S, H>
    where
        S: Sleeper,
    {
        let name = run_name(self.policy.name());
        let parts = (self.clock, self.sleeper, self.hooks);
        Run::with(Lent::new(self.policy, self.seed), name, parts, timed)
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
    /// enforced here (a warning says so, once per place in the code); the
    /// deadline is.
    ///
    /// ```
    /// use retry_core::{Policy, Retry};
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
    #[track_caller]
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
    #[track_caller]
    fn blocking_run<F, T, E, R>(
        self,
        mut op: F,
        finish: impl for<'r> FnOnce(Result<T, E>, &Run<Lent<'p>, C, Blocked<'r, S>, H>) -> R,
    ) -> R
    where
        F: FnMut() -> Result<T, E>,
        E: Classify,
        C: Clock,
        S: BlockingSleeper,
        H: HookSet<E>,
    {
        if self.policy.attempt_timeout().is_some() {
            crate::site::warn_blocking_timeout(std::panic::Location::caller(), self.policy);
        }
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
/// polled, not when made.
#[derive(Debug)]
pub(crate) struct Blocked<'s, S>(&'s S);

impl<'s, S: BlockingSleeper> Sleeper for Blocked<'s, S> {
    type Sleep = ThreadSleep<'s, S>;
    // A blocking attempt cannot be cancelled: no timer is armed for it.
    const TIMES_ATTEMPTS: bool = false;
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

/// The policy's name as the call's span shows it.
fn run_name(name: Option<&str>) -> &str {
    name.unwrap_or("<unnamed>")
}

/// The state of one call in progress. Not public API: `#[retry]` drives it
/// through [`Run::round`].
///
/// Until it needs a timer it holds only what the first attempt needs (the
/// start time, when something needs it). The kernel's state and the call's
/// one timer (an attempt's timeout, or the wait: never both at once) live on
/// the heap (`Retrying`), made by the first attempt that has a timeout or
/// the first retry. So the future of a call that succeeds at once is small
/// and builds no decision state, and a call that needs a timer pays at most
/// one allocation, however many attempts and waits follow (none when its
/// sleeper kept the block of an earlier call on the thread).
#[doc(hidden)]
pub struct Run<P, C, S: Sleeper, H> {
    /// The call's policy (see `call_policy`).
    policy: P,
    clock: C,
    sleeper: S,
    hooks: H,
    /// When the first attempt began, if something needed it read.
    started: Start,
    /// Whether the first attempt began (the attempt count until a retry).
    began: bool,
    timed: bool,
    ending: Option<Ending>,
    /// From the first timer on: the kernel's state and the timer.
    retrying: RetryingSlot<S>,
    /// The call's `retry` span: every round runs inside it.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

pin_project_lite::pin_project! {
    /// What a call needs once it has a timer: the kernel's state and the
    /// timer, an attempt's timeout or the wait after a failure.
    pub(crate) struct Retrying<Sl> {
        tally: Tally,
        #[pin]
        timer: Option<Sl>,
    }
}

/// A call's `Retrying` block, handed to its sleeper when the call ends so the
/// thread's next call that retries can reuse it (see
/// `Sleeper::keep_block`). Only the sleeper keeps it; nothing else can
/// open it.
///
/// ```
/// use retry_core::__private::kernel::Block;
/// // One pointer: handing a block over moves no more than that.
/// assert_eq!(size_of::<Block<std::future::Ready<()>>>(), size_of::<usize>());
/// ```
pub struct Block<Sl>(Pin<Box<Retrying<Sl>>>);

impl<Sl> Block<Sl> {
    /// The block with its timer dropped: a kept block holds no timer (and so
    /// nothing of the runtime that made it).
    pub(crate) fn disarmed(mut self) -> Self {
        self.0.as_mut().project().timer.set(None);
        self
    }
}

impl<Sl> fmt::Debug for Block<Sl> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Block")
            .field("armed", &self.0.timer.is_some())
            .finish_non_exhaustive()
    }
}

/// Where a call keeps its `Retrying` block once it has one. Its own type
/// for its drop: dropping a call that never made one is an inline null
/// check, and the block's return to its sleeper stays out of line.
struct RetryingSlot<S: Sleeper>(Option<Pin<Box<Retrying<S::Sleep>>>>);

impl<S: Sleeper> Drop for RetryingSlot<S> {
    #[inline]
    fn drop(&mut self) {
        if let Some(retrying) = self.0.take() {
            keep_retrying::<S>(retrying);
        }
    }
}

impl<S: Sleeper> RetryingSlot<S> {
    /// Arms the call's one timer with `sleep`; a call without a block yet
    /// gets one (the one its sleeper kept from an earlier call on this
    /// thread, or a new one), its kernel state from `first`. The block is
    /// found before the timer moves in: built whole on the stack first, its
    /// copy of the timer came straight after the timer's maker (tokio's
    /// `sleep`, out of line, returning through memory) and waited for its
    /// stores to retire (half of `decide`'s time in the profile).
    #[inline]
    fn arm(&mut self, sleep: S::Sleep, first: impl FnOnce() -> Tally) {
        let retrying = match &mut self.0 {
            Some(retrying) => retrying,
            None => self.0.insert(match S::reuse_block() {
                Some(Block(mut kept)) => {
                    *kept.as_mut().project().tally = first();
                    kept
                }
                None => Box::pin(Retrying {
                    tally: first(),
                    timer: None,
                }),
            }),
        };
        retrying.as_mut().project().timer.set(Some(sleep));
    }

    /// Disarms the call's timer, if it has one.
    #[inline]
    fn disarm(&mut self) {
        if let Some(retrying) = &mut self.0 {
            retrying.as_mut().project().timer.set(None);
        }
    }
}

/// Hands an ended call's block to its sleeper; out of line.
#[inline(never)]
fn keep_retrying<S: Sleeper>(retrying: Pin<Box<Retrying<S::Sleep>>>) {
    S::keep_block(Block(retrying));
}

impl<S: Sleeper> std::ops::Deref for RetryingSlot<S> {
    type Target = Option<Pin<Box<Retrying<S::Sleep>>>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<S: Sleeper> std::ops::DerefMut for RetryingSlot<S> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<P: CallPolicy, C: fmt::Debug, S: Sleeper + fmt::Debug, H: fmt::Debug> fmt::Debug
    for Run<P, C, S, H>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("policy", &self.policy.at_hand().and_then(Policy::name))
            .field("began", &self.began)
            .field("retrying", &self.retrying.as_ref().map(|r| &r.tally))
            .field("ending", &self.ending)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "tokio")]
impl<K: Site, H> Run<SitePolicy<K>, DefaultClock, DefaultSleeper, H> {
    /// A `#[retry]` call at site `K`, through the site's per-thread cache
    /// (see `SitePolicy::for_call`), on tokio's clock and timer.
    #[doc(hidden)]
    #[inline]
    pub fn for_site(hooks: H) -> Self {
        let policy = SitePolicy::<K>::for_call();
        let name = policy.name();
        let parts = (DefaultClock::default(), DefaultSleeper::default(), hooks);
        Run::with(policy, name, parts, false)
    }
}

impl<P, C, S: Sleeper, H> Run<P, C, S, H> {
    /// A call about to make its first attempt under `policy` (named `name`).
    pub(crate) fn with(
        policy: P,
        name: &str,
        (clock, sleeper, hooks): (C, S, H),
        timed: bool,
    ) -> Self {
        #[cfg(not(feature = "tracing"))]
        let _ = name;
        Run {
            policy,
            clock,
            sleeper,
            hooks,
            started: Start::UNREAD,
            began: false,
            timed,
            ending: None,
            retrying: RetryingSlot(None),
            #[cfg(feature = "tracing")]
            span: tracing::debug_span!("retry", policy = name),
        }
    }
}

impl<P: CallPolicy, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
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
    #[inline]
    pub fn round<'r, M, Fut, T, E>(&'r mut self, make: M) -> Round<'r, P, C, S, H, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        let stage = crate::round::attempt::<_, _, _, _, _, T, E>(self, make);
        Round::new(self, stage)
    }

    /// The policy this call runs under, taken now if the call has not
    /// needed it yet.
    pub(crate) fn policy_mut(&mut self) -> &Policy {
        self.policy.get()
    }

    /// Attempts begun so far.
    pub(crate) fn attempts(&self) -> u32 {
        match &*self.retrying {
            Some(retrying) => retrying.tally.attempts,
            None => u32::from(self.began),
        }
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
    #[inline]
    pub(crate) fn begin_attempt<E>(&mut self)
    where
        H: HookSet<E>,
    {
        // The common first attempt: nothing to time, arm or deposit. Kept
        // small so the whole success path inlines into the caller's poll.
        // (`retrying` is not read: before the first attempt it is only made by
        // an adaptive budget's pacing, and a budget takes the slow path.)
        if !self.began
            && !self.timed
            && !self.hooks.wants_give_up()
            && self
                .policy
                .at_hand()
                .is_none_or(Policy::starts_plainly::<S>)
        {
            self.began = true;
            return;
        }
        self.begin_attempt_slowly::<E>();
    }

    /// [`begin_attempt`](Self::begin_attempt) for every other attempt: a
    /// retry, or a first attempt that reads the clock, arms a timeout or
    /// deposits in a budget.
    #[cold]
    #[inline(never)]
    fn begin_attempt_slowly<E>(&mut self)
    where
        H: HookSet<E>,
    {
        let timed = self.timed || self.hooks.wants_give_up();
        let Some(policy) = self.policy.at_hand() else {
            // A call site's call that has not needed its policy: the start
            // made sure the first attempt needs nothing of it (no timeout, no
            // deadline, no budget), and any later attempt follows a failure,
            // which takes it.
            if !self.began {
                self.began = true;
                if timed && !self.started.is_read() {
                    self.started = Start::at(self.clock.now());
                }
            }
            return;
        };
        // The limit, not a timer: an `Option` of a timer made on one path
        // and empty on the other was copied whole into the block, straight
        // after its discriminant's store (a stall that was half of this
        // function's time for a policy without a timeout).
        let limit = policy.attempt_timeout().filter(|_| S::TIMES_ATTEMPTS);
        if let Some(retrying) = &mut *self.retrying {
            let tally = retrying.as_mut().project().tally;
            tally.attempts = tally.attempts.saturating_add(1);
            match limit {
                Some(limit) => {
                    let timeout = self.sleeper.sleep(limit);
                    self.retrying.arm(timeout, Tally::default);
                }
                None => self.retrying.disarm(),
            }
            return;
        }
        if !self.began {
            self.began = true;
            let needs_start = timed || policy.deadline().is_some() || !policy.budgets.is_empty();
            if needs_start && !self.started.is_read() {
                let now = self.clock.now();
                self.started = Start::at(now);
                policy.budgets.deposit(now);
            }
        }
        if let Some(limit) = limit {
            let timeout = self.sleeper.sleep(limit);
            let first = self.first_tally();
            self.retrying.arm(timeout, || first);
        }
    }

    /// How long an adaptive budget makes the call's first attempt wait,
    /// asked before it begins (which starts the call); `None` when it may go
    /// at once, or once the call has started; one branch for a policy
    /// without an adaptive budget. A wait that would reach the deadline is
    /// not taken: there is no error yet to end the call with, so the attempt
    /// goes at once (its tokens stay taken, so the calls that follow wait for
    /// them) and the budget says so, once.
    #[inline]
    pub(crate) fn pace_first_attempt(&mut self) -> Option<Duration> {
        let policy = self.policy.at_hand()?;
        if !policy.budgets.paces() || self.began || self.started.is_read() {
            return None;
        }
        self.pace_first_attempt_slowly()
    }

    /// [`pace_first_attempt`](Self::pace_first_attempt) under an adaptive
    /// budget: out of line, so a policy without one inlines only the check.
    #[cold]
    #[inline(never)]
    fn pace_first_attempt_slowly(&mut self) -> Option<Duration> {
        let policy = self.policy.at_hand()?;
        let now = self.clock.now();
        self.started = Start::at(now);
        policy.budgets.deposit(now);
        let wait = policy.budgets.pace_first(now);
        if policy.deadline().is_some_and(|deadline| wait >= deadline) {
            policy.budgets.unpaced_first_attempt(policy.name(), wait);
            return None;
        }
        (!wait.is_zero()).then_some(wait)
    }

    /// Arms the call's timer for a wait before its first attempt.
    pub(crate) fn wait_before_first_attempt(&mut self, wait: Duration) {
        let timer = self.sleeper.sleep(wait);
        let first = self.first_tally();
        self.retrying.arm(timer, || first);
    }

    /// The decision and its hooks. On a retry the wait is armed (see
    /// [`poll_timer`](Self::poll_timer)); on giving up the error comes back.
    /// Out of line: the success path stays small enough to inline.
    #[inline(never)]
    pub(crate) fn decide<E>(&mut self, error: E) -> Result<(), E>
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
        // The start too: turning it back into an `Instant` is a call (it
        // reads the process's origin), made only with the clock.
        let (clock, started) = (&self.clock, self.started);
        let mut read = None;
        let now = || {
            let now = *read.insert(clock.now());
            (elapsed(started.get(), now), now)
        };
        // Before the first retry the kernel's state is made on the stack; it
        // moves to the heap only if the call retries.
        let mut fresh = self.first_tally();
        let rng = self.rng();
        // A failure is where a call site's call takes its policy.
        let policy: &Policy = self.policy.get();
        let tally = match &mut *self.retrying {
            Some(retrying) => retrying.as_mut().project().tally,
            None => &mut fresh,
        };
        let step = decide(policy, tally, rng, failure, Owed::Nothing, now);
        // Read field by field, not copied whole: a whole copy right after
        // the kernel's narrower stores waited for them to retire (a
        // store-forwarding stall that was a fifth of a retry's time).
        let attempts = tally.attempts;
        match step {
            Step::Retry { wait, hinted } => {
                let event = RetryEvent {
                    policy: policy.name(),
                    attempt: attempts,
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
                crate::metrics::retried(policy, wait, failure.hint, hinted);
                let sleep = self.sleeper.sleep(wait);
                self.retrying.arm(sleep, || fresh.fresh_copy());
                Ok(())
            }
            Step::GiveUp(ending) => {
                // The kernel refuses a request that cannot be sent again as
                // it refuses any disallowed retry; the call says which it was.
                let ending = match unrepeatable {
                    Some(why) if allowed && in_policy(policy, failure.class) => why.ending(),
                    _ => ending,
                };
                self.ending = Some(ending);
                #[cfg(feature = "metrics")]
                crate::metrics::ended(policy, ending, attempts);
                let now = read.unwrap_or_else(|| self.clock.now());
                let report = report_of(Some(policy), started.get(), tally, ending, now);
                #[cfg(feature = "tracing")]
                tracing::debug!(
                    ending = ending.as_str(),
                    attempts = report.attempts,
                    waited_ms = report.waited.as_millis() as u64,
                    "giving up"
                );
                self.hooks.on_give_up(&GiveUpEvent {
                    policy: policy.name(),
                    error: &error,
                    report: &report,
                });
                Err(error)
            }
        }
    }

    /// Polls the call's timer (the attempt's timeout, or the wait `decide`
    /// armed); `None` when none is armed. A timer that fired is disarmed.
    pub(crate) fn poll_timer(&mut self, cx: &mut Context<'_>) -> Option<Poll<()>> {
        let mut timer = self.retrying.as_mut()?.as_mut().project().timer;
        let fired = timer.as_mut().as_pin_mut()?.poll(cx);
        if fired.is_ready() {
            timer.set(None);
        }
        Some(fired)
    }

    /// The call ended in success. With `decide`'s giving up, the one place
    /// that records how calls end (for metrics), whichever entry point.
    #[inline]
    pub(crate) fn succeeded(&self) {
        // A call that has not taken its policy has neither budgets nor
        // metrics to tell (the start made sure of it).
        let Some(policy) = self.policy.at_hand() else {
            return;
        };
        if policy.budgets.paces() {
            record_success(policy, &self.clock);
        }
        #[cfg(feature = "metrics")]
        crate::metrics::ended(policy, Ending::Success, self.attempts());
    }

    /// The kernel's state before the call's first retry: the attempt begun
    /// (if any), nothing waited.
    fn first_tally(&self) -> Tally {
        Tally::new(u32::from(self.began), Duration::ZERO, Duration::ZERO)
    }

    /// The jitter's source for this call.
    fn rng(&self) -> JitterRng {
        JitterRng::from_seed(self.policy.seed())
    }

    /// How the call has gone so far; `Success` unless it gave up.
    pub fn report(&self) -> Report {
        let ending = self.ending.unwrap_or(Ending::Success);
        let first = self.first_tally();
        let tally = self.retrying.as_ref().map_or(&first, |r| &r.tally);
        report_of(
            self.policy.at_hand(),
            self.started.get(),
            tally,
            ending,
            self.clock.now(),
        )
    }
}

/// Tells `policy`'s adaptive budgets that a call succeeded; out of line, so
/// a policy without one inlines only the check.
#[cold]
#[inline(never)]
fn record_success(policy: &Policy, clock: &impl Clock) {
    policy.budgets.record(clock.now(), false);
}

/// The report of a call started at `started` whose kernel state is `tally`,
/// ending at `now`; `policy` says whether a budget failed open (a call that
/// has not taken its policy has no budget).
fn report_of(
    policy: Option<&Policy>,
    started: Option<Instant>,
    tally: &Tally,
    ending: Ending,
    now: Instant,
) -> Report {
    let report = Report {
        ending,
        attempts: tally.attempts,
        waited: tally.waited(),
        elapsed: elapsed(started, now),
        budget_failing_open: false,
    };
    match policy {
        Some(policy) => report.budget_state(policy),
        None => report,
    }
}

/// Time since `started` (zero when the start was not read).
fn elapsed(started: Option<Instant>, now: Instant) -> Duration {
    started.map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
}
