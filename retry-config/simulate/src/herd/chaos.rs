//! A policy's chaos in the herd (docs/chaos.md). Each attempt, after its
//! breaker let it through, draws a fault and a delay, each at its own rate
//! and independently, as the engine does:
//!
//! - a delay holds the attempt back before it is sent: it reaches the
//!   service that many ticks later (rounded up to the tick), or, when the
//!   delay reaches the attempt's time limit (the nearer of
//!   `attempt_timeout` and what is left of the deadline), it is never sent
//!   and fails as a timeout when the limit runs out;
//! - a fault fails the attempt (after its delay, if it drew one), never
//!   sent: it takes none of the service's capacity, and its client decides
//!   after it as after any failure of that class.

use retrykit_core::kernel::{Failure, split_mix};
use retrykit_core::{Class, Policy};
use std::time::Duration;

/// The faults and delays a policy's chaos injects into a run.
pub(super) struct Injections {
    fault_rate: f64,
    class: Class,
    hint: Option<Duration>,
    /// The share of attempts delayed, and the shortest and longest delay.
    latency: (f64, Duration, Duration),
    seed: u64,
}

impl Injections {
    /// The policy's injections, drawn from its chaos's seed (the run's seed
    /// without one); `None` when it injects nothing.
    pub(super) fn of(policy: &Policy, seed: u64) -> Option<Self> {
        let chaos = policy.chaos().filter(|c| c.active())?;
        let (min, max) = chaos.latency_range();
        Some(Injections {
            fault_rate: chaos.fault_rate(),
            class: chaos.fault_class(),
            hint: chaos.retry_after(),
            latency: (chaos.latency_rate(), min, max),
            seed: chaos.seed().unwrap_or(seed),
        })
    }

    /// The draw client `client`'s attempt `attempt` (1 is the first) gets:
    /// a pure function of the seed, the client and the attempt, so a run
    /// repeats whatever order the clients are visited in.
    fn draw(&self, client: u32, attempt: u32) -> u64 {
        split_mix(split_mix(self.seed, u64::from(client)), u64::from(attempt))
    }

    /// The fault client `client`'s attempt `attempt` gets, if any.
    pub(super) fn fault(&self, client: u32, attempt: u32) -> Option<Failure> {
        (unit(self.draw(client, attempt)) < self.fault_rate).then_some(Failure {
            class: self.class,
            hint: self.hint,
            allowed: true,
        })
    }

    /// The delay client `client`'s attempt `attempt` gets, if any: drawn
    /// from its own streams (split from the fault's draw), so whether an
    /// attempt is delayed does not depend on whether it is faulted.
    pub(super) fn delay(&self, client: u32, attempt: u32) -> Option<Duration> {
        let (rate, min, max) = self.latency;
        let base = self.draw(client, attempt);
        (unit(split_mix(base, 1)) < rate).then(|| {
            let spread = u64::try_from(max.saturating_sub(min).as_nanos()).unwrap_or(u64::MAX);
            // An even draw from 0 to `spread`, both ends included.
            let extra = (u128::from(split_mix(base, 2)) * (u128::from(spread) + 1)) >> 64;
            min + Duration::from_nanos(extra as u64)
        })
    }
}

/// A draw as a number from 0 (included) to 1 (excluded).
fn unit(draw: u64) -> f64 {
    (draw >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrykit_core::chaos::Chaos;

    fn policy(chaos: Chaos) -> Policy {
        Policy::builder().chaos(Some(chaos.into())).build().unwrap()
    }

    #[test]
    fn faults_follow_the_rate_and_repeat() {
        let chaos =
            Chaos::new(Some(9)).fault(0.25, Class::THROTTLED, Some(Duration::from_millis(5)));
        let faults = Injections::of(&policy(chaos.unwrap()), 0).unwrap();
        let hits = (0..4000u32)
            .filter(|&c| faults.fault(c, 1).is_some())
            .count();
        assert!((850..1150).contains(&hits), "{hits}");
        assert_eq!(faults.fault(17, 2), faults.fault(17, 2));
        let f = (0..100).find_map(|c| faults.fault(c, 1)).unwrap();
        assert_eq!(
            (f.class, f.hint),
            (Class::THROTTLED, Some(Duration::from_millis(5)))
        );
        assert!((0..4000).all(|c| faults.delay(c, 1).is_none()));
        assert!(Injections::of(&Policy::default(), 0).is_none());
    }

    #[test]
    fn delays_follow_the_rate_repeat_and_are_drawn_apart_from_faults() {
        let ms = Duration::from_millis;
        let make = |seed| {
            let chaos = Chaos::new(Some(seed))
                .fault(0.5, Class::TRANSIENT, None)
                .unwrap()
                .latency(0.25, ms(10), ms(20))
                .unwrap();
            Injections::of(&policy(chaos), 0).unwrap()
        };
        let (a, b) = (make(3), make(3));
        let delays: Vec<_> = (0..4000u32).map(|c| a.delay(c, 2)).collect();
        assert_eq!(
            delays,
            (0..4000u32).map(|c| b.delay(c, 2)).collect::<Vec<_>>()
        );
        assert_ne!(
            delays,
            (0..4000u32)
                .map(|c| make(4).delay(c, 2))
                .collect::<Vec<_>>()
        );
        let drawn: Vec<Duration> = delays.iter().flatten().copied().collect();
        assert!((850..1150).contains(&drawn.len()), "{}", drawn.len());
        assert!(drawn.iter().all(|d| (ms(10)..=ms(20)).contains(d)));
        // The range is covered, not just its ends.
        assert!(drawn.iter().any(|d| (ms(12)..ms(18)).contains(d)));
        // Independent of the fault draw: about half the delayed are faulted.
        let both = (0..4000u32)
            .filter(|&c| a.delay(c, 2).is_some() && a.fault(c, 2).is_some())
            .count();
        assert!((400..600).contains(&both), "{both}");
        let fixed = Chaos::new(None).latency(1.0, ms(7), ms(7)).unwrap();
        let fixed = Injections::of(&policy(fixed), 5).unwrap();
        assert!((0..100).all(|c| fixed.delay(c, 1) == Some(ms(7))));
        assert!((0..100).all(|c| fixed.fault(c, 1).is_none()));
    }
}
