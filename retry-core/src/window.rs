//! A sliding window of two counters (a budget's calls and retries, a
//! breaker's attempts and failures), on atomics only: tests/loom.rs checks
//! every interleaving under `--cfg loom`.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many slots a window is cut into.
const SLOTS: u64 = 10;

/// Two counters over a sliding window: a ring of [`SLOTS`] slots, each with
/// one word per counter. A word is `lap << count_bits | count`, the lap being
/// the slot's epoch divided by `SLOTS`, so moving a slot on to a new lap and
/// counting there is one atomic step: no count made at a rollover is lost,
/// and none from a past window counts again. `count_bits` are the bits of a
/// slot's length in nanoseconds (16 at least), so a count saturates rather
/// than overflow; the lap's bits come round only after some 2,900 years.
pub(crate) struct Window {
    slot_nanos: u64,
    count_bits: u32,
    /// The largest count a word holds: its low `count_bits` bits set.
    count_max: u64,
    origin: Instant,
    slots: [[AtomicU64; 2]; SLOTS as usize],
}

/// The instant the engine reads when no clock is given: tokio's (pausable)
/// clock with the `tokio` feature, else the system's, so that every reading
/// of one program agrees.
pub(crate) fn now() -> Instant {
    #[cfg(feature = "tokio")]
    return tokio::time::Instant::now().into_std();
    #[cfg(not(feature = "tokio"))]
    return Instant::now();
}

impl Window {
    /// A window of `length` (at least 1 ns is used), starting now.
    pub(crate) fn new(length: Duration) -> Window {
        Window::starting(length, now())
    }

    /// A window of `length` whose first slot starts at `origin`.
    pub(crate) fn starting(length: Duration, origin: Instant) -> Window {
        let slot_nanos = u64::try_from(length.as_nanos() / u128::from(SLOTS))
            .unwrap_or(u64::MAX)
            .max(1);
        let count_bits = (u64::BITS - slot_nanos.leading_zeros()).clamp(16, 63);
        Window {
            slot_nanos,
            count_bits,
            count_max: (1 << count_bits) - 1,
            origin,
            slots: std::array::from_fn(|_| [AtomicU64::new(0), AtomicU64::new(0)]),
        }
    }

    /// Adds `n` to counter `which` (0 or 1) in the slot of `now`; dropped if
    /// the slot has since moved on to a later lap.
    pub(crate) fn add(&self, now: Instant, which: usize, n: u64) {
        let (word, lap) = self.word(now, which);
        let mut seen = word.load(Ordering::Relaxed);
        while let Some(next) = self.added(seen, lap, n) {
            match word.compare_exchange(seen, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(actual) => seen = actual,
            }
        }
    }

    /// Adds one to counter `which` in the slot of `now` if `allowed` says
    /// yes to the window's totals, checking and taking in one step: two
    /// takers racing for the last one get it once.
    pub(crate) fn try_take(
        &self,
        now: Instant,
        which: usize,
        allowed: impl Fn((u64, u64)) -> bool,
    ) -> bool {
        let (word, lap) = self.word(now, which);
        loop {
            let seen = word.load(Ordering::Acquire);
            if !allowed(self.totals(now)) {
                return false;
            }
            // The slot moved on to a later lap: granted, not counted.
            let Some(next) = self.added(seen, lap, 1) else {
                return true;
            };
            if word
                .compare_exchange(seen, next, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return true;
            }
        }
    }

    /// Both counters over the window ending at `now`, counting only the
    /// slots from epoch `from` on (see [`epoch`](Self::epoch)).
    pub(crate) fn totals_from(&self, now: Instant, from: u64) -> (u64, u64) {
        let current = self.epoch(now);
        let oldest = current.saturating_sub(SLOTS - 1).max(from);
        let lap = current / SLOTS;
        let mut totals = [0u64; 2];
        for (index, slot) in (0..).zip(&self.slots) {
            for (total, word) in totals.iter_mut().zip(slot) {
                let word = word.load(Ordering::Acquire);
                // The word's lap: the latest one, not after `now`'s, with its bits.
                let behind = (lap << self.count_bits).wrapping_sub(word & !self.count_max)
                    >> self.count_bits;
                let epoch = lap
                    .checked_sub(behind)
                    .and_then(|lap| lap.checked_mul(SLOTS)?.checked_add(index));
                if epoch.is_some_and(|epoch| (oldest..=current).contains(&epoch)) {
                    *total = total.saturating_add(word & self.count_max);
                }
            }
        }
        (totals[0], totals[1])
    }

    /// Both counters over the window ending at `now`.
    pub(crate) fn totals(&self, now: Instant) -> (u64, u64) {
        self.totals_from(now, 0)
    }

    /// Empties the slot of `now` (a breaker that closes judges afresh).
    pub(crate) fn reset(&self, now: Instant) {
        for which in 0..2 {
            let (word, lap) = self.word(now, which);
            word.store(lap << self.count_bits, Ordering::Relaxed);
        }
    }

    /// When the window began (its first slot's start).
    #[cfg(test)]
    pub(crate) fn origin(&self) -> Instant {
        self.origin
    }

    /// The slot number of `now`: whole slot lengths since the window began.
    pub(crate) fn epoch(&self, now: Instant) -> u64 {
        crate::backoff::nanos(now.saturating_duration_since(self.origin)) / self.slot_nanos
    }

    /// Counter `which`'s word in the slot of `now`, and `now`'s lap.
    fn word(&self, now: Instant, which: usize) -> (&AtomicU64, u64) {
        let epoch = self.epoch(now);
        let slot = &self.slots[(epoch % SLOTS) as usize];
        (&slot[which], epoch / SLOTS)
    }

    /// Word `seen` with `n` more counted in lap `lap`: added to its count
    /// (saturating) when it counts that lap, in place of it when it counts
    /// an earlier one; `None` when it counts a later lap.
    fn added(&self, seen: u64, lap: u64, n: u64) -> Option<u64> {
        let tag = lap << self.count_bits;
        // Below `count_max` exactly when `seen` counts lap `lap`: its count.
        let count = seen.wrapping_sub(tag);
        if count <= self.count_max {
            Some(tag | count.saturating_add(n).min(self.count_max))
        } else if ((seen & !self.count_max).wrapping_sub(tag) as i64) > 0 {
            // Less than half the laps' range ahead: a later lap.
            None
        } else {
            Some(tag | n.min(self.count_max))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_leave_the_window_after_its_length() {
        let w = Window::new(Duration::from_secs(10));
        let t0 = w.origin;
        w.add(t0, 0, 3);
        w.add(t0 + Duration::from_secs(5), 1, 2);
        assert_eq!(w.totals(t0 + Duration::from_secs(5)), (3, 2));
        assert_eq!(w.totals(t0 + Duration::from_secs(12)), (0, 2));
        assert_eq!(w.totals(t0 + Duration::from_secs(16)), (0, 0));
    }

    #[test]
    fn totals_from_skips_the_slots_before_an_epoch() {
        let w = Window::new(Duration::from_secs(10));
        let t0 = w.origin;
        w.add(t0, 1, 4);
        let later = t0 + Duration::from_secs(3);
        w.add(later, 1, 1);
        assert_eq!(w.totals_from(later, w.epoch(later)), (0, 1));
        assert_eq!(w.totals_from(later, 0), (0, 5));
    }
}
