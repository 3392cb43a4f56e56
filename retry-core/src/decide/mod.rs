//! The decision kernel: the one place that decides, after a failed attempt,
//! whether to wait and retry or to give up, and how long to wait. The retry
//! loop (async, blocking and `#[retry]`), the stateful [`Oracle`](crate::Oracle)
//! and the fleet simulator all go through [`decide`], so they cannot disagree.
//!
//! The kernel's state is plain data ([`Tally`]): the in-process [`Decider`]
//! keeps it next to an `Instant`, the oracle persists it next to a
//! `SystemTime`. Jitter samples depend only on the seed and the retry number
//! (see `rng`), so a schedule that is saved and resumed continues exactly.

use crate::backoff::nanos;
use crate::budget::{Pacing, retry_cost};
use crate::class::Class;
use crate::classify::AttemptTimeout;
use crate::policy::Policy;
use crate::report::{Ending, Report};
use std::time::{Duration, Instant};

pub(crate) mod hedge;

/// The verdict on a failed attempt.
///
/// ```
/// use retrykit_core::{Class, Policy, kernel::{Decider, Failure, Step}};
/// use std::time::{Duration, Instant};
/// let (p, mut d, t0) = (Policy::default(), Decider::new(None), Instant::now());
/// d.begin_attempt(&p, t0);
/// let throttled = Failure { class: Class::THROTTLED, hint: Some(Duration::from_secs(2)), allowed: true };
/// assert_eq!(d.after_failure(&p, throttled, t0), Step::Retry { wait: Duration::from_secs(2), hinted: true });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Wait this long, then make the next attempt.
    Retry {
        /// The wait.
        wait: Duration,
        /// Whether it came from a server hint.
        hinted: bool,
    },
    /// Stop and return the last error.
    GiveUp(Ending),
}

/// What the engine knows of one failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The error's class.
    pub class: Class,
    /// The error's server hint.
    pub hint: Option<Duration>,
    /// Whether the call site's own predicate allows a retry.
    pub allowed: bool,
}

/// What the kernel carries from one failure to the next. Durations are
/// kept as nanoseconds (every duration the engine makes is under 100 years,
/// well inside `u64`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Attempts begun, the failed one included.
    pub(crate) attempts: u32,
    /// Of those, attempts the circuit breaker refused: not failures, so
    /// the schedule skips them (the next failure waits as if they had
    /// not been).
    pub(crate) refused: u32,
    /// Of those, attempts the policy's chaos faulted or delayed.
    pub(crate) injected: u32,
    /// Of those, hedges: attempts begun while another was in flight.
    /// (Saturating at `u16::MAX`.)
    pub(crate) hedges: u16,
    /// The attempt whose result a hedged call returned (0: the last one).
    pub(crate) winner: u16,
    /// The last computed wait (before any hint), which decorrelated jitter grows from.
    last_delay_ns: u64,
    /// The waits chosen so far.
    waited_ns: u64,
}

impl Tally {
    pub(crate) const fn new(attempts: u32, last_delay: Duration, waited: Duration) -> Self {
        Tally {
            attempts,
            refused: 0,
            injected: 0,
            hedges: 0,
            winner: 0,
            last_delay_ns: nanos(last_delay),
            waited_ns: nanos(waited),
        }
    }

    pub(crate) const fn last_delay(&self) -> Duration {
        Duration::from_nanos(self.last_delay_ns)
    }

    pub(crate) const fn waited(&self) -> Duration {
        Duration::from_nanos(self.waited_ns)
    }
}

/// How the failure is reported against the time the last wait was due
/// (the oracle's `consider_actual_delay`): a caller that comes back early
/// owes the rest of the previous wait, one that comes back late is credited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owed {
    Nothing,
    Early(Duration),
    Late(Duration),
}

