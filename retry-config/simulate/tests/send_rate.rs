//! The send-rate model: the clients' machine sends at most so many calls per
//! millisecond, and calls due beyond that queue, first come, first served.

use retrykit_core::{Jitter, Policy};
use retrykit_sim::{Herd, SendRate};
use std::time::Duration;

mod support;
use support::{hopeless, policy};

fn rate(per_ms: f64) -> Option<SendRate> {
    Some(SendRate {
        per_ms,
        processes: 1,
    })
}

#[test]
fn a_rate_that_never_binds_predicts_exactly_what_the_plain_model_does() {
    let cases = [
        hopeless(3000),
        Herd {
            clients: 3000,
            outage: Duration::ZERO,
            capacity: 40,
            ..Herd::default()
        },
        Herd {
            timer: Some(retrykit_sim::TimerModel {
                skipped: 0.25,
                ..retrykit_sim::TimerModel::TOKIO
            }),
            ..hopeless(2000)
        },
    ];
    for herd in cases {
        for jitter in [Jitter::None, Jitter::Full, Jitter::Decorrelated] {
            let p = policy(jitter, 7);
            let plain = herd.run(&p).unwrap();
            let fast = Herd {
                send: rate(SendRate::MAX_PER_MS),
                ..herd.clone()
            };
            assert_eq!(fast.run(&p).unwrap(), plain, "{jitter:?} {herd:?}");
        }
    }
}

#[test]
fn the_first_wave_leaves_at_the_send_rate_and_no_tick_sends_more() {
    // 100 calls per 1 ms tick; 1000 clients.
    let herd = Herd {
        send: rate(100.0),
        ..hopeless(1000)
    };
    for jitter in [Jitter::None, Jitter::Full] {
        let r = herd.run(&policy(jitter, 5)).unwrap();
        assert_eq!(r.first_wave, 1000, "{jitter:?}");
        assert_eq!(r.first_wave_ticks, 10, "{jitter:?}");
        assert_eq!(r.calls, 5000, "every call is still made: {jitter:?}");
        assert_eq!(r.give_ups, 1000);
        assert_eq!(r.arrivals.total() + r.first_wave, r.calls);
        assert!(r.peak_retries <= 100, "{jitter:?}: {}", r.peak_retries);
        // Sends from the start to the last call, never more than 100 a tick.
        assert!(r.ticks >= 50, "{jitter:?}: {}", r.ticks);
    }
    // Without jitter the queue is a conveyor: the fleet retries at the
    // machine's rate, a hundred a tick, rather than all at once.
    let lockstep = herd.run(&policy(Jitter::None, 5)).unwrap();
    assert_eq!(lockstep.peak_retries, 100);
    let plain = hopeless(1000).run(&policy(Jitter::None, 5)).unwrap();
    assert_eq!(plain.peak_retries, 1000);
}

