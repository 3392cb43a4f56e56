//! One call's state (`Run`) and what it does at each step of the loop:
//! begin an attempt, decide after a failure, record a success, report.
//! The loop itself is `round`'s `drive!`: async calls, blocking calls,
//! `#[retry]`, tower and reqwest all go through it.
//!
//! Invariants:
//! - the policy is held for the whole call, so a reload reaches the next
//!   call and never a running one; an async `#[retry]` call under a plain
//!   policy picks it up only when its first attempt fails or first returns
//!   `Pending` (`site::SitePolicy` says exactly where), and nothing here
//!   reads the policy before that;
//! - the clock is read only when a deadline, a budget, a give-up hook, a
//!   report or hedging needs it;
//! - the wait after a failure is a sleep the loop awaits in its own state,
//!   where the failed attempt was (`round`'s `drive!`, as a loop by hand
//!   holds it): a call that retries allocates nothing for its waits;
//! - the call's one timer (an attempt's timeout, an adaptive budget's wait
//!   before the first attempt, or a hedged round's wait for its next hedge:
//!   one at a time) lives in one heap block, made the first time it is
//!   armed; a call makes at most one. An attempt's timeout counts from the
//!   attempt's start but is armed only at its first `Pending` (as
//!   `tokio::time::timeout` registers its timer only then): an attempt
//!   ready at once makes no sleep and allocates nothing. (A hedged round's
//!   attempts have their own timeouts.)

mod failed;
mod gate;
mod paced;

use crate::breaker::BreakerOpen;
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::decide::Tally;
use crate::hooks::HookSet;
use crate::policy::{Policy, Start};
use crate::report::{Ending, Report};
use crate::rng::JitterRng;
use crate::timer::Timer;
pub(crate) use gate::Gate;
use std::borrow::Borrow;
use std::fmt;
use std::time::{Duration, Instant};

/// The state of one call in progress: its policy (borrowed, or an `Arc`
/// for the registry's), clock, sleeper and hooks, and what the kernel
/// carries from one attempt to the next. Driven by `drive!`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{Hooks, Policy};
/// use retrykit_core::__private::run::{drive, Run};
/// use std::sync::Arc;
///
/// let policy = Arc::new(Policy::builder().max_attempts(3).build().unwrap());
/// let mut run = Run::for_policy(policy, Hooks::new());
/// let mut failures = 1;
/// let out: Result<u8, std::io::Error> = drive!(run, unhedged || {
///     failures -= 1;
///     let fail = failures >= 0;
///     async move { if fail { Err(std::io::ErrorKind::ConnectionReset.into()) } else { Ok(7) } }
/// });
/// assert_eq!((out.unwrap(), run.report().attempts), (7, 2));
/// # }
/// ```
pub struct Run<P, C, S: Sleeper, H> {
    /// What the policy's circuit breaker said of the attempt in flight.
    /// Declared first, so dropped first (fields drop in declaration
    /// order): right after `Run`'s own drop left it `Idle`, with nothing
    /// left of it to drop.
    pub(crate) gate: Gate,
    pub(crate) policy: P,
    rng: JitterRng,
    clock: C,
    sleeper: S,
    pub(crate) hooks: H,
    /// When the first attempt began, if something needed it read.
    started: Option<Instant>,
    /// The kernel's state: attempts begun, the last computed wait, the
    /// waits chosen so far.
    pub(crate) tally: Tally,
    /// How the call's first attempt starts and its success ends: its
    /// policy's way (`Policy::start`); `Timed` when the caller wants a
    /// report, which reads the clock; `Blocking` for blocking attempts,
    /// which cannot be cut short. A plain call's first attempt reads the
    /// clock only for a give-up hook. (One byte, laid out before the
    /// endings: the call's construction stores them together.)
    pub(crate) start: Start,
    ending: Option<Ending>,
    /// Why the call, under a hedging policy, sent no hedges (a request
    /// that cannot be sent twice).
    unhedged: Option<Ending>,
    pub(crate) timer: Timer<S::Sleep>,
    /// When the attempt in flight began, while its timeout waits to be
    /// armed at its first `Pending` ([`arm_timeout`](Self::arm_timeout)).
    timeout_from: Option<Instant>,
    /// The call's `retry` span: every round runs inside it.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

/// Dropping a call whose gate holds no ticket (every call under a policy
/// without a breaker) is one inline test; a ticket's drop (which gives a
/// half-open probe's place back) stays out of line, so the call's drop is
/// small enough to be inlined where the call ends.
impl<P, C, S: Sleeper, H> Drop for Run<P, C, S, H> {
    #[inline]
    fn drop(&mut self) {
        if let Gate::Sent(_) = self.gate {
            drop_ticket(&mut self.gate);
            // `Idle` now: forgetting it drops nothing, and tells the
            // compiler the field's own drop has nothing left to do.
            std::mem::forget(std::mem::replace(&mut self.gate, Gate::Idle));
        }
    }
}

/// Drops the ticket `gate` holds, leaving it `Idle` (out of line).
#[inline(never)]
fn drop_ticket(gate: &mut Gate) {
    *gate = Gate::Idle;
}

/// What a call holds of its policy: the policy itself (borrowed, or an
/// `Arc`), or, for an async `#[retry]` call under a plain policy, where to
/// pick it up ([`SitePolicy`](crate::site::SitePolicy)). `Run` reads the
/// policy (`Borrow`) only after [`hold`](Self::hold), unless
/// it was held as the call began ([`held`](Self::held)).
pub trait CallPolicy: Borrow<Policy> {
    /// The policy's name, for the call's span.
    fn name(&self) -> Option<&str> {
        self.borrow().name()
    }

