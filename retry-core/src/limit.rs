//! A concurrency limit shared by the policies that name it
//! ([`ConcurrencyLimit`]): at most `max_in_flight` attempts in flight at
//! once, at most `max_waiting` calls queued for a permit, each for at most
//! `max_wait` (and never past its call's deadline). A call that cannot get
//! a permit in time ends with [`Ending::LimitFull`](crate::Ending::LimitFull)
//! and the error [`Classify::from_limit_full`](crate::Classify::from_limit_full)
//! makes of a [`LimitFull`]. docs/limits.md gives the order in which the
//! deadline, the breaker, the limit and the budgets apply.
//!
//! The state is a counter and a FIFO queue under one mutex, with a condvar
//! beside it: a mutex because a permit is handed from the attempt that
//! releases it straight to the first waiter (no waiter is overtaken), and
//! the same queue serves an async waiter (woken by its `Waker`) and a
//! blocking one (woken by the condvar), with no runtime behind either. The
//! queue's room (`max_waiting`) is reserved when the limit is built, so no
//! call allocates.
//!
//! Invariants:
//! - `in_flight <= max_in_flight` at every moment: a permit is counted
//!   when granted and uncounted when its [`Permit`] drops (success,
//!   failure, the call's future dropped, or a panic unwinding);
//! - a waiter granted a permit that it no longer wants (its future was
//!   dropped, its wait ran out) passes it on as it leaves.

use crate::problem::{PolicyError, Problems};

pub mod adaptive;
use retrykit_schema::keys::Key;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The most attempts a limit lets be in flight.
pub const MAX_PERMITS: u32 = 1_000_000;
/// The most calls a limit lets queue for a permit.
pub const MAX_QUEUE: u32 = 100_000;

/// A fixed concurrency limit, shared (in an `Arc`) by the policies that name it.
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
    max_in_flight: u32,
    max_wait: Option<Duration>,
    max_waiting: u32,
    state: Mutex<State>,
    granted: Condvar,
}

#[derive(Debug)]
struct State {
    in_flight: u32,
    next_id: u64,
    queue: VecDeque<Waiter>,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    /// An async waiter's waker; `None` for a blocking one (the condvar).
    waker: Option<Waker>,
    granted: bool,
}

