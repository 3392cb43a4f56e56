//! Installing checks every registered `#[retry(policy = ...)]` call site
//! against the file, and installs nothing when one names a missing policy.

use retry_config::Setup;
use retry_core::registry;

retry_core::inventory::submit! {
    registry::CallSite::new("orders", "src/orders.rs", 42, "place_order")
}

retry_core::inventory::submit! {
    registry::DeclaredClass { name: "conflict", by: "OrderError" }
}

#[test]
fn retry_on_is_checked_against_the_declared_classes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    let text = "[policies.orders]\ncap = \"1s\"\nretry_on = [\"conflikt\", \"transient\"]\n";
    std::fs::write(&path, text).unwrap();
    let config = Setup::new(&path).load().unwrap();
    let w = config
        .warnings()
        .iter()
        .next()
        .expect("a warning for the undeclared class");
    assert!(w.message.contains("`conflikt`"), "{}", w.message);
    assert_eq!(w.suggestion.as_deref(), Some("conflict"));
    std::fs::write(&path, text.replace("conflikt", "conflict")).unwrap();
    assert!(Setup::new(&path).load().unwrap().warnings().is_empty());
}

#[test]
fn a_call_site_naming_a_missing_policy_fails_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    std::fs::write(&path, "[policies.order]\ncap = \"1s\"\n").unwrap();
    let err = Setup::new(&path).install().unwrap_err();
    let d = err.errors().next().unwrap();
    assert!(d.message.contains("src/orders.rs:42"), "{}", d.message);
    assert!(d.message.contains("place_order"), "{}", d.message);
    assert_eq!(d.suggestion.as_deref(), Some("order"));
    assert!(
        registry::current().policy("order").is_none(),
        "nothing may be installed"
    );

    std::fs::write(&path, "[policies.orders]\ncap = \"1s\"\n").unwrap();
    Setup::new(&path).install().unwrap();
    assert!(registry::policy("orders").is_some());
}
