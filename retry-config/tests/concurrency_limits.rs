//! `[limits.NAME]` tables: built into retrykit-core's `ConcurrencyLimit`,
//! shared (one `Arc`) by every policy that names it with `limit = "NAME"`,
//! changed by profiles and `RETRY_LIMIT__*` / `RETRY_POLICY__*__LIMIT`,
//! explained key by key, and kept across a reload while their settings are
//! unchanged. (The invalid files, with their diagnostics, are in the
//! corpus: `limit_*`.)

use retrykit_config::{Config, Env, Layer, Options};
use retrykit_core::{Ending, Retry};
use std::sync::Arc;
use std::time::Duration;

const FILE: &str = r#"
[policies.orders]
limit = "db"

[policies.reports]
limit = "db"

[policies.plain]

[limits.db]
kind = "fixed"
max_in_flight = 2
max_wait = "50ms"
max_waiting = 10

[limits.cache]
max_in_flight = 16

[profiles.prod.limits.db]
max_in_flight = 32

[profiles.prod.policies.plain]
limit = "cache"
"#;

fn load(options: &Options) -> Config {
    Config::load_str(FILE, "retry.toml", options).unwrap_or_else(|d| panic!("{}", d.render()))
}

#[test]
fn every_policy_naming_a_limit_shares_the_one_built_from_its_table() {
    let config = load(&Options::new());
    // `cache` is named only under the `prod` profile.
    let warnings: Vec<_> = config
        .warnings()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(warnings, ["limit `cache` is not used by any policy"]);
    let prod = load(&Options::new().profile("prod"));
    assert!(prod.warnings().is_empty(), "{}", prod.warnings().render());
    let db = config.limit("db").unwrap();
    assert_eq!(db.name(), Some("db"));
    assert_eq!(db.max_in_flight(), 2);
    assert_eq!(db.max_wait(), Some(Duration::from_millis(50)));
    assert_eq!(db.max_waiting(), 10);
    for name in ["orders", "reports"] {
        assert!(
            Arc::ptr_eq(config.policy(name).unwrap().limit().unwrap(), db),
            "{name}"
        );
    }
    assert!(config.policy("plain").unwrap().limit().is_none());
    let cache = config.limit("cache").unwrap();
    assert_eq!(
        (cache.max_wait(), cache.max_waiting()),
        (None, 1000),
        "the built-ins"
    );
    assert_eq!(config.limit_names().collect::<Vec<_>>(), ["db", "cache"]);
}

#[test]
fn a_profile_and_the_environment_change_a_limit_and_explain_says_where_from() {
    let config = load(&Options::new().profile("prod"));
    assert_eq!(config.limit("db").unwrap().max_in_flight(), 32);
    let plain = config.policy("plain").unwrap().limit().unwrap();
    assert!(Arc::ptr_eq(plain, config.limit("cache").unwrap()));

    let env = Env::new()
        .with("RETRY_LIMIT__DB__MAX_WAIT", "none")
        .with("RETRY_LIMIT__DB__MAX_WAITING", "0")
        .with("RETRY_POLICY__PLAIN__LIMIT", "db");
    let config = load(&Options::new().profile("prod").env(env));
    let db = config.limit("db").unwrap();
    assert_eq!((db.max_wait(), db.max_waiting()), (None, 0));
    assert!(Arc::ptr_eq(
        config.policy("plain").unwrap().limit().unwrap(),
        db
    ));
    let explained = config.explain_limit("db").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    assert_eq!(get("kind").value, "fixed");
    assert_eq!(get("kind").layer, Layer::File);
    assert_eq!(get("max_in_flight").value, "32");
    assert_eq!(get("max_in_flight").layer, Layer::Profile("prod".into()));
    assert_eq!(get("max_wait").value, "none");
    assert_eq!(
        get("max_wait").layer,
        Layer::Env("RETRY_LIMIT__DB__MAX_WAIT".into())
    );
    assert_eq!(get("max_waiting").value, "0");
    let policy = config.explain("plain").unwrap();
    let limit = policy.iter().find(|e| e.key == "limit").unwrap();
    assert_eq!(limit.value, "db");
    assert_eq!(limit.layer, Layer::Env("RETRY_POLICY__PLAIN__LIMIT".into()));
    let orders = load(&Options::new()).explain("plain").unwrap();
    let none = orders.iter().find(|e| e.key == "limit").unwrap();
    assert_eq!(
        (none.value.as_str(), &none.layer),
        ("none", &Layer::Builtin)
    );
}

#[test]
fn a_reload_keeps_a_limit_whose_settings_are_unchanged() {
    let first = load(&Options::new()).registry(None);
    let held = first.limit("db").unwrap().try_acquire().unwrap();
    let second = load(&Options::new()).registry(Some(&first));
    let kept = second.limit("db").unwrap();
    assert!(Arc::ptr_eq(kept, first.limit("db").unwrap()));
    assert_eq!(
        kept.in_flight(),
        1,
        "the permit out before the reload still counts"
    );
    assert!(Arc::ptr_eq(
        second.policy("orders").unwrap().limit().unwrap(),
        kept
    ));
    let changed = load(&Options::new().profile("prod")).registry(Some(&second));
    assert!(!Arc::ptr_eq(changed.limit("db").unwrap(), kept));
    drop(held);
}

#[test]
fn a_loaded_limit_ends_a_call_that_gets_no_permit_as_limit_full() {
    let env = Env::new().with("RETRY_LIMIT__DB__MAX_WAIT", "2ms");
    let config = load(&Options::new().env(env));
    let policy = config.policy("orders").unwrap();
    let db = config.limit("db").unwrap();
    let held = [db.try_acquire().unwrap(), db.try_acquire().unwrap()];
    let (result, report) =
        Retry::blocking(policy).call_blocking_with_report(|| Ok::<_, std::io::Error>(()));
    assert_eq!(result.unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
    assert_eq!((report.ending, report.attempts), (Ending::LimitFull, 0));
    assert!(report.elapsed >= Duration::from_millis(2), "{report:?}");
    drop(held);
    let (result, report) =
        Retry::blocking(policy).call_blocking_with_report(|| Ok::<_, std::io::Error>(()));
    assert!(result.is_ok());
    assert_eq!((report.ending, db.in_flight()), (Ending::Success, 0));
}
