//! One call's state (`Run`) and what it does at each step of `round`'s
//! `drive!` loop: begin an attempt, decide after a failure, record a
//! success, report.
//!
//! Invariants:
//! - the call takes its policy once, as it starts, and holds it to its
//!   end, so a reload reaches the next call and never a running one;
//! - the clock is read only when a deadline, a budget, a give-up hook, a
//!   report or hedging needs it;
//! - the call's one timer (an attempt's timeout, an adaptive budget's
//!   first wait, or a hedged round's wait for its next hedge) lives in one
//!   heap block, made the first time it is armed. An attempt's timeout
//!   counts from the attempt's start but is armed only at its first
//!   `Pending`, as `tokio::time::timeout` does: an attempt ready at once
//!   allocates nothing.

mod admit;
mod chaos;
mod failed;
mod gate;
mod paced;

use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::decide::{Tally, time_limit};
use crate::hooks::HookSet;
use crate::observe::{self, Event};
use crate::policy::Policy;
use crate::report::{Ending, Report};
use crate::timer::Timer;
pub(crate) use gate::{Gate, Refusal};
use std::borrow::Borrow;
use std::fmt;
use std::time::{Duration, Instant};

/// The state of one call in progress, driven by `drive!`.
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
    pub(crate) policy: P,
    pub(crate) gate: Gate,
    /// The jitter seed (`None`: the thread's generator).
    seed: Option<u64>,
    clock: C,
    sleeper: S,
    pub(crate) hooks: H,
    /// When the first attempt began, if something needed it read.
    started: Option<Instant>,
    pub(crate) tally: Tally,
    /// The caller wants a report: the clock is read as the call starts.
    pub(crate) timed: bool,
    /// Attempts can be cut short (a blocking one cannot: no timeout is armed).
    pub(crate) cancellable: bool,
    ending: Option<Ending>,
    /// Why a call under a hedging policy sends no hedges.
    unhedged: Option<Ending>,
    pub(crate) timer: Timer<S::Sleep>,
    /// When the attempt in flight began, until [`arm_timeout`](Self::arm_timeout).
    timeout_from: Option<Instant>,
    /// The armed timer ends the attempt at the deadline, not its own timeout.
    at_deadline: bool,
    /// The permit of the policy's concurrency limit that the attempt about
    /// to be made, or in flight, holds (a hedged round's attempts hold
    /// their own).
    pub(crate) permit: Option<crate::limit::Permit>,
    /// The attempt in flight is a fault chaos injected.
    pub(crate) faulted: bool,
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

#[cfg(feature = "tokio")]
impl<H> Run<std::sync::Arc<Policy>, crate::clock::DefaultClock, crate::clock::DefaultSleeper, H> {
    /// A call under a shared policy, on tokio's clock and timer.
    ///
    /// ```
    /// use retrykit_core::{Hooks, Policy};
    /// let run = retrykit_core::__private::run::Run::for_policy(Policy::default().into(), Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    pub fn for_policy(policy: std::sync::Arc<Policy>, hooks: H) -> Self {
        Run::new(policy, Default::default(), Default::default(), hooks, None)
    }

    /// An async `#[retry]` call under the policy `cache` holds for its site
    /// ([`PolicyCache::policy`](crate::__private::site::PolicyCache::policy)).
    ///
    /// ```
    /// use retrykit_core::Hooks;
    /// use retrykit_core::__private::site::{CallSite, PolicyCache};
    /// static CACHE: PolicyCache = PolicyCache::new(CallSite::new("run-doc-site", file!(), line!(), "doc"));
    /// let run = retrykit_core::__private::run::Run::for_site(&CACHE, Hooks::new());
    /// assert_eq!(run.report().attempts, 0);
    /// ```
    pub fn for_site(cache: &crate::site::PolicyCache, hooks: H) -> Self {
        Run::for_policy(cache.policy(), hooks)
    }
}

