//! The fleet simulator's invariants: what must hold whatever the policy.

use retrykit_core::kernel::Schedule;
use retrykit_core::{Backoff, Jitter, Policy};
use retrykit_sim::{Contention, Herd, StoppedBy, client_seed};
use std::time::Duration;

mod support;
use support::{ALL_JITTERS, hopeless, policy};

const MS: Duration = Duration::from_millis(1);

#[test]
fn total_calls_do_not_depend_on_jitter_when_nobody_gets_through() {
    for jitter in ALL_JITTERS {
        let r = hopeless(2000).run(&policy(jitter, 7)).unwrap();
        assert_eq!(r.calls, 2000 * 7, "{jitter:?}");
        assert_eq!(r.give_ups, 2000, "{jitter:?}");
        assert_eq!((r.successes, r.unfinished), (0, 0), "{jitter:?}");
        assert_eq!(r.stopped_by, None);
        assert_eq!(r.arrivals.total() + r.first_wave, r.calls, "{jitter:?}");
        assert_eq!((r.p50, r.p99), (None, None));
    }
}

#[test]
fn without_jitter_the_whole_fleet_arrives_in_one_tick_every_time() {
    let r = hopeless(5000).run(&policy(Jitter::None, 6)).unwrap();
    assert_eq!(r.first_wave, 5000);
    assert_eq!(r.peak_retries, 5000);
    // Tick 0 plus one tick per retry, and nothing in between.
    assert_eq!(r.busy_ticks, 6);
    assert!(r.arrivals.bins().all(|b| b.calls == 0 || b.peak == 5000));
}

#[test]
fn jitter_spreads_the_same_retries_over_many_ticks() {
    let lockstep = hopeless(5000).run(&policy(Jitter::None, 6)).unwrap();
    for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
        let r = hopeless(5000).run(&policy(jitter, 6)).unwrap();
        assert!(
            r.peak_retries * 10 < lockstep.peak_retries,
            "{jitter:?}: peak {} vs {}",
            r.peak_retries,
            lockstep.peak_retries
        );
        assert!(r.busy_ticks > 100, "{jitter:?}");
    }
}

#[test]
fn the_first_failure_is_reported_apart_from_the_retries() {
    let r = hopeless(300).run(&policy(Jitter::Full, 3)).unwrap();
    assert_eq!(r.first_wave, 300);
    assert!(r.peak_tick > 0);
    assert_eq!(
        r.arrivals.bins().next().unwrap().peak,
        0,
        "tick 0 holds no retries"
    );
}

#[test]
fn seeded_runs_repeat_exactly_and_seeds_matter() {
    let herd = Herd {
        clients: 3000,
        outage: Duration::from_millis(700),
        capacity: 40,
        seed: 11,
        ..Herd::default()
    };
    let p = policy(Jitter::Full, 8);
    let a = herd.run(&p).unwrap();
    assert_eq!(a, herd.run(&p).unwrap());
    let b = Herd { seed: 12, ..herd }.run(&p).unwrap();
    assert_ne!(a.arrivals, b.arrivals);
}

#[test]
fn capacity_limits_successes_per_tick() {
    // Constant 1 ms waits, no jitter: everyone left calls every other tick
    // (the answer comes at the end of the tick, the retry a tick later).
    let p = Policy::builder()
        .backoff(Backoff::Constant)
        .base(MS)
        .cap(MS)
        .jitter(Jitter::None)
        .max_attempts(1000)
        .build()
        .unwrap();
    let herd = Herd {
        clients: 1000,
        outage: Duration::ZERO,
        capacity: 10,
        ..Herd::default()
    };
    let r = herd.run(&p).unwrap();
    assert_eq!(r.successes, 1000);
    assert_eq!(r.busy_ticks, 100);
    // 1000 + 990 + ... + 10 calls.
    assert_eq!(r.calls, (1..=100).map(|k| 10 * k).sum::<u64>());
    // The 500th success is in the 50th busy tick, tick 98, answered at 99 ms.
    assert_eq!(r.p50, Some(99 * MS));
    assert_eq!(r.ticks, 199);
    assert_eq!(r.finished_after(), 199 * MS);
}

#[test]
fn successes_never_exceed_capacity_in_the_ticks_after_the_outage() {
    for (capacity, jitter) in [
        (1, Jitter::Full),
        (7, Jitter::Equal),
        (50, Jitter::Decorrelated),
    ] {
        let herd = Herd {
            clients: 2000,
            outage: Duration::from_millis(300),
            capacity,
            ..Herd::default()
        };
        let r = herd.run(&policy(jitter, 12)).unwrap();
        let after_outage = r.ticks.saturating_sub(300);
        assert!(r.successes > 0);
        assert!(
            r.successes <= capacity * after_outage,
            "{} successes in {after_outage} ticks at {capacity}/tick",
            r.successes
        );
        assert_eq!(r.successes + r.give_ups + r.unfinished, 2000);
    }
}

