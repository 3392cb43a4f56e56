//! A hedging policy on a blocking `#[retry]` fn is a start-up error where
//! the build could not see the file: installing fails and names the site.

use retrykit_config::Setup;
use retrykit_core::__private::site::CallSite;
use retrykit_core::registry;

retrykit_core::__private::inventory::submit! {
    CallSite { blocking: true, ..CallSite::new("lookup", "src/lookup.rs", 7, "lookup") }
}

#[test]
fn a_hedging_policy_on_a_blocking_fn_fails_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, "[policies.lookup]\nhedge_after = \"p95\"\n").unwrap();
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

    std::fs::write(&path, "[policies.lookup]\nhedge_after = \"none\"\n").unwrap();
    Setup::new(&path).install().unwrap();
    assert!(registry::policy("lookup").is_some());
}
