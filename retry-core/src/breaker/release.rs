//! The release: when a breaker closes after a break, the attempts it held
//! back are let through at a rate, not all at once. The rate starts at one
//! attempt per `release_ramp`; each success raises it by as much, so while
//! every attempt succeeds it doubles every `release_ramp` (TCP's slow
//! start); a throttled answer halves it (at most once per `release_ramp`)
//! and from then on it grows a quarter as fast. An attempt
//! over the rate is refused and told when a place is free, spread over one
//! `release_ramp` so that the held-back calls do not come back together.
//! The release ends when the rate has gone unused, and no attempt was
//! refused, for four `release_ramp`s: the calls are no longer held back.

use super::{BreakerOpen, BreakerState, CircuitBreaker, Ticket};
use retrykit_schema::classes::THROTTLED;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How much a throttled answer leaves of the rate.
const CUT: f64 = 0.5;
/// How much slower the rate grows once a throttled answer was seen.
const AVOID: f64 = 0.25;
/// Ramp steps without a refusal, or with places unused, that end the release.
const IDLE: f64 = 4.0;

/// A release in progress. Times are milliseconds since the breaker's origin.
#[derive(Debug, Clone)]
pub(super) struct Release {
    /// Attempts let through per millisecond.
    rate: f64,
    /// When the next place is free.
    next_ms: f64,
    /// When the rate was last cut (`None`: never, so it still doubles).
    cut_ms: Option<f64>,
    /// When an attempt was last refused for want of a place.
    refused_ms: f64,
    /// The length of a ramp step (`release_ramp`) in milliseconds.
    ramp_ms: f64,
    /// Refusals so far: numbers the spread's draws.
    draws: u32,
}

/// What the release says of an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Admit {
    /// Send it.
    Go,
    /// Not yet: ask again in this many milliseconds.
    Wait(f64),
    /// The release is over: send it, and stop releasing.
    Over,
}

impl Release {
    /// A release starting at `now_ms`, with ramp steps of `ramp_ms` (at least 1).
    pub(super) fn new(now_ms: f64, ramp_ms: f64) -> Self {
        let ramp_ms = ramp_ms.max(1.0);
        Release {
            rate: 1.0 / ramp_ms,
            next_ms: now_ms,
            cut_ms: None,
            refused_ms: now_ms,
            ramp_ms,
            draws: 0,
        }
    }

    /// The attempts let through per millisecond now.
    #[cfg(test)]
    pub(super) fn rate(&self) -> f64 {
        self.rate
    }

    /// Whether an attempt at `now_ms` goes; `draw(n)` is a uniform sample
    /// in `[0, 1)` for the `n`-th refusal's spread.
    pub(super) fn admit(&mut self, now_ms: f64, draw: impl FnOnce(u32) -> f64) -> Admit {
        let idle = now_ms - IDLE * self.ramp_ms;
        if self.next_ms < idle && self.refused_ms < idle {
            return Admit::Over;
        }
        // The places that fall in the current millisecond are free; what a
        // millisecond leaves unused is not carried on.
        // (Less a nanosecond, so that rounding in the sum of places cannot
        // squeeze in one more.)
        if self.next_ms < now_ms + 1.0 - 1e-6 {
            self.next_ms = self.next_ms.max(now_ms) + 1.0 / self.rate;
            return Admit::Go;
        }
        self.refused_ms = now_ms;
        self.draws = self.draws.wrapping_add(1);
        let spread = draw(self.draws).clamp(0.0, 1.0) * self.ramp_ms;
        Admit::Wait(self.next_ms - now_ms + spread)
    }

    /// An attempt it let through succeeded: the rate grows.
    pub(super) fn succeeded(&mut self) {
        let step = 1.0 / self.ramp_ms;
        self.rate += if self.cut_ms.is_some() {
            step * AVOID
        } else {
            step
        };
    }

    /// An attempt it let through was throttled at `now_ms`: the rate is
    /// cut, once per ramp step.
    pub(super) fn throttled(&mut self, now_ms: f64) {
        if self.cut_ms.is_some_and(|cut| now_ms - cut < self.ramp_ms) {
            return;
        }
        self.cut_ms = Some(now_ms);
        self.rate = (self.rate * CUT).max(1.0 / self.ramp_ms);
    }
}

/// Keeps the release's draws apart from the open periods' jitter.
pub(super) const SPREAD_STREAM: u64 = 0x5EED_0F5E_1EA5_E000;