impl ConcurrencyLimit {
    /// A fixed limit called `name`: `max_in_flight` attempts at once (1
    /// to [`MAX_PERMITS`]); a call waits for a permit at most `max_wait`
    /// (`None`: as long as its deadline allows), in a queue of at most
    /// `max_waiting` calls (0 to [`MAX_QUEUE`]; 0: never wait). Every
    /// broken rule is a [`Problem`](crate::Problem) naming its field.
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
        Self::build(Some(name), max_in_flight, max_wait, max_waiting)
    }

    /// An unnamed fixed limit; see [`named`](Self::named).
    pub fn fixed(
        max_in_flight: u32,
        max_wait: Option<Duration>,
        max_waiting: u32,
    ) -> Result<Self, PolicyError> {
        Self::build(None, max_in_flight, max_wait, max_waiting)
    }

    fn build(
        name: Option<&str>,
        max_in_flight: u32,
        max_wait: Option<Duration>,
        max_waiting: u32,
    ) -> Result<Self, PolicyError> {
        let mut problems = Problems::default();
        problems.require(
            (1..=MAX_PERMITS).contains(&max_in_flight),
            Key::MaxInFlight.name(),
            "must be from 1 to 1000000",
            format!("set the most attempts the dependency should have in flight at once (got {max_in_flight})"),
        );
        problems.require(
            max_waiting <= MAX_QUEUE,
            Key::MaxWaiting.name(),
            "must be at most 100000",
            format!("set a smaller queue, or 0 to never wait (got {max_waiting})"),
        );
        problems.durations([(Key::MaxWait.name(), max_wait)]);
        let problems = problems.into_vec();
        if !problems.is_empty() {
            return Err(PolicyError::limit(name, problems));
        }
        Ok(ConcurrencyLimit {
            name: name.map(Into::into),
            max_in_flight,
            max_wait,
            max_waiting,
            state: Mutex::new(State {
                in_flight: 0,
                next_id: 0,
                queue: VecDeque::with_capacity(max_waiting as usize),
            }),
            granted: Condvar::new(),
        })
    }

    /// The limit's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The most attempts in flight at once.
    pub fn max_in_flight(&self) -> u32 {
        self.max_in_flight
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
    /// limit (and the permits it has out) in its place.
    ///
    /// ```
    /// use retrykit_core::limit::ConcurrencyLimit;
    /// let a = ConcurrencyLimit::named("db", 4, None, 8).unwrap();
    /// assert!(a.same_settings(&ConcurrencyLimit::named("db", 4, None, 8).unwrap()));
    /// assert!(!a.same_settings(&ConcurrencyLimit::named("db", 5, None, 8).unwrap()));
    /// ```
    pub fn same_settings(&self, other: &Self) -> bool {
        (
            self.name.as_ref(),
            self.max_in_flight,
            self.max_wait,
            self.max_waiting,
        ) == (
            other.name.as_ref(),
            other.max_in_flight,
            other.max_wait,
            other.max_waiting,
        )
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

    /// A permit now, if one is free and nobody is queued before it.
    pub fn try_acquire(self: &Arc<Self>) -> Option<Permit> {
        let mut state = self.lock();
        (state.queue.is_empty() && state.in_flight < self.max_in_flight).then(|| {
            state.in_flight += 1;
            Permit(Arc::clone(self))
        })
    }

    /// Gives back one permit: to the first waiter, or to the pool.
    fn release(&self) {
        let mut state = self.lock();
        match state.queue.iter_mut().find(|w| !w.granted) {
            Some(waiter) => {
                waiter.granted = true;
                match waiter.waker.take() {
                    Some(waker) => waker.wake(),
                    None => self.granted.notify_all(),
                }
            }
            None => state.in_flight = state.in_flight.saturating_sub(1),
        }
    }

    /// Joins the queue; `None` when it is full.
    fn enqueue(&self, waker: Option<Waker>) -> Option<u64> {
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
        });
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
        drop(state);
        if granted && !keep {
            self.release();
        }
        granted
    }

    /// Polls a queued waiter: ready once granted (the permit is then the
    /// caller's and the waiter has left the queue).
    fn poll_granted(self: &Arc<Self>, id: u64, cx: &mut Context<'_>) -> Poll<Permit> {
        let mut state = self.lock();
        let Some(at) = state.queue.iter().position(|w| w.id == id) else {
            // Not queued: never happens for a waiter that has not left.
            return Poll::Pending;
        };
        if state.queue[at].granted {
            state.queue.remove(at);
            return Poll::Ready(Permit(Arc::clone(self)));
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
        let id = self.enqueue(None)?;
        let until = bound.and_then(|b| Instant::now().checked_add(b));
        let mut state = self.lock();
        loop {
            let granted = state.queue.iter().any(|w| w.id == id && w.granted);
            if granted {
                drop(state);
                self.leave(id, true);
                return Some(Permit(Arc::clone(self)));
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
                        return self.leave(id, true).then(|| Permit(Arc::clone(self)));
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
            .field("max_in_flight", &self.max_in_flight)
            .field("max_wait", &self.max_wait)
            .field("max_waiting", &self.max_waiting)
            .finish_non_exhaustive()
    }
}

/// One attempt's room under a [`ConcurrencyLimit`], given back when dropped.
#[must_use = "a permit is given back when dropped"]
pub struct Permit(Arc<ConcurrencyLimit>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Permit").field(&self.0.name).finish()
    }
}

/// A call's place in a limit's queue; leaves it when dropped (passing on a
/// permit granted but not taken).
pub(crate) struct Queued {
    limit: Arc<ConcurrencyLimit>,
    id: u64,
}

impl Queued {
    /// Joins `limit`'s queue; `None` when it is full.
    pub(crate) fn join(limit: &Arc<ConcurrencyLimit>, cx: &Context<'_>) -> Option<Self> {
        let id = limit.enqueue(Some(cx.waker().clone()))?;
        Some(Queued {
            limit: Arc::clone(limit),
            id,
        })
    }

    /// Ready with the permit once granted.
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Permit> {
        self.limit.poll_granted(self.id, cx)
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.limit.leave(self.id, false);
    }
}

/// A call could not get a permit from a limit in time: the queue was
/// full, or its `max_wait` or the call's deadline ran out first. Nothing
/// was sent; the call ends with [`Ending::LimitFull`](crate::Ending::LimitFull).
///
/// ```
/// use retrykit_core::limit::LimitFull;
/// let full = LimitFull::new(Some("db"), 4);
/// assert_eq!(full.to_string(), "concurrency limit `db` is full (4 in flight)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitFull {
    name: Option<Arc<str>>,
    max_in_flight: u32,
}

