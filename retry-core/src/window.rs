//! A sliding window of two counters (a budget's calls and retries, a
//! breaker's attempts and failures): a ring of slots, each stamped with the
//! epoch it counts for. Everything is an atomic; no lock is taken. Two
//! threads racing on a slot's rollover may lose a count or two, which a
//! budget or a breaker can afford.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many slots a window is cut into.
const SLOTS: usize = 10;

/// Two counters over a sliding window.
pub(crate) struct Window {
    slot_nanos: u64,
    origin: Instant,
    slots: [Slot; SLOTS],
}

#[derive(Default)]
struct Slot {
    epoch: AtomicU64,
    counts: [AtomicU64; 2],
}

impl Window {
    /// A window of `length` (at least 1 ns is used), starting now.
    pub(crate) fn new(length: Duration) -> Window {
        Window::starting(length, Instant::now())
    }

    /// A window of `length` whose first slot starts at `origin`.
    pub(crate) fn starting(length: Duration, origin: Instant) -> Window {
        let slot_nanos = u64::try_from(length.as_nanos() / SLOTS as u128)
            .unwrap_or(u64::MAX)
            .max(1);
        Window {
            slot_nanos,
            origin,
            slots: Default::default(),
        }
    }

    /// Adds `n` to counter `which` (0 or 1) in the slot of `now`.
    #[inline]
    pub(crate) fn add(&self, now: Instant, which: usize, n: u64) {
        self.slot(now).counts[which].fetch_add(n, Ordering::Relaxed);
    }

    /// Both counters over the window ending at `now`, counting only the
    /// slots from epoch `from` on (see [`epoch`](Self::epoch)).
    pub(crate) fn totals_from(&self, now: Instant, from: u64) -> (u64, u64) {
        let current = self.epoch(now);
        let oldest = current.saturating_sub(SLOTS as u64 - 1).max(from);
        self.slots
            .iter()
            .filter(|s| (oldest..=current).contains(&s.epoch.load(Ordering::Acquire)))
            .fold((0, 0), |(a, b), s| {
                (
                    a.saturating_add(s.counts[0].load(Ordering::Relaxed)),
                    b.saturating_add(s.counts[1].load(Ordering::Relaxed)),
                )
            })
    }

    /// Both counters over the window ending at `now`.
    pub(crate) fn totals(&self, now: Instant) -> (u64, u64) {
        self.totals_from(now, 0)
    }

    /// Empties the slot of `now` (a breaker that closes judges afresh).
    pub(crate) fn reset(&self, now: Instant) {
        for count in &self.slot(now).counts {
            count.store(0, Ordering::Relaxed);
        }
    }

    /// When the window began (its first slot's start).
    #[cfg(test)]
    pub(crate) fn origin(&self) -> Instant {
        self.origin
    }

    /// The slot number of `now`: whole slot lengths since the window began.
    pub(crate) fn epoch(&self, now: Instant) -> u64 {
        let since = now.saturating_duration_since(self.origin);
        // Whole seconds and nanoseconds apart: no 128-bit division.
        let nanos = since
            .as_secs()
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(since.subsec_nanos()));
        nanos / self.slot_nanos
    }

    fn slot(&self, now: Instant) -> &Slot {
        let epoch = self.epoch(now);
        let slot = &self.slots[(epoch % SLOTS as u64) as usize];
        let seen = slot.epoch.load(Ordering::Acquire);
        if seen < epoch
            && slot
                .epoch
                .compare_exchange(seen, epoch, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            // This thread won the rollover: the slot's old counts belong to a
            // window that has passed.
            for count in &slot.counts {
                count.store(0, Ordering::Relaxed);
            }
        }
        slot
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
