//! The hedging keys (`hedge_after`, `hedge_floor`, `hedge_share`) read like
//! every other key: from the file, `[defaults]`, profiles and the
//! environment, refused with the key and the fix, explained with their
//! layer, and linted.

use retrykit_config::{Config, Env, Layer, Options};
use retrykit_core::hedge::{HedgeAfter, HedgeSettings, Percentile};
use std::time::Duration;

const FILE: &str = r#"
[budgets.api]
ratio = 0.1

[defaults]
hedge_share = 0.05

[policies.lookup]
hedge_after = "p95"
max_attempts = 3
budget = "api"

[policies.fixed]
hedge_after = "20ms"
hedge_floor = "1ms"
max_attempts = 2
budget = "api"

[policies.plain]
max_attempts = 1

[profiles.test.policies.lookup]
hedge_floor = "5ms"
"#;

fn load(options: &Options) -> Config {
    Config::load_str(FILE, "retry.toml", options).unwrap_or_else(|d| panic!("{}", d.render()))
}

#[test]
fn hedging_keys_are_read_from_the_file_defaults_and_profiles() {
    let cfg = load(&Options::new());
    let lookup = cfg.policy("lookup").unwrap().hedge_settings().unwrap();
    assert_eq!(
        lookup.after,
        HedgeAfter::Percentile(Percentile::new(950).unwrap())
    );
    assert_eq!(
        (lookup.floor, lookup.share),
        (HedgeSettings::DEFAULT_FLOOR, 0.05)
    );
    let fixed = cfg.policy("fixed").unwrap().hedge_settings().unwrap();
    assert_eq!(fixed.after, HedgeAfter::Fixed(Duration::from_millis(20)));
    assert!(
        cfg.policy("plain").unwrap().hedge_settings().is_none(),
        "hedge_share alone hedges nothing"
    );
    assert!(cfg.warnings().is_empty(), "{}", cfg.warnings().render());

    let test = load(&Options::new().profile("test"));
    let floor = test
        .policy("lookup")
        .unwrap()
        .hedge_settings()
        .unwrap()
        .floor;
    assert_eq!(floor, Duration::from_millis(5));
}

#[test]
fn environment_variables_override_hedging_keys_and_explain_says_so() {
    let env: Env = [
        ("RETRY_POLICY__LOOKUP__HEDGE_AFTER", "p99.9"),
        ("RETRY_POLICY__LOOKUP__HEDGE_FLOOR", "7ms"),
    ]
    .into_iter()
    .collect();
    let cfg = load(&Options::new().env(env));
    let s = cfg.policy("lookup").unwrap().hedge_settings().unwrap();
    assert_eq!(s.after.to_string(), "p99.9");
    assert_eq!(s.floor, Duration::from_millis(7));
    let explained = cfg.explain("lookup").unwrap();
    let row = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    assert_eq!(row("hedge_after").value, "p99.9");
    assert_eq!(
        row("hedge_floor").layer,
        Layer::Env("RETRY_POLICY__LOOKUP__HEDGE_FLOOR".into())
    );
    assert_eq!(row("hedge_share").layer, Layer::Defaults);
    let plain = cfg.explain("plain").unwrap();
    let after = plain.iter().find(|e| e.key == "hedge_after").unwrap();
    assert_eq!(
        (after.value.as_str(), &after.layer),
        ("none", &Layer::Builtin)
    );
}

#[test]
fn bad_hedging_values_name_the_key_the_rule_and_the_fix() {
    let refused = |text: &str| match Config::load_str(text, "retry.toml", &Options::new()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(d) => d.render(),
    };
    let out = refused("[policies.a]\nhedge_after = \"p40\"\n");
    assert!(
        out.contains("`hedge_after` must be a percentile from p50 to p99.9"),
        "{out}"
    );
    let out = refused("[policies.a]\nhedge_after = 20\n");
    assert!(out.contains("hedge_after") && out.contains("unit"), "{out}");
    let out = refused("[policies.a]\nhedge_after = \"p95\"\nhedge_share = 0\n");
    assert!(
        out.contains("`hedge_share` must be a number above 0 and at most max_attempts - 1")
            && out.contains("fix:"),
        "{out}"
    );
    // max_attempts = 3: at most 2 hedges per call.
    let out = refused("[policies.a]\nhedge_after = \"p95\"\nmax_attempts = 3\nhedge_share = 2.5\n");
    assert!(
        out.contains("or 2 to leave every call its hedges (got 2.5)"),
        "{out}"
    );
    Config::load_str(
        "[policies.a]\nhedge_after = \"p95\"\nmax_attempts = 3\nhedge_share = 2.0\n",
        "retry.toml",
        &Options::new(),
    )
    .expect("2 hedges per call under max_attempts = 3");
    let out = refused("[policies.a]\nhedge_after = \"p95\"\nmax_attempts = 1\n");
    assert!(out.contains("`max_attempts` must be at least 2"), "{out}");
    let out = refused("[policies.a]\nhedge_aftr = \"p95\"\n");
    assert!(out.contains("did you mean `hedge_after`?"), "{out}");
}

#[test]
fn hedging_without_a_budget_and_a_short_attempt_timeout_warn() {
    let text = "[policies.a]\nhedge_after = \"50ms\"\nattempt_timeout = \"40ms\"\n";
    let cfg = Config::load_str(text, "retry.toml", &Options::new()).unwrap();
    let messages: Vec<&str> = cfg.warnings().iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("hedging without any budget"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("attempt_timeout is not longer than hedge_after"),
        "{messages:?}"
    );
    // A percentile judges the floor it starts from.
    let text = "[budgets.b]\n[policies.a]\nbudget = \"b\"\nhedge_after = \"p90\"\nhedge_floor = \"1s\"\nattempt_timeout = \"500ms\"\n";
    let cfg = Config::load_str(text, "retry.toml", &Options::new()).unwrap();
    let d = cfg.warnings().iter().next().unwrap();
    assert!(
        d.message.contains("not longer than hedge_floor"),
        "{}",
        d.message
    );
    assert_eq!(cfg.warnings().len(), 1);
}