    /// Makes sure the policy is held, before its first read after the
    /// start; `true` when it was picked up just now.
    #[inline]
    fn hold(&mut self) -> bool {
        false
    }

    /// The policy, if held.
    fn held(&self) -> Option<&Policy> {
        Some(self.borrow())
    }
}

impl CallPolicy for &Policy {}
impl CallPolicy for std::sync::Arc<Policy> {}

/// How a call is set up (the parts `Run::new` takes).
pub(crate) struct Setup<C, S, H> {
    pub(crate) clock: C,
    pub(crate) sleeper: S,
    pub(crate) hooks: H,
    pub(crate) seed: Option<u64>,
    pub(crate) timed: bool,
    pub(crate) cancellable: bool,
}

#[cfg(feature = "tokio")]
impl<H> Run<std::sync::Arc<Policy>, crate::clock::DefaultClock, crate::clock::DefaultSleeper, H> {
    /// A call under a shared policy (a `#[retry]` site's, from its
    /// [`PolicyCache`](crate::__private::site::PolicyCache)) on tokio's
    /// clock and timer.
    ///
    /// ```
    /// use retrykit_core::{Hooks, Policy};
    /// let run = retrykit_core::__private::run::Run::for_policy(Policy::default().into(), Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    #[inline]
    pub fn for_policy(policy: std::sync::Arc<Policy>, hooks: H) -> Self {
        Run::on_tokio(policy, hooks)
    }
}

#[cfg(feature = "tokio")]
impl<H> Run<crate::site::SitePolicy, crate::clock::DefaultClock, crate::clock::DefaultSleeper, H> {
    /// An async `#[retry]` call at the site whose policy `cache` keeps, on
    /// tokio's clock and timer: it holds what
    /// [`PolicyCache::start`](crate::__private::site::PolicyCache::start) gives.
    ///
    /// ```
    /// use retrykit_core::Hooks;
    /// use retrykit_core::__private::site::{CallSite, PolicyCache};
    /// static CACHE: PolicyCache = PolicyCache::new(CallSite::new("run-doc-site", file!(), line!(), "doc"));
    /// let run = retrykit_core::__private::run::Run::for_site(&CACHE, Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    #[inline]
    pub fn for_site(cache: &'static crate::site::PolicyCache, hooks: H) -> Self {
        Run::on_tokio(cache.start(), hooks)
    }
}

#[cfg(feature = "tokio")]
impl<P: CallPolicy, H> Run<P, crate::clock::DefaultClock, crate::clock::DefaultSleeper, H> {
    #[inline]
    fn on_tokio(policy: P, hooks: H) -> Self {
        Run::new(
            policy,
            Setup {
                clock: Default::default(),
                sleeper: Default::default(),
                hooks,
                seed: None,
                timed: false,
                cancellable: true,
            },
        )
    }
}

impl<P: CallPolicy, C, S: Sleeper, H> Run<P, C, S, H> {
    /// A call about to make its first attempt under `policy`.
    #[inline]
    pub(crate) fn new(policy: P, setup: Setup<C, S, H>) -> Self {
        // A policy not held yet is a `#[retry]` site's plain one.
        let start = match policy.held() {
            _ if !setup.cancellable => Start::Blocking,
            _ if setup.timed => Start::Timed,
            Some(policy) => policy.start(),
            None => Start::Plain,
        };
        #[cfg(feature = "tracing")]
        let span = {
            let name = policy.name().unwrap_or("<unnamed>");
            tracing::debug_span!("retry", policy = name)
        };
        Run {
            policy,
            rng: JitterRng::from_seed(setup.seed),
            clock: setup.clock,
            sleeper: setup.sleeper,
            hooks: setup.hooks,
            started: None,
            tally: Tally::default(),
            start,
            ending: None,
            unhedged: None,
            gate: Gate::Idle,
            timer: Timer::default(),
            timeout_from: None,
            #[cfg(feature = "tracing")]
            span,
        }
    }