impl CircuitBreaker {
    /// A closed breaker's verdict on an attempt at `now`: a ticket, unless
    /// a release is in progress and has no place free.
    pub(super) fn released(&self, now: Instant) -> Result<Ticket, BreakerOpen> {
        if !self.releasing.load(Ordering::Acquire) {
            return Ok(Ticket::closed(now));
        }
        let now_ms = self.ms_f(now);
        let seed = self.seed.map(|s| s ^ SPREAD_STREAM);
        let mut release = self.release.lock().unwrap_or_else(PoisonError::into_inner);
        let admit = match release.as_mut() {
            Some(r) => r.admit(now_ms, |n| crate::rng::sample(seed, n).as_f64()),
            None => Admit::Over,
        };
        match admit {
            Admit::Go => Ok(Ticket::closed(now)),
            Admit::Over => {
                *release = None;
                self.releasing.store(false, Ordering::Release);
                Ok(Ticket::closed(now))
            }
            Admit::Wait(ms) => {
                let retry_in = Duration::from_secs_f64((ms / 1000.0).clamp(0.0, 86_400.0));
                Err(self.refusal(BreakerState::Closed, retry_in))
            }
        }
    }

    /// The breaker closed at `now`: the release begins.
    pub(super) fn start_release(&self, now: Instant) {
        let ramp_ms = self.settings.release_ramp.as_secs_f64() * 1000.0;
        let mut release = self.release.lock().unwrap_or_else(PoisonError::into_inner);
        *release = Some(Release::new(self.ms_f(now), ramp_ms));
        self.releasing.store(true, Ordering::Release);
    }

    /// The breaker opened: no release.
    pub(super) fn stop_release(&self) {
        if self.releasing.swap(false, Ordering::AcqRel) {
            *self.release.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// An attempt let through during the release was answered at `now`:
    /// a success raises the rate, a throttled answer cuts it (a fleet's
    /// rate at its next round trip).
    pub(super) fn release_answered(&self, now: Instant, ok: bool, throttled: bool) {
        if !ok && !throttled {
            return;
        }
        // A fleet's release is the fleet's: one rate, kept in Redis.
        #[cfg(feature = "redis")]
        if let Some(fleet) = self.deciding_fleet() {
            return fleet.release_answered(ok);
        }
        let now_ms = self.ms_f(now);
        let mut release = self.release.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = release.as_mut() {
            if ok {
                r.succeeded();
            } else {
                r.throttled(now_ms);
            }
        }
    }

    /// Whether an error of the retryable class `name` counts as a failure
    /// during a release: `release_trip_on` when set, else `trip_on` less
    /// throttled.
    pub(super) fn release_trips(&self, name: &str) -> bool {
        match &self.settings.release_trip_on {
            Some(classes) => classes.iter().any(|c| &**c == name),
            None => name != THROTTLED && self.settings.trip_on.iter().any(|c| &**c == name),
        }
    }

    /// `now` in milliseconds since the origin, with its fraction.
    fn ms_f(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.origin).as_secs_f64() * 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_doubles_per_step_while_all_succeed_and_is_cut_once_per_step() {
        let mut r = Release::new(0.0, 20.0);
        assert_eq!(r.admit(0.0, |_| 0.0), Admit::Go);
        // One place per 20 ms: the next attempt waits for it, and a random
        // share of a step more.
        assert_eq!(r.admit(0.0, |_| 0.5), Admit::Wait(20.0 + 10.0));
        for _ in 0..20 {
            r.succeeded();
        }
        assert!((r.rate() - 1.05).abs() < 1e-9, "{}", r.rate());
        r.throttled(30.0);
        let cut = r.rate();
        assert!((cut - 0.525).abs() < 1e-9);
        r.throttled(40.0);
        assert_eq!(r.rate(), cut, "one cut per ramp step");
        r.succeeded();
        assert!(
            (r.rate() - (cut + 0.25 / 20.0)).abs() < 1e-9,
            "slower growth after a cut"
        );
    }

    #[test]
    fn a_millisecond_lets_its_places_through_and_an_unused_rate_ends_it() {
        let mut r = Release::new(0.0, 1.0);
        for _ in 0..9 {
            r.succeeded();
        }
        // 10 per ms: ten go in the millisecond, the eleventh waits.
        let went = (0..11)
            .filter(|_| r.admit(0.0, |_| 0.0) == Admit::Go)
            .count();
        assert_eq!(went, 10);
        let not_yet = r.admit(4.5, |_| 0.0);
        assert_eq!(not_yet, Admit::Go, "not idle for four steps yet");
        assert_eq!(r.admit(100.0, |_| 0.5), Admit::Over);
    }

    #[test]
    fn a_fractional_rate_is_kept_on_average_from_millisecond_to_millisecond() {
        let mut r = Release::new(0.0, 2.0);
        for _ in 0..4 {
            r.succeeded(); // 0.5 per ms, +0.5 a success: 2.5 per ms
        }
        let per_ms: Vec<usize> = (0..4)
            .map(|ms| {
                let at = f64::from(ms);
                (0..10)
                    .filter(|_| r.admit(at, |_| 0.0) == Admit::Go)
                    .count()
            })
            .collect();
        assert_eq!(per_ms, [3, 2, 3, 2]);
    }
}
