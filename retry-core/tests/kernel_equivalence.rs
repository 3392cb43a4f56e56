//! One decision kernel: the stateful oracle and the in-process retry loop
//! make the same decisions and choose the same waits for any policy and any
//! sequence of failures (classes, server hints, attempt durations), with the
//! oracle's state saved and restored through serde after every step.
#![cfg(all(feature = "serde", feature = "tokio"))]

use proptest::prelude::*;
use retrykit_core::{
    Backoff, Class, Classify, Ending, Hooks, Jitter, Oracle, OracleState, Policy, Retry,
    RetryEvent, Verdict,
};
use std::cell::RefCell;
use std::time::{Duration, SystemTime};

#[derive(Debug, Clone, Copy)]
struct Fault {
    class: Class,
    hint: Option<Duration>,
}

impl Classify for Fault {
    fn class(&self) -> Class {
        self.class
    }
    fn retry_after(&self) -> Option<Duration> {
        self.hint
    }
}

/// One failed attempt: how long it ran, and what it failed with.
#[derive(Debug, Clone, Copy)]
struct Step {
    took: Duration,
    fault: Fault,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

prop_compose! {
    fn policy()(
        backoff in prop_oneof![
            Just(Backoff::Constant),
            Just(Backoff::Linear),
            (1.0f64..4.0).prop_map(|factor| Backoff::Exponential { factor }),
        ],
        jitter in prop_oneof![
            Just(Jitter::None), Just(Jitter::Full), Just(Jitter::Equal), Just(Jitter::Decorrelated),
            (0.0f64..=1.0).prop_map(Jitter::Proportional),
        ],
        base in 1u64..200,
        cap_extra in 0u64..2_000,
        attempts in 0u32..12,
        deadline in prop::option::of(50u64..3_000),
        retry_on in prop_oneof![
            Just(None),
            Just(Some(vec!["transient"])),
            Just(Some(vec!["transient", "throttled"])),
            Just(Some(vec!["throttled", "conflict"])),
        ],
        max_retry_after in prop::option::of(0u64..1_000),
    ) -> Policy {
        // Unlimited attempts only with a deadline, as the builder requires.
        let (attempts, deadline) = match (attempts, deadline) {
            (0, None) => (5, None),
            other => other,
        };
        let mut b = Policy::builder()
            .backoff(backoff)
            .jitter(jitter)
            .base(ms(base))
            .cap(ms(base + cap_extra))
            .max_attempts(attempts)
            .deadline(deadline.map(ms))
            .max_retry_after(max_retry_after.map(ms));
        if let Some(classes) = retry_on {
            b = b.retry_on(classes);
        }
        b.build().expect("generated policies are valid")
    }
}

fn step() -> impl Strategy<Value = Step> {
    (
        0u64..300,
        prop_oneof![
            4 => Just(Class::TRANSIENT),
            2 => Just(Class::THROTTLED),
            1 => Just(Class::Retryable("conflict")),
            1 => Just(Class::Permanent),
        ],
        prop::option::of(0u64..2_000),
    )
        .prop_map(|(took, class, hint)| Step {
            took: ms(took),
            fault: Fault {
                class,
                hint: hint.map(ms),
            },
        })
}

/// The in-process loop on tokio's paused clock: attempt `i` runs for
/// `steps[i].took` and fails with `steps[i].fault`; past the last step it succeeds.
fn in_process(policy: &Policy, seed: u64, steps: &[Step]) -> (Vec<Duration>, Ending) {
    let waits = RefCell::new(Vec::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let ending = rt.block_on(async {
        let mut attempt = 0usize;
        let hooks =
            Hooks::new().on_retry(|e: &RetryEvent<'_, Fault>| waits.borrow_mut().push(e.wait));
        let (_, report) = Retry::new(policy)
            .seed(seed)
            .hooks(hooks)
            .call_with_report(|| {
                let step = steps.get(attempt).copied();
                attempt += 1;
                async move {
                    match step {
                        Some(step) => {
                            tokio::time::sleep(step.took).await;
                            Err(step.fault)
                        }
                        None => Ok(()),
                    }
                }
            })
            .await;
        report.ending
    });
    (waits.into_inner(), ending)
}

/// How long a wait of `wait` lasts on tokio's paused clock, which the loop
/// runs on: its timer fires on whole milliseconds (a deadline is rounded up
/// to the end of its millisecond), and every instant of these runs is a
/// whole number of milliseconds from the start (attempts take whole
/// milliseconds). Without this, a run whose jittered waits add up to within
/// a millisecond of the deadline made the loop give up where the oracle,
/// told the exact waits, did not.
fn on_tokio_timer(wait: Duration) -> Duration {
    let millis = wait.as_nanos().div_ceil(1_000_000);
    Duration::from_millis(u64::try_from(millis).expect("test waits are far below u64 ms"))
}

/// The oracle, told the same story in wall-clock time, its state saved and
/// restored through serde after every step.
fn oracle(policy: &Policy, seed: u64, steps: &[Step]) -> (Vec<Duration>, Ending) {
    let mut state = OracleState::default();
    let mut now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut waits = Vec::new();
    for step in steps {
        let mut oracle = Oracle::resume(policy, state).seed(seed);
        oracle.attempt(now);
        now += step.took;
        let verdict = oracle.failure_of(&step.fault, now);
        let json = serde_json::to_string(&oracle.state()).unwrap();
        state = serde_json::from_str(&json).unwrap();
        match verdict {
            Verdict::Wait(wait) => {
                waits.push(wait);
                now += on_tokio_timer(wait);
            }
            Verdict::GiveUp(ending) => return (waits, ending),
        }
    }
    (waits, Ending::Success)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_oracle_and_the_loop_decide_alike(
        policy in policy(),
        seed in any::<u64>(),
        steps in prop::collection::vec(step(), 0..14),
    ) {
        let looped = in_process(&policy, seed, &steps);
        let oracled = oracle(&policy, seed, &steps);
        prop_assert_eq!(looped, oracled, "policy {:?}", policy);
    }
}

#[test]
fn the_comparison_can_fail() {
    // Guard: with different seeds, full jitter makes the two disagree, so
    // the property above is not comparing two constants.
    let policy = Policy::builder()
        .jitter(Jitter::Full)
        .max_attempts(4)
        .build()
        .unwrap();
    let steps = [Step {
        took: ms(1),
        fault: Fault {
            class: Class::TRANSIENT,
            hint: None,
        },
    }; 3];
    assert_ne!(
        in_process(&policy, 1, &steps).0,
        oracle(&policy, 2, &steps).0
    );
    assert_eq!(in_process(&policy, 1, &steps), oracle(&policy, 1, &steps));
}
