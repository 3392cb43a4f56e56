//! `[breakers.NAME]` tables: built into retrykit-core's `CircuitBreaker`,
//! shared (one `Arc`) by every policy that names it, changed by profiles
//! and `RETRY_BREAKER__*` / `RETRY_POLICY__*__BREAKER`, explained key by
//! key, and kept across a reload while their settings are unchanged. (The
//! invalid files, with their diagnostics, are in the corpus: `breaker_*`.)

use retrykit_config::{Config, Env, Layer, Options};
use retrykit_core::breaker::BreakerState;
use std::sync::Arc;
use std::time::{Duration, Instant};

const FILE: &str = r#"
[defaults]
attempt_timeout = "2s"

[policies.publish]
breaker = "broker"

[policies.consume]
breaker = "broker"

[policies.query]
breaker = "db"

[policies.plain]

[breakers.broker]
failure_ratio = 0.5
min_calls = 4
window = "10s"
open_for = "1s"
max_open_for = "8s"
open_jitter = 0
probes = 2
slow_call = "1500ms"
trip_on = ["transient", "timeout"]

[breakers.db]

[profiles.prod.breakers.broker]
probes = 5

[profiles.prod.policies.plain]
breaker = "db"
"#;

fn load(options: &Options) -> Config {
    Config::load_str(FILE, "retry.toml", options).unwrap_or_else(|d| panic!("{}", d.render()))
}

#[test]
fn every_policy_naming_a_breaker_shares_the_one_built_from_its_table() {
    let config = load(&Options::new());
    assert!(
        config.warnings().is_empty(),
        "{}",
        config.warnings().render()
    );
    let broker = config.breaker("broker").unwrap();
    assert_eq!(broker.name(), Some("broker"));
    assert_eq!(broker.failure_ratio(), 0.5);
    assert_eq!(broker.min_calls(), 4);
    assert_eq!(broker.window(), Duration::from_secs(10));
    assert_eq!(broker.open_for(), Duration::from_secs(1));
    assert_eq!(broker.max_open_for(), Duration::from_secs(8));
    assert_eq!(broker.open_jitter(), 0.0);
    assert_eq!(broker.probes(), 2);
    assert_eq!(broker.slow_call(), Some(Duration::from_millis(1500)));
    let trip_on: Vec<&str> = broker.trip_on().iter().map(|c| &**c).collect();
    assert_eq!(trip_on, ["transient", "timeout"]);
    for name in ["publish", "consume"] {
        let shared = config.policy(name).unwrap().breaker().unwrap();
        assert!(Arc::ptr_eq(shared, broker), "{name}");
    }
    let db = config.breaker("db").unwrap();
    assert!(Arc::ptr_eq(
        config.policy("query").unwrap().breaker().unwrap(),
        db
    ));
    assert!(config.policy("plain").unwrap().breaker().is_none());
    assert_eq!(config.breaker_names().collect::<Vec<_>>(), ["broker", "db"]);
    // The built-in defaults are retrykit-core's.
    assert_eq!(
        (db.failure_ratio(), db.min_calls(), db.probes()),
        (0.1, 100, 1)
    );

    // One breaker: what trips it through one policy refuses the other's attempts.
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = broker.try_acquire(now).unwrap();
        broker.record(ticket, now, true);
    }
    let consume = config.policy("consume").unwrap().breaker().unwrap();
    assert_eq!(consume.state(), BreakerState::Open);
    assert!(consume.try_acquire(now).is_err());
}

#[test]
fn a_profile_changes_a_breaker_and_which_breaker_a_policy_names() {
    let config = load(&Options::new().profile("prod"));
    assert_eq!(config.breaker("broker").unwrap().probes(), 5);
    assert_eq!(config.breaker("broker").unwrap().min_calls(), 4, "kept");
    let plain = config.policy("plain").unwrap().breaker().unwrap();
    assert!(Arc::ptr_eq(plain, config.breaker("db").unwrap()));
    let probes = config
        .explain_breaker("broker")
        .unwrap()
        .into_iter()
        .find(|e| e.key == "probes")
        .unwrap();
    assert_eq!(
        (probes.value.as_str(), probes.layer),
        ("5", Layer::Profile("prod".into()))
    );
}

