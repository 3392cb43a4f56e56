//! A concurrency limit's part in a call: the wait for a permit before each
//! attempt ([`Run::admit`]), and the call's end when none comes in time.

use super::{Gate, Refusal, Run, elapsed};
use crate::class::Class;
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::hooks::HookSet;
use crate::limit::adaptive::Outcome;
use crate::limit::{ConcurrencyLimit, LimitFull, Permit, Queued};
use crate::observe::{Event, emit};
use crate::policy::Policy;
use std::borrow::Borrow;
use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether the policy has a concurrency limit ([`admit`](Self::admit)).
    pub fn limits(&self) -> bool {
        self.policy().limit.is_some()
    }

    /// Waits for a permit of the policy's concurrency limit for the next
    /// attempt: at most the limit's `max_wait` and never past the
    /// deadline, in its queue (a full queue: no wait). A blocking call
    /// waits on its thread. Without a permit in time, the next attempt is
    /// not sent ([`begin_attempt`](Self::begin_attempt)).
    pub fn admit(&mut self) -> impl Future<Output = ()> {
        let mut queued: Option<Queued> = None;
        poll_fn(move |cx| {
            let Some(limit) = self.policy().limit.clone() else {
                return Poll::Ready(());
            };
            let Some(place) = &queued else {
                if let Some(permit) = limit.try_acquire() {
                    self.hold(permit);
                    return Poll::Ready(());
                }
                let Some(bound) = self.permit_bound(&limit) else {
                    self.refuse();
                    return Poll::Ready(());
                };
                if !self.cancellable {
                    let joined = self.clock.now();
                    match limit.acquire_blocking(bound) {
                        Some(permit) => self.granted(permit, Some(joined)),
                        None => self.waited_in_vain(Some(joined)),
                    }
                    return Poll::Ready(());
                }
                let Some(place) = Queued::join(&limit, cx, self.clock.now()) else {
                    self.refuse();
                    return Poll::Ready(());
                };
                match bound {
                    Some(bound) => self.timer.arm(self.sleep(bound)),
                    None => self.timer.disarm(),
                }
                if let Poll::Ready((permit, joined)) = place.poll_timed(cx) {
                    self.timer.disarm();
                    self.granted(permit, joined);
                    return Poll::Ready(());
                }
                let timed_out = matches!(self.timer.poll(cx), Some(Poll::Ready(())));
                if timed_out {
                    self.waited_in_vain(place.joined());
                    return Poll::Ready(());
                }
                queued = Some(place);
                return Poll::Pending;
            };
            if let Poll::Ready((permit, joined)) = place.poll_timed(cx) {
                queued = None;
                self.timer.disarm();
                self.granted(permit, joined);
                return Poll::Ready(());
            }
            match self.timer.poll(cx) {
                Some(Poll::Ready(())) => {
                    let joined = place.joined();
                    // Leaving passes on a permit granted just now.
                    queued = None;
                    self.waited_in_vain(joined);
                    Poll::Ready(())
                }
                _ => Poll::Pending,
            }
        })
    }

    /// The next attempt holds `permit`, stamped with the time for an
    /// adaptive limit (which reads the attempt's latency).
    pub(crate) fn hold(&mut self, mut permit: Permit) {
        if permit.adapts() {
            permit.stamp(self.clock.now());
        }
        self.permit = Some(permit);
    }

    /// A permit came after a wait in the queue begun at `joined`.
    fn granted(&mut self, permit: Permit, joined: Option<Instant>) {
        self.waited(joined, true);
        self.hold(permit);
    }

    /// A wait in the queue begun at `joined` ran out without a permit.
    fn waited_in_vain(&mut self, joined: Option<Instant>) {
        self.waited(joined, false);
        self.refuse();
    }

    /// Tells the observers of a wait in the queue begun at `joined`.
    fn waited(&self, joined: Option<Instant>, granted: bool) {
        let policy = self.policy();
        let now = self.clock.now();
        emit(Event::LimitWaited {
            limit: policy.limit.as_ref().and_then(|l| l.name.as_ref()),
            policy: policy.name.as_ref(),
            wait: now.saturating_duration_since(joined.unwrap_or(now)),
            granted,
        });
    }

    /// Gives back the permit of the attempt that ended, with how it went
    /// for an adaptive limit: its latency since the grant, and its
    /// outcome from the error's `class` (`None`: a success).
    pub(crate) fn give_back(&self, permit: Option<Permit>, class: Option<Class>) {
        let Some(permit) = permit else {
            return;
        };
        if let Some(latency) = permit.latency(self.clock.now()) {
            permit.finish(latency, Outcome::of(class));
        }
    }

    /// The next attempt gets no permit: it will not be sent.
    fn refuse(&mut self) {
        self.gate = Gate::LimitFull(self.waiting_since());
    }

    /// When the first attempt began waiting for a permit, if it is waiting.
    fn waiting_since(&self) -> Option<Instant> {
        match self.gate {
            Gate::Waiting(since) => Some(since),
            _ => None,
        }
    }

    /// How long the next attempt may wait for a permit: the limit's
    /// `max_wait`, cut to what is left of the deadline (`Some(None)`:
    /// without bound); `None` when it may not wait at all. The call's
    /// clock starts with the first attempt's wait.
    fn permit_bound(&mut self, limit: &ConcurrencyLimit) -> Option<Option<Duration>> {
        if limit.max_waiting() == 0 {
            return None;
        }
        let deadline = self.policy().deadline();
        let left = match deadline {
            Some(deadline) => {
                let now = self.clock.now();
                if self.started.is_none() && matches!(self.gate, Gate::Idle) {
                    self.gate = Gate::Waiting(now);
                }
                let since = self.started.or(self.waiting_since());
                Some(deadline.saturating_sub(elapsed(since, now)))
            }
            None => {
                if self.started.is_none() && matches!(self.gate, Gate::Idle) {
                    self.gate = Gate::Waiting(self.clock.now());
                }
                None
            }
        };
        let bound = match (limit.max_wait(), left) {
            (Some(wait), Some(left)) => Some(wait.min(left)),
            (wait, left) => wait.or(left),
        };
        match bound {
            Some(bound) if bound.is_zero() => None,
            bound => Some(bound),
        }
    }

    /// The refusal the next attempt ends with, the limit having given it
    /// no permit in time, when `E` can stand for it; otherwise the attempt
    /// is sent without a permit, and a warning says so once.
    pub(crate) fn limit_refusal<E>(&mut self, since: Option<Instant>) -> Option<Box<Refusal>>
    where
        E: Classify,
        H: HookSet<E>,
    {
        let limit = self.policy().limit.as_ref()?;
        let full = LimitFull::of(limit);
        if E::from_limit_full(full.clone()).is_none() {
            uncarried::<E>(limit);
            return None;
        }
        emit(Event::LimitRefused {
            limit: limit.name.as_ref(),
            policy: self.policy().name.as_ref(),
        });
        self.gate = Gate::LimitFull(None);
        self.started = self.started.or(since);
        self.timer.disarm();
        self.timeout_from = None;
        Some(Box::new(Refusal::Limit(full)))
    }
}

/// Says, once per limit and error type, that `E` cannot stand for a
/// limit's refusal (`Classify::from_limit_full` gives `None`), so its
/// attempts are sent without a permit when the limit is full.
fn uncarried<E>(limit: &Arc<ConcurrencyLimit>) {
    let ty = std::any::type_name::<E>();
    if !crate::say::first_time("limit", limit.name.as_ref(), ty) {
        return;
    }
    let name = limit.name().unwrap_or("<unnamed>");
    say_warning!(
        format!(
            "warning: concurrency limit `{name}` gave an attempt no permit in time, but the error \
             type `{ty}` cannot stand for that (its Classify::from_limit_full gives None), so the \
             attempt was sent without a permit; fix: implement Classify::from_limit_full for `{ty}`"
        ),
        limit = limit.name()
    );
}
