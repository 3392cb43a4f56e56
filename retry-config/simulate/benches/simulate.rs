//! How fast the fleet simulator runs a herd of a million clients.
//!
//! The target is about a second for 1,000,000 clients × 10 attempts
//! on a 2-core machine; criterion reports the figure, nothing asserts it.
//! Smaller herds are measured too, so the ratio shows whether the cost per
//! client stays flat as the fleet grows (memory and time linear in clients).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use retrykit_core::{Jitter, Policy};
use retrykit_sim::{Herd, SendRate};
use std::hint::black_box;
use std::time::Duration;

/// Ten calls each, nobody gets through: the full 10 × clients calls are made.
fn herd(clients: u32) -> Herd {
    Herd {
        clients,
        outage: Duration::from_secs(3600),
        capacity: 1,
        tick: Duration::from_millis(1),
        ..Herd::default()
    }
}

fn policy(jitter: Jitter) -> Policy {
    Policy::builder()
        .base(Duration::from_millis(100))
        .cap(Duration::from_secs(10))
        .jitter(jitter)
        .max_attempts(10)
        .build()
        .expect("a valid policy")
}

fn herd_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("herd");
    group.sample_size(10);
    for jitter in [Jitter::None, Jitter::Full] {
        let policy = policy(jitter);
        for clients in [10_000u32, 100_000, 1_000_000] {
            group.throughput(Throughput::Elements(u64::from(clients) * 10));
            group.bench_with_input(
                BenchmarkId::new(jitter.name(), clients),
                &clients,
                |b, &clients| {
                    let scenario = herd(clients);
                    b.iter(|| black_box(scenario.run(&policy).expect("valid scenario")));
                },
            );
        }
    }
    group.finish();
}

/// The same herds with a send rate: 1000 calls per ms (a million first
/// calls take a second to send), so the whole run goes tick by tick through
/// the send queues, the outage included.
fn herd_send_rate(c: &mut Criterion) {
    let mut group = c.benchmark_group("herd_send_rate");
    group.sample_size(10);
    let policy = policy(Jitter::Full);
    for clients in [100_000u32, 1_000_000] {
        group.throughput(Throughput::Elements(u64::from(clients) * 10));
        group.bench_with_input(
            BenchmarkId::new("full", clients),
            &clients,
            |b, &clients| {
                let scenario = Herd {
                    send: Some(SendRate {
                        per_ms: 1000.0,
                        processes: 1,
                    }),
                    ..herd(clients)
                };
                b.iter(|| black_box(scenario.run(&policy).expect("valid scenario")));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, herd_scaling, herd_send_rate);
criterion_main!(benches);
