//! The breaker's state machine, stepped by hand on explicit times.

use super::*;
use crate::class::Class;

fn breaker(probes: u32) -> Arc<CircuitBreaker> {
    let b = CircuitBreaker::builder()
        .name("t")
        .min_calls(4)
        .failure_ratio(0.5)
        .window(Duration::from_secs(10))
        .open_for(Duration::from_secs(1))
        .max_open_for(Duration::from_secs(3))
        .probe_every(Duration::from_secs(3))
        .open_jitter(0.0)
        .probes(probes)
        .build()
        .unwrap();
    Arc::new(b)
}

fn fail(b: &Arc<CircuitBreaker>, now: Instant, n: usize) {
    for _ in 0..n {
        let t = b.try_acquire(now).unwrap();
        b.record(t, now, true);
    }
}

#[test]
fn it_judges_only_from_min_calls_and_opens_at_the_ratio() {
    let b = breaker(1);
    let t0 = b.origin;
    fail(&b, t0, 3);
    assert_eq!(b.state(), BreakerState::Closed, "3 attempts < min_calls 4");
    let ok = b.try_acquire(t0).unwrap();
    b.record(ok, t0, false);
    assert_eq!(
        b.state(),
        BreakerState::Closed,
        "the ratio is only judged on a failure"
    );
    fail(&b, t0, 1);
    assert_eq!(b.state(), BreakerState::Open, "4 of 5 failed >= 50%");
    assert_eq!(b.status(t0).trips, 1);
}

#[test]
fn successes_below_the_ratio_keep_it_closed() {
    let b = breaker(1);
    let t0 = b.origin;
    for _ in 0..10 {
        let t = b.try_acquire(t0).unwrap();
        b.record(t, t0, false);
    }
    fail(&b, t0, 9);
    assert_eq!(b.state(), BreakerState::Closed, "9 of 19 is under half");
    fail(&b, t0, 1);
    assert_eq!(b.state(), BreakerState::Open);
}

#[test]
fn open_periods_double_up_to_the_maximum_and_a_success_closes() {
    let b = breaker(1);
    let mut now = b.origin;
    fail(&b, now, 4);
    for want in [1, 2, 3, 3] {
        let refused = b.try_acquire(now).unwrap_err();
        assert_eq!(refused.retry_in(), Duration::from_secs(want));
        now += Duration::from_secs(want);
        let probe = b.try_acquire(now).unwrap();
        assert!(probe.is_probe());
        b.record(probe, now, true);
        assert_eq!(b.state(), BreakerState::Open);
    }
    now += Duration::from_secs(3);
    let probe = b.try_acquire(now).unwrap();
    b.record(probe, now, false);
    assert_eq!(b.state(), BreakerState::Closed);
    assert_eq!(b.status(now).trips, 0, "closing forgets the trips");
    let status = b.status(now);
    assert_eq!(
        (status.attempts, status.failures),
        (0, 0),
        "it judges afresh"
    );
}

