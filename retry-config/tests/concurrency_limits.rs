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

const ADAPTIVE: &str = r#"
[policies.orders]
limit = "db"

[policies.search]
limit = "index"

[limits.db]
kind = "aimd"
initial_limit = 10
min_limit = 2
max_limit = 50
decrease = 0.5
drop_on = ["throttled"]
drop_above = "250ms"

[limits.index]
kind = "gradient"
max_limit = 300
tolerance = 1.5

[profiles.prod.limits.db]
max_limit = 500

[profiles.prod.limits.index]
smoothing = 0.5
"#;

#[test]
fn adaptive_limits_are_built_from_their_keys_and_the_built_ins() {
    use retrykit_core::limit::LimitKind;
    use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
    let config = Config::load_str(ADAPTIVE, "retry.toml", &Options::new())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let db = config.limit("db").unwrap();
    let aimd = AimdSettings {
        initial: 10,
        min: 2,
        max: 50,
        decrease: 0.5,
        drop_on_timeout: false,
        drop_on_throttled: true,
        drop_above: Some(Duration::from_millis(250)),
    };
    assert_eq!(db.kind(), &LimitKind::Aimd(aimd));
    assert_eq!(db.max_in_flight(), 10, "the initial size");
    let index = config.limit("index").unwrap();
    let gradient = GradientSettings {
        max: 300,
        tolerance: 1.5,
        ..GradientSettings::default()
    };
    assert_eq!(index.kind(), &LimitKind::Gradient(gradient));
    assert!(Arc::ptr_eq(
        config.policy("search").unwrap().limit().unwrap(),
        index
    ));
}

#[test]
fn adaptive_keys_follow_profiles_and_the_environment_and_explain_says_where_from() {
    let env = Env::new()
        .with("RETRY_LIMIT__DB__DECREASE", "0.8")
        .with("RETRY_LIMIT__DB__DROP_ON", "[\"timeout\"]")
        .with("RETRY_LIMIT__INDEX__PROBE_EVERY", "50");
    let options = Options::new().profile("prod").env(env);
    let config = Config::load_str(ADAPTIVE, "retry.toml", &options)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let explained = config.explain_limit("db").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    assert_eq!(get("kind").value, "aimd");
    assert_eq!(
        (get("max_limit").value, get("max_limit").layer),
        ("500".to_owned(), Layer::Profile("prod".into()))
    );
    assert_eq!(
        (get("decrease").value, get("decrease").layer),
        (
            "0.8".to_owned(),
            Layer::Env("RETRY_LIMIT__DB__DECREASE".into())
        )
    );
    assert_eq!(get("drop_on").value, "[timeout]");
    assert_eq!(get("drop_above").value, "250ms");
    assert_eq!(get("min_limit").value, "2");
    assert_eq!(get("max_in_flight").value, "- (unused by aimd limits)");
    assert_eq!(get("tolerance").value, "- (unused by aimd limits)");
    let explained = config.explain_limit("index").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    assert_eq!(
        (get("initial_limit").value, get("initial_limit").layer),
        ("20".to_owned(), Layer::Builtin)
    );
    assert_eq!(get("smoothing").value, "0.5");
    assert_eq!(
        (get("probe_every").value, get("probe_every").layer),
        (
            "50".to_owned(),
            Layer::Env("RETRY_LIMIT__INDEX__PROBE_EVERY".into())
        )
    );
    assert_eq!(get("decrease").value, "- (unused by gradient limits)");
}

#[test]
fn the_built_in_adaptive_settings_are_retry_cores() {
    use retrykit_core::limit::LimitKind;
    use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
    let text = "[limits.a]\nkind = \"aimd\"\n[limits.g]\nkind = \"gradient\"\n\
                [policies.p]\nlimit = \"a\"\n[policies.q]\nlimit = \"g\"\n";
    let config = Config::load_str(text, "f", &Options::new()).unwrap();
    assert_eq!(
        config.limit("a").unwrap().kind(),
        &LimitKind::Aimd(AimdSettings::default())
    );
    assert_eq!(
        config.limit("g").unwrap().kind(),
        &LimitKind::Gradient(GradientSettings::default())
    );
}

#[test]
fn a_reload_keeps_an_adaptive_limit_and_its_learnt_size_while_its_settings_are_unchanged() {
    use retrykit_core::limit::adaptive::Outcome;
    let first = Config::load_str(ADAPTIVE, "f", &Options::new())
        .unwrap()
        .registry(None);
    let db = first.limit("db").unwrap();
    db.try_acquire()
        .unwrap()
        .finish(Duration::from_millis(1), Outcome::Throttled);
    assert_eq!(db.max_in_flight(), 5, "10 halved by a throttle");
    let second = Config::load_str(ADAPTIVE, "f", &Options::new())
        .unwrap()
        .registry(Some(&first));
    assert!(Arc::ptr_eq(second.limit("db").unwrap(), db));
    assert_eq!(second.limit("db").unwrap().max_in_flight(), 5);
    let env = Env::new().with("RETRY_LIMIT__DB__DECREASE", "0.8");
    let third = Config::load_str(ADAPTIVE, "f", &Options::new().env(env))
        .unwrap()
        .registry(Some(&second));
    assert!(!Arc::ptr_eq(third.limit("db").unwrap(), db));
    assert_eq!(third.limit("db").unwrap().max_in_flight(), 10, "built anew");
}