#[test]
fn a_one_nanosecond_tick_costs_calls_not_ticks() {
    // A 2 s outage and the retries after it span some 10^10 one-nanosecond
    // ticks. Work that grows with ticks (a window of ticks zeroed and summed
    // for each call, a wheel turned tick by tick between calls) takes minutes
    // here; work that grows with calls takes as long as at 1 ms.
    let herd = Herd {
        clients: 100_000,
        outage: Duration::from_secs(2),
        capacity: 20,
        tick: Duration::from_nanos(1),
        ..Herd::default()
    };
    let r = herd.run(&policy(Jitter::Full, 8)).unwrap();
    assert_eq!(r.successes + r.give_ups + r.unfinished, 100_000);
    assert_eq!(r.unfinished, 0);
    assert!(r.successes > 0 && r.give_ups > 0, "{r:?}");
    assert_eq!(r.arrivals.total() + r.first_wave, r.calls);
    // With ticks this fine, most calls have a tick to themselves.
    assert!(
        r.busy_ticks * 2 > r.calls,
        "{} busy ticks, {} calls",
        r.busy_ticks,
        r.calls
    );
    assert!(r.finished_after() > Duration::from_secs(2));
}

#[test]
fn a_lone_client_calls_exactly_when_the_real_schedule_says() {
    let seed = 5;
    let p = policy(Jitter::Full, 6);
    let herd = Herd {
        seed,
        ..hopeless(1)
    };
    let r = herd.run(&p).unwrap();
    // The same waits the real loop would draw with the client's seed.
    let mut expected = vec![0u64];
    for wait in Schedule::new(&p, Some(client_seed(seed, 0))).take(5) {
        let answered = (expected.last().unwrap() + 1) * 1_000_000;
        expected.push((answered + wait.as_nanos() as u64) / 1_000_000);
    }
    let arrived: Vec<u64> = r
        .arrivals
        .bins()
        .filter(|b| b.calls > 0)
        .map(|b| b.first_tick)
        .collect();
    assert_eq!(r.arrivals.bin_ticks(), 1);
    assert_eq!(arrived, expected[1..]);
}

#[test]
fn a_deadline_ends_the_retries_before_the_service_returns() {
    let p = policy(Jitter::Full, 50)
        .to_builder()
        .deadline(Some(Duration::from_millis(400)))
        .build()
        .unwrap();
    let herd = Herd {
        clients: 500,
        outage: Duration::from_secs(1),
        ..Herd::default()
    };
    let r = herd.run(&p).unwrap();
    assert_eq!(r.give_ups, 500);
    assert!(
        r.finished_after() <= Duration::from_millis(400),
        "{:?}",
        r.finished_after()
    );
}

#[test]
fn the_call_limit_stops_a_run_that_would_go_on_for_days() {
    let endless = Policy::builder()
        .backoff(Backoff::Constant)
        .base(Duration::from_nanos(1))
        .cap(Duration::from_nanos(1))
        .jitter(Jitter::None)
        .max_attempts(0)
        .deadline(Some(Policy::MAX_DURATION))
        .build()
        .unwrap();
    let herd = Herd {
        clients: 10,
        outage: Policy::MAX_DURATION,
        tick: Duration::from_nanos(1),
        horizon: Policy::MAX_DURATION,
        max_calls: 10_000,
        ..Herd::default()
    };
    let r = herd.run(&endless).unwrap();
    assert_eq!(r.calls, 10_000);
    assert_eq!(r.unfinished, 10);
    assert_eq!(r.stopped_by, Some(StoppedBy::CallLimit), "and it says so");
    assert!(r.arrivals.bins().count() <= r.arrivals.max_bins());
}

#[test]
fn the_horizon_leaves_slow_clients_unfinished() {
    let herd = Herd {
        horizon: Duration::from_millis(200),
        ..hopeless(100)
    };
    let r = herd.run(&policy(Jitter::None, 10)).unwrap();
    assert_eq!(r.unfinished, 100);
    assert_eq!(r.give_ups, 0);
    assert_eq!(r.stopped_by, Some(StoppedBy::Horizon), "and it says so");
}

#[test]
fn no_clients_is_an_empty_report() {
    let r = hopeless(0).run(&policy(Jitter::Full, 3)).unwrap();
    assert_eq!(
        (r.calls, r.first_wave, r.peak_retries, r.ticks),
        (0, 0, 0, 0)
    );
}

