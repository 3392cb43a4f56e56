//! A call's one timer (see [`Timer`]), and how every timer raced against
//! an attempt is polled ([`poll_sleep`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A call's one timer: an attempt's timeout, an adaptive budget's wait
/// before the first attempt, or a hedged round's wait for its next hedge.
/// Its heap block is made when first armed and reused after. (The wait
/// after a failure is the loop's own, in `round`.)
pub(crate) struct Timer<Sl>(Option<Pin<Box<Option<Sl>>>>);

impl<Sl> Default for Timer<Sl> {
    fn default() -> Self {
        Timer(None)
    }
}

impl<Sl: Future<Output = ()>> Timer<Sl> {
    /// Arms the timer with `sleep`, replacing what it held.
    pub(crate) fn arm(&mut self, sleep: Sl) {
        match &mut self.0 {
            Some(block) => block.set(Some(sleep)),
            None => self.0 = Some(Box::pin(Some(sleep))),
        }
    }

    /// Drops the armed sleep, if any (keeping the block).
    pub(crate) fn disarm(&mut self) {
        if let Some(block) = &mut self.0 {
            block.set(None);
        }
    }

    /// Polls the armed sleep (see [`poll_sleep`]); `None` when nothing is
    /// armed. A sleep that fired is disarmed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Option<Poll<()>> {
        let mut slot = self.0.as_mut()?.as_mut();
        let fired = poll_sleep(slot.as_mut().as_pin_mut()?, cx);
        if fired.is_ready() {
            slot.set(None);
        }
        Some(fired)
    }
}

/// Polls `sleep`, a time limit or wait raced against an attempt, so that
/// the attempt cannot starve it: once the task's tokio cooperative budget is
/// spent (by the attempt, another attempt of a hedged round, or the caller's
/// own futures), the sleep is polled outside the budget, as
/// `tokio::time::Timeout` polls its delay; otherwise a sleep polled after an
/// attempt that spends the whole budget would never see its deadline. The
/// task still yields: a tokio resource that found the budget spent has
/// returned `Pending` and woken it.
pub(crate) fn poll_sleep<Sl: Future<Output = ()>>(
    sleep: Pin<&mut Sl>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    #[cfg(feature = "tokio")]
    if !tokio::task::coop::has_budget_remaining() {
        return Pin::new(&mut tokio::task::coop::unconstrained(sleep)).poll(cx);
    }
    sleep.poll(cx)
}