/// How long attempt `attempt`, begun `into_call` after the call's first
/// attempt began, may run, and what it ends with when it runs out: the
/// nearer of the policy's `attempt_timeout` and what is left of its
/// `deadline` (the deadline bounds the attempt in flight, and then ends the
/// call). `None` under a policy with neither.
pub(crate) fn time_limit(
    policy: &Policy,
    attempt: u32,
    into_call: Duration,
) -> Option<(Duration, AttemptTimeout)> {
    let own = policy
        .attempt_timeout()
        .map(|t| (t, AttemptTimeout::new(attempt, t)));
    let left = policy.deadline().map(|d| {
        let left = d.saturating_sub(into_call);
        (left, AttemptTimeout::at_deadline(attempt, d))
    });
    match (own, left) {
        (Some(own), Some(left)) if left.0 < own.0 => Some(left),
        (own, left) => own.or(left),
    }
}

/// The kernel. After the attempt numbered `tally.attempts` failed: is it
/// retryable, is an attempt left, how long to wait (the schedule, or a
/// longer server hint clamped to `max_retry_after`), does the wait fit the
/// deadline, do the window budgets allow it, and how long do the adaptive
/// budgets pace it (past the deadline: `RateLimited`). Adaptive budgets hear
/// of every failure first. `clock` (time since the first attempt, and the
/// budgets' `now`) is called only for a deadline or a budget. A `Retry` is
/// committed to `tally`; a `GiveUp` leaves it (adaptive tokens stay taken).
pub(crate) fn decide(
    policy: &Policy,
    tally: &mut Tally,
    seed: Option<u64>,
    failure: Failure,
    owed: Owed,
    clock: impl FnOnce() -> (Duration, Instant),
) -> Step {
    let budgets = &policy.budgets;
    // Read before any verdict: the adaptive budgets hear of every failure,
    // and a verdict that gives up has the report read the clock anyway.
    let time = (policy.deadline().is_some() || !budgets.is_empty()).then(clock);
    if budgets.paces()
        && let Some((_, now)) = time
    {
        budgets.record(now, failure.class == Class::THROTTLED);
    }
    // A failure of a class the policy retries drains `grpc_throttling`
    // (gRFC A6), whatever the site's predicate says.
    let retried = in_policy(policy, failure.class);
    if retried {
        budgets.throttle(true);
    }
    if failure.class == Class::Permanent {
        return Step::GiveUp(Ending::Permanent);
    }
    if !retried || !failure.allowed {
        return Step::GiveUp(Ending::NotRetryable);
    }
    // A failure at or past the deadline (one the deadline cut short, or an
    // attempt that could not be cut and ran on) ends the call.
    if let (Some(deadline), Some((elapsed, _))) = (policy.deadline(), time)
        && elapsed >= deadline
    {
        return Step::GiveUp(Ending::Deadline);
    }
    // Attempts the breaker refused were never sent: they use none of the
    // policy's attempts.
    if policy
        .max_attempts()
        .is_some_and(|max| tally.attempts.saturating_sub(tally.refused) >= max)
    {
        return Step::GiveUp(Ending::Exhausted);
    }
    // The failures so far, less one: refused attempts were not failures.
    let retry = tally
        .attempts
        .saturating_sub(1)
        .saturating_sub(tally.refused);
    let computed_ns = policy.delay_ns(retry, tally.last_delay_ns, || {
        crate::rng::sample(seed, retry)
    });
    let computed = Duration::from_nanos(computed_ns);
    let (mut wait, mut hinted) = owed_or_hinted(policy, computed, owed, failure.hint);
    if let Some((elapsed, now)) = time {
        match policed(policy, failure.class, wait, elapsed, now) {
            Ok(None) => {}
            Ok(Some(paced)) => (wait, hinted) = (paced, false),
            Err(ending) => return Step::GiveUp(ending),
        }
    }
    tally.last_delay_ns = computed_ns;
    tally.waited_ns = tally.waited_ns.saturating_add(nanos(wait));
    Step::Retry { wait, hinted }
}

