//! The clients' timer as a real runtime runs it: wake-ups land on a grid of
//! `resolution`, rounded up (tokio's timer wheel counts whole milliseconds
//! and rounds every deadline up), and some grid steps are skipped, their
//! wake-ups merged into the next step that fires.
//!
//! Why skips: a runtime's timer only fires when a worker gets round to it.
//! Each wake-up starts a little after its millisecond boundary, and the
//! work it sets off pushes the next one later still, until one lands past a
//! whole boundary: that millisecond sees no wake-ups and the next sees two
//! milliseconds' worth. The fleet (`examples/src/bin/fleet.rs`) measured
//! about a quarter of milliseconds skipped on a busy 2-vCPU machine
//! (counts per millisecond such as 93, 206, 0, 89). Which steps are skipped
//! is drawn from the run's seed, one draw per step, so every client of a run
//! sees the same skipped steps, as the clients of one runtime do.

use retrykit_core::kernel::split_mix;
use std::time::Duration;

/// The longest run of skipped steps followed: with at most 90% skipped,
/// a longer one has a probability below 10⁻⁴⁵.
const MAX_SKIPPED_RUN: u64 = 1000;

/// How the clients' timer fires: wake-ups land on a grid of `resolution`,
/// rounded up, and a share `skipped` of the grid steps is skipped, their
/// wake-ups merged into the next step that fires, as on a busy runtime
/// whose timer only fires when a worker gets round to it.
///
/// ```
/// use retrykit_sim::TimerModel;
/// use std::time::Duration;
/// let timer = TimerModel { resolution: Duration::from_millis(1), skipped: 0.0 };
/// // A wait due 2.3 ms after time 0 fires at 3 ms.
/// assert_eq!(timer.fires_at(2_300_000, 0), 3_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimerModel {
    /// The timer's grid: every wake-up is rounded up to a multiple of it.
    pub resolution: Duration,
    /// The share of grid steps whose wake-ups are merged into the next step
    /// (0 to 0.9).
    pub skipped: f64,
}

impl TimerModel {
    /// The largest `skipped` a [`Herd`](crate::Herd) accepts; the model
    /// itself takes a larger share as this one, so that some steps always fire.
    ///
    /// ```
    /// use retrykit_sim::TimerModel;
    /// let beyond = TimerModel { skipped: 5.0, ..TimerModel::TOKIO };
    /// let skipped = (0..10_000).filter(|&s| beyond.is_skipped(s, 1)).count();
    /// assert!(skipped < 9_300, "{skipped} of 10000 skipped: more than MAX_SKIPPED");
    /// assert!(TimerModel::MAX_SKIPPED < 1.0);
    /// ```
    pub const MAX_SKIPPED: f64 = 0.9;

    /// tokio's timer: 1 ms, no skipped steps.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::TimerModel::TOKIO.resolution, std::time::Duration::from_millis(1));
    /// ```
    pub const TOKIO: TimerModel = TimerModel {
        resolution: Duration::from_millis(1),
        skipped: 0.0,
    };

    fn resolution_ns(&self) -> u64 {
        u64::try_from(self.resolution.as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// Whether grid step `step` is skipped in a run seeded with `seed`.
    ///
    /// ```
    /// use retrykit_sim::TimerModel;
    /// let t = TimerModel { skipped: 0.25, ..TimerModel::TOKIO };
    /// let skipped = (0..10_000).filter(|&s| t.is_skipped(s, 7)).count();
    /// assert!((2_300..2_700).contains(&skipped), "{skipped}");
    /// ```
    pub fn is_skipped(&self, step: u64, seed: u64) -> bool {
        if self.skipped <= 0.0 {
            return false;
        }
        // A stream apart from the clients' jitter streams (split_mix(seed, i)).
        let draw = split_mix(seed ^ 0x7469_6d65_7200_0000, step);
        (draw >> 11) as f64 / (1u64 << 53) as f64 <= self.skipped.min(Self::MAX_SKIPPED)
    }

    /// When a wake-up due `due_ns` after time 0 fires: rounded up to the
    /// grid, then past any skipped steps.
    ///
    /// ```
    /// use retrykit_sim::TimerModel;
    /// let t = TimerModel { skipped: 0.5, ..TimerModel::TOKIO };
    /// let fired = t.fires_at(4_000_001, 3);
    /// assert!(fired >= 5_000_000 && fired.is_multiple_of(1_000_000));
    /// ```
    pub fn fires_at(&self, due_ns: u64, seed: u64) -> u64 {
        let res = self.resolution_ns();
        let mut step = due_ns.div_ceil(res);
        let mut run = 0;
        while run < MAX_SKIPPED_RUN && self.is_skipped(step, seed) {
            step = step.saturating_add(1);
            run += 1;
        }
        step.saturating_mul(res)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn wake_ups_round_up_to_the_grid_and_never_fire_early() {
        let t = TimerModel::TOKIO;
        assert_eq!(t.fires_at(0, 0), 0);
        assert_eq!(t.fires_at(1, 0), MS);
        assert_eq!(t.fires_at(MS, 0), MS);
        assert_eq!(t.fires_at(MS + 1, 0), 2 * MS);
        let coarse = TimerModel {
            resolution: Duration::from_millis(10),
            skipped: 0.3,
        };
        for due in (0..200 * MS).step_by(333_333) {
            let fired = coarse.fires_at(due, 5);
            assert!(
                fired >= due && fired.is_multiple_of(10 * MS),
                "{due} -> {fired}"
            );
        }
    }

    #[test]
    fn a_skipped_step_merges_its_wake_ups_into_the_next_that_fires() {
        let t = TimerModel {
            skipped: 0.25,
            ..TimerModel::TOKIO
        };
        let seed = 11;
        let skipped: Vec<u64> = (1..5000).filter(|&s| t.is_skipped(s, seed)).collect();
        assert!((1000..1500).contains(&skipped.len()), "{}", skipped.len());
        for &s in skipped.iter().take(200) {
            let fired = t.fires_at(s * MS - MS / 2, seed) / MS;
            assert!(fired > s, "step {s} is skipped but fired at {fired}");
            assert!((s + 1..fired).all(|k| t.is_skipped(k, seed)));
            assert!(!t.is_skipped(fired, seed));
        }
    }

    #[test]
    fn the_same_seed_skips_the_same_steps_and_another_does_not() {
        let t = TimerModel {
            skipped: 0.25,
            ..TimerModel::TOKIO
        };
        let pattern = |seed| (0..256).map(|s| t.is_skipped(s, seed)).collect::<Vec<_>>();
        assert_eq!(pattern(1), pattern(1));
        assert_ne!(pattern(1), pattern(2));
    }

    #[test]
    fn nothing_is_skipped_at_zero_and_long_runs_are_bounded() {
        let none = TimerModel::TOKIO;
        assert!((0..10_000).all(|s| !none.is_skipped(s, 3)));
        let most = TimerModel {
            skipped: 5.0, // clamped to MAX_SKIPPED
            ..TimerModel::TOKIO
        };
        let fired = most.fires_at(u64::MAX - 10, 0);
        assert!(fired >= u64::MAX / MS * MS - MS || fired == u64::MAX);
        let share = (0..10_000).filter(|&s| most.is_skipped(s, 3)).count();
        assert!(share < 9_300, "{share}");
    }
}