impl LimitFull {
    /// The refusal of the limit `name`, which lets `max_in_flight` attempts in flight.
    pub fn new(name: Option<&str>, max_in_flight: u32) -> Self {
        LimitFull {
            name: name.map(Into::into),
            max_in_flight,
        }
    }

    /// The refusal of `limit`.
    pub(crate) fn of(limit: &ConcurrencyLimit) -> Self {
        LimitFull {
            name: limit.name.clone(),
            max_in_flight: limit.max_in_flight,
        }
    }

    /// The limit's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl fmt::Display for LimitFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name.as_deref().unwrap_or("<unnamed>");
        write!(
            f,
            "concurrency limit `{name}` is full ({} in flight)",
            self.max_in_flight
        )
    }
}

impl std::error::Error for LimitFull {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_hands_the_permit_to_the_first_waiter() {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 2).unwrap());
        let held = limit.try_acquire().unwrap();
        let cx = Context::from_waker(Waker::noop());
        let first = Queued::join(&limit, &cx).unwrap();
        let second = Queued::join(&limit, &cx).unwrap();
        assert!(Queued::join(&limit, &cx).is_none(), "the queue holds 2");
        assert!(limit.try_acquire().is_none(), "no one overtakes the queue");
        drop(held);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(second.poll(&mut cx).is_pending());
        let Poll::Ready(permit) = first.poll(&mut cx) else {
            panic!("the first waiter is granted");
        };
        assert_eq!(limit.in_flight(), 1);
        drop(second);
        drop(first);
        drop(permit);
        assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    }

    #[test]
    fn a_waiter_dropped_after_its_grant_passes_the_permit_on() {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 2).unwrap());
        let held = limit.try_acquire().unwrap();
        let cx = Context::from_waker(Waker::noop());
        let first = Queued::join(&limit, &cx).unwrap();
        let second = Queued::join(&limit, &cx).unwrap();
        drop(held);
        drop(first);
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(permit) = second.poll(&mut cx) else {
            panic!("the grant passed to the second waiter");
        };
        drop((permit, second));
        assert_eq!(limit.in_flight(), 0);
    }

    #[test]
    fn a_blocking_wait_runs_out_or_is_granted() {
        let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 1).unwrap());
        let held = limit.try_acquire().unwrap();
        assert!(
            limit
                .acquire_blocking(Some(Duration::from_millis(2)))
                .is_none()
        );
        assert_eq!(limit.waiting(), 0);
        let other = Arc::clone(&limit);
        let waiter = std::thread::spawn(move || other.acquire_blocking(None).is_some());
        while limit.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(held);
        assert!(waiter.join().unwrap());
        assert_eq!(limit.in_flight(), 0);
    }
}
