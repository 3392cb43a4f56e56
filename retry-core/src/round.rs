//! One round of the retry loop as a hand-written future: the attempt (raced
//! against the policy's `attempt_timeout`), then, on failure, the decision
//! and the wait. [`poll_round`] is the whole round's logic, written once;
//! [`Round`] (what `#[retry]` awaits, one per round, while its attempts
//! borrow the function's arguments) and [`Call`] (what `Retry::call` and
//! the blocking calls return, owning the loop) only drive it.
//!
//! Hand-written rather than `async`: the stages share one enum, with no
//! nested future states or captured pointers around them. The call's one
//! timer (an attempt's timeout, then the wait after it: never both at once)
//! is the run's, out of line, so a call's future is its attempt plus a few
//! words. The error is a local of one `poll`, never stored, so a `!Send`
//! error cannot make the future `!Send`.

use crate::call_policy::CallPolicy;
use crate::classify::{AttemptTimeout, Classify};
use crate::clock::{Clock, Sleeper};
use crate::hooks::HookSet;
use crate::retry::Run;
use pin_project_lite::pin_project;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

pin_project! {
    /// Where a round stands.
    #[project = StageProj]
    pub(crate) enum Stage<Fut> {
        /// Waiting to make the next attempt.
        Idle,
        /// An attempt in flight (raced against the run's timer when the
        /// policy has an attempt timeout).
        Attempt { #[pin] fut: Fut },
        /// The wait before the next attempt, on the run's timer.
        Wait,
    }
}

impl<Fut> Stage<Fut> {
    /// A stage that makes no attempt yet.
    pub(crate) const fn idle() -> Self {
        Stage::Idle
    }
}

/// Begins an attempt: counts it, arms its timeout, makes the future.
#[inline]
pub(crate) fn attempt<P, C, S, H, Fut, T, E>(
    run: &mut Run<P, C, S, H>,
    make: impl FnOnce() -> Fut,
) -> Stage<Fut>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    Fut: Future<Output = Result<T, E>>,
{
    if let Some(wait) = run.pace_first_attempt() {
        // An adaptive budget paces the first attempt: this round is the
        // wait (`make` is not called, so nothing is sent); the next makes it.
        run.wait_before_first_attempt(wait);
        return Stage::Wait;
    }
    run.begin_attempt::<E>();
    Stage::Attempt { fut: make() }
}

/// Drives the round in `stage` for `run`. `Break` carries the call's
/// result; `Continue` means the wait is over and `stage` is idle, ready for
/// the next attempt.
#[inline]
pub(crate) fn poll_round<P, C, S, H, Fut, T, E>(
    run: &mut Run<P, C, S, H>,
    mut stage: Pin<&mut Stage<Fut>>,
    cx: &mut Context<'_>,
    mut polled_pending: bool,
) -> Poll<ControlFlow<Result<T, E>>>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    #[cfg(feature = "tracing")]
    let _span = run.span().clone().entered();
    loop {
        match stage.as_mut().project() {
            StageProj::Attempt { fut } => {
                // An attempt the caller just polled is not polled again.
                let polled = if std::mem::take(&mut polled_pending) {
                    Poll::Pending
                } else {
                    fut.poll(cx)
                };
                let result = match polled {
                    Poll::Ready(result) => result,
                    Poll::Pending => {
                        // No timer: the policy has no attempt timeout.
                        ready!(run.poll_timer(cx).unwrap_or(Poll::Pending));
                        let info = AttemptTimeout {
                            attempt: run.attempts(),
                            timeout: run.policy_mut().attempt_timeout().unwrap_or_default(),
                        };
                        match E::from_timeout(info) {
                            Some(timed_out) => Err(timed_out),
                            // The error type cannot say "timed out": the
                            // attempt runs on (init() refuses such a policy).
                            None => return Poll::Pending,
                        }
                    }
                };
                if let Some(end) = settle(run, stage.as_mut(), result) {
                    return Poll::Ready(ControlFlow::Break(end));
                }
            }
            StageProj::Wait => {
                ready!(run.poll_timer(cx).unwrap_or(Poll::Ready(())));
                stage.set(Stage::Idle);
                return Poll::Ready(ControlFlow::Continue(()));
            }
            StageProj::Idle => return Poll::Ready(ControlFlow::Continue(())),
        }
    }
}

/// What an attempt's result makes of the call: its end (`Some`), or the
/// wait before the next attempt (`None`, with `stage` set to it).
#[inline]
fn settle<P, C, S, H, Fut, T, E>(
    run: &mut Run<P, C, S, H>,
    mut stage: Pin<&mut Stage<Fut>>,
    result: Result<T, E>,
) -> Option<Result<T, E>>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    E: Classify,
{
    match result {
        Ok(value) => {
            stage.set(Stage::Idle);
            run.succeeded();
            Some(Ok(value))
        }
        // Decide first, sleep after: the error is dropped here.
        Err(error) => match run.decide(error) {
            Ok(()) => {
                stage.set(Stage::Wait);
                None
            }
            Err(error) => {
                stage.set(Stage::Idle);
                Some(Err(error))
            }
        },
    }
}

