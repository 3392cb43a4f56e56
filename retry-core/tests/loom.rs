//! Model checks of the window budget's lock-free counters with loom, over
//! every interleaving of the threads in each model (the hedge cap is such a
//! budget too). Built only with `--cfg loom`:
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p retrykit-core --release --test loom`
//!
//! (`.ci/run` runs it, bounded by `LOOM_MAX_PREEMPTIONS`.)
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use retrykit_core::RetryBudget;
use std::time::{Duration, Instant};

/// A budget that allows one retry for every two calls, and no floor.
fn half() -> RetryBudget {
    RetryBudget::builder()
        .ratio(0.5)
        .min_per_sec(0.0)
        .window(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// Two hedges (or retries) racing for the last share: one gets it. Before
/// the fix both passed the check before either counted its withdrawal.
#[test]
fn two_withdrawals_racing_for_the_last_share_get_it_once() {
    loom::model(|| {
        let budget = Arc::new(half());
        let now = Instant::now();
        budget.deposit(now);
        budget.deposit(now);
        let other = {
            let budget = budget.clone();
            thread::spawn(move || budget.try_withdraw(now))
        };
        let mine = budget.try_withdraw(now);
        let theirs = other.join().unwrap();
        assert!(
            !(mine && theirs),
            "the one retry the window allows was taken twice"
        );
        assert!(mine || theirs, "neither got the retry the window allows");
        assert_eq!(budget.totals(now), (2, 1));
    });
}

/// A deposit racing a withdrawal in the same slot: neither update is lost,
/// and the withdrawal is granted exactly when the deposit it needs is seen.
#[test]
fn a_deposit_racing_a_withdrawal_loses_neither() {
    loom::model(|| {
        let budget = Arc::new(half());
        let now = Instant::now();
        budget.deposit(now);
        let depositor = {
            let budget = budget.clone();
            thread::spawn(move || budget.deposit(now))
        };
        let granted = budget.try_withdraw(now);
        depositor.join().unwrap();
        let (calls, retries) = budget.totals(now);
        assert_eq!(calls, 2, "a deposit was lost");
        assert_eq!(
            retries,
            u64::from(granted),
            "a withdrawal was lost or doubled"
        );
    });
}
