//! Instructions and atomic operations per call, counted by Callgrind,
//! checked against a committed budget: the success path, one failure on tokio's timer, the loop without
//! a timer, the next delay per jitter mode, registry lookups and what each
//! policy feature adds to `Retry::call`, for the same contenders as
//! `compare` (the functions of `common`).
//!
//! `cargo bench -p examples --bench instructions` runs it. Run normally, the
//! binary re-executes itself under `valgrind --tool=callgrind` twice per row,
//! once with `N` and once with `2N` calls (the environment variables
//! [`ROW_VAR`] and [`ITERS_VAR`] tell the child which), and reads each run's
//! totals from its Callgrind output file: instructions (`Ir`) and, with
//! `--collect-bus=yes`, global bus events (`Ge`: the locked
//! read-modify-writes, `lock`-prefixed or `xchg` with memory, that make
//! reference counts, locks and atomic counters). A row's figures are
//! `(total(2N) - total(N)) / N`: start-up, setup and anything done once (the
//! runtime, the registry, a first call's lazy state) are the same in both
//! runs and cancel, so what is left is the steady-state cost of one call and
//! its loop iteration. For the same binary the counts repeat exactly.
//!
//! It prints a Markdown table (row, instructions and atomics per call, ratio
//! to the plain call, budget, verdict) and exits non-zero when one of our
//! rows is over either budget in `benches/instructions.budget`, or has none there, or the file
//! names a row that no longer exists. With [`WRITE_BUDGET_VAR`] set to `1` it
//! rewrites that file from this run instead (each of our rows' instructions
//! plus 10%, their atomics as counted).

mod common;

use common::{Flaky, poll_once};
use retrykit_core::{CircuitBreaker, Jitter, Policy, PolicyBuilder, RetryBudget, registry};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// In a child run: the name of the row to count.
const ROW_VAR: &str = "INSTRUCTIONS_ROW";
/// In a child run: how many calls to make.
const ITERS_VAR: &str = "INSTRUCTIONS_ITERS";
/// Set to `1` to rewrite the budget file from this run's counts.
const WRITE_BUDGET_VAR: &str = "INSTRUCTIONS_WRITE_BUDGET";
/// The valgrind to run (`valgrind` from `PATH` when unset).
const VALGRIND_VAR: &str = "VALGRIND";
/// Calls in the shorter of a row's two runs (the longer makes twice as many).
const N: u64 = 2_000;
/// Headroom the budget file gives each of our rows over this run's count.
const HEADROOM: f64 = 0.10;
/// The argument every contender is called with.
const ARG: u64 = 41;

/// Whose cost a row is, and so whether it is budgeted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A limit (the plain call, the loop by hand): reported, not budgeted.
    Limit,
    /// retrykit-core or `#[retry]`: budgeted.
    Ours,
    /// backon, tokio-retry2, tryhard: reported, not budgeted.
    Peer,
}

/// One row of the table: its name, whose it is, and its counted loop.
struct Row {
    name: &'static str,
    kind: Kind,
    run: fn(&Setup, u64),
}

/// Everything made before the counted loop, the same in every child run
/// whatever its row and call count.
struct Setup {
    runtime: Runtime,
    /// `Policy::default()`, as `compare`'s success group uses.
    core: Policy,
    /// The default policy with a 5 s per-attempt timeout.
    timeout: Policy,
    /// The default policy with a 30 s deadline.
    deadline: Policy,
    /// The default policy with a retry budget.
    budgeted: Policy,
    /// The default policy with a circuit breaker (closed).
    breaker: Policy,
    /// The zero-wait loop policy of the one-failure rows.
    zero_wait: Policy,
    /// The same with full jitter.
    zero_wait_jittered: Policy,
    /// One policy per jitter mode, for the delay rows.
    jitters: [Policy; 5],
    /// How many more times the scripted call fails.
    failures: Cell<u32>,
}

