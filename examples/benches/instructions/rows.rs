//! The rows: what each one's counted loop calls, and the setup made before
//! it (the same in every child run, so it cancels).

use crate::ARG;
use crate::common::{self, Flaky, poll_once};
use retrykit_core::{CircuitBreaker, Jitter, Policy, PolicyBuilder, RetryBudget, registry};
use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;

/// Whose cost a row is, as the report labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A limit (the plain call, the loop by hand).
    Limit,
    /// retrykit-core or `#[retry]`.
    Ours,
    /// backon, tokio-retry2, tryhard.
    Peer,
}

/// One row of the table: its name, whose it is, and its counted loop.
pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) run: fn(&Setup, u64),
}

/// Everything made before the counted loop, the same in every child run
/// whatever its row and call count.
pub(crate) struct Setup {
    pub(crate) runtime: Runtime,
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
    pub(crate) fn new() -> Self {
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

/// Whether row `name` is counted with no tokio runtime current (the child
/// enters the paused one for every other row). This binary has tokio's
/// `test-util` (examples' dev-dependencies turn it on for the paused
/// clock), under which `tokio::time::Instant::now()` inside the paused
/// runtime takes the runtime's clock lock (4 atomics); with no runtime
/// current it is a thread-local check and std's clock. A user's build has
/// no `test-util`: there it is std's clock alone (the `clock/` rows count
/// all three). So the `Retry::call` success rows, whose policies read the
/// clock, pay about what it costs a user (a little more: the check). A
/// `#[retry]` fn needs the runtime (its site checks for tokio's timer at
/// its first call), and its success reads no clock.
pub(crate) fn off_runtime(name: &str) -> bool {
    name.starts_with("success/retry-core")
        || name == "clock/std"
        || name == "clock/tokio-no-runtime"
}

/// The counted loop of a clock row: `n` reads of `now`.
#[inline(always)]
fn reads<T>(n: u64, now: impl Fn() -> T) {
    for _ in 0..n {
        black_box(now());
    }
}

/// The counted loop of a `Retry::call` success row under `policy`.
#[inline(always)]
fn core_success(policy: &Policy, n: u64) {
    repeat(n, || poll_once(common::core(policy, black_box(ARG))));
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
pub(crate) const ROWS: &[Row] = &[
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
        run: |s, n| core_success(&s.core, n),
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
        run: |s, n| core_success(&s.timeout, n),
    },
    Row {
        name: "success/retry-core-deadline",
        kind: Kind::Ours,
        run: |s, n| core_success(&s.deadline, n),
    },
    Row {
        name: "success/retry-core-budget",
        kind: Kind::Ours,
        run: |s, n| core_success(&s.budgeted, n),
    },
    Row {
        name: "success/retry-core-breaker",
        kind: Kind::Ours,
        run: |s, n| core_success(&s.breaker, n),
    },
    Row {
        name: "clock/std",
        kind: Kind::Limit,
        run: |_, n| reads(n, std::time::Instant::now),
    },
    Row {
        name: "clock/tokio-no-runtime",
        kind: Kind::Limit,
        run: |_, n| reads(n, tokio::time::Instant::now),
    },
    Row {
        name: "clock/tokio-paused-runtime",
        kind: Kind::Limit,
        run: |_, n| reads(n, tokio::time::Instant::now),
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
    crate::grpc::TONIC_ROW,
    crate::grpc::LAYER_ROW,
];

/// Prints what the closed breaker adds to `Retry::call`'s success.
pub(crate) fn report_breaker(counted: &[crate::Counted]) -> Option<()> {
    let find = |name: &str| counted.iter().find(|c| c.row.name == name);
    let (alone, guarded) = (
        find("success/retry-core")?,
        find("success/retry-core-breaker")?,
    );
    println!(
        "\nCircuit breaker, closed: {:+.1} instructions and {:+.2} atomics per success",
        guarded.per_call - alone.per_call,
        guarded.atomics - alone.atomics
    );
    Some(())
}

/// The atomic read-modify-writes per call of the plain success path.
pub(crate) fn plain_success_atomics(counted: &[crate::Counted]) -> Option<f64> {
    let row = counted
        .iter()
        .find(|c| c.row.name == "success/retry-core")?;
    Some(row.atomics)
}
