use super::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const MS: Duration = Duration::from_millis(1);

/// What a run of [`serve`] saw after its first half.
#[derive(Debug)]
struct Seen {
    /// The lowest and highest limit (a probe's dip included).
    limits: (u32, u32),
    /// The limit most answers were sent under (its median).
    typical: u32,
    /// Answers per service time, against the dependency's capacity.
    goodput: f64,
    /// The 99th percentile latency, in service times.
    p99: f64,
}

/// A dependency that serves `capacity` attempts at once, each in
/// `service`, and queues the rest first come first served, driven for
/// `rounds` service times by more callers than it can serve, each sending
/// as soon as the limit has room. Deterministic: integer microseconds.
fn serve(controller: &mut Controller, capacity: u32, service: Duration, rounds: u64) -> Seen {
    let service = service.as_micros() as u64;
    let end = service * rounds;
    let (mut done, mut queue) = (BinaryHeap::new(), VecDeque::new());
    let (mut busy, mut in_flight, mut limit) = (0u32, 0u32, controller.limit());
    let (mut limits, mut latencies, mut answered) = ((u32::MAX, 0), Vec::new(), 0u64);
    let mut under = Vec::new();
    let (mut now, mut seed) = (0, 0x9e37_79b9_7f4a_7c15_u64);
    // Each answer takes the service time give or take 10%, from a fixed seed.
    let mut took = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        service * 9 / 10 + (seed >> 33) % (service / 5 + 1)
    };
    while now < end {
        while in_flight < limit {
            in_flight += 1;
            if busy < capacity {
                busy += 1;
                done.push(Reverse((now + took(), now)));
            } else {
                queue.push_back(now);
            }
        }
        let Reverse((at, sent)) = done.pop().expect("something is in flight");
        now = at;
        busy -= 1;
        if let Some(next) = queue.pop_front() {
            busy += 1;
            done.push(Reverse((now + took(), next)));
        }
        let latency = Duration::from_micros(now - sent);
        limit = controller.on_sample(Sample::success(latency, in_flight));
        in_flight -= 1;
        if now >= end / 2 {
            limits = (limits.0.min(limit), limits.1.max(limit));
            latencies.push(latency);
            under.push(limit);
            answered += 1;
        }
    }
    latencies.sort();
    under.sort();
    let p99 = latencies[latencies.len() * 99 / 100].as_micros() as f64 / service as f64;
    let goodput = answered as f64 / (rounds / 2) as f64 / f64::from(capacity);
    Seen {
        limits,
        typical: under[under.len() / 2],
        goodput,
        p99,
    }
}

fn gradient(initial: u32) -> Controller {
    Controller::Gradient(
        Gradient::new(GradientSettings {
            initial,
            ..GradientSettings::default()
        })
        .unwrap(),
    )
}

#[test]
fn gradient_settles_near_the_capacity_of_a_fixed_service_time() {
    for (capacity, initial) in [(50, 20), (50, 200), (200, 20), (10, 5)] {
        let mut c = gradient(initial);
        let seen = serve(&mut c, capacity, 10 * MS, 4000);
        println!("capacity {capacity} from {initial}: {seen:?}");
        let (low, high) = (f64::from(seen.limits.0), f64::from(seen.limits.1));
        let (c, typical) = (f64::from(capacity), f64::from(seen.typical));
        assert!((0.8 * c..=1.5 * c).contains(&typical), "{seen:?}");
        assert!(low >= 0.5 * c && high <= 1.5 * c, "{seen:?}");
        assert!(seen.goodput >= 0.9 && seen.p99 <= 2.0, "{seen:?}");
    }
}

#[test]
fn aimd_with_a_latency_drop_settles_near_the_capacity() {
    let settings = AimdSettings {
        initial: 10,
        max: 1000,
        drop_above: Some(15 * MS),
        ..AimdSettings::default()
    };
    let mut c = Controller::Aimd(Aimd::new(settings).unwrap());
    let seen = serve(&mut c, 50, 10 * MS, 4000);
    println!("{seen:?}");
    assert!(seen.limits.0 >= 40 && seen.limits.1 <= 75, "{seen:?}");
    assert!(seen.goodput >= 0.9 && seen.p99 <= 2.0, "{seen:?}");
}

fn aimd(initial: u32, min: u32, max: u32) -> Aimd {
    Aimd::new(AimdSettings {
        initial,
        min,
        max,
        drop_above: Some(100 * MS),
        ..AimdSettings::default()
    })
    .unwrap()
}

#[test]
fn aimd_grows_by_one_per_limit_of_good_samples_up_to_max() {
    let mut c = aimd(4, 1, 6);
    let ok = Sample::success(10 * MS, 4);
    let limits: Vec<u32> = (0..12).map(|_| c.on_sample(ok)).collect();
    assert_eq!(limits, [4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6]);
    for _ in 0..100 {
        c.on_sample(Sample::success(10 * MS, 6));
    }
    assert_eq!(c.limit(), 6, "bounded by max");
}