impl Setup {
    fn new() -> Self {
        common::install_policies(Policy::default());
        let core = Policy::default();
        let with = |f: fn(PolicyBuilder) -> PolicyBuilder| f(core.to_builder()).build().unwrap();
        let timeout = with(|b| b.attempt_timeout(Some(Duration::from_secs(5))));
        let deadline = with(|b| b.deadline(Some(Duration::from_secs(30))));
        let budget = RetryBudget::builder().build().expect("a valid budget");
        let budgeted = core
            .to_builder()
            .budget(Some(Arc::new(budget)))
            .build()
            .expect("a valid budgeted policy");
        let breaker =
            with(|b| b.breaker(Some(Arc::new(CircuitBreaker::builder().build().unwrap()))));
        let jitter = |jitter| {
            Policy::builder()
                .jitter(jitter)
                .build()
                .expect("a valid policy")
        };
        Setup {
            runtime: common::paused_runtime(),
            timeout,
            deadline,
            budgeted,
            breaker,
            core,
            zero_wait: common::loop_policy(),
            zero_wait_jittered: common::jittered_loop_policy(),
            jitters: [
                jitter(Jitter::None),
                jitter(Jitter::Full),
                jitter(Jitter::Equal),
                jitter(Jitter::Decorrelated),
                jitter(Jitter::Proportional(0.2)),
            ],
            failures: Cell::new(0),
        }
    }
}

/// The counted loop of a success-path row: `iters` calls, each one poll.
#[inline(always)]
fn repeat(iters: u64, mut call: impl FnMut() -> Result<u64, Flaky>) {
    for _ in 0..iters {
        black_box(call()).expect("the call succeeds");
    }
}

/// The counted loop of a one-failure row with no runtime: each call is
/// scripted to fail once, then succeed.
#[inline(always)]
fn scripted(setup: &Setup, iters: u64, mut call: impl FnMut() -> Result<u64, Flaky>) {
    for _ in 0..iters {
        setup.failures.set(1);
        let out = black_box(call());
        assert_eq!(out, Ok(ARG + 1), "the second attempt succeeds");
    }
}

/// The counted loop of a one-failure row on tokio's paused timer: all calls
/// inside one `block_on` (the runtime is entered once per run, so it cancels).
fn in_runtime<Fut: Future<Output = Result<u64, Flaky>>>(
    setup: &Setup,
    iters: u64,
    call: impl Fn() -> Fut,
) {
    setup.runtime.block_on(async {
        for _ in 0..iters {
            setup.failures.set(1);
            let out = black_box(call().await);
            assert_eq!(out, Ok(ARG + 1), "the second attempt succeeds");
        }
    });
}

/// The counted loop of a delay row: the wait before retry 3 (0-based).
#[inline(always)]
fn delay(policy: &Policy, iters: u64) {
    let prev = Duration::from_millis(400);
    for _ in 0..iters {
        black_box(retrykit_core::kernel::next_delay(
            policy,
            black_box(3),
            black_box(prev),
        ));
    }
}

