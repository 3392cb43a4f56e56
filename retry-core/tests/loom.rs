//! Model checks with loom, over every interleaving of the threads in each
//! model (bounded by `LOOM_MAX_PREEMPTIONS`): the sliding window's
//! lock-free counters under a retry budget and under a policy's cap on
//! hedges, and a call site's policy cache racing a reload of the registry.
//! Built only with `--cfg loom`:
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p retrykit-core --release --test loom`
//!
//! (`.ci/run` runs it, bounded by `LOOM_MAX_PREEMPTIONS`.)
//!
//! A note on writing these models: loom remembers one last access per
//! atomic, so when the first thread to run only reads a word that a later
//! thread reads and then writes, the later thread's own read hides the race
//! and loom tries one interleaving. So a model whose threads read and
//! write different words runs the reader on the spawned thread (it runs
//! last) and the writer on the main thread. `LOOM_LOG=info` prints how
//! many interleavings each model took: none here takes only one.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use retrykit_core::__private::site::{CallSite, PolicyCache};
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::kernel::Admission;
use retrykit_core::{Policy, Registry, RetryBudget, registry};
use std::time::{Duration, Instant};

/// The window's length: a day, cut into ten slots of 2.4 hours, so that the
/// instants a model takes a few microseconds after building a budget fall
/// in its first slot.
const DAY: Duration = Duration::from_secs(86_400);

/// A budget that allows one retry for every two calls, and no floor.
fn half() -> RetryBudget {
    RetryBudget::builder()
        .ratio(0.5)
        .min_per_sec(0.0)
        .window(DAY)
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
        // The withdrawal on the spawned thread (see the module's note).
        let withdrawal = {
            let budget = budget.clone();
            thread::spawn(move || budget.try_withdraw(now))
        };
        budget.deposit(now);
        let granted = withdrawal.join().unwrap();
        let (calls, retries) = budget.totals(now);
        assert_eq!(calls, 2, "a deposit was lost");
        assert_eq!(
            retries,
            u64::from(granted),
            "a withdrawal was lost or doubled"
        );
    });
}

/// Two deposits racing where one slot rolls over to a new window (the slot
/// last counted a whole window ago): neither is lost. Before the fix the
/// thread that won the rollover reset the slot's counts after the other had
/// already counted its deposit there.
#[test]
fn deposits_racing_at_a_slots_rollover_lose_neither() {
    loom::model(|| {
        let budget = Arc::new(half());
        let then = Instant::now();
        budget.deposit(then);
        // The same slot, a whole window on.
        let now = then + DAY;
        let other = {
            let budget = budget.clone();
            thread::spawn(move || budget.deposit(now))
        };
        budget.deposit(now);
        other.join().unwrap();
        assert_eq!(
            budget.totals(now),
            (2, 0),
            "a deposit made as the slot rolled over was lost"
        );
    });
}

/// A withdrawal racing the deposit that rolls its slot over: the calls of
/// the window that has passed never count for it (before the fix the
/// withdrawal could see the new epoch with the old counts and be granted
/// on them), and neither update is lost.
#[test]
fn a_withdrawal_at_a_rollover_is_judged_on_the_new_window_alone() {
    loom::model(|| {
        let budget = Arc::new(half());
        let then = Instant::now();
        budget.deposit(then);
        budget.deposit(then);
        let now = then + DAY;
        // At most one call counts at `now`: half of it is no whole retry.
        let withdrawal = {
            let budget = budget.clone();
            thread::spawn(move || budget.try_withdraw(now))
        };
        budget.deposit(now);
        let granted = withdrawal.join().unwrap();
        assert!(
            !granted,
            "a retry was granted on calls from the window that has passed"
        );
        assert_eq!(budget.totals(now), (1, 0), "the deposit was lost");
    });
}

/// A granted withdrawal racing the deposit that rolls its slot over:
/// neither count is lost (before the fix the rollover's reset could wipe
/// the retry just counted, or the deposit).
#[test]
fn a_withdrawal_and_a_deposit_at_a_rollover_lose_neither() {
    loom::model(|| {
        // A floor of a retry a second: every withdrawal here is granted.
        let budget = Arc::new(
            RetryBudget::builder()
                .ratio(0.5)
                .min_per_sec(1.0)
                .window(DAY)
                .build()
                .unwrap(),
        );
        let then = Instant::now();
        budget.deposit(then);
        let now = then + DAY;
        let withdrawal = {
            let budget = budget.clone();
            thread::spawn(move || budget.try_withdraw(now))
        };
        budget.deposit(now);
        assert!(withdrawal.join().unwrap(), "the floor allows a retry");
        assert_eq!(
            budget.totals(now),
            (1, 1),
            "the deposit or the retry was lost"
        );
    });
}

/// Two hedges racing for the last share of a policy's cap on hedges
/// (`hedge_share`): one is admitted, the other finds the share spent, and
/// the cap counts the one hedge.
#[test]
fn two_hedges_racing_for_the_last_share_of_the_cap_get_it_once() {
    loom::model(|| {
        let mut settings = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(5)));
        settings.share = 0.5;
        let policy = Arc::new(Policy::builder().hedge(Some(settings)).build().unwrap());
        let hedging = policy.hedging().unwrap();
        let now = Instant::now();
        hedging.count_call(now);
        hedging.count_call(now);
        let other = {
            let policy = policy.clone();
            thread::spawn(move || policy.admit_hedge(now))
        };
        let mine = policy.admit_hedge(now);
        let theirs = other.join().unwrap();
        let admitted = [mine, theirs]
            .iter()
            .filter(|a| **a == Admission::Admitted)
            .count();
        assert_eq!(
            admitted, 1,
            "the last share went to {admitted} hedges ({mine:?}, {theirs:?})"
        );
        assert!(
            [mine, theirs].contains(&Admission::CapSpent),
            "{mine:?}, {theirs:?}"
        );
        assert_eq!(hedging.totals(now), (2, 1));
    });
}

/// A reload racing a call site's first call: the call gets the policy of
/// the registry before the reload or after it, whole (a policy the cache
/// found at its index in one registry is that registry's: here the name
/// sits at another index after the reload); once a call has had the new
/// policy, no later call gets the old one; and once the reload is done,
/// every call gets the new one.
#[test]
fn a_reload_racing_a_first_call_gives_it_one_registrys_policy_and_never_goes_back() {
    fn registry_of(entries: &[(&str, u32)]) -> Registry {
        entries
            .iter()
            .fold(Registry::builder(), |b, (name, attempts)| {
                b.policy(
                    name,
                    Policy::builder().max_attempts(*attempts).build().unwrap(),
                )
            })
            .build()
    }
    loom::model(|| {
        registry::install(registry_of(&[("site", 2), ("other", 5)]));
        let old = registry::current().policy("site").unwrap().clone();
        let new_registry = registry_of(&[("other", 6), ("site", 3)]);
        let new = new_registry.policy("site").unwrap().clone();
        let reloader = thread::spawn(move || {
            registry::install(new_registry);
        });
        let cache = PolicyCache::new(CallSite::new("site", file!(), line!(), "loom"));
        let first = cache.policy();
        let second = cache.policy();
        reloader.join().unwrap();
        let later = cache.policy();
        let which = |p: &std::sync::Arc<Policy>| {
            if std::sync::Arc::ptr_eq(p, &old) {
                "old"
            } else if std::sync::Arc::ptr_eq(p, &new) {
                "new"
            } else {
                "neither"
            }
        };
        for call in [&first, &second] {
            assert_ne!(
                which(call),
                "neither",
                "a call got a policy of neither registry whole: {:?} with {:?} attempts",
                call.name(),
                call.max_attempts()
            );
        }
        assert!(
            !(which(&first) == "new" && which(&second) == "old"),
            "the second call got the policy from before the reload the first call had seen"
        );
        assert_eq!(which(&later), "new", "a call after the reload missed it");
    });
}
