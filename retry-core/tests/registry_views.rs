//! Each thread's view of the registry: another thread's install is seen at
//! the next lookup, and a borrowed policy outlives an install made while it
//! is borrowed.

use retrykit_core::registry::{install, policy, with_policy};
use retrykit_core::{Policy, Registry};
use std::sync::{Mutex, PoisonError};

/// The tests here install into the one process-wide registry: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn attempts(n: u32) -> Policy {
    Policy::builder().max_attempts(n).build().unwrap()
}

fn borrowed_attempts(name: &str) -> Option<u32> {
    with_policy(name, |policy| policy.and_then(Policy::max_attempts))
}

#[test]
fn a_thread_sees_another_threads_install_on_its_next_lookup() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let name = "registry-snapshot-test";
    install(Registry::builder().policy(name, attempts(2)).build());
    // This thread's snapshot now holds the first registry.
    assert_eq!(policy(name).unwrap().max_attempts(), Some(2));
    std::thread::spawn(move || {
        install(Registry::builder().policy(name, attempts(3)).build());
    })
    .join()
    .unwrap();
    assert_eq!(policy(name).unwrap().max_attempts(), Some(3));
}

#[test]
fn the_borrowing_lookup_sees_another_threads_install_on_its_next_lookup() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let name = "registry-borrow-test";
    install(Registry::builder().policy(name, attempts(4)).build());
    assert_eq!(borrowed_attempts(name), Some(4));
    assert_eq!(borrowed_attempts("registry-borrow-missing"), None);
    std::thread::spawn(move || {
        install(Registry::builder().policy(name, attempts(5)).build());
    })
    .join()
    .unwrap();
    assert_eq!(borrowed_attempts(name), Some(5));
}

#[test]
fn a_lookup_inside_the_borrowing_one_reads_the_registry_installed_meanwhile() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let name = "registry-nested-test";
    install(Registry::builder().policy(name, attempts(6)).build());
    let (outer, inner, inner_borrowed) = with_policy(name, |outer| {
        install(Registry::builder().policy(name, attempts(7)).build());
        // The view is borrowed here: these go to the shared registry.
        let inner = policy(name).and_then(|p| p.max_attempts());
        (
            outer.and_then(Policy::max_attempts),
            inner,
            borrowed_attempts(name),
        )
    });
    assert_eq!(outer, Some(6), "the borrowed policy outlives the install");
    assert_eq!((inner, inner_borrowed), (Some(7), Some(7)));
    assert_eq!(borrowed_attempts(name), Some(7), "and the view catches up");
}

/// A call site's calls on several threads while another thread reloads the
/// registry over and over: no thread's call gets a policy from before one
/// an earlier call of that thread had (each thread's first call reads the
/// shared registry, its later ones its view), and every call after the last
/// reload gets its policy. tests/loom.rs checks every interleaving of one
/// reload with a first call and a second; before the fix a second call
/// could go back when the reload fell between the first call's two reads,
/// an instant real threads rarely hit.
#[test]
fn calls_racing_reloads_never_go_back_to_an_older_policy() {
    use retrykit_core::__private::site::{CallSite, PolicyCache};
    static SITE: PolicyCache = PolicyCache::new(CallSite::new(
        "registry-race-test",
        file!(),
        line!(),
        "registry_views",
    ));
    const RELOADS: u32 = 300;
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let name = "registry-race-test";
    install(Registry::builder().policy(name, attempts(1)).build());
    let reloader = std::thread::spawn(move || {
        for version in 2..=RELOADS {
            install(Registry::builder().policy(name, attempts(version)).build());
        }
    });
    let callers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                // Fresh threads, so that many calls are first calls.
                (0..50).find_map(|_| {
                    std::thread::spawn(|| {
                        let mut had = 0;
                        for _ in 0..20 {
                            let now = SITE.policy().max_attempts().unwrap_or(0);
                            if now < had {
                                return Some((had, now));
                            }
                            had = now;
                        }
                        None
                    })
                    .join()
                    .unwrap()
                })
            })
        })
        .collect();
    reloader.join().unwrap();
    for caller in callers {
        let went_back = caller.join().unwrap();
        assert_eq!(
            went_back, None,
            "a thread's call had the policy of version (had, then got)"
        );
    }
    assert_eq!(SITE.policy().max_attempts(), Some(RELOADS));
}