/// Every row, in table order. The first is the plain call, the ratios'
/// denominator.
const ROWS: &[Row] = &[
    Row {
        name: "success/plain",
        kind: Kind::Limit,
        run: |_, n| repeat(n, || poll_once(common::fetch(black_box(ARG)))),
    },
    Row {
        name: "success/annotated",
        kind: Kind::Ours,
        run: |_, n| repeat(n, || poll_once(common::annotated(black_box(ARG)))),
    },
    Row {
        name: "success/retry-core",
        kind: Kind::Ours,
        run: |s, n| repeat(n, || poll_once(common::core(&s.core, black_box(ARG)))),
    },
    Row {
        name: "success/backon",
        kind: Kind::Peer,
        run: |_, n| repeat(n, || poll_once(common::backon(black_box(ARG)))),
    },
    Row {
        name: "success/tokio-retry2",
        kind: Kind::Peer,
        run: |_, n| repeat(n, || poll_once(common::tokio_retry2(black_box(ARG)))),
    },
    Row {
        name: "success/tryhard",
        kind: Kind::Peer,
        run: |_, n| repeat(n, || poll_once(common::tryhard(black_box(ARG)))),
    },
    Row {
        name: "success/by-hand-tokio-timeout",
        kind: Kind::Limit,
        run: |_, n| repeat(n, || poll_once(common::by_hand_timeout(black_box(ARG)))),
    },
    Row {
        name: "success/retry-core-attempt-timeout",
        kind: Kind::Ours,
        run: |s, n| repeat(n, || poll_once(common::core(&s.timeout, black_box(ARG)))),
    },
    Row {
        name: "success/retry-core-deadline",
        kind: Kind::Ours,
        run: |s, n| repeat(n, || poll_once(common::core(&s.deadline, black_box(ARG)))),
    },
    Row {
        name: "success/retry-core-budget",
        kind: Kind::Ours,
        run: |s, n| repeat(n, || poll_once(common::core(&s.budgeted, black_box(ARG)))),
    },
    Row {
        name: "success/retry-core-breaker",
        kind: Kind::Ours,
        run: |s, n| repeat(n, || poll_once(common::core(&s.breaker, black_box(ARG)))),
    },
    Row {
        name: "one_failure_in_runtime/by-hand",
        kind: Kind::Limit,
        run: |s, n| in_runtime(s, n, || common::by_hand_flaky(&s.failures, black_box(ARG))),
    },
    Row {
        name: "one_failure_in_runtime/annotated",
        kind: Kind::Ours,
        run: |s, n| {
            in_runtime(s, n, || {
                common::annotated_flaky(&s.failures, black_box(ARG))
            })
        },
    },
    Row {
        name: "one_failure_in_runtime/retry-core",
        kind: Kind::Ours,
        run: |s, n| {
            in_runtime(s, n, || {
                common::core_flaky(&s.zero_wait, &s.failures, black_box(ARG))
            })
        },
    },
    Row {
        name: "one_failure_in_runtime/retry-core-full-jitter",
        kind: Kind::Ours,
        run: |s, n| {
            in_runtime(s, n, || {
                common::core_flaky(&s.zero_wait_jittered, &s.failures, black_box(ARG))
            })
        },
    },
    Row {
        name: "one_failure_in_runtime/backon",
        kind: Kind::Peer,
        run: |s, n| in_runtime(s, n, || common::backon_flaky(&s.failures, black_box(ARG))),
    },
    Row {
        name: "one_failure_in_runtime/tokio-retry2",
        kind: Kind::Peer,
        run: |s, n| {
            in_runtime(s, n, || {
                common::tokio_retry2_flaky(&s.failures, black_box(ARG))
            })
        },
    },
    Row {
        name: "one_failure_in_runtime/tryhard",
        kind: Kind::Peer,
        run: |s, n| in_runtime(s, n, || common::tryhard_flaky(&s.failures, black_box(ARG))),
    },
    Row {
        name: "one_failure_no_timer/by-hand",
        kind: Kind::Limit,
        run: |s, n| {
            scripted(s, n, || {
                poll_once(common::by_hand_flaky_no_timer(&s.failures, black_box(ARG)))
            })
        },
    },
    Row {
        name: "one_failure_no_timer/retry-core",
        kind: Kind::Ours,
        run: |s, n| {
            scripted(s, n, || {
                poll_once(common::core_flaky_no_timer(
                    &s.zero_wait,
                    &s.failures,
                    black_box(ARG),
                ))
            })
        },
    },
    Row {
        name: "one_failure_no_timer/backon",
        kind: Kind::Peer,
        run: |s, n| {
            scripted(s, n, || {
                poll_once(common::backon_flaky_no_timer(&s.failures, black_box(ARG)))
            })
        },
    },
    Row {
        name: "delay/none",
        kind: Kind::Ours,
        run: |s, n| delay(&s.jitters[0], n),
    },
    Row {
        name: "delay/full",
        kind: Kind::Ours,
        run: |s, n| delay(&s.jitters[1], n),
    },
    Row {
        name: "delay/equal",
        kind: Kind::Ours,
        run: |s, n| delay(&s.jitters[2], n),
    },
    Row {
        name: "delay/decorrelated",
        kind: Kind::Ours,
        run: |s, n| delay(&s.jitters[3], n),
    },
    Row {
        name: "delay/proportional",
        kind: Kind::Ours,
        run: |s, n| delay(&s.jitters[4], n),
    },
    Row {
        name: "registry/lookup",
        kind: Kind::Ours,
        run: |_, n| {
            for _ in 0..n {
                black_box(registry::policy(black_box(common::LOOP_POLICY)).is_some());
            }
        },
    },
    Row {
        name: "registry/with-policy",
        kind: Kind::Ours,
        run: |_, n| {
            for _ in 0..n {
                black_box(registry::with_policy(black_box(common::LOOP_POLICY), |p| {
                    p.is_some()
                }));
            }
        },
    },
];