pin_project! {
    /// One round that `#[retry]` awaits: it borrows the call's state, so
    /// the attempt it holds may borrow the function's arguments.
    #[must_use = "a round does nothing until awaited"]
    pub struct Round<'r, P, C, S: Sleeper, H, Fut> {
        run: &'r mut Run<P, C, S, H>,
        #[pin]
        stage: Stage<Fut>,
    }
}

impl<'r, P, C, S: Sleeper, H, Fut> Round<'r, P, C, S, H, Fut> {
    /// The round whose attempt `stage` holds (see [`attempt`]).
    pub(crate) fn new(run: &'r mut Run<P, C, S, H>, stage: Stage<Fut>) -> Self {
        Round { run, stage }
    }
}

impl<P, C, S, H, Fut, T, E> Future for Round<'_, P, C, S, H, Fut>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
{
    type Output = ControlFlow<Result<T, E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        poll_round(this.run, this.stage, cx, false)
    }
}

pin_project! {
    /// A whole call that owns its loop: attempts made by `op`, round after
    /// round, then `finish` makes the output from the result and the run.
    #[must_use = "a call does nothing until awaited"]
    #[project = CallProj]
    pub(crate) struct Call<P, C, S: Sleeper, H, F, Fut, Fin> {
        run: Run<P, C, S, H>,
        op: F,
        finish: Option<Fin>,
        #[pin]
        stage: Stage<Fut>,
    }
}

impl<P, C, S: Sleeper, H, F, Fut, Fin> Call<P, C, S, H, F, Fut, Fin> {
    pub(crate) fn new(run: Run<P, C, S, H>, op: F, finish: Fin) -> Self {
        Call {
            run,
            op,
            finish: Some(finish),
            stage: Stage::idle(),
        }
    }
}

impl<P, C, S, H, F, Fut, Fin, T, E, R> Future for Call<P, C, S, H, F, Fut, Fin>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
    Fin: FnOnce(Result<T, E>, &Run<P, C, S, H>) -> R,
{
    type Output = R;

    /// A new attempt's first poll is made here, inline, and most calls end
    /// in it; everything else (a pending attempt, a failure, a wait) goes
    /// on out of line. Always inlined: left to the inliner, this small
    /// function stayed a call of its own where the future is polled.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let mut this = self.project();
        let mut polled_pending = false;
        if matches!(*this.stage, Stage::Idle) {
            let next = attempt(this.run, &mut *this.op);
            this.stage.set(next);
            if let StageProj::Attempt { fut } = this.stage.as_mut().project() {
                // In the call's span, as every round is (see `poll_round`).
                #[cfg(feature = "tracing")]
                let _span = this.run.span().clone().entered();
                match fut.poll(cx) {
                    Poll::Ready(result) => {
                        if let Some(end) = settle(this.run, this.stage.as_mut(), result) {
                            return Poll::Ready(finish(this, end));
                        }
                    }
                    Poll::Pending => polled_pending = true,
                }
            }
        }
        poll_call_on(this, cx, polled_pending)
    }
}

/// The rest of [`Call::poll`]: round after round until the call ends.
#[inline(never)]
fn poll_call_on<P, C, S, H, F, Fut, Fin, T, E, R>(
    mut this: CallProj<'_, P, C, S, H, F, Fut, Fin>,
    cx: &mut Context<'_>,
    mut polled_pending: bool,
) -> Poll<R>
where
    P: CallPolicy,
    C: Clock,
    S: Sleeper,
    H: HookSet<E>,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Classify,
    Fin: FnOnce(Result<T, E>, &Run<P, C, S, H>) -> R,
{
    loop {
        if matches!(*this.stage, Stage::Idle) {
            let next = attempt(this.run, &mut *this.op);
            this.stage.set(next);
        }
        let round = poll_round(
            this.run,
            this.stage.as_mut(),
            cx,
            std::mem::take(&mut polled_pending),
        );
        if let ControlFlow::Break(result) = ready!(round) {
            return Poll::Ready(finish(this, result));
        }
    }
}

/// The call's output from its result.
#[inline]
fn finish<P, C, S: Sleeper, H, F, Fut, Fin, T, E, R>(
    this: CallProj<'_, P, C, S, H, F, Fut, Fin>,
    result: Result<T, E>,
) -> R
where
    Fin: FnOnce(Result<T, E>, &Run<P, C, S, H>) -> R,
{
    let finish = this
        .finish
        .take()
        .expect("a finished call is not polled again");
    finish(result, this.run)
}