#[test]
fn aimd_does_not_grow_a_limit_under_half_used() {
    let mut c = aimd(10, 1, 100);
    for _ in 0..100 {
        c.on_sample(Sample::success(10 * MS, 4));
    }
    assert_eq!(c.limit(), 10);
}

#[test]
fn aimd_cuts_on_each_kind_of_drop_once_per_limit_of_samples_down_to_min() {
    for drop in [
        Sample::timeout(MS, 20),
        Sample::throttled(MS, 20),
        Sample::success(101 * MS, 20),
    ] {
        let mut c = aimd(20, 5, 100);
        assert_eq!(c.on_sample(drop), 18, "{drop:?}: 20 * 0.9");
        assert_eq!(
            c.on_sample(drop),
            18,
            "{drop:?}: no second cut in the same window"
        );
        for _ in 0..16 {
            c.on_sample(drop);
        }
        assert_eq!(c.on_sample(drop), 16, "{drop:?}: a limit's worth later");
        for _ in 0..1000 {
            c.on_sample(drop);
        }
        assert_eq!(c.limit(), 5, "{drop:?}: bounded by min");
    }
}

#[test]
fn aimd_counts_only_the_drops_its_settings_name() {
    let settings = AimdSettings {
        drop_on_timeout: false,
        drop_on_throttled: false,
        ..AimdSettings::default()
    };
    let mut c = Aimd::new(settings).unwrap();
    c.on_sample(Sample::timeout(MS, 20));
    c.on_sample(Sample::throttled(MS, 20));
    c.on_sample(Sample::success(Duration::from_secs(100), 20));
    let ignored = Sample {
        outcome: Outcome::Ignored,
        ..Sample::timeout(MS, 20)
    };
    assert_eq!(c.on_sample(ignored), 20);
    assert!(!c.is_drop(&Sample::timeout(MS, 1)));
}

#[test]
fn gradient_follows_a_dependency_that_got_slower() {
    let mut c = gradient(20);
    let seen = serve(&mut c, 50, 10 * MS, 2000);
    assert!((40..=75).contains(&seen.typical), "{seen:?}");
    let Controller::Gradient(g) = &c else {
        unreachable!()
    };
    let before = g.noload().unwrap();
    // Same capacity, four times the service time: the limit (a number of
    // attempts) should stay where it was, the no-load latency follow.
    let seen = serve(&mut c, 50, 40 * MS, 2000);
    assert!((40..=75).contains(&seen.typical), "{seen:?}");
    let Controller::Gradient(g) = &c else {
        unreachable!()
    };
    let after = g.noload().unwrap();
    assert!(after > before * 3, "{before:?} -> {after:?}");
    assert!(seen.p99 <= 2.0, "{seen:?}");
}

#[test]
fn gradient_halves_on_a_window_with_drops_and_stays_within_bounds() {
    let settings = GradientSettings {
        initial: 40,
        min: 10,
        max: 40,
        smoothing: 1.0,
        ..GradientSettings::default()
    };
    let mut c = Gradient::new(settings).unwrap();
    // The first windows are the start's probe; then a good window.
    for _ in 0..(PROBE_WINDOWS + 1) * 40 {
        c.on_sample(Sample::success(10 * MS, 40));
    }
    assert_eq!(c.limit(), 40, "bounded by max");
    for _ in 0..39 {
        c.on_sample(Sample::success(10 * MS, 40));
    }
    assert_eq!(
        c.on_sample(Sample::timeout(MS, 40)),
        26,
        "40 * 0.5 + sqrt(40)"
    );
    for _ in 0..1000 {
        c.on_sample(Sample::throttled(MS, 40));
    }
    assert_eq!(c.limit(), 10, "bounded by min");
}

#[test]
fn settings_name_each_broken_rule() {
    let fields = |p: Vec<Problem>| p.iter().map(|p| p.field).collect::<Vec<_>>();
    let bad = AimdSettings {
        initial: 0,
        min: 2,
        max: 2_000_000,
        decrease: 0.0,
        drop_above: Some(Duration::ZERO),
        ..AimdSettings::default()
    };
    assert_eq!(
        fields(bad.problems()),
        [
            "initial_limit",
            "max_limit",
            "initial_limit",
            "decrease",
            "drop_above"
        ]
    );
    let bad = GradientSettings {
        tolerance: 0.5,
        smoothing: f64::NAN,
        probe_every: 1,
        ..GradientSettings::default()
    };
    assert_eq!(
        fields(bad.problems()),
        ["tolerance", "smoothing", "probe_every"]
    );
    assert!(
        Aimd::new(AimdSettings {
            decrease: f64::INFINITY,
            ..AimdSettings::default()
        })
        .is_err()
    );
}
