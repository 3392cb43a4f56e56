//! Small runs over policies built in code, for the renderers' tests.

use super::*;
use retrykit_core::Jitter;

pub(crate) fn policies() -> Vec<(String, Policy)> {
    [("lockstep", Jitter::None), ("full", Jitter::Full)]
        .into_iter()
        .map(|(name, jitter)| {
            let p = Policy::builder()
                .base(Duration::from_millis(50))
                .cap(Duration::from_secs(2))
                .jitter(jitter)
                .max_attempts(6)
                .build()
                .unwrap();
            (name.to_owned(), p)
        })
        .collect()
}

pub(crate) fn herd(policies: &[(String, Policy)]) -> HerdRun<'_> {
    let herd = Herd {
        clients: 2000,
        outage: Duration::from_millis(500),
        capacity: 20,
        ..Herd::default()
    };
    let results = policies
        .iter()
        .map(|(name, policy)| (Named { name, policy }, herd.run(policy).unwrap()))
        .collect();
    breaker::herd_run(herd, results).unwrap()
}

pub(crate) fn contention(policies: &[(String, Policy)]) -> ContentionRun<'_> {
    let scenario = Contention::default();
    let results = policies
        .iter()
        .map(|(name, policy)| {
            let reports = [10, 40]
                .into_iter()
                .map(|clients| {
                    Contention {
                        clients,
                        ..scenario.clone()
                    }
                    .run(policy)
                    .unwrap()
                })
                .collect();
            (Named { name, policy }, reports)
        })
        .collect();
    ContentionRun { scenario, results }
}
