//! A hedging policy on a `#[retry]` fn that runs one attempt at a time (a
//! blocking fn, or an async one built without the hedged loop because the
//! build did not see the policy hedge) is a start-up error: installing
//! fails and names the site.

use retrykit_config::Setup;
use retrykit_core::__private::site::CallSite;
use retrykit_core::registry;

retrykit_core::__private::inventory::submit! {
    CallSite { blocking: true, ..CallSite::new("lookup", "src/lookup.rs", 7, "lookup") }
}
retrykit_core::__private::inventory::submit! {
    CallSite { waits_on_tokio: true, ..CallSite::new("fetch", "src/fetch.rs", 3, "fetch") }
}

#[test]
fn a_hedging_policy_on_a_blocking_fn_fails_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(
        &path,
        "[policies.lookup]\nhedge_after = \"p95\"\n[policies.fetch]\n",
    )
    .unwrap();
    let err = Setup::new(&path).install().unwrap_err();
    let d = err.errors().next().unwrap();
    assert_eq!(d.key, "policies.lookup.hedge_after");
    assert!(
        d.message.contains("src/lookup.rs:7") && d.message.contains("blocking fn"),
        "{}",
        d.message
    );
    assert!(
        d.notes.iter().any(|n| n.contains("hedge_after = \"none\"")),
        "{:?}",
        d.notes
    );
    assert!(
        registry::current().policy("lookup").is_none(),
        "nothing may be installed"
    );

    std::fs::write(
        &path,
        "[policies.lookup]\nhedge_after = \"none\"\n[policies.fetch]\n",
    )
    .unwrap();
    Setup::new(&path).install().unwrap();
    assert!(registry::policy("lookup").is_some());
}

#[test]
fn a_hedging_policy_on_an_async_fn_built_without_the_hedged_loop_fails_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(
        &path,
        "[policies.fetch]\nhedge_after = \"20ms\"\n[policies.lookup]\n",
    )
    .unwrap();
    let err = Setup::new(&path).install().unwrap_err();
    let d = err.errors().next().unwrap();
    assert_eq!(d.key, "policies.fetch.hedge_after");
    assert!(
        d.message.contains("src/fetch.rs:3") && d.message.contains("built without its hedged loop"),
        "{}",
        d.message
    );
    assert!(
        d.notes.iter().any(|n| n.contains("RETRY_CONFIG")),
        "{:?}",
        d.notes
    );
}
