//! A policy's chaos in the herd (docs/chaos.md): each attempt, after its
//! breaker let it through, fails with the chaos's fault at the chaos's rate,
//! never sent (it takes none of the service's capacity), and its client
//! decides after it as after any failure of that class. Injected latency is
//! not modelled: the herd answers calls at tick granularity.

use retrykit_core::kernel::{Failure, split_mix};
use retrykit_core::{Class, Policy};
use std::time::Duration;

/// The faults a policy's chaos injects into a run.
pub(super) struct Faults {
    rate: f64,
    class: Class,
    hint: Option<Duration>,
    seed: u64,
}

impl Faults {
    /// The policy's faults, drawn from its chaos's seed (the run's seed
    /// without one); `None` when it injects none.
    pub(super) fn of(policy: &Policy, seed: u64) -> Option<Self> {
        let chaos = policy.chaos().filter(|c| c.fault_rate() > 0.0)?;
        Some(Faults {
            rate: chaos.fault_rate(),
            class: chaos.fault_class(),
            hint: chaos.retry_after(),
            seed: chaos.seed().unwrap_or(seed),
        })
    }

    /// The fault client `client`'s attempt `attempt` (1 is the first) gets,
    /// if any: a pure function of the seed, the client and the attempt, so
    /// a run repeats whatever order the clients are visited in.
    pub(super) fn fault(&self, client: u32, attempt: u32) -> Option<Failure> {
        let draw = split_mix(split_mix(self.seed, u64::from(client)), u64::from(attempt));
        let unit = (draw >> 11) as f64 / (1u64 << 53) as f64;
        (unit < self.rate).then_some(Failure {
            class: self.class,
            hint: self.hint,
            allowed: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrykit_core::chaos::Chaos;

    #[test]
    fn faults_follow_the_rate_and_repeat() {
        let chaos =
            Chaos::new(Some(9)).fault(0.25, Class::THROTTLED, Some(Duration::from_millis(5)));
        let policy = Policy::builder()
            .chaos(Some(chaos.unwrap().into()))
            .build()
            .unwrap();
        let faults = Faults::of(&policy, 0).unwrap();
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
        assert!(Faults::of(&Policy::default(), 0).is_none());
    }
}
