//! Side-by-side timings, one run: the success path, the retry loop, delay
//! computation and registry lookups, for the plain call (the limit),
//! `#[retry]`, retrykit-core's API, backon, tokio-retry2 and tryhard.
//!
//! `cargo bench -p examples --bench compare` runs it; at the end it prints
//! a Markdown table of this run's medians and their ratios to the limit,
//! then `#[retry]` and `Retry::call` against backon and tokio-retry2 on the
//! success path and with one failure (zero backoff for every contender), as
//! ratios to the peers' medians of the same run. Nothing here asserts a
//! timing.

mod common;

use common::{Flaky, poll_once};
use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use retrykit_core::{Jitter, Policy, PolicyBuilder, RetryBudget, registry};
use std::cell::Cell;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};
use tokio::runtime::Runtime;

/// Every contender, first attempt succeeds. Each is one poll with a no-op
/// waker, so nothing but the wrapper differs.
fn success(c: &mut Criterion, core_policy: &Policy) {
    let mut g = c.benchmark_group("success");
    let n = 41;
    g.bench_function("plain", |b| {
        b.iter(|| poll_once(common::fetch(black_box(n))))
    });
    g.bench_function("annotated", |b| {
        b.iter(|| poll_once(common::annotated(black_box(n))))
    });
    g.bench_function("retrykit-core", |b| {
        b.iter(|| poll_once(common::core(core_policy, black_box(n))))
    });
    g.bench_function("backon", |b| {
        b.iter(|| poll_once(common::backon(black_box(n))))
    });
    g.bench_function("tokio-retry2", |b| {
        b.iter(|| poll_once(common::tokio_retry2(black_box(n))))
    });
    g.bench_function("tryhard", |b| {
        b.iter(|| poll_once(common::tryhard(black_box(n))))
    });
    g.bench_function("by-hand-tokio-timeout", |b| {
        b.iter(|| poll_once(common::by_hand_timeout(black_box(n))))
    });
    // What each feature costs on the success path, against `retrykit-core`.
    let with = |f: fn(PolicyBuilder) -> PolicyBuilder| f(core_policy.to_builder()).build().unwrap();
    let timeout = with(|b| b.attempt_timeout(Some(Duration::from_secs(5))));
    let deadline = with(|b| b.deadline(Some(Duration::from_secs(30))));
    let budget = RetryBudget::builder().build().unwrap();
    let budgeted = core_policy
        .to_builder()
        .budget(Some(Arc::new(budget)))
        .build()
        .unwrap();
    for (name, policy) in [
        ("retry-core-attempt-timeout", &timeout),
        ("retry-core-deadline", &deadline),
        ("retry-core-budget", &budgeted),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| poll_once(common::core(policy, black_box(n))))
        });
    }
    g.finish();
}

