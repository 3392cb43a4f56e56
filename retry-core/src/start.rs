//! When a call started, in one word. A call's future holds its start time
//! from the first attempt to the end, and an `Option<Instant>` is two words
//! (sixteen bytes on Linux); nanoseconds from a process-wide origin fit in
//! one `i64` for ±292 years of clock, far beyond `Policy::MAX_DURATION`, and
//! round-trip exactly, so deadlines and reports are unchanged to the
//! nanosecond.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The origin every call's start is counted from: the first time any call
/// needed one. Any `Instant` may come before it (a paused or hand-made
/// clock), so starts are signed.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

/// A call's start time, or none when nothing needed it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Start(i64);

impl Start {
    /// Not read.
    pub(crate) const UNREAD: Start = Start(i64::MIN);

    /// A start at `instant`. One further from the origin than ±292 years
    /// (a clock no real program has) is kept at that limit.
    pub(crate) fn at(instant: Instant) -> Start {
        let origin = *ORIGIN;
        let nanos = match instant.checked_duration_since(origin) {
            Some(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
            // `-i64::MAX` at the furthest, so never `UNREAD`'s `i64::MIN`.
            None => i64::try_from(origin.duration_since(instant).as_nanos())
                .map_or(-i64::MAX, |before| -before),
        };
        Start(nanos)
    }

    /// Whether the start was read.
    pub(crate) const fn is_read(self) -> bool {
        self.0 != i64::MIN
    }

    /// The start, when it was read.
    pub(crate) fn get(self) -> Option<Instant> {
        if !self.is_read() {
            return None;
        }
        let origin = *ORIGIN;
        let offset = Duration::from_nanos(self.0.unsigned_abs());
        if self.0 >= 0 {
            origin.checked_add(offset)
        } else {
            origin.checked_sub(offset)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_round_trips_exactly_before_and_after_the_origin() {
        let now = Instant::now();
        let origin = *ORIGIN;
        for instant in [
            now,
            origin,
            now + Duration::from_nanos(1),
            now + Duration::from_secs(100 * 365 * 24 * 3600),
        ]
        .into_iter()
        .chain(origin.checked_sub(Duration::from_nanos(7)))
        .chain(origin.checked_sub(Duration::from_secs(3600)))
        {
            assert_eq!(Start::at(instant).get(), Some(instant));
        }
        assert_eq!(Start::UNREAD.get(), None);
        assert!(!Start::UNREAD.is_read() && Start::at(now).is_read());
    }
}
