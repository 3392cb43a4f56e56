//! The process-wide registry: atomic swaps seen by the next call only.

use retrykit_core::{Class, Classify, Jitter, Policy, Registry, Retry, registry};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

fn attempts(n: u32) -> Policy {
    Policy::builder()
        .base(Duration::from_millis(10))
        .jitter(Jitter::None)
        .max_attempts(n)
        .build()
        .unwrap()
}

// One test touches the global registry, so no other test can race it.
#[tokio::test(start_paused = true)]
async fn a_reload_is_seen_by_the_next_call_and_not_by_a_running_one() {
    registry::install(Registry::builder().policy("svc", attempts(3)).build());
    assert_eq!(registry::policy("svc").unwrap().max_attempts(), Some(3));
    assert!(registry::policy("missing").is_none());

    // A call starts under the 3-attempt policy...
    let policy = registry::policy("svc").unwrap();
    let calls = AtomicU32::new(0);
    let swapped = AtomicBool::new(false);
    let result: Result<(), Flaky> = Retry::new(&policy)
        .call(|| {
            calls.fetch_add(1, Ordering::SeqCst);
            // ...and the registry is swapped under it after its first attempt.
            if !swapped.swap(true, Ordering::SeqCst) {
                registry::install(Registry::builder().policy("svc", attempts(6)).build());
            }
            async { Err(Flaky) }
        })
        .await;
    assert!(result.is_err());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "the running call kept its policy"
    );

    // The next call sees the new one.
    let policy = registry::policy("svc").unwrap();
    let (_, report) = Retry::new(&policy)
        .call_with_report(|| async { Err::<(), _>(Flaky) })
        .await;
    assert_eq!(report.attempts, 6);

    // Readers on other threads never see a torn or missing policy while
    // the registry is swapped continuously.
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut seen = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let p = registry::policy("svc").expect("always present");
                    assert!(matches!(p.max_attempts(), Some(6) | Some(7)));
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for i in 0..2_000 {
        registry::install(
            Registry::builder()
                .policy("svc", attempts(6 + (i % 2)))
                .build(),
        );
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    let names: Vec<String> = registry::current()
        .policy_names()
        .map(str::to_owned)
        .collect();
    assert_eq!(names, ["svc"]);
}