#[test]
fn bad_scenarios_name_every_field() {
    let herd = Herd {
        tick: Duration::ZERO,
        capacity: 0,
        outage: Duration::MAX,
        ..Herd::default()
    };
    let err = herd.run(&Policy::default()).unwrap_err();
    let fields: Vec<_> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(fields, ["tick", "outage", "capacity"]);
    let contention = Contention {
        horizon: Duration::ZERO,
        latency: Duration::MAX,
        ..Contention::default()
    };
    let err = contention.run(&Policy::default()).unwrap_err();
    let fields: Vec<_> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(fields, ["latency", "horizon"]);
}

#[test]
fn a_retry_budget_is_ignored_and_said_so() {
    let budget = std::sync::Arc::new(retrykit_core::RetryBudget::builder().build().unwrap());
    let p = policy(Jitter::Full, 4)
        .to_builder()
        .budget(Some(budget))
        .build()
        .unwrap();
    let r = hopeless(100).run(&p).unwrap();
    assert!(r.ignored_budget);
    assert_eq!(r.calls, 400);
}

#[test]
fn contention_with_one_client_takes_exactly_one_write() {
    for p in Contention::study_policies() {
        let r = Contention {
            clients: 1,
            ..Contention::default()
        }
        .run(&p)
        .unwrap();
        assert_eq!((r.reads, r.writes, r.conflicts, r.successes), (1, 1, 0, 1));
        // Read there and back, write there and back: four hops of about 10 ms.
        assert!(
            r.finished_after > Duration::from_millis(20)
                && r.finished_after < Duration::from_millis(60)
        );
    }
}

#[test]
fn contention_ends_with_every_client_written_once() {
    for p in Contention::study_policies() {
        let r = Contention {
            clients: 60,
            ..Contention::default()
        }
        .run(&p)
        .unwrap();
        assert_eq!(r.successes, 60, "{:?}", p.name());
        assert_eq!(r.writes - r.conflicts, 60, "one winning write per client");
        assert_eq!(r.reads, r.writes);
    }
}

#[test]
fn contention_repeats_for_a_seed() {
    let c = Contention {
        clients: 40,
        seed: 3,
        ..Contention::default()
    };
    let p = &Contention::study_policies()[3];
    assert_eq!(c.run(p).unwrap(), c.run(p).unwrap());
}

#[test]
fn the_studys_finding_holds_jitter_costs_less_work_than_none() {
    let c = Contention {
        clients: 100,
        ..Contention::default()
    };
    let policies = Contention::study_policies();
    let calls = |name: &str| {
        let p = policies.iter().find(|p| p.name() == Some(name)).unwrap();
        c.run(p).unwrap().calls()
    };
    let none = calls("none");
    assert!(
        calls("full") < none,
        "full {} vs none {none}",
        calls("full")
    );
    assert!(calls("equal") < none);
    assert!(calls("decorrelated") < none);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn jitter() -> impl Strategy<Value = Jitter> {
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated),
            (0.0..=1.0f64).prop_map(Jitter::Proportional),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever the policy and scenario: every client is accounted for,
        /// every call is in the histogram or the first wave, nobody calls
        /// more often than the policy allows, and the run repeats exactly.
        #[test]
        fn every_client_and_call_is_accounted_for(
            clients in 0u32..400,
            outage_ms in 0u64..3000,
            capacity in 1u64..50,
            tick_us in 100u64..20_000,
            base_ms in 1u64..200,
            attempts in 1u32..12,
            jitter in jitter(),
            seed in any::<u64>(),
        ) {
            let p = Policy::builder()
                .base(Duration::from_millis(base_ms))
                .cap(Duration::from_millis(base_ms * 40))
                .jitter(jitter)
                .max_attempts(attempts)
                .build()
                .unwrap();
            let herd = Herd {
                clients,
                outage: Duration::from_millis(outage_ms),
                capacity,
                tick: Duration::from_micros(tick_us),
                seed,
                ..Herd::default()
            };
            let r = herd.run(&p).unwrap();
            prop_assert_eq!(r.successes + r.give_ups + r.unfinished, u64::from(clients));
            prop_assert_eq!(r.unfinished, 0);
            prop_assert_eq!(r.arrivals.total() + r.first_wave, r.calls);
            prop_assert!(r.calls <= u64::from(clients) * u64::from(attempts));
            prop_assert!(r.calls >= u64::from(clients));
            prop_assert!(r.peak_retries <= u64::from(clients));
            prop_assert_eq!(r.first_wave, u64::from(clients));
            prop_assert!(r.busy_ticks <= r.ticks.max(1));
            if let (Some(p50), Some(p99)) = (r.p50, r.p99) {
                prop_assert!(p50 <= p99 && p99 <= r.finished_after());
            }
            prop_assert_eq!(&r, &herd.run(&p).unwrap());
        }
    }
}
