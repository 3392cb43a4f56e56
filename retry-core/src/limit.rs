//! A concurrency limit shared by the policies that name it
//! ([`ConcurrencyLimit`]): at most its size in attempts in flight, at most
//! `max_waiting` calls queued for a permit, each for at most `max_wait`
//! (never past its deadline). A call that gets no permit in time ends with
//! [`Ending::LimitFull`](crate::Ending::LimitFull) and the error
//! [`Classify::from_limit_full`](crate::Classify::from_limit_full) makes of
//! a [`LimitFull`]. The size is fixed ([`LimitKind::Fixed`]) or set by an
//! [`adaptive`] controller from each attempt's latency and outcome.
//! docs/limits.md has the order of the checks and the invariants.
//!
//! The state (count, size, controller, FIFO queue) is under one mutex with
//! a condvar: a permit goes from the attempt that releases it straight to
//! the first waiter, async (its `Waker`) or blocking (the condvar). The
//! queue's room is reserved when the limit is built, so no call allocates.
//! No permit is granted while `in_flight >= size`, and none is taken back;
//! a waiter granted a permit it no longer wants passes it on.

use crate::observe::{Event, emit};
use crate::problem::{PolicyError, Problem, Problems};
use adaptive::{AimdSettings, Controller, GradientSettings, Outcome, Sample};
use retrykit_schema::keys::Key;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

pub mod adaptive;
mod full;
pub use full::LimitFull;

/// The most attempts a limit lets be in flight.
pub const MAX_PERMITS: u32 = 1_000_000;
/// The most calls a limit lets queue for a permit.
pub const MAX_QUEUE: u32 = 100_000;

/// How a limit sets its size.
///
/// ```
/// use retrykit_core::limit::{LimitKind, adaptive::AimdSettings};
/// assert_eq!(LimitKind::Fixed { max_in_flight: 8 }.name(), "fixed");
/// assert_eq!(LimitKind::Aimd(AimdSettings::default()).initial(), 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitKind {
    /// Always `max_in_flight`.
    Fixed {
        /// The most attempts in flight at once (1 to [`MAX_PERMITS`]).
        max_in_flight: u32,
    },
    /// Additive increase, multiplicative decrease ([`adaptive::Aimd`]).
    Aimd(AimdSettings),
    /// The latency gradient ([`adaptive::Gradient`]).
    Gradient(GradientSettings),
}

impl LimitKind {
    /// The kind as files spell it: `fixed`, `aimd` or `gradient`.
    pub const fn name(&self) -> &'static str {
        match self {
            LimitKind::Fixed { .. } => "fixed",
            LimitKind::Aimd(_) => "aimd",
            LimitKind::Gradient(_) => "gradient",
        }
    }

    /// The size before any attempt.
    pub const fn initial(&self) -> u32 {
        match self {
            LimitKind::Fixed { max_in_flight } => *max_in_flight,
            LimitKind::Aimd(s) => s.initial,
            LimitKind::Gradient(s) => s.initial,
        }
    }

    /// Every rule the kind's settings break.
    fn problems(&self) -> Vec<Problem> {
        match self {
            LimitKind::Fixed { max_in_flight } => {
                let mut problems = Problems::default();
                problems.require(
                    (1..=MAX_PERMITS).contains(max_in_flight),
                    Key::MaxInFlight.name(),
                    "must be from 1 to 1000000",
                    format!("set the most attempts the dependency should have in flight at once (got {max_in_flight})"),
                );
                problems.into_vec()
            }
            LimitKind::Aimd(s) => s.problems(),
            LimitKind::Gradient(s) => s.problems(),
        }
    }

    /// The controller of an adaptive kind (its settings are valid).
    fn controller(&self) -> Option<Controller> {
        match self {
            LimitKind::Fixed { .. } => None,
            LimitKind::Aimd(s) => adaptive::Aimd::new(*s).ok().map(Controller::Aimd),
            LimitKind::Gradient(s) => adaptive::Gradient::new(*s).ok().map(Controller::Gradient),
        }
    }
}

/// A concurrency limit, shared (in an `Arc`) by the policies that name it.
///
/// ```
/// use retrykit_core::limit::ConcurrencyLimit;
/// use std::time::Duration;
/// let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(2, Some(Duration::from_millis(50)), 8).unwrap());
/// let a = limit.try_acquire().unwrap();
/// let _b = limit.try_acquire().unwrap();
/// assert!(limit.try_acquire().is_none());
/// drop(a);
/// assert_eq!(limit.in_flight(), 1);
/// ```
pub struct ConcurrencyLimit {
    pub(crate) name: Option<Arc<str>>,
    kind: LimitKind,
    max_wait: Option<Duration>,
    max_waiting: u32,
    state: Mutex<State>,
    granted: Condvar,
    /// The retry loop's clock at the first grant an adaptive limit timed:
    /// a permit keeps its grant as nanoseconds since then.
    epoch: OnceLock<Instant>,
}

