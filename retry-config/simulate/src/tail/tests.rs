//! The tail scenario with fixed seeds: hedging cuts the issue's p99.9, and a
//! brown-out keeps the extra requests under the cap.

use super::*;
use retrykit_core::Policy;
use retrykit_core::hedge::{HedgeAfter, Percentile};

fn p95() -> Policy {
    let settings = HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse("p95").unwrap()));
    Policy::builder()
        .hedge(Some(settings))
        .max_attempts(3)
        .build()
        .unwrap()
}

#[test]
fn hedging_at_p95_cuts_the_issues_p999_tenfold_for_a_few_percent_more_requests() {
    let r = Tail::default().run(&p95()).unwrap();
    assert_eq!(r.calls, 20_000);
    assert!(r.unhedged.p999 >= Duration::from_secs(1), "{r:?}");
    assert!(r.hedged.p999 * 10 <= r.unhedged.p999, "{r:?}");
    assert!(r.hedged.extra_share <= 0.06, "{r:?}");
    assert_eq!(r.unhedged.extra_share, 0.0);
    assert!(r.hedged.hedges_won > 0 && r.hedged.hedges_won <= r.hedged.hedges);
    // The same seed, the same numbers.
    assert_eq!(Tail::default().run(&p95()).unwrap(), r);
}

#[test]
fn a_brown_out_keeps_extra_requests_under_the_cap() {
    let mut t = Tail {
        calls: 5_000,
        ..Tail::default()
    };
    t.server.slow_share = 1.0;
    let r = t.run(&p95()).unwrap();
    assert!(
        r.hedged.extra_share <= HedgeSettings::DEFAULT_SHARE,
        "{r:?}"
    );
    // With a fixed delay far below the slow latency, only the cap holds hedges back.
    let fixed = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(10)));
    let eager = Policy::builder()
        .hedge(Some(fixed))
        .max_attempts(5)
        .build()
        .unwrap();
    let r = t.run(&eager).unwrap();
    assert!(
        r.hedged.extra_share <= HedgeSettings::DEFAULT_SHARE + 0.01,
        "{r:?}"
    );
    assert!(r.hedged.hedges_refused > 0, "{r:?}");
}

#[test]
fn a_load_slowdown_slows_every_request() {
    let mut t = Tail {
        calls: 2_000,
        ..Tail::default()
    };
    let calm = t.run(&p95()).unwrap();
    t.server.load_slowdown = 0.05;
    let loaded = t.run(&p95()).unwrap();
    assert!(
        loaded.unhedged.p50 > calm.unhedged.p50,
        "{calm:?} {loaded:?}"
    );
}

#[test]
fn a_policy_without_hedging_runs_the_same_twice() {
    let r = Tail {
        calls: 1_000,
        ..Tail::default()
    }
    .run(&Policy::default())
    .unwrap();
    assert_eq!(r.hedged, r.unhedged);
    assert_eq!((r.hedged.hedges, r.settings), (0, None));
}

#[test]
fn out_of_range_settings_are_refused_with_field_and_fix() {
    let mut t = Tail {
        calls: 0,
        concurrency: 0,
        ..Tail::default()
    };
    t.server.slow_share = f64::NAN;
    t.server.fast = Duration::ZERO;
    t.server.slow = Duration::from_secs(7200);
    t.server.load_slowdown = -1.0;
    let err = t.run(&p95()).unwrap_err();
    let fields: Vec<_> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        [
            "calls",
            "concurrency",
            "slow_share",
            "slow",
            "fast",
            "load_slowdown"
        ]
    );
}

#[test]
fn the_server_model_is_bounded() {
    let s = TailServer {
        slow_share: 0.0,
        slow: Tail::MAX_LATENCY,
        fast: Tail::MAX_LATENCY,
        load_slowdown: 10.0,
    };
    assert_eq!(s.latency(0.5, 1.0, u64::MAX), Tail::MAX_LATENCY);
}

#[test]
fn a_timer_model_rounds_answers_and_hedges_up_to_its_grid() {
    use crate::TimerModel;
    let p95 = HedgeSettings::new(HedgeAfter::Percentile(Percentile::parse("p95").unwrap()));
    let policy = Policy::builder().hedge(Some(p95)).build().unwrap();
    let exact = Tail {
        calls: 4_000,
        ..Tail::default()
    }
    .run(&policy)
    .unwrap();
    let ticked = Tail {
        calls: 4_000,
        timer: Some(TimerModel::TOKIO),
        ..Tail::default()
    }
    .run(&policy)
    .unwrap();
    // Every fast answer comes at a whole millisecond, so the median is one.
    assert_eq!(
        ticked.unhedged.p50.as_nanos() % 1_000_000,
        0,
        "{:?}",
        ticked.unhedged.p50
    );
    assert!(ticked.unhedged.p50 > exact.unhedged.p50);
    // A hedge due at p95 fires at the next millisecond, by when most fast
    // answers are in: fewer hedges than with exact timers.
    assert!(
        ticked.hedged.extra_share < exact.hedged.extra_share / 2.0,
        "{ticked:?} {exact:?}"
    );
    let zero = Tail {
        timer: Some(TimerModel {
            resolution: Duration::ZERO,
            skipped: 0.0,
        }),
        ..Tail::default()
    };
    assert!(zero.run(&policy).is_err(), "a zero grid is refused");
}