/// [`decide`]'s wait when time is owed or a hint was given: the computed
/// wait plus what an early caller owes, less what a late one is credited,
/// then the hint (clamped to `max_retry_after`) if longer; and whether the
/// hint chose it.
fn owed_or_hinted(
    policy: &Policy,
    computed: Duration,
    owed: Owed,
    hint: Option<Duration>,
) -> (Duration, bool) {
    let scheduled = match owed {
        Owed::Nothing => computed,
        Owed::Early(by) => computed.saturating_add(by),
        Owed::Late(by) => computed.saturating_sub(by),
    };
    match hint {
        Some(hint) => {
            let hint = policy.max_retry_after().map_or(hint, |max| hint.min(max));
            if hint > scheduled {
                (hint, true)
            } else {
                (scheduled, false)
            }
        }
        None => (scheduled, false),
    }
}

/// [`decide`]'s checks of `wait`, `elapsed` into the call at `now`: `Err`
/// when it would reach the deadline, a window budget is empty, or pacing
/// would pass the deadline; `Some` is a longer wait the pacing imposes.
fn policed(
    policy: &Policy,
    class: Class,
    wait: Duration,
    elapsed: Duration,
    now: Instant,
) -> Result<Option<Duration>, Ending> {
    let budgets = &policy.budgets;
    if let Some(deadline) = policy.deadline()
        && elapsed.saturating_add(wait) >= deadline
    {
        return Err(Ending::Deadline);
    }
    if !budgets.try_withdraw(now) {
        return Err(Ending::BudgetEmpty);
    }
    if budgets.paces() {
        let left = policy.deadline().map(|d| d.saturating_sub(elapsed));
        match budgets.pace(now, retry_cost(class), left) {
            Pacing::After(paced) if paced > wait => return Ok(Some(paced)),
            Pacing::After(_) => {}
            Pacing::PastLimit(_) => return Err(Ending::RateLimited),
        }
    }
    Ok(None)
}

/// The kernel's rule for an attempt the breaker refused: it uses none of
/// the policy's attempts, asks no budget and does not move the backoff. The
/// call waits `retry_in` plus a random share of up to the breaker's
/// `open_jitter` (so held-back calls do not return together), cut to what
/// is left of [`total_wait`]; it ends with `BreakerOpen` when that is spent
/// or the wait would reach the deadline. `clock` is called only for a
/// deadline.
pub(crate) fn decide_refused(
    policy: &Policy,
    tally: &mut Tally,
    seed: Option<u64>,
    retry_in: Duration,
    clock: impl FnOnce() -> (Duration, Instant),
) -> Step {
    tally.refused = tally.refused.saturating_add(1);
    let spread = policy.breaker().map_or(0.0, |b| b.open_jitter());
    let share = spread * crate::rng::sample(seed, tally.attempts).as_f64();
    let mut retry_in = retry_in.saturating_add(retry_in.mul_f64(share));
    if let Some(total) = total_wait(policy) {
        let left = total.saturating_sub(tally.waited());
        if left.is_zero() {
            return Step::GiveUp(Ending::BreakerOpen);
        }
        retry_in = retry_in.min(left);
    }
    if let Some(deadline) = policy.deadline()
        && clock().0.saturating_add(retry_in) >= deadline
    {
        return Step::GiveUp(Ending::BreakerOpen);
    }
    tally.waited_ns = tally.waited_ns.saturating_add(nanos(retry_in));
    Step::Retry {
        wait: retry_in,
        hinted: false,
    }
}

/// The policy's total wait: the sum of its envelope's waits, the longest a
/// call may wait without server hints (`None`: no limit on attempts). Past
/// the first 1,024 waits each is taken at the cap.
pub(crate) fn total_wait(policy: &Policy) -> Option<Duration> {
    const SUMMED: u32 = 1024;
    let waits = policy.max_attempts()?.saturating_sub(1);
    let summed = waits.min(SUMMED);
    let total = (0..summed).fold(Duration::ZERO, |t, n| t.saturating_add(policy.envelope(n)));
    Some(total.saturating_add(policy.cap().saturating_mul(waits - summed)))
}