fn main() -> ExitCode {
    match std::env::var(ROW_VAR) {
        Ok(row) => child(&row),
        Err(_) => parent(),
    }
}

/// A child run under valgrind: the setup, then `INSTRUCTIONS_ITERS` calls of
/// the named row.
fn child(name: &str) -> ExitCode {
    let Some(row) = ROWS.iter().find(|r| r.name == name) else {
        eprintln!("instructions: no row named {name:?}");
        return ExitCode::FAILURE;
    };
    let iters: u64 = match std::env::var(ITERS_VAR).map(|v| v.parse()) {
        Ok(Ok(iters)) => iters,
        _ => {
            eprintln!("instructions: {ITERS_VAR} must be a call count");
            return ExitCode::FAILURE;
        }
    };
    let setup = Setup::new();
    // Entered for tokio's timer context (the timeout, deadline and budget
    // rows read it), as `compare` does.
    let _timer_context = setup.runtime.enter();
    (row.run)(&setup, iters);
    ExitCode::SUCCESS
}

/// One row's result.
struct Counted {
    row: &'static Row,
    /// Instructions per call.
    per_call: f64,
    /// Atomic read-modify-writes per call (Callgrind's `Ge`).
    atomics: f64,
}

/// One child run's totals: instructions and global bus events.
#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    instructions: u64,
    atomics: u64,
}

/// Counts every row under valgrind, prints the table, then checks the
/// budget (or rewrites it).
fn parent() -> ExitCode {
    let started = Instant::now();
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("instructions: cannot find this binary: {e}");
            return ExitCode::FAILURE;
        }
    };
    let scratch = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("instructions: cannot make a temporary directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let counted = match count_all(&exe, scratch.path()) {
        Ok(counted) => counted,
        Err(e) => {
            eprintln!("instructions: {e}");
            return ExitCode::FAILURE;
        }
    };
    let path = budget_path();
    let writing = std::env::var(WRITE_BUDGET_VAR).is_ok_and(|v| v == "1");
    let mut problems = Vec::new();
    let budget = if writing {
        let budget = budget_from(&counted);
        if let Err(e) = std::fs::write(&path, render_budget(&budget)) {
            eprintln!("instructions: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("instructions: wrote {}", path.display());
        budget
    } else {
        std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| parse_budget(&text))
            .unwrap_or_else(|e| {
                problems.push(format!("cannot read the budget: {e}"));
                Budget::new()
            })
    };
    problems.extend(print_table(&counted, &budget));
    println!(
        "\n{} rows, {N} and {} calls each, in {:.1} s",
        counted.len(),
        2 * N,
        started.elapsed().as_secs_f64()
    );
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "\ninstructions: {} problem(s) with the budget in {}:",
            problems.len(),
            path.display()
        );
        for problem in &problems {
            eprintln!("  - {problem}");
        }
        eprintln!(
            "A regression is fixed in the code. Raising a budget (or regenerating the file with \
             {WRITE_BUDGET_VAR}=1) takes a commit whose message says why."
        );
        ExitCode::FAILURE
    }
}

/// The committed budget file.
fn budget_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/instructions.budget")
}

