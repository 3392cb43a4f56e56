//! The circuit breaker in the herd: the engine's own breaker, one per
//! simulated process or one for the fleet, with fixed seeds.

use retrykit_core::breaker::{BreakerBuilder, BreakerState, CircuitBreaker};
use retrykit_core::{Jitter, Policy};
use retrykit_sim::{BreakerScope, Herd, HerdReport};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::{hopeless, policy};

const SECOND: Duration = Duration::from_secs(1);

/// A breaker that opens when half of at least 20 attempts failed, for
/// `open_for`, without jitter unless a test adds it.
fn breaker(open_for: Duration) -> BreakerBuilder {
    CircuitBreaker::builder()
        .name("dependency")
        .min_calls(20)
        .failure_ratio(0.5)
        .open_for(open_for)
        .max_open_for(open_for * 8)
        .open_jitter(0.0)
}

fn with(policy: &Policy, breaker: BreakerBuilder) -> Policy {
    let breaker = Arc::new(breaker.build().unwrap());
    policy.to_builder().breaker(Some(breaker)).build().unwrap()
}

/// 2000 clients, a 3 s outage, then 50 calls per 1 ms tick.
fn outage() -> Herd {
    Herd {
        clients: 2000,
        outage: 3 * SECOND,
        capacity: 50,
        seed: 11,
        ..Herd::default()
    }
}

fn scoped(herd: &Herd, scope: BreakerScope) -> Herd {
    Herd {
        breaker: scope,
        ..herd.clone()
    }
}

fn accounted(r: &HerdReport) {
    assert_eq!(
        r.successes + r.give_ups + r.unfinished,
        u64::from(r.clients)
    );
    assert_eq!(r.arrivals.total() + r.first_wave, r.calls);
    assert!(r.breaker_give_ups <= r.give_ups);
    assert!(r.outage_calls <= r.calls);
}

#[test]
fn breakers_hold_back_the_calls_made_during_the_outage() {
    let plain = policy(Jitter::Full, 10);
    let braked = with(&plain, breaker(SECOND / 2));
    let herd = outage();
    let none = herd.run(&plain).unwrap();
    let fleet = scoped(&herd, BreakerScope::Fleet).run(&braked).unwrap();
    let local = scoped(&herd, BreakerScope::Local { processes: 10 })
        .run(&braked)
        .unwrap();
    for r in [&none, &fleet, &local] {
        accounted(r);
    }
    assert_eq!((none.breaker, none.refused), (None, 0));
    assert_eq!(fleet.breaker, Some(BreakerScope::Fleet));
    // Every first call is sent (the breakers learn from their answers);
    // after that, a breaker sends one probe per open period, and the
    // periods last at least 0.5 s: at most 7 in 3 s (6 plus the last one).
    assert_eq!(fleet.first_wave, 2000);
    assert!(
        fleet.outage_calls <= 2000 + 7,
        "fleet: {}",
        fleet.outage_calls
    );
    assert!(
        local.outage_calls <= 2000 + 10 * 7,
        "local: {}",
        local.outage_calls
    );
    assert!(local.outage_calls > fleet.outage_calls);
    // Without a breaker, each client retries several times in 3 s.
    assert!(none.outage_calls > 3 * 2000, "none: {}", none.outage_calls);
    assert!(fleet.refused > 0 && local.refused > 0);
}

#[test]
fn a_breaker_that_never_judges_changes_nothing() {
    // min_calls beyond the fleet: it never opens, so every figure is the
    // run without it, though that one runs its outage client by client and
    // this one tick by tick.
    let never = |b: BreakerBuilder| b.min_calls(u32::MAX);
    for jitter in [Jitter::None, Jitter::Full, Jitter::Decorrelated] {
        let plain = policy(jitter, 8);
        let without = outage().run(&plain).unwrap();
        let braked = with(&plain, never(breaker(SECOND)));
        let mut r = scoped(&outage(), BreakerScope::Local { processes: 7 })
            .run(&braked)
            .unwrap();
        assert_eq!(r.breaker, Some(BreakerScope::Local { processes: 7 }));
        r.breaker = None;
        assert_eq!(r, without, "{jitter:?}");
    }
}

#[test]
fn runs_repeat_and_leave_the_policys_own_breaker_alone() {
    let braked = with(
        &policy(Jitter::Full, 10),
        breaker(SECOND / 4).open_jitter(0.5),
    );
    for scope in [BreakerScope::Fleet, BreakerScope::Local { processes: 16 }] {
        let herd = scoped(&outage(), scope);
        let first = herd.run(&braked).unwrap();
        assert_eq!(first, herd.run(&braked).unwrap(), "{scope:?}");
        assert!(first.refused > 0);
    }
    let own = braked.breaker().unwrap();
    assert_eq!(own.state(), BreakerState::Closed);
    assert_eq!(own.status(Instant::now()).attempts, 0);
}