#[derive(Debug)]
struct State {
    in_flight: u32,
    /// The size now: the fixed size, or the controller's last answer.
    size: u32,
    controller: Option<Controller>,
    next_id: u64,
    queue: VecDeque<Waiter>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    /// An async waiter's waker; `None` for a blocking one (the condvar).
    waker: Option<Waker>,
    granted: bool,
    /// When it joined, on the retry loop's clock.
    joined: Option<Instant>,
}

impl ConcurrencyLimit {
    /// A limit called `name` (`None`: unnamed) of `kind`; a call waits for
    /// a permit at most `max_wait` (`None`: as long as its deadline
    /// allows), in a queue of at most `max_waiting` calls (0 to
    /// [`MAX_QUEUE`]; 0: never wait). Every broken rule is a
    /// [`Problem`] naming its field.
    ///
    /// ```
    /// use retrykit_core::limit::{ConcurrencyLimit, LimitKind, adaptive::GradientSettings};
    /// let kind = LimitKind::Gradient(GradientSettings { initial: 10, ..Default::default() });
    /// let limit = ConcurrencyLimit::new(Some("db"), kind, None, 100).unwrap();
    /// assert_eq!((limit.kind().name(), limit.max_in_flight()), ("gradient", 10));
    /// let bad = LimitKind::Gradient(GradientSettings { min: 20, initial: 10, ..Default::default() });
    /// let err = ConcurrencyLimit::new(Some("db"), bad, None, 100).unwrap_err();
    /// assert_eq!(err.problems()[0].field, "initial_limit");
    /// ```
    pub fn new(
        name: Option<&str>,
        kind: LimitKind,
        max_wait: Option<Duration>,
        max_waiting: u32,
    ) -> Result<Self, PolicyError> {
        let mut problems = kind.problems();
        let mut more = Problems::default();
        more.require(
            max_waiting <= MAX_QUEUE,
            Key::MaxWaiting.name(),
            "must be at most 100000",
            format!("set a smaller queue, or 0 to never wait (got {max_waiting})"),
        );
        more.durations([(Key::MaxWait.name(), max_wait)]);
        problems.extend(more.into_vec());
        PolicyError::check(crate::PolicyErrorKind::Limit, name, problems)?;
        Ok(ConcurrencyLimit {
            name: name.map(Into::into),
            kind,
            max_wait,
            max_waiting,
            state: Mutex::new(State {
                in_flight: 0,
                size: kind.initial(),
                controller: kind.controller(),
                next_id: 0,
                queue: VecDeque::with_capacity(max_waiting as usize),
            }),
            granted: Condvar::new(),
            epoch: OnceLock::new(),
        })
    }

    /// A fixed limit called `name`: `max_in_flight` attempts at once (1
    /// to [`MAX_PERMITS`]); see [`new`](Self::new).
    ///
    /// ```
    /// use retrykit_core::limit::ConcurrencyLimit;
    /// let err = ConcurrencyLimit::fixed(0, None, 0).unwrap_err();
    /// assert_eq!(err.problems()[0].field, "max_in_flight");
    /// let limit = ConcurrencyLimit::named("db", 8, None, 100).unwrap();
    /// assert_eq!((limit.name(), limit.max_in_flight()), (Some("db"), 8));
    /// ```
    pub fn named(
        name: &str,
        max_in_flight: u32,
        max_wait: Option<Duration>,
        max_waiting: u32,
    ) -> Result<Self, PolicyError> {
        Self::new(
            Some(name),
            LimitKind::Fixed { max_in_flight },
            max_wait,
            max_waiting,
        )
    }

    /// An unnamed fixed limit; see [`named`](Self::named).
    pub fn fixed(
        max_in_flight: u32,
        max_wait: Option<Duration>,
        max_waiting: u32,
    ) -> Result<Self, PolicyError> {
        Self::new(
            None,
            LimitKind::Fixed { max_in_flight },
            max_wait,
            max_waiting,
        )
    }

    /// The limit's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// How it sets its size.
    pub fn kind(&self) -> &LimitKind {
        &self.kind
    }

    /// Whether its size adapts to the attempts' latencies and outcomes.
    pub fn adapts(&self) -> bool {
        !matches!(self.kind, LimitKind::Fixed { .. })
    }

    /// The most attempts in flight at once now: the fixed size, or the
    /// adaptive size the controller last gave.
    pub fn max_in_flight(&self) -> u32 {
        match self.kind {
            LimitKind::Fixed { max_in_flight } => max_in_flight,
            _ => self.lock().size,
        }
    }