/// Every contender, one failure and a zero wait on tokio's timer. Each call
/// is a `block_on` on a paused current-thread runtime (tokio rounds the zero
/// wait up to its 1 ms tick; the paused clock jumps there at once), so the
/// figure holds the runtime's park and timer work too, the same for all.
fn one_failure(c: &mut Criterion, runtime: &Runtime) {
    let policy = common::loop_policy();
    let jittered = common::jittered_loop_policy();
    let mut g = c.benchmark_group("one_failure");
    let failures = Cell::new(0);
    let mut bench = |name: &str, call: &dyn Fn(&Cell<u32>) -> Result<u64, Flaky>| {
        scripted(&mut g, &failures, name, call);
    };
    let n = 41;
    bench("by-hand", &|f| {
        runtime.block_on(common::by_hand_flaky(f, black_box(n)))
    });
    bench("annotated", &|f| {
        runtime.block_on(common::annotated_flaky(f, black_box(n)))
    });
    bench("retrykit-core", &|f| {
        runtime.block_on(common::core_flaky(&policy, f, black_box(n)))
    });
    bench("retry-core-full-jitter", &|f| {
        runtime.block_on(common::core_flaky(&jittered, f, black_box(n)))
    });
    bench("backon", &|f| {
        runtime.block_on(common::backon_flaky(f, black_box(n)))
    });
    bench("tokio-retry2", &|f| {
        runtime.block_on(common::tokio_retry2_flaky(f, black_box(n)))
    });
    bench("tryhard", &|f| {
        runtime.block_on(common::tryhard_flaky(f, black_box(n)))
    });
    g.finish();

    // The same calls inside one `block_on` per batch: the runtime is entered
    // once, not per call, so the figure is the call and tokio's timer.
    // Leaked (once per run) so each contender's future may borrow them
    // from a plain closure, whatever its lifetime.
    let counts: &'static Cell<u32> = Box::leak(Box::new(Cell::new(0)));
    let held: &'static Policy = Box::leak(Box::new(policy.clone()));
    let mut g = c.benchmark_group("one_failure_in_runtime");
    in_runtime(&mut g, runtime, counts, "by-hand", || {
        common::by_hand_flaky(counts, black_box(n))
    });
    in_runtime(&mut g, runtime, counts, "annotated", || {
        common::annotated_flaky(counts, black_box(n))
    });
    in_runtime(&mut g, runtime, counts, "retrykit-core", || {
        common::core_flaky(held, counts, black_box(n))
    });
    in_runtime(&mut g, runtime, counts, "backon", || {
        common::backon_flaky(counts, black_box(n))
    });
    in_runtime(&mut g, runtime, counts, "tokio-retry2", || {
        common::tokio_retry2_flaky(counts, black_box(n))
    });
    g.finish();

    // The loop alone: sleepers that return at once, for the contenders that
    // accept one, each call one poll with a no-op waker.
    let mut g = c.benchmark_group("one_failure_no_timer");
    let mut bench = |name: &str, call: &dyn Fn(&Cell<u32>) -> Result<u64, Flaky>| {
        scripted(&mut g, &failures, name, call);
    };
    bench("by-hand", &|f| {
        poll_once(common::by_hand_flaky_no_timer(f, black_box(n)))
    });
    bench("retrykit-core", &|f| {
        poll_once(common::core_flaky_no_timer(&policy, f, black_box(n)))
    });
    bench("backon", &|f| {
        poll_once(common::backon_flaky_no_timer(f, black_box(n)))
    });
    g.finish();
}

/// One benchmark of a call scripted to fail once, then succeed, each batch
/// of calls made one after another inside one `block_on`.
fn in_runtime<Fut: Future<Output = Result<u64, Flaky>>>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    runtime: &Runtime,
    failures: &Cell<u32>,
    name: &str,
    call: impl Fn() -> Fut,
) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    failures.set(1);
                    let out = call().await;
                    assert_eq!(out, Ok(42), "{name}: the second attempt succeeds");
                    black_box(&out);
                }
                start.elapsed()
            })
        })
    });
}

/// One benchmark of a call scripted to fail once, then succeed.
fn scripted(
    g: &mut BenchmarkGroup<'_, WallTime>,
    failures: &Cell<u32>,
    name: &str,
    call: &dyn Fn(&Cell<u32>) -> Result<u64, Flaky>,
) {
    g.bench_function(name, |b| {
        b.iter(|| {
            failures.set(1);
            let out = call(failures);
            assert_eq!(out, Ok(42), "{name}: the second attempt succeeds");
            out
        })
    });
}

/// The jittered wait before retry 3 (0-based), per jitter mode, drawing from
/// the per-thread generator as the loop does.
fn delays(c: &mut Criterion) {
    let mut g = c.benchmark_group("delay");
    let modes = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Proportional(0.2),
    ];
    for jitter in modes {
        let policy = Policy::builder()
            .jitter(jitter)
            .build()
            .expect("a valid policy");
        let prev = Duration::from_millis(400);
        g.bench_function(jitter.name(), |b| {
            b.iter(|| retrykit_core::kernel::next_delay(&policy, black_box(3), black_box(prev)))
        });
    }
    g.finish();
}