#[test]
fn the_seed_draws_the_breakers_jitter_and_release_and_nothing_else_is_random() {
    // No jitter in the clients' waits: only the breakers' open periods
    // and, once the service is back, their releases are drawn, one stream
    // per breaker.
    let lockstep = policy(Jitter::None, 12);
    let runs = |herd: &Herd, jitter: f64| {
        let braked = with(&lockstep, breaker(SECOND / 4).open_jitter(jitter));
        [1, 2].map(|seed| {
            Herd {
                seed,
                ..scoped(herd, BreakerScope::Local { processes: 8 })
            }
            .run(&braked)
            .unwrap()
        })
    };
    let [a, b] = runs(&hopeless(2000), 0.0);
    assert_eq!(a, b, "nothing random without jitter or a release");
    let [c, d] = runs(&hopeless(2000), 0.5);
    assert_ne!(c, d, "the seed draws the breakers' jitter");
    let [e, f] = runs(&outage(), 0.0);
    assert_ne!(e, f, "the seed draws the releases' spread");
}

#[test]
fn a_refused_attempt_uses_no_attempt_and_a_held_call_ends_at_its_total_wait() {
    // Three attempts, 50 ms then 100 ms apart (a total wait of 150 ms), a
    // breaker open for 10 s: the first attempt is sent and fails (opening
    // the breaker); the second is refused and waits what is left of the
    // total wait (100 ms), is refused again with nothing left, and ends
    // with the breaker open, having used one attempt of three.
    let braked = with(
        &policy(Jitter::None, 3),
        breaker(10 * SECOND).probe_every(10 * SECOND),
    );
    let r = scoped(&hopeless(500), BreakerScope::Fleet)
        .run(&braked)
        .unwrap();
    accounted(&r);
    assert_eq!(r.calls, 500, "no probe: the break outlasts every wait");
    assert_eq!(r.refused, 500 * 2);
    assert_eq!((r.give_ups, r.breaker_give_ups), (500, 500));
    // The last refusals came 150 ms after tick 0's answer.
    assert_eq!(r.finished_after(), Duration::from_millis(152));
}

#[test]
fn the_drain_runs_from_the_outages_end_to_the_last_client_done() {
    let plain = policy(Jitter::Full, 20);
    let braked = with(&plain, breaker(SECOND / 2));
    for (policy, scope) in [
        (&plain, BreakerScope::Fleet),
        (&braked, BreakerScope::Fleet),
        (&braked, BreakerScope::Local { processes: 4 }),
    ] {
        let r = scoped(&outage(), scope).run(policy).unwrap();
        assert_eq!(r.unfinished, 0);
        assert_eq!(r.drain, Some(r.finished_after() - 3 * SECOND));
        assert!(r.peak_after_outage > 0 && r.peak_after_outage_tick >= 3000);
    }
    // A run stopped with clients unfinished has no drain time.
    let stopped = Herd {
        max_calls: 3000,
        ..outage()
    };
    let r = stopped.run(&braked).unwrap();
    assert!(r.unfinished > 0);
    assert_eq!(r.drain, None);
}

#[test]
fn refused_attempts_count_toward_the_call_limit() {
    // Unlimited attempts for a day against a service that never comes
    // back, a breaker open for 1 ms at a time: refusals alone would run
    // for the whole day.
    let endless = Policy::builder()
        .jitter(Jitter::Full)
        .max_attempts(0)
        .deadline(Some(Duration::from_secs(86_000)))
        .build()
        .unwrap();
    let braked = with(&endless, breaker(Duration::from_millis(1)));
    let herd = Herd {
        max_calls: 50_000,
        ..scoped(&hopeless(1000), BreakerScope::Local { processes: 1000 })
    };
    let r = herd.run(&braked).unwrap();
    assert!(r.calls + r.refused <= 50_000);
    assert_eq!(r.unfinished, 1000);
}

#[test]
fn a_local_scope_needs_from_one_process_to_one_per_client() {
    let braked = with(&policy(Jitter::Full, 4), breaker(SECOND));
    for processes in [0, 2001, 1025, u32::MAX] {
        let herd = scoped(&outage(), BreakerScope::Local { processes });
        let err = herd.run(&braked).unwrap_err();
        assert_eq!(err.problems()[0].field, "breaker.processes", "{processes}");
    }
    // One process per client is fine, and so is any scope without a breaker.
    let one_each = Herd {
        clients: 1000,
        ..scoped(&outage(), BreakerScope::Local { processes: 1000 })
    };
    assert!(one_each.run(&braked).is_ok());
}