    /// The call's policy (see [`CallPolicy`]).
    pub(crate) fn policy(&self) -> &Policy {
        self.policy.borrow()
    }

    /// Picks the call's policy up if it does not hold it yet (see
    /// [`CallPolicy::hold`]); the call stays plain only if the policy is.
    #[inline]
    pub(crate) fn hold_policy(&mut self) {
        if self.policy.hold() && self.start == Start::Plain && !self.policy().starts_plainly() {
            self.start = Start::General;
        }
    }

    /// The call's `retry` span.
    #[cfg(feature = "tracing")]
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// How the call has gone so far; `Success` unless it gave up.
    ///
    /// ```
    /// use retrykit_core::{Ending, Hooks, Policy};
    /// let run = retrykit_core::__private::run::Run::for_policy(Policy::default().into(), Hooks::new());
    /// assert_eq!(run.report().ending, Ending::Success);
    /// ```
    pub fn report(&self) -> Report
    where
        C: Clock,
    {
        self.report_at(self.ending.unwrap_or(Ending::Success), self.clock.now())
    }

    /// The report of the call ending as `ending` at `now`.
    fn report_at(&self, ending: Ending, now: Instant) -> Report {
        let report = Report {
            ending,
            attempts: self.tally.attempts,
            hedges: u32::from(self.tally.hedges),
            winner: if self.tally.winner == 0 {
                self.tally.attempts
            } else {
                u32::from(self.tally.winner)
            },
            unhedged: self.unhedged,
            refused: self.tally.refused,
            waited: self.tally.waited(),
            elapsed: elapsed(self.started, now),
            budget_failing_open: false,
        };
        // A policy not held yet is plain: it has no budget.
        match self.policy.held() {
            Some(policy) => report.budget_state(policy),
            None => report,
        }
    }
}

impl<P: CallPolicy, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Begins an attempt: counts it, starts the call's clock when the
    /// policy, a give-up hook or the caller's report needs it (depositing
    /// in the window budgets), asks the policy's breaker, and arms the
    /// attempt's timeout if any. `Some` is the breaker's refusal, which
    /// error type `E` can stand for: the attempt must not be sent.
    #[inline]
    pub(crate) fn begin_attempt<E>(&mut self) -> Option<Box<BreakerOpen>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        self.tally.attempts = self.tally.attempts.saturating_add(1);
        if self.start == Start::Plain {
            // A plain call's retry needs nothing begun: its policy is held
            // (the decision before it picked it up), and it has no breaker
            // to ask and no timeout to arm. Its first attempt reads the
            // clock only for a give-up hook.
            if self.tally.attempts != 1 || !self.hooks.wants_give_up() {
                return None;
            }
        } else if self.start == Start::Guarded
            // A policy that needs only its local breaker, when it is closed,
            // in a call that needs no clock read.
            && self.tally.attempts == 1
            && !self.hooks.wants_give_up()
            && self.let_through_closed()
        {
            return None;
        }
        self.begin_attempt_slowly::<E>()
    }

    /// [`begin_attempt`](Self::begin_attempt) for a first attempt that
    /// reads the clock, asks a breaker or arms a timeout, or a retry of a
    /// call that is not plain.
    #[cold]
    #[inline(never)]
    fn begin_attempt_slowly<E>(&mut self) -> Option<Box<BreakerOpen>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        self.hold_policy();
        let policy: &Policy = self.policy.borrow();
        let needs_clock = matches!(self.start, Start::Timed | Start::Blocking)
            || self.hooks.wants_give_up()
            || policy.deadline().is_some()
            || !policy.budgets.is_empty()
            || policy.breaker.is_some();
        let mut now = None;
        if self.tally.attempts == 1 && self.started.is_none() && needs_clock {
            let start = *now.insert(self.clock.now());
            self.started = Some(start);
            if !policy.budgets.is_empty() {
                policy.budgets.deposit(start);
            }
        }
        if let Some(breaker) = &policy.breaker {
            let now = now.unwrap_or_else(|| self.clock.now());
            match breaker.try_acquire(now) {
                Ok(ticket) => self.gate = Gate::Sent(ticket),
                // Held back only when the type can say so (the error is
                // built again when the refused attempt is polled).
                Err(open) if E::from_breaker_open(open.clone()).is_some() => {
                    // Counted (`tally.refused`) by the decision it goes to.
                    self.gate = Gate::Refused(open.retry_in());
                    self.timer.disarm();
                    self.timeout_from = None;
                    #[cfg(feature = "metrics")]
                    crate::metrics::breaker_refused(policy);
                    return Some(Box::new(open));
                }
                // The type cannot say so: the attempt goes, uncounted.
                Err(_) => crate::breaker::uncarried::<E>(breaker),
            }
        }
        // The timeout counts from now; `arm_timeout` arms it if the attempt
        // is not ready at once.
        self.timer.disarm();
        self.timeout_from = (policy.attempt_timeout().is_some() && self.start != Start::Blocking)
            .then(|| now.unwrap_or_else(|| self.clock.now()));
        None
    }

    /// Arms the timeout of the attempt in flight, for what is left of it,
    /// at the attempt's first `Pending`; nothing once armed, or without one.
    #[inline]
    pub(crate) fn arm_timeout(&mut self) {
        if let Some(began) = self.timeout_from.take() {
            self.arm_timeout_slowly(began);
        }
    }

    #[cold]
    #[inline(never)]
    fn arm_timeout_slowly(&mut self, began: Instant) {
        let limit = self.policy().attempt_timeout().unwrap_or_default();
        let spent = self.clock.now().saturating_duration_since(began);
        self.timer
            .arm(self.sleeper.sleep(limit.saturating_sub(spent)));
    }

    /// The call ended in success: an adaptive budget hears of it, and
    /// metrics record how the call ended (with `decide`'s giving up, the
    /// one place that does, whichever entry point).
    #[inline]
    pub(crate) fn succeeded(&mut self) {
        if self.start == Start::Plain && !cfg!(feature = "metrics") {
            return;
        }
        if self.record_closed_success() && !cfg!(feature = "metrics") {
            return;
        }
        self.hold_policy();
        self.record_success();
        let policy: &Policy = self.policy.borrow();
        policy.budgets.throttle(false);
        if policy.budgets.paces() {
            paced::record_success(policy, &self.clock);
        }
        #[cfg(feature = "metrics")]
        crate::metrics::ended(policy, Ending::Success, self.tally.attempts);
    }
}