/// Resolving a policy name, alone and while another thread keeps swapping
/// in a fresh registry: `lookup` returns the policy's `Arc` (a reference
/// count taken and dropped), `with-policy` borrows it.
fn lookups(c: &mut Criterion, scale: &Policy) {
    let mut g = c.benchmark_group("registry");
    lookup(&mut g, "");
    let stop = Arc::new(AtomicBool::new(false));
    let reloader = {
        let stop = Arc::clone(&stop);
        let scale = scale.clone();
        std::thread::spawn(move || {
            let mut reloads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                common::install_policies(scale.clone());
                reloads += 1;
            }
            reloads
        })
    };
    lookup(&mut g, "-while-reloading");
    stop.store(true, Ordering::Relaxed);
    let reloads = reloader.join().expect("the reloading thread");
    println!("registry: {reloads} reloads ran alongside the lookups");
    g.finish();
}

/// Both lookups, their row names ending in `suffix`.
fn lookup(g: &mut BenchmarkGroup<'_, WallTime>, suffix: &str) {
    g.bench_function(format!("lookup{suffix}"), |b| {
        b.iter(|| registry::policy(black_box(common::LOOP_POLICY)).is_some())
    });
    g.bench_function(format!("with-policy{suffix}"), |b| {
        b.iter(|| registry::with_policy(black_box(common::LOOP_POLICY), |p| p.is_some()))
    });
}

fn main() {
    let started = SystemTime::now();
    let scale = Policy::default();
    common::install_policies(scale.clone());
    let core_policy = Policy::default();
    // Entered for tokio's timer context; `one_failure` also drives it.
    let runtime = common::paused_runtime();
    let _timer_context = runtime.enter();

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(40)
        .configure_from_args();
    success(&mut c, &core_policy);
    one_failure(&mut c, &runtime);
    delays(&mut c);
    lookups(&mut c, &scale);
    c.final_summary();
    summary::print(&criterion_home(), started);
    summary::print_peers(&criterion_home(), started);
    threads(&runtime);
}

/// Calls per second when every thread calls one `#[retry]` fn (its site's
/// policy shared by all), at 1 and 2 threads and up to the machine's cores:
/// what the calls' shared state costs when it moves between cores. Each
/// thread makes plain success-path calls for a fixed time.
fn threads(runtime: &Runtime) {
    const FOR: Duration = Duration::from_millis(1500);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("\n| threads calling `annotated` | calls per second | per thread |");
    println!("| ---: | ---: | ---: |");
    for threads in (1..=cores.max(2)).filter(|t| *t <= 2 || t.is_power_of_two()) {
        let start = std::sync::Barrier::new(threads);
        let per_second: f64 = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let (start, handle) = (&start, runtime.handle());
                    scope.spawn(move || {
                        let _timer_context = handle.enter();
                        start.wait();
                        let began = Instant::now();
                        let mut calls = 0u64;
                        while began.elapsed() < FOR {
                            for _ in 0..1024 {
                                black_box(poll_once(common::annotated(black_box(41))))
                                    .expect("the call succeeds");
                            }
                            calls += 1024;
                        }
                        calls as f64 / began.elapsed().as_secs_f64()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("a worker"))
                .sum()
        });
        println!(
            "| {threads} | {:.1} M | {:.1} M |",
            per_second / 1e6,
            per_second / 1e6 / threads as f64
        );
    }
}

/// Where criterion writes its estimates, found the way criterion finds it.
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || {
            // `target/tmp`'s parent is the target directory this bench was built in.
            let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            tmp.parent().map_or(tmp.clone(), PathBuf::from)
        },
        PathBuf::from,
    );
    target.join("criterion")
}

/// The Markdown table of this run's medians and ratios.
mod summary {
    use std::path::Path;
    use std::time::SystemTime;

    /// Each table: its group, its limit (the denominator), its rows.
    const TABLES: &[(&str, &str, &[&str])] = &[
        (
            "success",
            "plain",
            &[
                "plain",
                "annotated",
                "retrykit-core",
                "backon",
                "tokio-retry2",
                "tryhard",
                "by-hand-tokio-timeout",
                "retry-core-attempt-timeout",
                "retry-core-deadline",
                "retry-core-budget",
            ],
        ),
        (
            "one_failure",
            "by-hand",
            &[
                "by-hand",
                "annotated",
                "retrykit-core",
                "retry-core-full-jitter",
                "backon",
                "tokio-retry2",
                "tryhard",
            ],
        ),
        (
            "one_failure_in_runtime",
            "by-hand",
            &[
                "by-hand",
                "annotated",
                "retrykit-core",
                "backon",
                "tokio-retry2",
            ],
        ),
        (
            "one_failure_no_timer",
            "by-hand",
            &["by-hand", "retrykit-core", "backon"],
        ),
        (
            "delay",
            "none",
            &["none", "full", "equal", "decorrelated", "proportional"],
        ),
        (
            "registry",
            "lookup",
            &[
                "lookup",
                "lookup-while-reloading",
                "with-policy",
                "with-policy-while-reloading",
            ],
        ),
    ];