/// Runs every row's two child runs, two at a time (the machine's two cores;
/// instruction counts do not depend on what else runs).
fn count_all(exe: &Path, scratch: &Path) -> Result<Vec<Counted>, String> {
    let jobs: Vec<(usize, u64)> = (0..ROWS.len()).flat_map(|i| [(i, N), (i, 2 * N)]).collect();
    let totals = Mutex::new(vec![[Totals::default(); 2]; ROWS.len()]);
    let errors = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&(i, iters)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    match run_child(exe, scratch, ROWS[i].name, iters) {
                        Ok(total) => {
                            totals.lock().unwrap()[i][usize::from(iters != N)] = total;
                        }
                        Err(e) => errors.lock().unwrap().push(e),
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let totals = totals.into_inner().unwrap();
    ROWS.iter()
        .zip(totals)
        .map(|(row, [once, twice])| {
            let extra = |what: &str, once: u64, twice: u64| {
                twice.checked_sub(once).ok_or_else(|| {
                    format!(
                        "{}: {} calls counted fewer {what} ({twice}) than {N} ({once})",
                        row.name,
                        2 * N
                    )
                })
            };
            let instructions = extra("instructions", once.instructions, twice.instructions)?;
            let atomics = extra("atomics", once.atomics, twice.atomics)?;
            Ok(Counted {
                row,
                per_call: instructions as f64 / N as f64,
                atomics: atomics as f64 / N as f64,
            })
        })
        .collect()
}

/// One child run under Callgrind: the program's total instructions and
/// global bus events (atomic read-modify-writes).
fn run_child(exe: &Path, scratch: &Path, row: &str, iters: u64) -> Result<Totals, String> {
    let out = scratch.join(format!("{}-{iters}.callgrind", row.replace('/', "_")));
    let valgrind = std::env::var_os(VALGRIND_VAR).unwrap_or_else(|| "valgrind".into());
    let output = Command::new(&valgrind)
        .arg("--tool=callgrind")
        .arg("--quiet")
        .arg("--collect-bus=yes")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .env(ROW_VAR, row)
        .env(ITERS_VAR, iters.to_string())
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} (install valgrind, or point {VALGRIND_VAR} at it): {e}",
                Path::new(&valgrind).display()
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "{row} ({iters} calls) failed under valgrind ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = std::fs::read_to_string(&out)
        .map_err(|e| format!("{row}: cannot read {}: {e}", out.display()))?;
    let line = |key: &str| text.lines().find_map(|line| line.strip_prefix(key));
    let events: Vec<&str> = line("events:").map_or(vec![], |l| l.split_whitespace().collect());
    let numbers: Vec<u64> = line("totals:")
        .or_else(|| line("summary:"))
        .map_or(vec![], |l| {
            l.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        });
    let total = |event: &str| {
        let at = events.iter().position(|e| *e == event)?;
        numbers.get(at).copied()
    };
    match (total("Ir"), total("Ge")) {
        (Some(instructions), Some(atomics)) => Ok(Totals {
            instructions,
            atomics,
        }),
        _ => Err(format!(
            "{row}: no Ir and Ge totals in {} (events: {events:?})",
            out.display()
        )),
    }
}

/// A row's budget: instructions and atomic read-modify-writes per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Allowed {
    instructions: u64,
    atomics: u64,
}

/// Row name to its budget.
type Budget = BTreeMap<String, Allowed>;

/// This run's counts plus the headroom (instructions) or as counted, up to
/// the next whole one (atomics), for our rows.
fn budget_from(counted: &[Counted]) -> Budget {
    counted
        .iter()
        .filter(|c| c.row.kind == Kind::Ours)
        .map(|c| {
            let allowed = Allowed {
                instructions: (c.per_call * (1.0 + HEADROOM)).ceil() as u64,
                atomics: c.atomics.ceil() as u64,
            };
            (c.row.name.to_owned(), allowed)
        })
        .collect()
}

/// The header of the budget file, each line a comment.
const BUDGET_HEADER: &str = "\
# Instructions and atomic read-modify-writes per call that
# `cargo bench -p examples --bench instructions` allows each of our rows
# (retrykit-core and #[retry]): the instructions Callgrind counted when this
# file was last written plus 10%, and the atomics (Callgrind's global bus
# events, `Ge`) as counted, rounded up: they are exact, so one more is a
# regression. The bench fails when a row is over either, when one of our
# rows has no line here, or when a line names a row that no longer exists.
# Peers (backon, tokio-retry2, tryhard) and the limits (the plain call, the
# loops by hand) are reported, not budgeted.
#
# Format: `row = instructions atomics`, one a line; `#` starts a comment.
# Regenerate from a run of today's code with
#   INSTRUCTIONS_WRITE_BUDGET=1 cargo bench -p examples --bench instructions
# Raising a budget takes a commit whose message says why.
";

