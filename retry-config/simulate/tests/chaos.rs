//! A policy's chaos in the herd: injected faults are attempts never sent,
//! decided on as failures of their class, repeated exactly by the seed;
//! injected latency holds an attempt back, or times it out unsent.

use retrykit_core::chaos::Chaos;
use retrykit_core::{Class, Jitter, Policy};
use retrykit_sim::Herd;
use std::sync::Arc;
use std::time::Duration;

fn policy(rate: f64, class: Class) -> Policy {
    let chaos = Chaos::new(Some(5)).fault(rate, class, None).unwrap();
    Policy::builder()
        .jitter(Jitter::Full)
        .max_attempts(4)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap()
}

#[test]
fn a_permanent_fault_on_every_attempt_sends_nothing() {
    let herd = Herd {
        clients: 200,
        ..Herd::default()
    };
    let r = herd.run(&policy(1.0, Class::Permanent)).unwrap();
    assert_eq!(
        (r.calls, r.injected, r.give_ups, r.successes),
        (0, 200, 200, 0)
    );
}

#[test]
fn transient_faults_are_retried_and_take_no_capacity() {
    // No outage and room for everyone: only chaos fails calls.
    let herd = Herd {
        clients: 1000,
        outage: Duration::ZERO,
        capacity: 10_000,
        ..Herd::default()
    };
    let r = herd.run(&policy(0.5, Class::TRANSIENT)).unwrap();
    // Each client succeeds on its first attempt chaos spares; a client whose
    // 4 attempts were all faulted (1 in 16) gives up.
    assert_eq!(r.calls, r.successes, "every call sent succeeded");
    assert_eq!(r.successes + r.give_ups, 1000);
    assert!((30..100).contains(&r.give_ups), "{}", r.give_ups);
    assert!((800..1200).contains(&r.injected), "{}", r.injected);
    assert_eq!(
        r,
        herd.run(&policy(0.5, Class::TRANSIENT)).unwrap(),
        "the seed repeats it"
    );
    let without = herd
        .run(&Policy::builder().max_attempts(4).build().unwrap())
        .unwrap();
    assert_eq!((without.injected, without.give_ups), (0, 0));
}

fn delayed(delay: Duration, attempt_timeout: Option<Duration>) -> Policy {
    let chaos = Chaos::new(Some(5)).latency(1.0, delay, delay).unwrap();
    Policy::builder()
        .jitter(Jitter::None)
        .max_attempts(3)
        .attempt_timeout(attempt_timeout)
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap()
}

#[test]
fn a_delay_of_n_ticks_brings_the_first_wave_n_ticks_later() {
    let herd = Herd {
        clients: 300,
        outage: Duration::ZERO,
        capacity: 10_000,
        ..Herd::default()
    };
    let undelayed = herd.run(&delayed(Duration::ZERO, None)).unwrap();
    assert_eq!(undelayed.first_wave_ticks, 1);
    for n in [1u64, 7] {
        // 6.5 ticks reach the service in the 7th tick, as 7 do.
        for delay in [n as f64, n as f64 - 0.5] {
            let r = herd
                .run(&delayed(Duration::from_secs_f64(delay / 1000.0), None))
                .unwrap();
            assert_eq!(r.first_wave, 300, "{delay}");
            assert_eq!(r.first_wave_ticks, n + 1, "first calls all in tick {n}");
            assert_eq!((r.calls, r.successes, r.injected), (300, 300, 0));
            assert_eq!((r.delayed, r.delay_timeouts), (300, 0));
            assert_eq!(r.delayed_for, Duration::from_secs_f64(delay / 1000.0) * 300);
            // Answered at the end of tick n instead of tick 0.
            assert_eq!(r.p50, Some(Duration::from_millis(n + 1)));
        }
    }
}

#[test]
fn a_delay_reaching_the_attempt_timeout_sends_nothing_and_retries_as_a_timeout() {
    let herd = Herd {
        clients: 100,
        outage: Duration::ZERO,
        capacity: 10_000,
        ..Herd::default()
    };
    let ms = Duration::from_millis;
    for delay in [ms(5), ms(8)] {
        let r = herd.run(&delayed(delay, Some(ms(5)))).unwrap();
        // Every attempt times out unsent: each client retries (the timeout
        // class is retried) until its 3 attempts are used.
        assert_eq!((r.calls, r.successes, r.give_ups), (0, 0, 100), "{delay:?}");
        assert_eq!((r.delayed, r.delay_timeouts), (300, 300));
        assert_eq!(r.delayed_for, delay * 300);
        // Each attempt fails at the start of its 5th tick (when the 5 ms
        // limit runs out, not the longer delay), and its retry waits from
        // the end of that tick, as after a fault: 100 ms, then 200 ms. The
        // last fails in tick 5 + 1 + 100 + 5 + 1 + 200 + 5 = 317.
        assert_eq!(r.finished_after(), ms(318), "{delay:?}");
    }
    // Just under the timeout, it is sent, 4 ticks late.
    let r = herd.run(&delayed(ms(4), Some(ms(5)))).unwrap();
    assert_eq!((r.calls, r.successes, r.delay_timeouts), (100, 100, 0));
    assert_eq!(r.first_wave_ticks, 5);
}

#[test]
fn a_fault_and_a_delay_drawn_together_fail_after_the_delay() {
    let herd = Herd {
        clients: 50,
        outage: Duration::ZERO,
        capacity: 10_000,
        ..Herd::default()
    };
    let chaos = Chaos::new(Some(1))
        .fault(1.0, Class::Permanent, None)
        .unwrap()
        .latency(1.0, Duration::from_millis(3), Duration::from_millis(3))
        .unwrap();
    let p = Policy::builder()
        .chaos(Some(Arc::new(chaos)))
        .build()
        .unwrap();
    let r = herd.run(&p).unwrap();
    assert_eq!(
        (r.calls, r.injected, r.delayed, r.give_ups),
        (0, 50, 50, 50)
    );
    // The faults come back in tick 3, when the delay is over.
    assert_eq!(r.ticks, 4);
}

#[test]
fn with_a_send_rate_a_delayed_attempt_takes_one_turn_of_its_machine() {
    // One call per ms from one process: without chaos the first calls go
    // out in ticks 0 to 9.
    let herd = Herd {
        clients: 10,
        outage: Duration::ZERO,
        capacity: 10_000,
        send: Some(retrykit_sim::SendRate {
            per_ms: 1.0,
            processes: 1,
        }),
        ..Herd::default()
    };
    let plain = herd.run(&delayed(Duration::ZERO, None)).unwrap();
    assert_eq!(plain.first_wave_ticks, 10);
    // Each takes its turn when it begins, and reaches the service 3 ticks
    // later without queueing again: ticks 3 to 12.
    let r = herd.run(&delayed(Duration::from_millis(3), None)).unwrap();
    assert_eq!((r.first_wave, r.first_wave_ticks), (10, 13));
    assert_eq!((r.calls, r.successes, r.delayed), (10, 10, 10));
}