    pub fn print(home: &Path, started: SystemTime) {
        println!("\n| benchmark | contender | median | ratio to limit |");
        println!("| --- | --- | ---: | ---: |");
        for (group, limit, rows) in TABLES {
            let limit_ns = median_ns(home, group, limit, started);
            for row in *rows {
                let (median, ratio) = match (median_ns(home, group, row, started), limit_ns) {
                    (Some(m), Some(l)) if l > 0.0 => (format_ns(m), format!("{:.2}×", m / l)),
                    (Some(m), _) => (format_ns(m), "—".to_owned()),
                    (None, _) => ("not run".to_owned(), "—".to_owned()),
                };
                let shown = if row == limit {
                    format!("{row} (limit)")
                } else {
                    (*row).to_owned()
                };
                println!("| {group} | {shown} | {median} | {ratio} |");
            }
        }
    }

    /// The median this run measured, in nanoseconds; `None` when the
    /// benchmark did not run in this run (filtered out, or a stale file).
    fn median_ns(home: &Path, group: &str, bench: &str, started: SystemTime) -> Option<f64> {
        let file = home
            .join(group)
            .join(bench)
            .join("new")
            .join("estimates.json");
        let fresh = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= started);
        if !fresh {
            return None;
        }
        let text = std::fs::read_to_string(&file).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        json["median"]["point_estimate"].as_f64()
    }

    /// The groups compared with the peers: the success path, and one
    /// failed attempt then success with zero backoff for everyone (each call
    /// in its own `block_on`, and a batch in one).
    const PEER_GROUPS: &[&str] = &["success", "one_failure", "one_failure_in_runtime"];
    /// Ours, each set against every peer.
    const OURS: &[&str] = &["annotated", "retrykit-core"];
    /// The peers, by their row names.
    const PEERS: &[&str] = &["backon", "tokio-retry2"];

    /// Our rows against the peers' medians of this same run: `< 1` is
    /// faster than that peer. Issue 40's targets for the success path are
    /// printed beside them (below backon's, within 1.5× of tokio-retry2's);
    /// a benchmark reports them and fails nothing.
    pub fn print_peers(home: &Path, started: SystemTime) {
        println!(
            "\n| benchmark | contender | median | vs backon | vs tokio-retry2 | success target |"
        );
        println!("| --- | --- | ---: | ---: | ---: | --- |");
        for group in PEER_GROUPS {
            let peers: Vec<Option<f64>> = PEERS
                .iter()
                .map(|peer| median_ns(home, group, peer, started))
                .collect();
            for row in OURS {
                let Some(ours) = median_ns(home, group, row, started) else {
                    println!("| {group} | {row} | not run | — | — | — |");
                    continue;
                };
                let ratios: Vec<Option<f64>> = peers
                    .iter()
                    .map(|peer| peer.filter(|p| *p > 0.0).map(|p| ours / p))
                    .collect();
                let shown = |r: Option<f64>| r.map_or("—".to_owned(), |r| format!("{r:.2}×"));
                let target = match (*group, ratios[0], ratios[1]) {
                    ("success", Some(backon), Some(tokio_retry2)) => {
                        if backon < 1.0 && tokio_retry2 <= 1.5 {
                            "met"
                        } else {
                            "missed"
                        }
                    }
                    _ => "—",
                };
                println!(
                    "| {group} | {row} | {} | {} | {} | {target} |",
                    format_ns(ours),
                    shown(ratios[0]),
                    shown(ratios[1])
                );
            }
        }
    }

    fn format_ns(ns: f64) -> String {
        if ns < 1_000.0 {
            format!("{ns:.1} ns")
        } else {
            format!("{:.2} µs", ns / 1_000.0)
        }
    }
}