    /// The longest wait for a permit; `None`: up to the call's deadline.
    pub fn max_wait(&self) -> Option<Duration> {
        self.max_wait
    }

    /// The most calls queued for a permit.
    pub fn max_waiting(&self) -> u32 {
        self.max_waiting
    }

    /// Whether `other` has the same name and settings: a reload keeps this
    /// limit (and the permits it has out, and an adaptive size) in its place.
    pub fn same_settings(&self, other: &Self) -> bool {
        self.name == other.name
            && self.kind == other.kind
            && (self.max_wait, self.max_waiting) == (other.max_wait, other.max_waiting)
    }

    /// Attempts in flight now.
    pub fn in_flight(&self) -> u32 {
        self.lock().in_flight
    }

    /// Calls queued for a permit now.
    pub fn waiting(&self) -> u32 {
        self.lock().queue.len() as u32
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements: a panic elsewhere
        // cannot leave it half-changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells the observers the counts now (under the lock, so that the
    /// last report is the state's last change).
    fn report(&self, state: &State) {
        emit(Event::LimitState {
            limit: self.name.as_ref(),
            in_flight: state.in_flight,
            waiting: state.queue.len() as u32,
            size: state.size,
        });
    }

    /// A permit now, if one is free and nobody is queued before it.
    pub fn try_acquire(self: &Arc<Self>) -> Option<Permit> {
        let mut state = self.lock();
        if !state.queue.is_empty() || state.in_flight >= state.size {
            return None;
        }
        state.in_flight += 1;
        self.report(&state);
        Some(Permit::new(self))
    }

    /// Gives back one permit: the first waiters get the room there is.
    fn release(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        self.let_in(&mut state);
        self.report(&state);
    }

    /// Tells an adaptive limit's controller how an attempt went (it still
    /// holds its permit, counted in `in_flight`): the size moves, and a
    /// size grown lets waiters in.
    fn sample(&self, latency: Duration, outcome: Outcome) {
        let mut guard = self.lock();
        let state = &mut *guard;
        let Some(controller) = &mut state.controller else {
            return;
        };
        let before = state.size;
        state.size = controller.on_sample(Sample {
            latency,
            outcome,
            in_flight: state.in_flight,
        });
        let after = state.size;
        if after == before {
            return;
        }
        self.let_in(state);
        self.report(state);
        drop(guard);
        self.resized(before, after);
    }

    /// Grants the first waiters a permit each while the size has room.
    fn let_in(&self, state: &mut State) {
        let mut blocking = false;
        while state.in_flight < state.size {
            let Some(waiter) = state.queue.iter_mut().find(|w| !w.granted) else {
                break;
            };
            waiter.granted = true;
            match waiter.waker.take() {
                Some(waker) => waker.wake(),
                None => blocking = true,
            }
            state.in_flight += 1;
        }
        if blocking {
            self.granted.notify_all();
        }
    }

    /// Says an adaptive limit's change of size: a `debug` event of target
    /// `retry` (the size itself is reported as the limit's state).
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn resized(&self, from: u32, to: u32) {
        #[cfg(feature = "tracing")]
        tracing::debug!(
            target: "retry",
            limit = self.name(),
            kind = self.kind.name(),
            from,
            to,
            "retry: concurrency limit `{}` ({}) {from} -> {to}",
            self.name().unwrap_or("<unnamed>"),
            self.kind.name(),
        );
    }

    /// Joins the queue; `None` when it is full.
    fn enqueue(&self, waker: Option<Waker>, joined: Option<Instant>) -> Option<u64> {
        let mut state = self.lock();
        if state.queue.len() >= self.max_waiting as usize {
            return None;
        }
        let id = state.next_id;
        state.next_id = state.next_id.wrapping_add(1);
        state.queue.push_back(Waiter {
            id,
            waker,
            granted: false,
            joined,
        });
        self.report(&state);
        Some(id)
    }

    /// Leaves the queue: `true` when a permit had been granted (it is now
    /// the caller's when `keep`, and passed on otherwise).
    fn leave(&self, id: u64, keep: bool) -> bool {
        let mut state = self.lock();
        let Some(at) = state.queue.iter().position(|w| w.id == id) else {
            return false;
        };
        let granted = state.queue.remove(at).is_some_and(|w| w.granted);
        self.report(&state);
        drop(state);
        if granted && !keep {
            self.release();
        }
        granted
    }

    /// Polls a queued waiter: ready once granted (the permit is then the
    /// caller's and the waiter has left the queue), with when it joined.
    fn poll_granted(
        self: &Arc<Self>,
        id: u64,
        cx: &mut Context<'_>,
    ) -> Poll<(Permit, Option<Instant>)> {
        let mut state = self.lock();
        let Some(at) = state.queue.iter().position(|w| w.id == id) else {
            // Not queued: never happens for a waiter that has not left.
            return Poll::Pending;
        };
        if state.queue[at].granted {
            let joined = state.queue.remove(at).and_then(|w| w.joined);
            self.report(&state);
            return Poll::Ready((Permit::new(self), joined));
        }
        state.queue[at].waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Waits on this thread for a permit at most `bound` (`None`: without
    /// bound); `None` when the queue is full or the wait ran out.
    pub(crate) fn acquire_blocking(self: &Arc<Self>, bound: Option<Duration>) -> Option<Permit> {
        if let Some(permit) = self.try_acquire() {
            return Some(permit);
        }
        let id = self.enqueue(None, None)?;
        let until = bound.and_then(|b| Instant::now().checked_add(b));
        let mut state = self.lock();
        loop {
            let granted = state.queue.iter().any(|w| w.id == id && w.granted);
            if granted {
                drop(state);
                self.leave(id, true);
                return Some(Permit::new(self));
            }
            state = match until {
                None => self
                    .granted
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(until) => {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        drop(state);
                        return self.leave(id, true).then(|| Permit::new(self));
                    }
                    self.granted
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

impl fmt::Debug for ConcurrencyLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrencyLimit")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("max_wait", &self.max_wait)
            .field("max_waiting", &self.max_waiting)
            .finish_non_exhaustive()
    }
}

/// One attempt's room under a [`ConcurrencyLimit`], given back when dropped
/// (or by [`finish`](Self::finish), which also tells an adaptive limit how
/// the attempt went).
#[must_use = "a permit is given back when dropped"]
pub struct Permit {
    limit: Arc<ConcurrencyLimit>,
    /// When the retry loop granted it, for an adaptive limit: nanoseconds
    /// since the limit's epoch, plus one; 0 when not timed.
    since: u64,
}

impl Permit {
    fn new(limit: &Arc<ConcurrencyLimit>) -> Self {
        Permit {
            limit: Arc::clone(limit),
            since: 0,
        }
    }

    /// Gives the permit back, telling an adaptive limit that its attempt
    /// took `latency` and ended with `outcome` (a fixed limit reads nothing).
    pub fn finish(self, latency: Duration, outcome: Outcome) {
        if outcome != Outcome::Ignored {
            self.limit.sample(latency, outcome);
        }
    }

    /// Notes, for an adaptive limit, that the retry loop's clock saw it
    /// granted at `now` (a clock before the limit's epoch counts as the epoch).
    pub(crate) fn stamp(&mut self, now: Instant) {
        if self.limit.adapts() {
            let epoch = *self.limit.epoch.get_or_init(|| now);
            let nanos = now.saturating_duration_since(epoch).as_nanos();
            self.since = u64::try_from(nanos)
                .unwrap_or(u64::MAX - 1)
                .saturating_add(1);
        }
    }

    /// Whether its limit reads how its attempt went.
    pub(crate) fn adapts(&self) -> bool {
        self.limit.adapts()
    }

    /// Its attempt's latency at `now`, if it was stamped.
    pub(crate) fn latency(&self, now: Instant) -> Option<Duration> {
        let epoch = *self.limit.epoch.get()?;
        let since = self.since.checked_sub(1)?;
        let granted = epoch.checked_add(Duration::from_nanos(since))?;
        Some(now.saturating_duration_since(granted))
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.limit.release();
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Permit").field(&self.limit.name).finish()
    }
}

/// A call's place in a limit's queue; leaves it when dropped (passing on a
/// permit granted but not taken).
pub(crate) struct Queued {
    limit: Arc<ConcurrencyLimit>,
    id: u64,
}

impl Queued {
    /// Joins `limit`'s queue at `now` (on the retry loop's clock); `None`
    /// when it is full.
    pub(crate) fn join(
        limit: &Arc<ConcurrencyLimit>,
        cx: &Context<'_>,
        now: Instant,
    ) -> Option<Self> {
        let id = limit.enqueue(Some(cx.waker().clone()), Some(now))?;
        Some(Queued {
            limit: Arc::clone(limit),
            id,
        })
    }

    /// Ready with the permit once granted.
    #[cfg(test)]
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Permit> {
        self.poll_timed(cx).map(|(permit, _)| permit)
    }

    /// Ready with the permit once granted, and when it joined.
    pub(crate) fn poll_timed(&self, cx: &mut Context<'_>) -> Poll<(Permit, Option<Instant>)> {
        self.limit.poll_granted(self.id, cx)
    }

    /// When it joined, while it is queued.
    pub(crate) fn joined(&self) -> Option<Instant> {
        let state = self.limit.lock();
        state.queue.iter().find(|w| w.id == self.id)?.joined
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.limit.leave(self.id, false);
    }
}

#[cfg(test)]
mod tests;