#[test]
fn half_open_lets_exactly_the_probes_through_and_needs_all_to_close() {
    let b = breaker(3);
    let t0 = b.origin;
    fail(&b, t0, 4);
    let later = t0 + Duration::from_secs(1);
    let probes: Vec<_> = (0..3).map(|_| b.try_acquire(later).unwrap()).collect();
    let refused = b.try_acquire(later).unwrap_err();
    assert_eq!(refused.state(), BreakerState::HalfOpen);
    let mut probes = probes.into_iter();
    b.record(probes.next().unwrap(), later, false);
    b.record(probes.next().unwrap(), later, false);
    assert_eq!(b.state(), BreakerState::HalfOpen);
    b.record(probes.next().unwrap(), later, false);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn a_dropped_probe_gives_its_place_back_and_counts_nothing() {
    let b = breaker(1);
    let t0 = b.origin;
    fail(&b, t0, 4);
    let later = t0 + Duration::from_secs(1);
    drop(b.try_acquire(later).unwrap());
    assert_eq!(b.state(), BreakerState::HalfOpen);
    let probe = b
        .try_acquire(later)
        .expect("the cancelled probe's place is free again");
    b.record(probe, later, false);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn a_late_answer_from_an_earlier_half_open_changes_nothing() {
    let b = breaker(2);
    let t0 = b.origin;
    fail(&b, t0, 4);
    let t1 = t0 + Duration::from_secs(1);
    let stale = b.try_acquire(t1).unwrap();
    let failing = b.try_acquire(t1).unwrap();
    b.record(failing, t1, true);
    assert_eq!(b.state(), BreakerState::Open);
    let t2 = t1 + Duration::from_secs(2);
    let fresh = b.try_acquire(t2).unwrap();
    b.record(stale, t2, false);
    drop(fresh);
    assert_eq!(b.state(), BreakerState::HalfOpen);
    let status = b.status(t2);
    assert_eq!(status.trips, 2);
}

#[test]
fn slow_attempts_count_as_failures() {
    let b = CircuitBreaker::builder()
        .min_calls(1)
        .failure_ratio(0.5)
        .slow_call(Some(Duration::from_millis(100)))
        .build()
        .map(Arc::new)
        .unwrap();
    let t0 = b.origin;
    let fast = b.try_acquire(t0).unwrap();
    b.record(fast, t0 + Duration::from_millis(99), false);
    assert_eq!(b.state(), BreakerState::Closed);
    let slow = b.try_acquire(t0).unwrap();
    b.record(slow, t0 + Duration::from_millis(100), false);
    assert_eq!(b.state(), BreakerState::Open);
}

#[test]
fn permanent_errors_never_count_and_trip_on_picks_the_classes() {
    let b = CircuitBreaker::builder()
        .trip_on(["throttled"])
        .build()
        .unwrap();
    assert!(b.counts_class(Class::THROTTLED));
    assert!(!b.counts_class(Class::TRANSIENT));
    assert!(!b.counts_class(Class::Permanent));
    let err = CircuitBreaker::builder()
        .trip_on(["permanent"])
        .build()
        .unwrap_err();
    assert_eq!(err.problems()[0].field, "trip_on");
}

#[test]
fn every_bad_setting_is_named_with_its_key() {
    let err = CircuitBreaker::builder()
        .failure_ratio(0.0)
        .min_calls(0)
        .window(Duration::ZERO)
        .open_for(Duration::from_secs(10))
        .max_open_for(Duration::from_secs(5))
        .open_jitter(2.0)
        .probes(0)
        .slow_call(Some(Duration::ZERO))
        .trip_on(Vec::<String>::new())
        .probe_every(Duration::ZERO)
        .release_ramp(Duration::from_secs(61))
        .release_trip_on(Some(["permanent"]))
        .build()
        .unwrap_err();
    let fields: Vec<&str> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        [
            "failure_ratio",
            "min_calls",
            "window",
            "probe_every",
            "release_ramp",
            "max_open_for",
            "release_trip_on",
            "open_jitter",
            "probes",
            "slow_call",
            "trip_on"
        ]
    );
    for p in err.problems() {
        let key = retrykit_schema::keys::Key::find(retrykit_schema::keys::BREAKER_KEYS, p.field);
        assert!(key.is_some(), "{}", p.field);
    }
}

#[test]
fn open_jitter_cuts_each_period_by_at_most_its_share() {
    let b = CircuitBreaker::builder()
        .min_calls(1)
        .failure_ratio(1.0)
        .open_for(Duration::from_secs(10))
        .max_open_for(Duration::from_secs(10))
        .probe_every(Duration::from_secs(10))
        .open_jitter(0.5)
        .seed(7)
        .build()
        .map(Arc::new)
        .unwrap();
    let mut now = b.origin;
    let mut seen = Vec::new();
    for _ in 0..20 {
        fail(&b, now, 1);
        let wait = b.try_acquire(now).unwrap_err().retry_in();
        assert!(
            wait >= Duration::from_secs(5) && wait <= Duration::from_secs(10),
            "{wait:?}"
        );
        seen.push(wait);
        now += wait;
        let probe = b.try_acquire(now).unwrap();
        b.record(probe, now, false);
    }
    seen.sort();
    seen.dedup();
    assert!(seen.len() > 10, "the periods vary: {seen:?}");
}

#[test]
fn under_contention_exactly_the_probes_go_through_and_one_thread_says_each_change() {
    for _ in 0..20 {
        let b = breaker(5);
        let t0 = b.origin;
        fail(&b, t0, 4);
        let later = t0 + Duration::from_secs(1);
        let tickets: Vec<Ticket> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let b = &b;
                    scope.spawn(move || {
                        (0..1250)
                            .filter_map(|_| b.try_acquire(later).ok())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(tickets.len(), 5, "10,000 asks, 5 probes");
        let period = b.word().period();
        std::thread::scope(|scope| {
            for t in tickets {
                let b = &b;
                scope.spawn(move || b.record(t, later, false));
            }
        });
        assert_eq!(b.state(), BreakerState::Closed);
        assert_eq!(
            b.word().period(),
            period.wrapping_add(1),
            "closed exactly once"
        );
    }
}

#[test]
fn probe_every_bounds_every_open_period_the_first_included() {
    let b = CircuitBreaker::builder()
        .min_calls(1)
        .open_for(Duration::from_secs(5))
        .max_open_for(Duration::from_secs(30))
        .probe_every(Duration::from_millis(800))
        .open_jitter(0.0)
        .build()
        .map(Arc::new)
        .unwrap();
    let mut now = b.origin;
    fail(&b, now, 1);
    for _ in 0..5 {
        let wait = b.try_acquire(now).unwrap_err().retry_in();
        assert_eq!(wait, Duration::from_millis(800), "not 5 s, nor doubling");
        now += wait;
        let probe = b.try_acquire(now).unwrap();
        b.record(probe, now, true);
    }
    assert_eq!(b.status(now).trips, 6, "the trips are still counted");
}

/// A breaker that opens on one failure and has closed at the returned
/// time after a 1 s break, its release begun (20 ms ramp steps).
fn closed_after_a_break(trip_on_release: Option<&[&str]>) -> (Arc<CircuitBreaker>, Instant) {
    let b = CircuitBreaker::builder()
        .min_calls(1)
        .open_for(Duration::from_secs(1))
        .open_jitter(0.0)
        .release_ramp(Duration::from_millis(20))
        .release_trip_on(trip_on_release.map(|c| c.iter().copied()))
        .seed(3)
        .build()
        .map(Arc::new)
        .unwrap();
    fail(&b, b.origin, 1);
    let now = b.origin + Duration::from_secs(1);
    let probe = b.try_acquire(now).unwrap();
    b.record_class(probe, now, None);
    assert_eq!(b.state(), BreakerState::Closed);
    assert!(b.releasing());
    (b, now)
}

#[test]
fn a_close_releases_the_held_attempts_at_a_rate_that_doubles_with_successes() {
    let (b, t0) = closed_after_a_break(None);
    // One place per 20 ms at first: of 100 attempts at once, one goes.
    let went: Vec<Ticket> = (0..100).filter_map(|_| b.try_acquire(t0).ok()).collect();
    assert_eq!(went.len(), 1);
    let refused = b.try_acquire(t0).unwrap_err();
    assert_eq!(refused.state(), BreakerState::Closed);
    let wait = refused.retry_in();
    assert!(
        wait >= Duration::from_millis(20) && wait <= Duration::from_millis(40),
        "{wait:?}"
    );
    for t in went {
        b.record_class(t, t0, None);
    }
    // Each ramp step, every attempt let through succeeds: the places
    // double (1, 2, 4, ... per 20 ms).
    let mut now = t0;
    let mut per_step = Vec::new();
    for _ in 0..6 {
        now += Duration::from_millis(20);
        let mut sent = 0;
        for ms in 0..20 {
            let at = now + Duration::from_millis(ms);
            let went: Vec<Ticket> = (0..100).filter_map(|_| b.try_acquire(at).ok()).collect();
            sent += went.len();
            for t in went {
                b.record_class(t, at, None);
            }
        }
        per_step.push(sent);
    }
    assert!(
        per_step.windows(2).all(|w| w[1] >= w[0] * 3 / 2),
        "{per_step:?}"
    );
    assert!(per_step[5] >= 32, "{per_step:?}");
}

#[test]
fn throttled_answers_slow_the_release_and_do_not_reopen_it_unless_listed() {
    let (b, t0) = closed_after_a_break(None);
    for ms in 0..200 {
        let at = t0 + Duration::from_millis(ms);
        while let Ok(t) = b.try_acquire(at) {
            b.record_class(t, at, Some(Class::THROTTLED));
        }
    }
    assert_eq!(b.state(), BreakerState::Closed, "throttled is not down");
    assert_eq!(b.status(t0 + Duration::from_millis(200)).failures, 0);

    let (b, t0) = closed_after_a_break(Some(&["throttled"]));
    let t = b.try_acquire(t0).unwrap();
    b.record_class(t, t0, Some(Class::THROTTLED));
    assert_eq!(
        b.state(),
        BreakerState::Open,
        "release_trip_on lists throttled"
    );
    assert!(!b.releasing(), "opening ends the release");

    // A transient failure during the release counts as ever.
    let (b, t0) = closed_after_a_break(None);
    let t = b.try_acquire(t0).unwrap();
    b.record_class(t, t0, Some(Class::TRANSIENT));
    assert_eq!(b.state(), BreakerState::Open);
}

#[test]
fn a_release_whose_rate_goes_unused_ends() {
    let (b, t0) = closed_after_a_break(None);
    let t = b.try_acquire(t0).unwrap();
    b.record_class(t, t0, None);
    let later = t0 + Duration::from_secs(1);
    let went = (0..50).filter(|_| b.try_acquire(later).is_ok()).count();
    assert_eq!(
        went, 50,
        "no one was held back for a second: the release is over"
    );
    assert!(!b.releasing());
}
