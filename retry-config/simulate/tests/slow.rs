//! The slow scenario (issue 43): a dependency of a few slots and a queue,
//! client processes with and without a concurrency limit.

use retrykit_core::limit::ConcurrencyLimit;
use retrykit_core::limit::LimitKind;
use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
use retrykit_core::{Jitter, Policy};
use retrykit_sim::{Slow, SlowReport};
use std::sync::Arc;
use std::time::Duration;

/// 50 ms doubling, 3 attempts, full jitter, each attempt cut at 200 ms.
fn policy() -> Policy {
    Policy::builder()
        .base(Duration::from_millis(50))
        .max_attempts(3)
        .jitter(Jitter::Full)
        .attempt_timeout(Some(Duration::from_millis(200)))
        .build()
        .unwrap()
}

/// `policy()` with a fixed limit of `n` per process, waiting at most `wait`.
fn limited(n: u32, wait: Duration, waiting: u32) -> Policy {
    let limit = ConcurrencyLimit::named("dep", n, Some(wait), waiting).unwrap();
    policy()
        .to_builder()
        .limit(Some(Arc::new(limit)))
        .build()
        .unwrap()
}

fn over_capacity() -> Slow {
    Slow {
        duration: Duration::from_secs(5),
        ..Slow::default()
    }
}

#[test]
fn under_capacity_every_call_takes_the_service_time() {
    let slow = Slow {
        load: 1.0,
        duration: Duration::from_secs(2),
        ..Slow::default()
    };
    let r = slow.run(&policy()).unwrap();
    assert!(r.calls > 1500, "{r:?}");
    assert_eq!((r.succeeded, r.attempts), (r.calls, r.calls), "{r:?}");
    // Half the capacity: a burst of arrivals queues for a moment at most.
    assert_eq!(r.p50, slow.service, "{r:?}");
    assert!(r.p99 <= 2 * slow.service, "{r:?}");
    assert!(r.peak_in_flight <= 2 * u64::from(slow.slots), "{r:?}");
    assert_eq!(
        (r.limit_full, r.gave_up, r.unfinished, r.wasted),
        (0, 0, 0, 0)
    );
    assert!(!r.stopped);
    assert!((r.goodput - 1.0).abs() < 0.1, "{r:?}");
}

#[test]
fn over_capacity_without_a_limit_the_queue_grows_and_work_is_wasted() {
    let slow = over_capacity();
    let r = slow.run(&policy()).unwrap();
    assert_eq!(r.limit, None);
    // The queue grows until every attempt times out: the dependency serves
    // abandoned attempts, so most of its capacity is wasted.
    assert!(r.peak_in_flight > 500, "{r:?}");
    assert!(r.wasted > r.succeeded, "{r:?}");
    assert!(r.goodput < 0.5 * slow.capacity(), "{r:?}");
    assert!(r.gave_up > r.calls / 2, "{r:?}");
    // Those that succeed queued for most of their 200 ms.
    assert!(r.p99 > 10 * slow.service, "{r:?}");
    assert_eq!(r.limit_full, 0);
}

#[test]
fn a_fixed_limit_holds_the_dependency_at_its_size_and_sheds_the_rest() {
    let slow = over_capacity();
    // 10 processes of 2: the dependency's 20 slots, so nothing queues there.
    let r = slow
        .run(&limited(2, Duration::from_millis(20), 100))
        .unwrap();
    assert_eq!(r.limit.as_deref(), Some("fixed 2"));
    assert!(r.peak_in_flight <= 20, "{r:?}");
    assert_eq!((r.wasted, r.gave_up, r.unfinished), (0, 0, 0), "{r:?}");
    assert!(r.goodput > 0.95 * slow.capacity(), "{r:?}");
    // The rest waited at most 20 ms for a permit, then ended limit_full.
    assert!(r.limit_full > r.calls / 4, "{r:?}");
    assert_eq!(r.succeeded + r.limit_full, r.calls);
    assert!(r.p99 <= Duration::from_millis(30), "{r:?}");
    assert!(r.p99 > slow.service, "some waited for a permit: {r:?}");
}

#[test]
fn a_limit_with_no_queue_refuses_at_once() {
    let r = over_capacity()
        .run(&limited(2, Duration::from_millis(20), 0))
        .unwrap();
    assert_eq!(r.p99, Duration::from_millis(10), "nobody waits: {r:?}");
    assert!(r.limit_full > 0);
}

#[test]
fn a_run_repeats_for_a_seed_and_differs_for_another() {
    let slow = over_capacity();
    let a: SlowReport = slow.run(&policy()).unwrap();
    assert_eq!(a, slow.run(&policy()).unwrap());
    let b = Slow { seed: 1, ..slow }.run(&policy()).unwrap();
    assert_ne!((a.calls, a.succeeded), (b.calls, b.succeeded));
}

