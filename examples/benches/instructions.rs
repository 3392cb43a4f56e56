//! Instructions and atomic operations per call, counted by Callgrind, as
//! a report: the success path, one failure on tokio's timer, the loop without
//! a timer, the next delay per jitter mode, registry lookups and what each
//! policy feature adds to `Retry::call`, for the same contenders as
//! `compare` (the functions of `common`); and one gRPC call through a tonic
//! channel alone and through the layer's gRPC mode (`instructions/grpc.rs`),
//! with what the layer adds to it.
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
//! to the plain call) and what the closed breaker and the gRPC layer add.
//! Instruction counts are a report, never a gate. It exits non-zero only
//! when the plain success path (`success/retry-core`) takes an atomic
//! read-modify-write (a reference count, a lock, a shared counter): a cost
//! every call on every core would pay.

mod common;
#[path = "instructions/grpc.rs"]
mod grpc;
#[path = "instructions/rows.rs"]
mod rows;
#[path = "instructions/table.rs"]
mod table;

use rows::{ROWS, Row, Setup};
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use table::print_table;

/// In a child run: the name of the row to count.
const ROW_VAR: &str = "INSTRUCTIONS_ROW";
/// In a child run: how many calls to make.
const ITERS_VAR: &str = "INSTRUCTIONS_ITERS";
/// The valgrind to run (`valgrind` from `PATH` when unset).
const VALGRIND_VAR: &str = "VALGRIND";
/// Calls in the shorter of a row's two runs (the longer makes twice as many).
const N: u64 = 2_000;
/// The argument every contender is called with.
const ARG: u64 = 41;

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
    // Entered for tokio's timer context, as `compare` does, except for the
    // rows counted as a user's build would read the clock (see
    // `rows::off_runtime`).
    let _timer_context = (!rows::off_runtime(name)).then(|| setup.runtime.enter());
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

/// Counts every row under valgrind, prints the report, and checks the
/// plain success path takes no atomic read-modify-write.
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
    print_table(&counted);
    grpc::report(&counted);
    rows::report_breaker(&counted);
    println!(
        "\n{} rows, {N} and {} calls each, in {:.1} s",
        counted.len(),
        2 * N,
        started.elapsed().as_secs_f64()
    );
    match rows::plain_success_atomics(&counted) {
        Some(atomics) if atomics >= 0.5 => {
            eprintln!(
                "\ninstructions: success/retry-core takes {atomics:.2} atomic read-modify-writes per \
                 call; the plain success path takes none (no reference count, no lock, no shared \
                 counter). Find what the change added to it."
            );
            ExitCode::FAILURE
        }
        Some(_) => ExitCode::SUCCESS,
        None => {
            eprintln!("instructions: no success/retry-core row was counted");
            ExitCode::FAILURE
        }
    }
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