#[test]
fn a_fractional_rate_carries_over_and_a_slow_one_does_not_visit_empty_ticks() {
    // 2.5 calls per 1 ms tick: 100 first calls take 40 ticks.
    let r = Herd {
        send: rate(2.5),
        ..hopeless(100)
    }
    .run(&policy(Jitter::Full, 1))
    .unwrap();
    assert_eq!((r.first_wave, r.first_wave_ticks), (100, 40));
    assert_eq!(r.busy_ticks, 40);
    // One call per 1000 s, in 1 ms ticks: a million empty ticks between
    // calls, which the run jumps over.
    let slow = Herd {
        clients: 5,
        outage: Duration::from_secs(365 * 24 * 3600),
        horizon: Duration::from_secs(10 * 365 * 24 * 3600),
        send: rate(SendRate::MIN_PER_MS),
        ..Herd::default()
    };
    let started = std::time::Instant::now();
    let r = slow.run(&policy(Jitter::Full, 3)).unwrap();
    assert_eq!((r.calls, r.first_wave, r.busy_ticks), (15, 5, 15));
    assert_eq!(r.first_wave_ticks, 4_000_001);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn each_client_process_has_its_own_queue() {
    // Two processes of 500 clients at 50 calls per tick each: the first
    // wave takes as long as one process's share does.
    let two = Herd {
        send: Some(SendRate {
            per_ms: 50.0,
            processes: 2,
        }),
        ..hopeless(1000)
    };
    let r = two.run(&policy(Jitter::Full, 4)).unwrap();
    assert_eq!((r.first_wave, r.first_wave_ticks), (1000, 10));
    assert_eq!(r.calls, 4000);
    assert!(r.peak_retries <= 100);
    // Uneven shares: 3 processes of 333, 333 and 334 clients, 10 a tick each.
    let three = Herd {
        send: Some(SendRate {
            per_ms: 10.0,
            processes: 3,
        }),
        ..hopeless(1000)
    };
    let r = three.run(&policy(Jitter::None, 2)).unwrap();
    assert_eq!(r.first_wave_ticks, 34);
}

#[test]
fn a_throttled_machine_lowers_the_peak_and_keeps_totals() {
    // The shape: base 50 ms, full jitter, capacity 200 per 10 ms
    // tick, a machine that sends 200 calls per ms.
    let herd = Herd {
        clients: 10_000,
        outage: Duration::from_secs(2),
        capacity: 200,
        tick: Duration::from_millis(10),
        seed: 3,
        ..Herd::default()
    };
    let p = Policy::builder()
        .base(Duration::from_millis(50))
        .cap(Duration::from_secs(30))
        .jitter(Jitter::Full)
        .max_attempts(10)
        .build()
        .unwrap();
    let plain = herd.run(&p).unwrap();
    let sending = Herd {
        send: rate(200.0),
        ..herd.clone()
    }
    .run(&p)
    .unwrap();
    assert_eq!(sending.first_wave_ticks, 5);
    assert!(sending.peak_retries <= 2000, "{}", sending.peak_retries);
    assert!(sending.peak_retries < plain.peak_retries);
    let apart = sending.calls.abs_diff(plain.calls) as f64 / plain.calls as f64;
    assert!(apart < 0.05, "{} vs {}", sending.calls, plain.calls);
    assert_eq!(
        sending.successes + sending.give_ups + sending.unfinished,
        10_000
    );
    assert_eq!(
        sending,
        Herd {
            send: rate(200.0),
            ..herd
        }
        .run(&p)
        .unwrap()
    );
}

#[test]
fn the_horizon_and_the_call_limit_count_queued_calls_as_unfinished() {
    let herd = Herd {
        send: rate(1.0),
        horizon: Duration::from_millis(100),
        ..hopeless(1000)
    };
    let r = herd.run(&policy(Jitter::Full, 5)).unwrap();
    assert_eq!(r.calls, 100, "one call per 1 ms tick for 100 ticks");
    assert_eq!(r.unfinished, 1000, "every client still has calls to make");
    let limited = Herd {
        max_calls: 30,
        horizon: Duration::from_secs(3600),
        ..herd
    };
    let r = limited.run(&policy(Jitter::Full, 5)).unwrap();
    assert_eq!((r.calls, r.unfinished), (30, 1000));
    assert_eq!(r.stopped_by, Some(retrykit_sim::StoppedBy::CallLimit));
}

#[test]
fn a_bad_send_rate_is_refused_naming_the_field_and_the_fix() {
    let p = Policy::default();
    for per_ms in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-9, 2e9] {
        let herd = Herd {
            send: rate(per_ms),
            ..Herd::default()
        };
        let err = herd.run(&p).unwrap_err();
        let problem = &err.problems()[0];
        assert_eq!(problem.field, "send.rate", "{per_ms}");
        assert!(problem.fix.contains("e.g. 90"), "{per_ms}: {err}");
    }
    for processes in [0, 1025, 11] {
        let herd = Herd {
            clients: 10,
            send: Some(SendRate {
                per_ms: 1.0,
                processes,
            }),
            ..Herd::default()
        };
        let err = herd.run(&p).unwrap_err();
        assert_eq!(err.problems()[0].field, "send.processes", "{processes}");
        assert!(err.to_string().contains("at most 10"), "{err}");
    }
}