impl<P: Borrow<Policy>, C, S: Sleeper, H> Run<P, C, S, H> {
    /// A call about to make its first attempt under `policy`; untimed and
    /// cancellable until told otherwise.
    pub(crate) fn new(policy: P, clock: C, sleeper: S, hooks: H, seed: Option<u64>) -> Self {
        #[cfg(feature = "tracing")]
        let span = {
            let name = policy.borrow().name().unwrap_or("<unnamed>");
            tracing::debug_span!("retry", policy = name)
        };
        Run {
            policy,
            seed,
            clock,
            sleeper,
            hooks,
            started: None,
            tally: Tally::default(),
            timed: false,
            cancellable: true,
            ending: None,
            unhedged: None,
            gate: Gate::Idle,
            timer: Timer::default(),
            timeout_from: None,
            at_deadline: false,
            permit: None,
            faulted: false,
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
            injected: self.tally.injected,
        };
        report.budget_state(self.policy.borrow())
    }
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Begins an attempt: counts it, starts the call's clock when something
    /// needs it (depositing in the window budgets), asks the breaker, and
    /// notes when the attempt's timeout counts from. `Some` is the
    /// limit's or the breaker's refusal, which `E` can stand for: the
    /// attempt is not sent.
    pub(crate) fn begin_attempt<E>(&mut self) -> Option<Box<Refusal>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        // What the policy's concurrency limit said (`Run::admit`).
        let waited = match self.gate {
            _ if !self.limits() => None,
            Gate::LimitFull(since) => {
                self.gate = Gate::Idle;
                if let Some(full) = self.limit_refusal::<E>(since) {
                    return Some(full);
                }
                since
            }
            Gate::Waiting(since) => {
                self.gate = Gate::Idle;
                Some(since)
            }
            _ => None,
        };
        self.tally.attempts = self.tally.attempts.saturating_add(1);
        let policy: &Policy = self.policy.borrow();
        let starts_clock = || {
            self.timed
                || self.hooks.wants_give_up()
                || policy.deadline().is_some()
                || !policy.budgets.is_empty()
                || policy.breaker.is_some()
                || waited.is_some()
        };
        let mut now = None;
        if self.tally.attempts == 1 && self.started.is_none() && starts_clock() {
            let start = *now.insert(self.clock.now());
            // A wait for a permit is part of the call's time.
            let start = waited.unwrap_or(start);
            self.started = Some(start);
            if !policy.budgets.is_empty() {
                policy.budgets.deposit(start);
            }
        }
        if let Some(breaker) = &policy.breaker {
            let now = *now.get_or_insert_with(|| self.clock.now());
            match breaker.try_acquire(now) {
                Ok(ticket) => self.gate = Gate::Sent(ticket),
                // Held back only when the type can say so; counted in
                // `tally.refused` by the decision it goes to.
                Err(open) if E::from_breaker_open(open.clone()).is_some() => {
                    self.gate = Gate::Refused(open.retry_in());
                    self.timer.disarm();
                    self.timeout_from = None;
                    self.permit = None;
                    observe::emit(Event::BreakerRefused {
                        policy: policy.name.as_ref(),
                    });
                    return Some(Box::new(Refusal::Breaker(open)));
                }
                // The type cannot say so: the attempt goes, uncounted.
                Err(_) => crate::breaker::uncarried::<E>(breaker),
            }
        }
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

    /// Arms what is left of the attempt's [`time_limit`], at its first
    /// `Pending`; nothing once armed, or without one.
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

    /// The call ended in success: the breaker and the budgets hear of it,
    /// and the `Ended` event is emitted (`decide` emits it on giving up).
    pub(crate) fn succeeded(&mut self) {
        if let Gate::Sent(ticket) = std::mem::replace(&mut self.gate, Gate::Idle) {
            self.record(ticket, None);
        }
        let policy: &Policy = self.policy.borrow();
        policy.budgets.succeeded(|| self.clock.now());
        observe::emit(Event::Ended {
            policy: policy.name.as_ref(),
            ending: Ending::Success.as_str(),
            budget_empty: false,
            attempts: self.tally.attempts,
        });
    }
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether the call hedges: its policy does and its request may be sent
    /// twice; `drive!` then runs its rounds as races ([`Run::race`]).
    pub fn hedges(&self) -> bool {
        self.policy().hedging().is_some() && self.unhedged.is_none()
    }

    /// Records that the call runs unhedged (`why`: its request cannot be
    /// sent twice), if its policy hedges; the report says so.
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

    /// Starts the call's clock at `now`, if not started.
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
