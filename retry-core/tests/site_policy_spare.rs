//! A `#[retry]` call that holds its site's policy (it failed, or its policy
//! needs it from the start) takes the thread's spare reference and gives
//! it back when it ends: one call after another, no reference count moves;
//! a reload in between never hands out the old policy.

use retry_core::__private::kernel::{CallPolicy, Site, SitePolicy};
use retry_core::__private::site::{CallSite, SiteCache, SiteState};
use retry_core::{Policy, Registry, registry};
use std::sync::Arc;

thread_local! { static CACHE: SiteCache = const { SiteCache::new() }; }
static STATE: SiteState = SiteState::new();
const CALL: CallSite = CallSite::new("spare-test", file!(), line!(), "spare");

struct Here;
impl Site for Here {
    const CALL: &'static CallSite = &CALL;
    fn cache() -> &'static std::thread::LocalKey<SiteCache> {
        &CACHE
    }
    fn state() -> &'static SiteState {
        &STATE
    }
}

fn install(max_attempts: u32) -> Arc<Policy> {
    let policy = Policy::builder()
        .max_attempts(max_attempts)
        .build()
        .unwrap();
    registry::install(Registry::builder().policy("spare-test", policy).build());
    registry::policy("spare-test").unwrap()
}

/// A call that fails once: it takes its policy then, and ends.
fn failing_call() -> Option<u32> {
    let mut policy = SitePolicy::<Here>::for_call();
    policy.get().max_attempts()
}

// One test: every step installs into the one process-wide registry.
#[test]
fn held_policies_come_back_as_the_spare_and_a_reload_replaces_it() {
    let first = install(2);
    assert_eq!(failing_call(), Some(2), "the first call fills the spare");
    let between = Arc::strong_count(&first);
    let during = {
        let mut policy = SitePolicy::<Here>::for_call();
        assert_eq!(policy.get().max_attempts(), Some(2));
        Arc::strong_count(&first)
    };
    assert_eq!(
        during, between,
        "the call took the spare, not a new reference"
    );
    assert_eq!(Arc::strong_count(&first), between, "and gave it back");

    // Two calls at once: the second takes a counted reference, and only
    // one of the two comes back as the spare.
    {
        let (mut a, mut b) = (
            SitePolicy::<Here>::for_call(),
            SitePolicy::<Here>::for_call(),
        );
        assert_eq!(
            (a.get().max_attempts(), b.get().max_attempts()),
            (Some(2), Some(2))
        );
        assert_eq!(Arc::strong_count(&first), between + 1);
    }
    assert_eq!(Arc::strong_count(&first), between);

    // A reload while the spare is in: the next call gets the new policy.
    let second = install(3);
    assert_eq!(
        failing_call(),
        Some(3),
        "not the spare of the last generation"
    );

    // A call that outlives a reload: its policy stays the one it started
    // with, and is not kept as the new generation's spare.
    let mut outliving = SitePolicy::<Here>::for_call();
    assert_eq!(outliving.get().max_attempts(), Some(3));
    let third = install(4);
    assert_eq!(failing_call(), Some(4), "a call after the reload");
    assert_eq!(outliving.get().max_attempts(), Some(3));
    drop(outliving);
    assert_eq!(failing_call(), Some(4), "the old policy was not kept");
    drop((first, second, third));
}
