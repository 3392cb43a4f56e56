//! A call's one timer (see [`Timer`]), and how every timer raced against
//! an attempt is polled ([`poll_sleep`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A call's one timer: an attempt's timeout, an adaptive budget's wait
/// before the first attempt, or a hedged round's wait for its next hedge
/// (one at a time). Its heap block is made the first time it is armed and
/// reused after, so a call allocates it once however many attempts follow.
/// The wait after a failure is not here: the loop awaits it in its own state
/// (see `round`), and a call that only retries allocates nothing.
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

/// Polls `sleep`, a time limit or wait raced against an attempt, where the
/// attempt cannot starve it: under tokio, once the task's cooperative budget
/// is spent (every poll of a tokio channel, socket or sleep takes from it,
/// and then each returns `Pending` and wakes the task until it yields), the
/// sleep is polled outside the budget, as `tokio::time::Timeout` polls its
/// delay. An attempt that spends the whole budget on every poll (one looping
/// on an always-ready channel) would otherwise leave a tokio sleep polled
/// after it refused on every poll, never seeing its deadline. Whoever spent
/// the budget (the attempt, another attempt of a hedged round polled before
/// it, or the caller's own futures in the task), the limit is still seen.
///
/// The task still yields: this is one poll of a sleep beside the attempts it
/// races (the loop never polls it twice without polling them between), and
/// a tokio resource that found the budget spent has returned `Pending` and
/// woken the task. A sleeper built on no tokio resource never reads the
/// budget, and polling it outside the budget changes nothing. Without the
/// `tokio` feature there is no budget, and the sleep is polled as it is.
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
