//! Installing checks every registered `#[retry(policy = ...)]` call site
//! against the file, and installs nothing when one names a missing policy.

use retrykit_config::Setup;
use retrykit_core::__private::loader::DeclaredClass;
use retrykit_core::__private::site::CallSite;
use retrykit_core::registry;

retrykit_core::__private::inventory::submit! {
    CallSite::new("orders", "src/orders.rs", 42, "place_order")
}

retrykit_core::__private::inventory::submit! {
    DeclaredClass { name: "conflict", by: "OrderError" }
}

#[test]
fn retry_on_is_checked_against_the_declared_classes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    let with = |classes: &str| {
        let text = format!("[policies.orders]\ncap = \"1s\"\nretry_on = [{classes}]\n");
        std::fs::write(&path, text).unwrap();
        Setup::new(&path).load()
    };
    // Declared by a derive: accepted.
    assert!(
        with("\"conflict\", \"transient\"")
            .unwrap()
            .warnings()
            .is_empty()
    );
    // A near miss of a declared class can never match: an error.
    let err = with("\"conflikt\", \"transient\"").unwrap_err();
    let e = err
        .errors()
        .next()
        .expect("an error for the misspelt class");
    assert!(e.message.contains("`conflikt`"), "{}", e.message);
    assert_eq!(e.suggestion.as_deref(), Some("conflict"));
    // Near nothing, while the classes are known: nothing produces it, a warning.
    let config = with("\"quota\"").unwrap();
    let w = config
        .warnings()
        .iter()
        .next()
        .expect("a warning for `quota`");
    assert!(w.message.contains("no code declares"), "{}", w.message);
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
