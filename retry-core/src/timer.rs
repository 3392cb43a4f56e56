//! A call's one timer (see [`Timer`]).

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

/// Dropping a call that never needed a timer is an inline null check; the
/// block's drop stays out of line.
impl<Sl> Drop for Timer<Sl> {
    #[inline]
    fn drop(&mut self) {
        // Tested before it is taken: an empty timer is not written to.
        if self.0.is_some() {
            drop_block(self.0.take());
        }
    }
}

#[inline(never)]
fn drop_block<Sl>(block: Option<Pin<Box<Option<Sl>>>>) {
    drop(block);
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
    #[inline]
    pub(crate) fn disarm(&mut self) {
        if let Some(block) = &mut self.0 {
            block.set(None);
        }
    }

    /// Polls the armed sleep; `None` when nothing is armed. A sleep that
    /// fired is disarmed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Option<Poll<()>> {
        let mut slot = self.0.as_mut()?.as_mut();
        let fired = slot.as_mut().as_pin_mut()?.poll(cx);
        if fired.is_ready() {
            slot.set(None);
        }
        Some(fired)
    }
}