/// Whether the policy retries errors of `class`: a timed-out attempt always,
/// a permanent error never, other classes when `retry_on` lists them.
pub(crate) fn in_policy(policy: &Policy, class: Class) -> bool {
    match class {
        Class::Permanent => false,
        Class::Retryable(_) if policy.retry_on.is_none() => true,
        Class::Retryable(name) => {
            Class::Retryable(name) == Class::TIMEOUT || policy.retries_class(name)
        }
    }
}

/// The in-process form of the kernel's state: one per call, never shared,
/// so concurrent calls cannot disturb each other's statistics.
///
/// ```
/// use retrykit_core::{Class, Jitter, Policy, kernel::{Decider, Failure, Step}};
/// use std::time::{Duration, Instant};
/// let p = Policy::builder().jitter(Jitter::None).max_attempts(2).build().unwrap();
/// let mut d = Decider::new(None);
/// let t0 = Instant::now();
/// d.begin_attempt(&p, t0);
/// let fail = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
/// assert_eq!(d.after_failure(&p, fail, t0), Step::Retry { wait: Duration::from_millis(100), hinted: false });
/// d.begin_attempt(&p, t0);
/// assert!(matches!(d.after_failure(&p, fail, t0), Step::GiveUp(_)));
/// ```
#[derive(Debug, Clone)]
pub struct Decider {
    tally: Tally,
    /// The jitter seed (`None`: the thread's generator).
    seed: Option<u64>,
    started: Option<Instant>,
}

impl Decider {
    /// A fresh decision state, seeded for reproducible jitter when `seed` is given.
    pub const fn new(seed: Option<u64>) -> Self {
        Decider {
            tally: Tally::new(0, Duration::ZERO, Duration::ZERO),
            seed,
            started: None,
        }
    }

    /// Attempts begun so far.
    pub const fn attempts(&self) -> u32 {
        self.tally.attempts
    }

    /// Records the start of an attempt at `now`. The first one starts the
    /// deadline's clock and counts as a call in the policy's retry budget.
    pub fn begin_attempt(&mut self, policy: &Policy, now: Instant) {
        if self.tally.attempts == 0 && self.started.is_none() {
            self.start(policy, now);
        }
        self.tally.attempts = self.tally.attempts.saturating_add(1);
    }

    /// The call starts at `now`: the deadline's clock starts, and the call
    /// counts in the window budgets and in a hedging policy's cap on hedges.
    fn start(&mut self, policy: &Policy, now: Instant) {
        self.started = Some(now);
        policy.budgets.deposit(now);
        if let Some(hedging) = policy.hedging() {
            hedging.count_call(now);
        }
    }

    /// Decides what follows a failed attempt observed at `now` (the kernel).
    pub fn after_failure(&mut self, policy: &Policy, failure: Failure, now: Instant) -> Step {
        let elapsed = self.elapsed(now);
        decide(
            policy,
            &mut self.tally,
            self.seed,
            failure,
            Owed::Nothing,
            || (elapsed, now),
        )
    }

    /// Decides what follows an attempt the breaker refused at `now`, to be
    /// let through in `retry_in`: wait for it (plus up to `open_jitter`
    /// more), or end with `BreakerOpen` when the deadline or the policy's
    /// total wait leaves no room. A refusal uses none of the attempts.
    pub fn after_refusal(&mut self, policy: &Policy, retry_in: Duration, now: Instant) -> Step {
        let elapsed = self.elapsed(now);
        decide_refused(policy, &mut self.tally, self.seed, retry_in, || {
            (elapsed, now)
        })
    }

    /// Time since the first attempt began (zero before it, or when the start
    /// was not read).
    pub fn elapsed(&self, now: Instant) -> Duration {
        self.started
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }

    /// The report for a call that ended with `ending` at `now`.
    pub fn report(&self, ending: Ending, now: Instant) -> Report {
        Report {
            ending,
            attempts: self.tally.attempts,
            hedges: 0,
            winner: self.tally.attempts,
            unhedged: None,
            refused: self.tally.refused,
            waited: self.tally.waited(),
            elapsed: self.elapsed(now),
            // Known to the policy's budget, not to the decision state: the
            // loop fills it in.
            budget_failing_open: false,
            injected: 0,
        }
    }
}