fn render_budget(budget: &Budget) -> String {
    let mut text = BUDGET_HEADER.to_owned();
    text.push('\n');
    for row in ROWS.iter().filter(|r| r.kind == Kind::Ours) {
        if let Some(allowed) = budget.get(row.name) {
            text.push_str(&format!(
                "{} = {} {}\n",
                row.name, allowed.instructions, allowed.atomics
            ));
        }
    }
    text
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    let mut budget = Budget::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let parsed = line.split_once('=').and_then(|(row, counts)| {
            let mut counts = counts.split_whitespace().map(|n| n.parse::<u64>().ok());
            let allowed = Allowed {
                instructions: counts.next()??,
                atomics: counts.next()??,
            };
            counts
                .next()
                .is_none()
                .then(|| (row.trim().to_owned(), allowed))
        });
        let Some((row, allowed)) = parsed else {
            return Err(format!(
                "line {}: expected `row = instructions atomics` (two whole numbers), found {line:?}",
                number + 1
            ));
        };
        if budget.insert(row.clone(), allowed).is_some() {
            return Err(format!("line {}: {row} appears twice", number + 1));
        }
    }
    Ok(budget)
}

/// Prints the Markdown table; returns each problem with the budget.
fn print_table(counted: &[Counted], budget: &Budget) -> Vec<String> {
    let plain = counted
        .iter()
        .find(|c| c.row.name == "success/plain")
        .map_or(f64::NAN, |c| c.per_call);
    let mut problems = Vec::new();
    println!(
        "\n| row | instructions per call | ratio to plain | atomics per call | budget | verdict |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for c in counted {
        let ratio = if plain > 0.0 {
            format!("{:.1}×", c.per_call / plain)
        } else {
            "—".to_owned()
        };
        let (limit, verdict) = match (c.row.kind, budget.get(c.row.name)) {
            (Kind::Ours, Some(&allowed)) => {
                let mut over = Vec::new();
                if c.per_call > allowed.instructions as f64 {
                    let by = c.per_call - allowed.instructions as f64;
                    let percent = 100.0 * by / allowed.instructions as f64;
                    over.push(format!("over by {by:.1} instructions (+{percent:.1}%)"));
                }
                if c.atomics > allowed.atomics as f64 {
                    over.push(format!(
                        "over by {:.2} atomics",
                        c.atomics - allowed.atomics as f64
                    ));
                }
                for what in &over {
                    problems.push(format!(
                        "{} is {what} per call ({:.1} instructions and {:.2} atomics against {} and {})",
                        c.row.name, c.per_call, c.atomics, allowed.instructions, allowed.atomics
                    ));
                }
                let verdict = match over.is_empty() {
                    true => "ok".to_owned(),
                    false => format!("**{}**", over.join(", ")),
                };
                (
                    format!("{} / {}", allowed.instructions, allowed.atomics),
                    verdict,
                )
            }
            (Kind::Ours, None) => {
                problems.push(format!(
                    "{} has no budget ({:.1} instructions and {:.2} atomics per call this run)",
                    c.row.name, c.per_call, c.atomics
                ));
                ("—".to_owned(), "**no budget**".to_owned())
            }
            (Kind::Limit, _) => ("—".to_owned(), "limit, reported".to_owned()),
            (Kind::Peer, _) => ("—".to_owned(), "peer, reported".to_owned()),
        };
        println!(
            "| {} | {:.1} | {ratio} | {:.2} | {limit} | {verdict} |",
            c.row.name, c.per_call, c.atomics
        );
    }
    for row in budget.keys() {
        let ours = ROWS.iter().any(|r| r.name == row && r.kind == Kind::Ours);
        if !ours {
            problems.push(format!(
                "the budget names {row}, which is not one of our rows (remove its line)"
            ));
        }
    }
    problems
}