#[test]
fn the_environment_overrides_a_breaker_and_a_policys_choice_of_one() {
    let env = Env::new()
        .with("RETRY_BREAKER__BROKER__OPEN_FOR", "3s")
        .with("RETRY_BREAKER__BROKER__TRIP_ON", "timeout")
        .with("RETRY_POLICY__PUBLISH__BREAKER", "db")
        .with("RETRY_POLICY__QUERY__BREAKER", "none");
    let config = load(&Options::new().env(env));
    let broker = config.breaker("broker").unwrap();
    assert_eq!(broker.open_for(), Duration::from_secs(3));
    assert_eq!(broker.trip_on().len(), 1);
    assert!(Arc::ptr_eq(
        config.policy("publish").unwrap().breaker().unwrap(),
        config.breaker("db").unwrap()
    ));
    assert!(config.policy("query").unwrap().breaker().is_none());
    let explained = config.explain("publish").unwrap();
    let breaker = explained.iter().find(|e| e.key == "breaker").unwrap();
    assert_eq!(breaker.value, "db");
    assert_eq!(
        breaker.layer,
        Layer::Env("RETRY_POLICY__PUBLISH__BREAKER".into())
    );
    let open_for = config
        .explain_breaker("broker")
        .unwrap()
        .into_iter()
        .find(|e| e.key == "open_for")
        .unwrap();
    assert_eq!(open_for.value, "3s");
    assert_eq!(
        open_for.layer,
        Layer::Env("RETRY_BREAKER__BROKER__OPEN_FOR".into())
    );
}

#[test]
fn explain_breaker_shows_every_key_with_where_it_came_from() {
    let config = load(&Options::new());
    let explained = config.explain_breaker("broker").unwrap();
    let keys: Vec<&str> = explained.iter().map(|e| e.key).collect();
    let schema: Vec<&str> = retrykit_schema::keys::BREAKER_KEYS
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(keys, schema);
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap();
    assert_eq!(get("slow_call").value, "1s 500ms");
    assert_eq!(get("trip_on").value, "[transient, timeout]");
    assert_eq!(get("scope").value, "local");
    assert_eq!(get("scope").layer, Layer::Builtin);
    assert_eq!(get("window").layer, Layer::File);
    let at = get("window").span.as_ref().unwrap().to_string();
    assert!(at.starts_with("retry.toml:"), "{at}");
    assert!(config.explain_breaker("nope").is_none());
    let policy = config.explain("query").unwrap();
    assert_eq!(
        policy.iter().find(|e| e.key == "breaker").unwrap().value,
        "db"
    );
    let plain = config.explain("plain").unwrap();
    assert_eq!(
        plain.iter().find(|e| e.key == "breaker").unwrap().value,
        "none"
    );
}

#[test]
fn a_reload_keeps_an_unchanged_breaker_with_its_state_and_replaces_a_changed_one() {
    let first = load(&Options::new()).registry(None);
    let broker = first.breaker("broker").unwrap().clone();
    let now = Instant::now();
    for _ in 0..4 {
        let ticket = broker.try_acquire(now).unwrap();
        broker.record(ticket, now, true);
    }
    assert_eq!(broker.state(), BreakerState::Open);

    let second = load(&Options::new()).registry(Some(&first));
    let kept = second.breaker("broker").unwrap();
    assert!(
        Arc::ptr_eq(kept, &broker),
        "same settings: the same breaker"
    );
    assert_eq!(kept.state(), BreakerState::Open, "and its state");
    for name in ["publish", "consume"] {
        let policy = second.policy(name).unwrap();
        assert!(Arc::ptr_eq(policy.breaker().unwrap(), kept), "{name}");
    }

    let changed = Env::new().with("RETRY_BREAKER__BROKER__PROBES", "3");
    let third = load(&Options::new().env(changed)).registry(Some(&second));
    let replaced = third.breaker("broker").unwrap();
    assert!(
        !Arc::ptr_eq(replaced, &broker),
        "new settings: a new breaker"
    );
    assert_eq!(replaced.state(), BreakerState::Closed);
    assert!(Arc::ptr_eq(
        third.policy("publish").unwrap().breaker().unwrap(),
        replaced
    ));
    // The unchanged one is still kept.
    assert!(Arc::ptr_eq(
        third.breaker("db").unwrap(),
        first.breaker("db").unwrap()
    ));
}

