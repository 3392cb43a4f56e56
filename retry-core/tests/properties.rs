//! Property tests: every valid policy keeps every delay in [min_delay, cap]
//! for any attempt number, and invalid inputs are rejected, never panicking.

use proptest::prelude::*;
use retrykit_core::kernel::Schedule;
use retrykit_core::{Backoff, Jitter, Oracle, Policy, RetryBudget};
use std::time::{Duration, SystemTime};

const DAY_NANOS: u64 = 86_400 * 1_000_000_000;

fn duration_up_to_days() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        (0u64..1_000_000).prop_map(Duration::from_nanos),
        (0u64..30 * DAY_NANOS).prop_map(Duration::from_nanos),
    ]
}

fn backoff() -> impl Strategy<Value = Backoff> {
    prop_oneof![
        Just(Backoff::Constant),
        Just(Backoff::Linear),
        (1.0f64..=1e6).prop_map(|factor| Backoff::Exponential { factor }),
        Just(Backoff::Exponential { factor: 1.0 }),
        Just(Backoff::Exponential { factor: 1e6 }),
    ]
}

fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        (0.0f64..=1.0).prop_map(Jitter::Proportional),
    ]
}

prop_compose! {
    fn valid_policy()(
        backoff in backoff(),
        jitter in jitter(),
        a in duration_up_to_days(),
        b in duration_up_to_days(),
        floor_frac in 0.0f64..=1.0,
        attempts in 1u32..=u32::MAX,
    ) -> Policy {
        let (base, cap) = if a <= b { (a, b) } else { (b, a) };
        Policy::builder()
            .backoff(backoff)
            .jitter(jitter)
            .base(base)
            .cap(cap)
            .min_delay(cap.mul_f64(floor_frac).min(cap))
            .max_attempts(attempts)
            .build()
            .expect("generated policies are valid")
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_delay_lies_in_min_delay_to_cap(
        p in valid_policy(),
        n in prop_oneof![0u32..100, Just(63), Just(64), Just(65), Just(1023), Just(u32::MAX - 1), Just(u32::MAX), any::<u32>()],
        prev in duration_up_to_days(),
        seed in any::<u64>(),
    ) {
        let unit = (seed as f64) / (u64::MAX as f64);
        let d = p.delay(n, prev, unit);
        prop_assert!(d >= p.min_delay() && d <= p.cap(), "{d:?} outside [{:?}, {:?}]", p.min_delay(), p.cap());
        let e = p.envelope(n);
        prop_assert!(e >= p.min_delay() && e <= p.cap());
        let real = p.envelope_at(f64::from(n) + 0.5);
        prop_assert!(real <= p.cap());
    }

    #[test]
    fn schedules_never_leave_the_bounds_and_envelopes_never_shrink(p in valid_policy(), seed in any::<u64>()) {
        for d in Schedule::new(&p, Some(seed)).take(200) {
            prop_assert!(d >= p.min_delay() && d <= p.cap());
        }
        let mut last = Duration::ZERO;
        for n in [0, 1, 2, 10, 64, 1000, u32::MAX] {
            let e = p.envelope(n);
            prop_assert!(e >= last);
            last = e;
        }
    }

    #[test]
    fn the_oracle_never_panics_on_any_clock(p in valid_policy(), times in proptest::collection::vec(any::<u64>(), 1..40)) {
        let mut o = Oracle::new(&p).consider_actual_delay(true);
        for t in times {
            let now = SystemTime::UNIX_EPOCH + Duration::from_nanos(t);
            let _ = o.failure(now);
        }
    }

    #[test]
    fn invalid_factors_are_rejected(factor in prop_oneof![
        Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY),
        -1e300f64..1.0, 1e6f64 + 1.0..1e300,
    ]) {
        let err = Policy::builder().backoff(Backoff::Exponential { factor }).build().unwrap_err();
        prop_assert_eq!(err.problems()[0].field, "factor");
    }

    #[test]
    fn cap_below_base_is_rejected(base in 1u64..u64::MAX / 4, less in 1u64..u64::MAX / 4) {
        let base = Duration::from_nanos(base);
        let cap = base.saturating_sub(Duration::from_nanos(less));
        let err = Policy::builder().base(base).cap(cap).build().unwrap_err();
        prop_assert!(err.problems().iter().any(|p| p.field == "cap"));
    }

    #[test]
    fn out_of_range_inputs_are_errors_not_panics(
        secs in any::<u64>(),
        ratio in prop_oneof![Just(f64::NAN), -1e9f64..-0.0001, 1.0001f64..1e9],
        budget_ratio in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -1e9f64..-0.0001, 1000.01f64..1e12],
    ) {
        let huge = Duration::from_secs(secs.max(Policy::MAX_DURATION.as_secs() + 1));
        prop_assert!(Policy::builder().cap(huge).build().is_err());
        prop_assert!(Policy::builder().deadline(Some(huge)).build().is_err());
        prop_assert!(Policy::builder().jitter(Jitter::Proportional(ratio)).build().is_err());
        prop_assert!(RetryBudget::builder().ratio(budget_ratio).build().is_err());
        prop_assert!(RetryBudget::builder().window(Duration::from_secs(secs.max(86_401))).build().is_err());
    }
}

#[test]
fn unlimited_attempts_need_a_deadline() {
    let err = Policy::builder().max_attempts(0).build().unwrap_err();
    assert_eq!(err.problems()[0].field, "max_attempts");
    assert!(err.to_string().contains("deadline"), "{err}");
    assert!(
        Policy::builder()
            .max_attempts(0)
            .deadline(Some(Duration::from_secs(1)))
            .build()
            .is_ok()
    );
}

#[test]
fn every_problem_is_reported_at_once_with_field_rule_and_fix() {
    let err = Policy::builder()
        .backoff(Backoff::Exponential { factor: f64::NAN })
        .base(Duration::from_secs(10))
        .cap(Duration::from_secs(1))
        .min_delay(Duration::from_secs(5))
        .jitter(Jitter::Proportional(2.0))
        .max_attempts(0)
        .attempt_timeout(Some(Duration::ZERO))
        .build()
        .unwrap_err();
    let fields: Vec<_> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        [
            "factor",
            "cap",
            "min_delay",
            "jitter",
            "max_attempts",
            "attempt_timeout"
        ]
    );
    for p in err.problems() {
        assert!(!p.rule.is_empty() && !p.fix.is_empty());
        // Named as the file names it, so the loader maps it back to its key.
        assert!(
            retrykit_schema::keys::Key::named(p.field).is_some(),
            "{}",
            p.field
        );
    }
}

#[test]
fn the_largest_values_saturate_to_the_cap() {
    let p = Policy::builder()
        .backoff(Backoff::Exponential { factor: 1e6 })
        .base(Duration::from_secs(86_400))
        .cap(Policy::MAX_DURATION)
        .jitter(Jitter::Decorrelated)
        .max_attempts(u32::MAX)
        .build()
        .unwrap();
    assert_eq!(p.envelope(u32::MAX), Policy::MAX_DURATION);
    let d = p.delay(u32::MAX, Policy::MAX_DURATION, 0.999);
    assert!(d <= Policy::MAX_DURATION);
    assert_eq!(p.envelope_at(f64::INFINITY), Policy::MAX_DURATION);
    assert_eq!(p.envelope_at(f64::NAN), p.base());
}
