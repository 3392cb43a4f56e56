//! Seeded statistical tests of the jitter modes: ranges, uniformity of full
//! jitter (Kolmogorov–Smirnov), and decorrelated jitter not sticking at the cap.

use rand::{Rng, SeedableRng, rngs::SmallRng};
use retrykit_core::kernel::Schedule;
use retrykit_core::{Backoff, Jitter, Policy};
use std::time::Duration;

const SAMPLES: usize = 20_000;

fn policy(jitter: Jitter) -> Policy {
    Policy::builder()
        .backoff(Backoff::Exponential { factor: 2.0 })
        .base(Duration::from_millis(10))
        .cap(Duration::from_secs(1))
        .jitter(jitter)
        .build()
        .unwrap()
}

fn samples(p: &Policy, n: u32, seed: u64) -> Vec<Duration> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..SAMPLES)
        .map(|_| p.delay(n, p.base(), rng.random::<f64>()))
        .collect()
}

#[test]
fn each_envelope_mode_stays_in_its_range() {
    let d = Duration::from_millis(80); // envelope for n = 3
    let cases = [
        (Jitter::None, d, d),
        (Jitter::Full, Duration::ZERO, d),
        (Jitter::Equal, d / 2, d),
        (Jitter::Proportional(0.25), d.mul_f64(0.75), d.mul_f64(1.25)),
    ];
    for (mode, lo, hi) in cases {
        let p = policy(mode);
        assert_eq!(p.envelope(3), d);
        let s = samples(&p, 3, 11);
        let (min, max) = (s.iter().min().unwrap(), s.iter().max().unwrap());
        assert!(
            *min >= lo && *max <= hi,
            "{mode:?}: [{min:?}, {max:?}] not in [{lo:?}, {hi:?}]"
        );
        if mode != Jitter::None {
            // The range is actually used, not just respected.
            let span = (hi - lo).as_secs_f64();
            assert!(
                (*max - *min).as_secs_f64() > 0.95 * span,
                "{mode:?} too narrow"
            );
        }
    }
}

#[test]
fn proportional_jitter_above_the_cap_is_clamped_to_it() {
    let p = policy(Jitter::Proportional(1.0));
    let s = samples(&p, 30, 5);
    assert!(s.iter().all(|d| *d <= p.cap()));
    assert!(s.iter().any(|d| *d == p.cap()));
}

/// The Kolmogorov–Smirnov statistic against U[0, 1].
fn ks_uniform(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            let lo = (x - i as f64 / n).abs();
            let hi = ((i + 1) as f64 / n - x).abs();
            lo.max(hi)
        })
        .fold(0.0, f64::max)
}

#[test]
fn full_jitter_is_uniform_on_zero_to_d() {
    let p = policy(Jitter::Full);
    let d = p.envelope(4).as_secs_f64();
    let xs: Vec<f64> = samples(&p, 4, 42)
        .into_iter()
        .map(|s| s.as_secs_f64() / d)
        .collect();
    let stat = ks_uniform(xs);
    // Critical value at α = 0.001 is 1.95 / sqrt(n).
    let critical = 1.95 / (SAMPLES as f64).sqrt();
    assert!(stat < critical, "KS statistic {stat} ≥ {critical}");
}

#[test]
fn the_ks_check_rejects_a_non_uniform_sample() {
    // Guard that the test above can fail: equal jitter is not U[0, d].
    let p = policy(Jitter::Equal);
    let d = p.envelope(4).as_secs_f64();
    let xs: Vec<f64> = samples(&p, 4, 42)
        .into_iter()
        .map(|s| s.as_secs_f64() / d)
        .collect();
    assert!(ks_uniform(xs) > 1.95 / (SAMPLES as f64).sqrt());
}

#[test]
fn decorrelated_keeps_varying_after_it_first_reaches_the_cap() {
    let p = policy(Jitter::Decorrelated);
    let waits: Vec<Duration> = Schedule::new(&p, Some(7)).take(2_000).collect();
    assert!(waits.iter().all(|w| *w >= p.base() && *w <= p.cap()));
    let first_cap = waits
        .iter()
        .position(|w| *w == p.cap())
        .or_else(|| waits.iter().position(|w| *w > p.cap().mul_f64(0.9)))
        .expect("decorrelated jitter should approach the cap");
    let after = &waits[first_cap + 1..];
    let at_cap = after.iter().filter(|w| **w == p.cap()).count();
    let distinct: std::collections::BTreeSet<_> = after.iter().collect();
    // Polly's bug: once at the cap, 2/3 of draws stay there. Ours almost never do.
    assert!(
        at_cap * 20 < after.len(),
        "{at_cap} of {} waits stuck at the cap",
        after.len()
    );
    assert!(distinct.len() > after.len() / 2);
    let mean = after.iter().map(Duration::as_secs_f64).sum::<f64>() / after.len() as f64;
    assert!(mean < 0.9 * p.cap().as_secs_f64());
}

#[test]
fn seeded_schedules_repeat_and_different_seeds_differ() {
    let p = policy(Jitter::Full);
    let a: Vec<_> = Schedule::new(&p, Some(1)).take(50).collect();
    let b: Vec<_> = Schedule::new(&p, Some(1)).take(50).collect();
    let c: Vec<_> = Schedule::new(&p, Some(2)).take(50).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn the_thread_source_is_not_shared_between_threads_in_lockstep() {
    let p = policy(Jitter::Full);
    let draw = || -> Vec<Duration> { Schedule::new(&p, None).take(20).collect() };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(draw);
        let b = s.spawn(draw);
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_ne!(a, b);
}
