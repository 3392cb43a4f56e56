//! The simulator's timer model: clients woken on a coarse timer that may
//! skip steps, against the plain per-tick model.

use retrykit_core::{Jitter, Policy};
use retrykit_sim::{Herd, TimerModel};
use std::time::Duration;

mod support;
use support::{ALL_JITTERS, hopeless, policy};

/// A herd whose clients run on tokio's 1 ms timer, some steps skipped.
fn on_timer(herd: Herd, skipped: f64) -> Herd {
    Herd {
        timer: Some(TimerModel {
            skipped,
            ..TimerModel::TOKIO
        }),
        ..herd
    }
}

#[test]
fn a_timer_at_the_ticks_resolution_that_skips_nothing_predicts_the_plain_model() {
    let herd = Herd {
        clients: 3000,
        outage: Duration::from_millis(700),
        capacity: 15,
        ..Herd::default()
    };
    for jitter in ALL_JITTERS {
        let p = policy(jitter, 7);
        assert_eq!(
            on_timer(herd.clone(), 0.0).run(&p).unwrap(),
            herd.run(&p).unwrap(),
            "{jitter:?}"
        );
    }
}

#[test]
fn merged_wake_ups_leave_ticks_empty_and_crowd_the_next_without_changing_the_calls() {
    let herd = Herd {
        arrival_bins: 1 << 16,
        ..hopeless(5000)
    };
    let p = policy(Jitter::Full, 6);
    let plain = herd.run(&p).unwrap();
    let merged = on_timer(herd.clone(), 0.25).run(&p).unwrap();
    assert_eq!(merged.calls, plain.calls);
    assert_eq!(merged.arrivals.bin_ticks(), 1, "every tick kept");
    let empty = |r: &retrykit_sim::HerdReport| {
        let bins: Vec<u64> = r.arrivals.bins().map(|b| b.calls).collect();
        let first = bins.iter().skip(1).position(|&n| n > 0).unwrap() + 1;
        let last = bins.iter().rposition(|&n| n > 0).unwrap();
        bins[first..=last].iter().filter(|&&n| n == 0).count()
    };
    assert!(
        empty(&merged) > empty(&plain) + 200,
        "{} vs {}",
        empty(&merged),
        empty(&plain)
    );
    assert!(merged.peak_retries > plain.peak_retries);
    // Deterministic for a seed.
    assert_eq!(on_timer(herd, 0.25).run(&p).unwrap(), merged);
}

/// Issue 22: a zero resolution got two problems, one telling to "use a tick
/// of at most 0ns" (a tick must be greater than zero).
#[test]
fn a_zero_timer_resolution_is_one_problem_with_a_usable_fix() {
    for (tick, fix) in [(1, "use 1ms"), (10, "use 10ms")] {
        let herd = Herd {
            tick: Duration::from_millis(tick),
            timer: Some(TimerModel {
                resolution: Duration::ZERO,
                skipped: 0.0,
            }),
            ..Herd::default()
        };
        let err = herd.run(&Policy::default()).unwrap_err();
        let problems = err.problems();
        assert_eq!(problems.len(), 1, "{err}");
        assert_eq!(problems[0].field, "timer.resolution");
        assert_eq!(problems[0].rule, "must be at least one tick");
        assert!(problems[0].fix.starts_with(fix), "{err}");
        assert!(!err.to_string().contains("0ns"), "{err}");
    }
}

#[test]
fn a_timer_model_out_of_range_is_refused_naming_the_field() {
    let bad = [
        (on_timer(Herd::default(), 0.95), "timer.skipped"),
        (on_timer(Herd::default(), f64::NAN), "timer.skipped"),
        (
            Herd {
                timer: Some(TimerModel {
                    resolution: Duration::ZERO,
                    skipped: 0.0,
                }),
                ..Herd::default()
            },
            "timer.resolution",
        ),
        (
            Herd {
                tick: Duration::from_millis(10),
                ..on_timer(Herd::default(), 0.0)
            },
            "timer.resolution",
        ),
        (
            Herd {
                arrival_bins: 1,
                ..Herd::default()
            },
            "arrival_bins",
        ),
    ];
    for (herd, field) in bad {
        let err = herd.run(&Policy::default()).unwrap_err();
        assert_eq!(err.problems()[0].field, field, "{err}");
    }
}
