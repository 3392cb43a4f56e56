//! A policy's chaos in the herd: injected faults are attempts never sent,
//! decided on as failures of their class, repeated exactly by the seed.

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
