//! One call's state (`Run`) and what it does at each step of the loop:
//! begin an attempt, decide after a failure, record a success, report.
//! The loop itself is `round`'s `drive!`: async calls, blocking calls,
//! `#[retry]`, tower and reqwest all go through it.
//!
//! Invariants:
//! - the call takes its policy once, as it starts, and holds it to its
//!   end (borrowed, or an `Arc` from the registry's snapshot), so a reload
//!   reaches the next call and never a running one;
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
use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::decide::{Tally, time_limit};
use crate::hooks::HookSet;
use crate::observe::{self, Event};
use crate::policy::Policy;
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
    /// The call's policy, held from its start to its end.
    pub(crate) policy: P,
    /// What the policy's circuit breaker said of the attempt in flight.
    pub(crate) gate: Gate,
    rng: JitterRng,
    clock: C,
    sleeper: S,
    pub(crate) hooks: H,
    /// When the first attempt began, if something needed it read.
    started: Option<Instant>,
    /// The kernel's state: attempts begun, the last computed wait, the
    /// waits chosen so far.
    pub(crate) tally: Tally,
    /// The caller wants a report: the clock is read as the call starts,
    /// even when its policy does not need it.
    timed: bool,
    /// Attempts can be cut short; a blocking attempt cannot, so no
    /// timeout is armed for it.
    cancellable: bool,
    ending: Option<Ending>,
    /// Why the call, under a hedging policy, sent no hedges (a request
    /// that cannot be sent twice).
    unhedged: Option<Ending>,
    pub(crate) timer: Timer<S::Sleep>,
    /// When the attempt in flight began, while its time limit waits to be
    /// armed at its first `Pending` ([`arm_timeout`](Self::arm_timeout)).
    timeout_from: Option<Instant>,
    /// The call's timer, when it fires, ends the attempt in flight at the
    /// deadline (not at its own timeout).
    at_deadline: bool,
    /// The call's `retry` span: every round runs inside it.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

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
    /// clock and timer. The call holds it to its end.
    ///
    /// ```
    /// use retrykit_core::{Hooks, Policy};
    /// let run = retrykit_core::__private::run::Run::for_policy(Policy::default().into(), Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    pub fn for_policy(policy: std::sync::Arc<Policy>, hooks: H) -> Self {
        Run::on_tokio(policy, hooks)
    }

    /// An async `#[retry]` call at the site whose policy `cache` keeps, on
    /// tokio's clock and timer: the call takes the site's policy as it
    /// starts ([`PolicyCache::policy`](crate::__private::site::PolicyCache::policy)).
    ///
    /// ```
    /// use retrykit_core::Hooks;
    /// use retrykit_core::__private::site::{CallSite, PolicyCache};
    /// static CACHE: PolicyCache = PolicyCache::new(CallSite::new("run-doc-site", file!(), line!(), "doc"));
    /// let run = retrykit_core::__private::run::Run::for_site(&CACHE, Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    pub fn for_site(cache: &crate::site::PolicyCache, hooks: H) -> Self {
        Run::on_tokio(cache.policy(), hooks)
    }
}

#[cfg(feature = "tokio")]
impl<P: Borrow<Policy>, H> Run<P, crate::clock::DefaultClock, crate::clock::DefaultSleeper, H> {
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

impl<P: Borrow<Policy>, C, S: Sleeper, H> Run<P, C, S, H> {
    /// A call about to make its first attempt under `policy`.
    pub(crate) fn new(policy: P, setup: Setup<C, S, H>) -> Self {
        #[cfg(feature = "tracing")]
        let span = {
            let name = policy.borrow().name().unwrap_or("<unnamed>");
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
            timed: setup.timed,
            cancellable: setup.cancellable,
            ending: None,
            unhedged: None,
            gate: Gate::Idle,
            timer: Timer::default(),
            timeout_from: None,
            at_deadline: false,
            #[cfg(feature = "tracing")]
            span,
        }
    }