#[test]
fn every_key_a_file_can_set_reaches_the_breaker_as_written() {
    // Each key set to something other than its default, then read back.
    let text = "[policies.p]\nattempt_timeout = \"5s\"\nbreaker = \"b\"\n\
        [breakers.b]\nfailure_ratio = 0.25\nmin_calls = 7\nwindow = \"1m\"\nopen_for = \"2s\"\n\
        max_open_for = \"1m\"\nopen_jitter = 0.5\nprobes = 4\nslow_call = \"3s\"\ntrip_on = [\"throttled\"]\n\
        probe_every = \"3s\"\nrelease_ramp = \"50ms\"\nrelease_trip_on = [\"transient\", \"throttled\"]\n";
    let config = Config::load_str(text, "f", &Options::new()).unwrap();
    let explained = config.explain_breaker("b").unwrap();
    for e in &explained {
        // The fleet scope's keys: fleet_breaker_keys.rs sets those.
        if ["scope", "store", "store_timeout", "refresh"].contains(&e.key) {
            continue;
        }
        assert_eq!(
            e.layer,
            Layer::File,
            "`{}` was not read from the file",
            e.key
        );
    }
    let values: Vec<(&str, &str)> = explained
        .iter()
        .map(|e| (e.key, e.value.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("failure_ratio", "0.25"),
            ("min_calls", "7"),
            ("window", "1m"),
            ("open_for", "2s"),
            ("max_open_for", "1m"),
            ("open_jitter", "0.5"),
            ("probes", "4"),
            ("slow_call", "3s"),
            ("trip_on", "[throttled]"),
            ("probe_every", "3s"),
            ("release_ramp", "50ms"),
            ("release_trip_on", "[transient, throttled]"),
            ("scope", "local"),
            ("store", "none"),
            ("store_timeout", "- (unused by a local breaker)"),
            ("refresh", "- (unused by a local breaker)"),
        ]
    );
}

/// Without retrykit-config's `redis` feature (off by default), a fleet
/// breaker's error names the feature, and the store when it lacks one too.
/// (With the feature: `corpus/invalid/breaker_fleet_*.toml`.)
#[cfg(not(feature = "redis"))]
#[test]
fn a_fleet_breaker_names_what_it_is_missing() {
    let text = "[policies.p]\nattempt_timeout = \"1s\"\nbreaker = \"b\"\n[breakers.b]\nscope = \"fleet\"\n";
    let problems = Config::load_str(text, "f.toml", &Options::new()).unwrap_err();
    let errors: Vec<_> = problems.errors().collect();
    assert_eq!(errors.len(), 1, "{}", problems.render());
    assert_eq!(errors[0].key, "breakers.b.scope");
    assert_eq!(
        errors[0].message,
        "breaker `b`: scope \"fleet\" needs a `store` (the Redis URL the fleet shares it through) and retrykit-config's `redis` feature, which this build lacks"
    );
    assert!(problems.to_string().contains("f.toml:5:9"), "{problems}");
    let with_store = text.replace("scope", "store = \"redis://127.0.0.1:1/\"\nscope");
    let problems = Config::load_str(&with_store, "f.toml", &Options::new()).unwrap_err();
    let errors: Vec<_> = problems.errors().collect();
    assert_eq!(errors.len(), 1, "{}", problems.render());
    assert_eq!(
        errors[0].message,
        "breaker `b`: scope \"fleet\" needs retrykit-config's `redis` feature, which this build lacks"
    );
    assert!(
        problems.render().contains("features = [\"redis\"]"),
        "{}",
        problems.render()
    );
}