impl<P: CallPolicy, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether the call hedges: its policy does (`hedge_after`) and its
    /// request may be sent twice (see [`unhedged`](Self::unhedged)); then
    /// `drive!` runs its rounds as races ([`Run::race`]). Never true for a
    /// plain policy.
    #[inline]
    pub fn hedges(&self) -> bool {
        self.start != Start::Plain && self.policy().hedging().is_some() && self.unhedged.is_none()
    }

    /// Records that the call runs unhedged because its request cannot be
    /// sent twice (`why`), if its policy hedges; the report says so.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn unhedged(&mut self, why: Ending) {
        if self.hedges() {
            self.unhedged = Some(why);
        }
    }

    /// The call's clock, now.
    pub(crate) fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Starts the call's clock at `now` (a hedged call reads it from its
    /// first attempt on).
    pub(crate) fn start_clock(&mut self, now: Instant) {
        self.started.get_or_insert(now);
    }

    /// Time since the call's first attempt began (zero when not read).
    pub(crate) fn elapsed(&self, now: Instant) -> Duration {
        elapsed(self.started, now)
    }

    /// A sleep of `wait` on the call's sleeper.
    pub(crate) fn sleep(&self, wait: Duration) -> S::Sleep {
        self.sleeper.sleep(wait)
    }
}

impl<P: CallPolicy, C, S: Sleeper, H> fmt::Debug for Run<P, C, S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("policy", &self.policy.name())
            .field("tally", &self.tally)
            .field("ending", &self.ending)
            .finish_non_exhaustive()
    }
}

/// Time since `started` (zero when the start was not read).
fn elapsed(started: Option<Instant>, now: Instant) -> Duration {
    started.map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
}