    /// The call's policy.
    pub(crate) fn policy(&self) -> &Policy {
        self.policy.borrow()
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
        report.budget_state(self.policy.borrow())
    }
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Begins an attempt: counts it, starts the call's clock when the
    /// policy, a give-up hook or the caller's report needs it (depositing
    /// in the window budgets), asks the policy's breaker, and notes when
    /// the attempt's timeout counts from. `Some` is the breaker's refusal,
    /// which error type `E` can stand for: the attempt must not be sent.
    pub(crate) fn begin_attempt<E>(&mut self) -> Option<Box<BreakerOpen>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        self.tally.attempts = self.tally.attempts.saturating_add(1);
        let policy: &Policy = self.policy.borrow();
        let starts_clock = self.timed
            || self.hooks.wants_give_up()
            || policy.deadline().is_some()
            || !policy.budgets.is_empty()
            || policy.breaker.is_some();
        let mut now = None;
        if self.tally.attempts == 1 && self.started.is_none() && starts_clock {
            let start = *now.insert(self.clock.now());
            self.started = Some(start);
            if !policy.budgets.is_empty() {
                policy.budgets.deposit(start);
            }
        }
        if let Some(breaker) = &policy.breaker {
            let now = *now.get_or_insert_with(|| self.clock.now());
            match breaker.try_acquire(now) {
                Ok(ticket) => self.gate = Gate::Sent(ticket),
                // Held back only when the type can say so (the error is
                // built again when the refused attempt is polled).
                Err(open) if E::from_breaker_open(open.clone()).is_some() => {
                    // Counted (`tally.refused`) by the decision it goes to.
                    self.gate = Gate::Refused(open.retry_in());
                    self.timer.disarm();
                    self.timeout_from = None;
                    observe::emit(Event::BreakerRefused {
                        policy: policy.name.as_ref(),
                    });
                    return Some(Box::new(open));
                }
                // The type cannot say so: the attempt goes, uncounted.
                Err(_) => crate::breaker::uncarried::<E>(breaker),
            }
        }
        // The time limit counts from now; `arm_timeout` arms it if the
        // attempt is not ready at once.
        self.timer.disarm();
        let limited = policy.attempt_timeout().is_some() || policy.deadline().is_some();
        self.timeout_from =
            (limited && self.cancellable).then(|| now.unwrap_or_else(|| self.clock.now()));
        None
    }

    /// What the attempt in flight ends with now that the call's timer
    /// fired: its own timeout, or the deadline.
    pub(crate) fn timed_out(&self) -> AttemptTimeout {
        let policy = self.policy();
        let attempt = self.tally.attempts;
        match self.at_deadline {
            true => AttemptTimeout::at_deadline(attempt, policy.deadline().unwrap_or_default()),
            false => AttemptTimeout::new(attempt, policy.attempt_timeout().unwrap_or_default()),
        }
    }

    /// Arms the time limit of the attempt in flight ([`time_limit`]), for
    /// what is left of it, at the attempt's first `Pending`; nothing once
    /// armed, or without one.
    pub(crate) fn arm_timeout(&mut self) {
        if let Some(began) = self.timeout_from.take() {
            let into_call = elapsed(self.started, began);
            let limit = time_limit(self.policy(), self.tally.attempts, into_call);
            if let Some((limit, timeout)) = limit {
                let spent = self.clock.now().saturating_duration_since(began);
                self.at_deadline = timeout.deadline;
                self.timer
                    .arm(self.sleeper.sleep(limit.saturating_sub(spent)));
            }
        }
    }

    /// The call ended in success: the breaker and an adaptive budget hear
    /// of it, and metrics record how the call ended (with `decide`'s giving
    /// up, the one place that does, whichever entry point).
    pub(crate) fn succeeded(&mut self) {
        let sent = std::mem::replace(&mut self.gate, Gate::Idle);
        self.record(sent, None);
        let policy: &Policy = self.policy.borrow();
        policy.budgets.throttle(false);
        if policy.budgets.paces() {
            paced::record_success(policy, &self.clock);
        }
        observe::emit(Event::Ended {
            policy: policy.name.as_ref(),
            ending: Ending::Success.as_str(),
            budget_empty: false,
            attempts: self.tally.attempts,
        });
    }
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether the call hedges: its policy does (`hedge_after`) and its
    /// request may be sent twice (see [`unhedged`](Self::unhedged)); then
    /// `drive!` runs its rounds as races ([`Run::race`]).
    pub fn hedges(&self) -> bool {
        self.policy().hedging().is_some() && self.unhedged.is_none()
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

impl<P: Borrow<Policy>, C, S: Sleeper, H> fmt::Debug for Run<P, C, S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("policy", &self.policy.borrow().name())
            .field("tally", &self.tally)
            .field("ending", &self.ending)
            .finish_non_exhaustive()
    }
}

/// Time since `started` (zero when the start was not read).
fn elapsed(started: Option<Instant>, now: Instant) -> Duration {
    started.map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
}
