//! Bytes and allocations: the size of each contender's future next to the
//! plain call's, heap allocations per call (success path and one failure),
//! and 100,000 `#[retry]` calls retrying at once on one tokio runtime —
//! memory per call in flight and how late each wake-up is against its
//! scheduled time.
//!
//! Its own binary because it installs a counting global allocator
//! (`allocation-counter`), which would tax every allocation in `compare`.
//! Prints Markdown tables; asserts nothing about speed.

mod common;

use backon::{ExponentialBuilder, Retryable as _};
use common::{Flaky, poll_once};
use retrykit_core::{Class, Classify, Jitter, Policy, Retry, RetryEvent, retry};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::{Duration, Instant};

/// Calls measured per contender for the allocation counts.
const CALLS: u64 = 10_000;
/// Calls in flight at once in the scale benchmark.
const IN_FLIGHT: u32 = 100_000;

fn main() {
    let scale = scale_policy();
    common::install_policies(scale.clone());
    sizes();
    allocations();
    scale_run(&scale);
}

/// The scale policy: one retry after an equal-jitter wait in [0.5 s, 1 s].
/// Every first attempt has run before the first wake-up is due, so the
/// lateness measured is the timer's and the scheduler's under load, not the
/// time it takes to start 100,000 calls on one thread (reported apart).
fn scale_policy() -> Policy {
    Policy::builder()
        .base(Duration::from_secs(1))
        .cap(Duration::from_secs(1))
        .jitter(Jitter::Equal)
        .max_attempts(2)
        .build()
        .expect("a valid scale policy")
}

fn sizes() {
    let policy = Policy::default();
    let failures = Cell::new(0);
    let plain = size_of_val(&common::fetch(1));
    println!("\n| future (success path) | bytes | ratio to plain |");
    println!("| --- | ---: | ---: |");
    let row = |name: &str, bytes: usize| {
        println!("| {name} | {bytes} | {:.1}× |", bytes as f64 / plain as f64);
    };
    row("plain `async fn` (limit)", plain);
    row("`#[retry]`", size_of_val(&common::annotated(1)));
    row(
        "retrykit-core `Retry::call`",
        size_of_val(&common::core(&policy, 1)),
    );
    row("backon", size_of_val(&common::backon(1)));
    row("tokio-retry2", size_of_val(&common::tokio_retry2(1)));
    row("tryhard", size_of_val(&common::tryhard(1)));
    row(
        "`#[retry]` on the scripted call (takes `&Cell`)",
        size_of_val(&common::annotated_flaky(&failures, 1)),
    );
    row(
        "plain scripted call",
        size_of_val(&common::fetch_flaky(&failures, 1)),
    );
    let big = size_of_val(&common::fetch_big(1));
    println!("\n| future with a 1 KiB buffer held across an await | bytes | ratio to plain |");
    println!("| --- | ---: | ---: |");
    let row = |name: &str, bytes: usize| {
        println!("| {name} | {bytes} | {:.2}× |", bytes as f64 / big as f64);
    };
    row("plain `async fn` (limit)", big);
    row("`#[retry]`", size_of_val(&common::annotated_big(1)));
    row(
        "retrykit-core `Retry::call`",
        size_of_val(&Retry::new(&policy).call(|| common::fetch_big(1))),
    );
    row(
        "backon",
        size_of_val(&(|| common::fetch_big(1)).retry(ExponentialBuilder::new())),
    );
    row(
        "tokio-retry2",
        size_of_val(&tokio_retry2::Retry::spawn(
            tokio_retry2::strategy::FixedInterval::from_millis(100).take(2),
            || async {
                common::fetch_big(1)
                    .await
                    .map_err(tokio_retry2::RetryError::transient)
            },
        )),
    );
    row(
        "tryhard",
        size_of_val(&tryhard::retry_fn(|| common::fetch_big(1)).retries(2)),
    );
}

/// Heap allocations per call, counted over `CALLS` calls after one warm-up
/// call (which fills thread-locals: the jitter generator, tokio's context).
fn allocations() {
    let runtime = common::runtime();
    let _timer_context = runtime.enter();
    let policy = Policy::default();
    println!("\n| path | contender | allocations per call | bytes per call |");
    println!("| --- | --- | ---: | ---: |");
    let report = |path: &str, name: &str, call: &dyn Fn()| {
        call();
        let info = allocation_counter::measure(|| {
            for _ in 0..CALLS {
                call();
            }
        });
        println!(
            "| {path} | {name} | {} | {} |",
            per_call(info.count_total),
            per_call(info.bytes_total)
        );
    };
    let ok = |r: Result<u64, Flaky>| assert_eq!(r, Ok(2));
    report("success", "plain (limit)", &|| {
        ok(poll_once(common::fetch(1)))
    });
    report("success", "`#[retry]`", &|| {
        ok(poll_once(common::annotated(1)))
    });
    report("success", "retrykit-core", &|| {
        ok(poll_once(common::core(&policy, 1)))
    });
    report("success", "backon", &|| ok(poll_once(common::backon(1))));
    report("success", "tokio-retry2", &|| {
        ok(poll_once(common::tokio_retry2(1)))
    });
    report("success", "tryhard", &|| ok(poll_once(common::tryhard(1))));

    // One failure, then a zero wait on tokio's paused timer (tokio rounds a
    // zero wait up to its 1 ms tick, so the clock must advance).
    let paused = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a paused runtime");
    let failures = &Cell::new(0);
    let loop_policy = &common::loop_policy();
    let path = "one failure, zero wait";
    report_failing(&paused, failures, path, "by hand (limit)", || {
        common::by_hand_flaky(failures, 1)
    });
    report_failing(&paused, failures, path, "`#[retry]`", || {
        common::annotated_flaky(failures, 1)
    });
    report_failing(&paused, failures, path, "retrykit-core", || {
        common::core_flaky(loop_policy, failures, 1)
    });
    report_failing(&paused, failures, path, "backon", || {
        common::backon_flaky(failures, 1)
    });
    report_failing(&paused, failures, path, "tokio-retry2", || {
        common::tokio_retry2_flaky(failures, 1)
    });
    report_failing(&paused, failures, path, "tryhard", || {
        common::tryhard_flaky(failures, 1)
    });
}