/// With the feature and a store, the breaker is retrykit-core's
/// `with_fleet` of the local one: whatever that gives (a fleet breaker, or
/// its refusal while fleet breakers are being built) is what the load
/// gives, a refusal placed at `scope`.
#[cfg(feature = "redis")]
#[test]
fn a_fleet_breaker_is_retry_cores_with_fleet() {
    use retrykit_core::breaker::CircuitBreaker;
    use retrykit_core::fleet::FleetOptions;
    let store = "redis://127.0.0.1:1/";
    let text = format!(
        "[policies.p]\nattempt_timeout = \"1s\"\nbreaker = \"b\"\n[breakers.b]\nprobes = 2\nscope = \"fleet\"\nstore = \"{store}\"\n"
    );
    let core = CircuitBreaker::builder()
        .name("b")
        .probes(2)
        .build()
        .unwrap()
        .with_fleet(FleetOptions::new("b", store));
    let loaded = Config::load_str(&text, "f.toml", &Options::new());
    match (core, loaded) {
        (Ok(_), Ok(config)) => assert_eq!(config.breaker("b").unwrap().probes(), 2),
        (Err(refused), Err(problems)) => {
            let errors: Vec<_> = problems.errors().collect();
            assert_eq!(
                errors.len(),
                refused.problems().len(),
                "{}",
                problems.render()
            );
            for (d, p) in errors.iter().zip(refused.problems()) {
                assert_eq!(d.key, format!("breakers.b.{}", p.field));
                assert!(d.message.contains(p.rule), "{}", d.message);
            }
            assert!(problems.to_string().contains("f.toml:6:9"), "{problems}");
        }
        (core, loaded) => panic!(
            "the load must give what with_fleet gives: {:?} against {:?}",
            core.map(|_| ()),
            loaded.map(|_| ()).map_err(|d| d.render())
        ),
    }
}

#[test]
fn the_recovery_keys_take_the_environment_and_say_their_defaults() {
    let env = Env::new()
        .with("RETRY_BREAKER__BROKER__PROBE_EVERY", "400ms")
        .with("RETRY_BREAKER__BROKER__RELEASE_RAMP", "5ms")
        .with(
            "RETRY_BREAKER__BROKER__RELEASE_TRIP_ON",
            "transient,throttled",
        );
    let config = load(&Options::new().env(env));
    let broker = config.breaker("broker").unwrap();
    assert_eq!(broker.probe_every(), Duration::from_millis(400));
    assert_eq!(broker.release_ramp(), Duration::from_millis(5));
    assert_eq!(
        broker.release_trip_on(),
        [Box::<str>::from("transient"), Box::from("throttled")]
    );
    let explained = config.explain_breaker("broker").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap();
    assert_eq!(
        get("probe_every").layer,
        Layer::Env("RETRY_BREAKER__BROKER__PROBE_EVERY".into())
    );
    // The defaults, said as a file would write them: release_trip_on is
    // trip_on less throttled.
    let db = config.explain_breaker("db").unwrap();
    let get = |key: &str| db.iter().find(|e| e.key == key).unwrap();
    assert_eq!(
        (
            get("probe_every").value.as_str(),
            get("probe_every").layer.clone()
        ),
        ("1s 250ms", Layer::Builtin)
    );
    assert_eq!(get("release_ramp").value, "20ms");
    assert_eq!(get("release_trip_on").value, "[transient, timeout]");
}

#[test]
fn a_bad_recovery_key_is_named_with_its_rule_and_a_misspelt_one_gets_a_did_you_mean() {
    let text = "[policies.p]\nbreaker = \"b\"\n[breakers.b]\nprobe_every = \"0s\"\nrelease_ramp = \"2m\"\n";
    let err = Config::load_str(text, "f", &Options::new())
        .unwrap_err()
        .render();
    assert!(
        err.contains("probe_every") && err.contains("must be from 1ms to 1 day"),
        "{err}"
    );
    assert!(
        err.contains("release_ramp") && err.contains("must be from 1ms to 1 minute"),
        "{err}"
    );
    let text = "[policies.p]\nbreaker = \"b\"\n[breakers.b]\nprobe_evry = \"1s\"\n";
    let err = Config::load_str(text, "f", &Options::new())
        .unwrap_err()
        .render();
    assert!(err.contains("probe_every"), "did you mean: {err}");
}