#[test]
fn every_field_out_of_range_is_named() {
    let slow = Slow {
        load: f64::NAN,
        duration: Duration::ZERO,
        processes: 0,
        slots: 0,
        service: Duration::from_secs(3600),
        seed: 0,
    };
    let err = slow.run(&policy()).unwrap_err();
    let fields: Vec<&str> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        ["load", "duration", "processes", "slots", "service"],
        "{err}"
    );
    let too_many = Slow {
        load: 10_000.0,
        duration: Duration::from_secs(3600),
        ..Slow::default()
    };
    let err = too_many.run(&policy()).unwrap_err();
    assert!(err.to_string().contains("at most 1000000 calls"), "{err}");
}

fn gradient() -> LimitKind {
    LimitKind::Gradient(GradientSettings::default())
}

#[test]
fn one_gradient_limit_finds_the_dependency_s_slots() {
    let slow = Slow {
        processes: 1,
        ..over_capacity()
    };
    let r = slow
        .run_with_limit(&limited(2, Duration::from_millis(20), 100), &gradient())
        .unwrap();
    assert_eq!(r.limit.as_deref(), Some("gradient"));
    // Within [0.8, 1.5] times the 20 slots, at capacity, nothing wasted.
    let size = r.limit_at_end.unwrap();
    assert!((16..=30).contains(&size), "{r:?}");
    assert!(r.goodput > 0.95 * slow.capacity(), "{r:?}");
    assert_eq!((r.wasted, r.gave_up), (0, 0), "{r:?}");
    // The policy's own fixed limit of 2 is not what sized it.
    let fixed = slow
        .run(&limited(2, Duration::from_millis(20), 100))
        .unwrap();
    assert_eq!(fixed.limit_at_end, Some(2));
    assert!(fixed.goodput < 0.2 * slow.capacity(), "{fixed:?}");
}

#[test]
fn each_process_has_its_own_controller_fed_by_its_own_attempts() {
    let policy = limited(2, Duration::from_millis(20), 100);
    let aimd = LimitKind::Aimd(AimdSettings::default());
    let slow = over_capacity();
    let r = slow.run_with_limit(&policy, &aimd).unwrap();
    assert_eq!(r.limit.as_deref(), Some("aimd"));
    // Ten controllers that started at 20 each moved with their samples.
    assert_ne!(r.limit_at_end, Some(200), "{r:?}");
    assert_eq!(
        r,
        slow.run_with_limit(&policy, &aimd).unwrap(),
        "repeatable"
    );
    // The policy's own limit is never touched.
    assert_eq!(policy.limit().unwrap().in_flight(), 0);
    assert_eq!(policy.limit().unwrap().max_in_flight(), 2);
}

#[test]
fn a_policy_s_own_adaptive_limit_is_simulated_as_its_kind() {
    let kind = LimitKind::Gradient(GradientSettings {
        initial: 5,
        ..GradientSettings::default()
    });
    let limit =
        ConcurrencyLimit::new(Some("dep"), kind, Some(Duration::from_millis(20)), 100).unwrap();
    let policy = policy()
        .to_builder()
        .limit(Some(Arc::new(limit)))
        .build()
        .unwrap();
    let slow = Slow {
        processes: 1,
        ..over_capacity()
    };
    let own = slow.run(&policy).unwrap();
    assert_eq!(own.limit.as_deref(), Some("gradient"));
    assert_eq!(own, slow.run_with_limit(&policy, &kind).unwrap());
}

#[test]
fn an_adaptive_kind_with_bad_settings_is_refused_naming_the_field() {
    let bad = LimitKind::Aimd(AimdSettings {
        min: 30,
        initial: 20,
        ..AimdSettings::default()
    });
    let err = over_capacity().run_with_limit(&policy(), &bad).unwrap_err();
    assert_eq!(err.problems()[0].field, "initial_limit", "{err}");
}

#[test]
fn a_run_stops_an_hour_after_the_load_with_the_rest_unfinished() {
    // One slot of a minute: 1000 calls would take 1000 minutes.
    let slow = Slow {
        load: 1.0,
        duration: Duration::from_secs(1),
        slots: 1,
        service: Duration::from_secs(60),
        ..Slow::default()
    };
    let patient = Policy::builder().max_attempts(1).build().unwrap();
    let r = slow.run(&patient).unwrap();
    assert!(r.stopped, "{r:?}");
    assert_eq!(
        r.succeeded, 61,
        "one a minute for an hour and a second: {r:?}"
    );
    assert_eq!(r.unfinished, r.calls - r.succeeded, "{r:?}");
}