/// Allocations per call when the first attempt fails, each call driven by
/// `block_on` on the paused runtime.
fn report_failing<'a, Fut>(
    paused: &tokio::runtime::Runtime,
    failures: &Cell<u32>,
    path: &str,
    name: &str,
    make: impl Fn() -> Fut,
) where
    Fut: Future<Output = Result<u64, Flaky>> + 'a,
{
    let call = || {
        failures.set(1);
        assert_eq!(paused.block_on(make()), Ok(2));
    };
    call();
    let info = allocation_counter::measure(|| {
        for _ in 0..CALLS {
            call();
        }
    });
    println!(
        "| {path} | {name} | {} | {} |",
        per_call(info.count_total),
        per_call(info.bytes_total)
    );
}

fn per_call(total: u64) -> String {
    format!("{:.2}", total as f64 / CALLS as f64)
}

/// A call in the scale run: fails its first attempt, succeeds its second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ScaleError {
    id: u32,
}

impl Classify for ScaleError {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// When each call was scheduled to wake and how late it woke, in
/// nanoseconds from `epoch`; 0 means "not yet". One runtime thread touches
/// it, so a thread-local needs no lock.
struct Timeline {
    epoch: Instant,
    scheduled: Vec<u64>,
    late: Vec<u64>,
    /// When the last first attempt failed: the time to start every call.
    started_all: u64,
}

thread_local! {
    static TIMELINE: RefCell<Timeline> = RefCell::new(Timeline {
        epoch: Instant::now(),
        scheduled: Vec::new(),
        late: Vec::new(),
        started_all: 0,
    });
}

fn since_epoch(epoch: Instant) -> u64 {
    // At least 1 so that 0 can mean "not yet".
    u64::try_from(epoch.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// `on_retry`: the wake-up is due `wait` from now.
fn record_schedule(event: &RetryEvent<'_, ScaleError>) {
    TIMELINE.with_borrow_mut(|t| {
        let due = since_epoch(t.epoch).saturating_add(event.wait.as_nanos() as u64);
        t.scheduled[event.error.id as usize] = due;
    });
}

/// The first attempt fails; the second records how late it began.
fn attempt(id: u32) -> Result<u32, ScaleError> {
    TIMELINE.with_borrow_mut(|t| {
        let due = t.scheduled[id as usize];
        if due == 0 {
            t.started_all = since_epoch(t.epoch);
            return Err(ScaleError { id });
        }
        t.late[id as usize] = since_epoch(t.epoch).saturating_sub(due);
        Ok(id)
    })
}

#[retry(policy = "outbox", on_retry = record_schedule)]
async fn scaled(id: u32) -> Result<u32, ScaleError> {
    attempt(id)
}

/// The limit: the same schedule written by hand on tokio's timer.
async fn by_hand(id: u32, policy: &'static Policy) -> Result<u32, ScaleError> {
    if let Err(e) = attempt(id) {
        let wait = retrykit_core::kernel::next_delay(policy, 0, Duration::ZERO);
        record_schedule(&RetryEvent::new(1, &e, wait));
        tokio::time::sleep(wait).await;
    }
    attempt(id)
}

fn scale_run(policy: &Policy) {
    let policy: &'static Policy = Box::leak(Box::new(policy.clone()));
    println!(
        "\n| {IN_FLIGHT} calls retrying at once | peak heap per call | future bytes | time to start all (per call) | wake-up late p50 | p99 | max |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    scale_one("by hand on tokio's timer (limit)", |id| by_hand(id, policy));
    scale_one("`#[retry]`", scaled);
}

fn scale_one<Fut>(name: &str, make: impl Fn(u32) -> Fut)
where
    Fut: Future<Output = Result<u32, ScaleError>> + Send + 'static,
{
    let future_bytes = size_of_val(&make(0));
    let n = IN_FLIGHT as usize;
    TIMELINE.with_borrow_mut(|t| {
        t.epoch = Instant::now();
        t.scheduled = vec![0; n];
        t.late = vec![0; n];
        t.started_all = 0;
    });
    let runtime = common::runtime();
    let info = allocation_counter::measure(|| {
        runtime.block_on(async {
            let mut handles = Vec::with_capacity(n);
            for id in 0..IN_FLIGHT {
                handles.push(tokio::spawn(make(id)));
            }
            for handle in handles {
                let out = handle.await.expect("the task ran");
                assert!(out.is_ok(), "every call succeeds on its second attempt");
            }
        });
    });
    drop(runtime);
    let (mut late, started_all) =
        TIMELINE.with_borrow_mut(|t| (std::mem::take(&mut t.late), t.started_all));
    late.sort_unstable();
    let pick = |q: f64| Duration::from_nanos(late[((n - 1) as f64 * q) as usize]);
    let start = Duration::from_nanos(started_all);
    println!(
        "| {name} | {} B | {future_bytes} B | {start:.0?} ({:.2?}) | {:.2?} | {:.2?} | {:.2?} |",
        info.bytes_max / u64::from(IN_FLIGHT),
        start / IN_FLIGHT,
        pick(0.5),
        pick(0.99),
        pick(1.0),
    );
}
