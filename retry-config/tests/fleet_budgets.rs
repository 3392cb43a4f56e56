//! `scope = "fleet"` budgets from the file: the store may come from the
//! file or the environment (which wins), and a local budget stays local.
//! (The invalid cases are in the corpus: a fleet without a store, a store
//! that is not a redis:// URL, an unknown scope, a store left unused.)
//! Without retrykit-config's `redis` feature (off by default), a fleet scope is
//! an error that names the feature. Each build has its own tests: `cargo test
//! -p retrykit-config --no-default-features --test fleet_budgets` and the same
//! with `--features redis` (which `cargo test --workspace` also turns on).

#[cfg(feature = "redis")]
use retrykit_config::Env;
use retrykit_config::{Config, Options};

const FILE: &str = r#"
[policies.p]
budget = "broker"

[budgets.broker]
ratio = 0.2
scope = "fleet"
store = "redis://127.0.0.1:1/"

[budgets.plain]
ratio = 0.1
"#;

#[cfg(feature = "redis")]
fn load(env: Env) -> Config {
    Config::load_str(FILE, "retry.toml", &Options::new().env(env)).expect("a valid file")
}

#[cfg(feature = "redis")]
#[test]
fn a_fleet_budget_is_shared_through_its_store() {
    let config = load(Env::new());
    let broker = config.budget("broker").unwrap();
    assert_eq!(broker.scope().as_str(), "fleet");
    assert_eq!(broker.ratio(), 0.2);
    let options = broker.fleet_options().unwrap();
    assert_eq!(options.store(), "redis://127.0.0.1:1/");
    assert_eq!(options.key(), "{retry-budget:broker}");
    assert_eq!(config.budget("plain").unwrap().scope().as_str(), "local");
}

#[cfg(feature = "redis")]
#[test]
fn the_environment_names_the_store() {
    let env = Env::new().with("RETRY_BUDGET__BROKER__STORE", "redis://127.0.0.1:2/");
    let config = load(env);
    let options = config.budget("broker").unwrap().fleet_options().unwrap();
    assert_eq!(options.store(), "redis://127.0.0.1:2/");
}

#[cfg(not(feature = "redis"))]
#[test]
fn without_the_redis_feature_a_fleet_scope_names_the_feature_to_enable() {
    let problems = Config::load_str(FILE, "retry.toml", &Options::new()).unwrap_err();
    let shown = problems.to_string();
    assert!(problems.has_errors(), "{shown}");
    assert!(
        shown.contains("scope \"fleet\" needs retrykit-config's `redis` feature"),
        "{shown}"
    );
    assert!(shown.contains("[budgets.broker.scope]"), "{shown}");
    let rendered = problems.render();
    assert!(rendered.contains("features = [\"redis\"]"), "{rendered}");
}
