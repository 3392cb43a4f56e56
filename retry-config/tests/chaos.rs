//! A policy's `chaos` table: read in the base file or a profile, checked
//! (rates 0 to 1, bounded durations, did-you-mean), explained, refused
//! under a production profile, switched off by `RETRY_CHAOS=off`.

use retrykit_config::{Config, Env, Layer, Options, check_str};
use retrykit_core::Class;
use std::time::Duration;

const FILE: &str = r#"
[policies.broker]
max_attempts = 5

[profiles.staging.policies.broker.chaos]
fault_rate = 0.2
fault = "throttled"
retry_after = "2s"
latency_rate = 0.1
latency = "100ms"
latency_max = "300ms"
seed = 7

[profiles.prod]
production = true

[profiles.prod.policies.broker.chaos]
fault_rate = 0.05
"#;

fn load(text: &str, options: &Options) -> Result<Config, String> {
    Config::load_str(text, "retry.toml", options).map_err(|d| d.render())
}

#[test]
fn a_profile_s_chaos_reaches_the_policy() {
    let cfg = load(FILE, &Options::new().profile("staging")).unwrap();
    let chaos = cfg.policy("broker").unwrap().chaos().unwrap();
    assert_eq!(chaos.fault_rate(), 0.2);
    assert_eq!(chaos.fault_class(), Class::THROTTLED);
    assert_eq!(chaos.retry_after(), Some(Duration::from_secs(2)));
    assert_eq!(chaos.latency_rate(), 0.1);
    assert_eq!(
        chaos.latency_range(),
        (Duration::from_millis(100), Duration::from_millis(300))
    );
    assert_eq!(chaos.seed(), Some(7));
    assert_eq!(
        cfg.chaos_line().unwrap(),
        "chaos active (profile `staging`): broker: faults 20% throttled (Retry-After 2s), \
         latency 10% 100ms..300ms, seed 7; RETRY_CHAOS=off turns it off"
    );
    // The base file has none.
    let base = load(FILE, &Options::new()).unwrap();
    assert!(base.policy("broker").unwrap().chaos().is_none());
    assert_eq!(base.chaos_line(), None);
}

#[test]
fn explain_says_where_each_chaos_key_came_from() {
    let cfg = load(FILE, &Options::new().profile("staging")).unwrap();
    let explained = cfg.explain("broker").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    assert_eq!(get("chaos.fault_rate").value, "0.2");
    assert_eq!(
        get("chaos.fault_rate").layer,
        Layer::Profile("staging".into())
    );
    assert_eq!(get("chaos.latency_max").value, "300ms");
    assert_eq!(get("chaos.seed").value, "7");
    // A policy without chaos explains no chaos key.
    let base = load(FILE, &Options::new()).unwrap();
    assert!(
        base.explain("broker")
            .unwrap()
            .iter()
            .all(|e| !e.key.starts_with("chaos"))
    );
}

#[test]
fn a_production_profile_refuses_chaos_unless_it_allows_it() {
    let err = load(FILE, &Options::new().profile("prod")).unwrap_err();
    assert!(
        err.contains("policy `broker`: chaos (faults 5% transient) is refused under production profile `prod`"),
        "{err}"
    );
    assert!(err.contains("allow_chaos = true"), "{err}");
    // `retry-policy check` finds it too, under every profile.
    let diags = check_str(FILE, "retry.toml", &Options::new());
    assert!(diags.has_errors());
    // A profile named `production` is production's without saying so.
    let named = "[policies.a]\n[profiles.production.policies.a.chaos]\nlatency_rate = 0.5\nlatency = \"1s\"\n";
    assert!(load(named, &Options::new().profile("production")).is_err());
    // ... unless it says `production = false`, or allows chaos.
    let allowed = FILE.replace("production = true", "production = true\nallow_chaos = true");
    let cfg = load(&allowed, &Options::new().profile("prod")).unwrap();
    assert_eq!(
        cfg.policy("broker").unwrap().chaos().unwrap().fault_rate(),
        0.05
    );
    let not_prod = named.replace(
        "[profiles.production.policies",
        "[profiles.production]\nproduction = false\n[profiles.production.policies",
    );
    assert!(load(&not_prod, &Options::new().profile("production")).is_ok());
}

#[test]
fn retry_chaos_off_switches_every_chaos_table_off() {
    let env = Env::new().with("RETRY_CHAOS", "off");
    let cfg = load(FILE, &Options::new().profile("staging").env(env.clone())).unwrap();
    assert!(cfg.policy("broker").unwrap().chaos().is_none());
    assert!(cfg.chaos_off());
    assert_eq!(
        cfg.chaos_line().unwrap(),
        "chaos off (RETRY_CHAOS=off, profile `staging`): 1 policies' chaos ignored"
    );
    let explained = cfg.explain("broker").unwrap();
    let rate = explained
        .iter()
        .find(|e| e.key == "chaos.fault_rate")
        .unwrap();
    assert_eq!(rate.value, "off (RETRY_CHAOS=off)");
    // Off, a production profile has nothing to refuse.
    assert!(load(FILE, &Options::new().profile("prod").env(env)).is_ok());
    // Any other value is an error naming the variable.
    let bad = Env::new().with("RETRY_CHAOS", "of");
    let err = load(FILE, &Options::new().env(bad)).unwrap_err();
    assert!(
        err.contains("RETRY_CHAOS must be `off` or `on`, found `of`"),
        "{err}"
    );
}

#[test]
fn bad_chaos_values_get_an_error_naming_the_key_the_rule_and_the_fix() {
    let cases = [
        (
            "fault_rate = 1.5",
            "`fault_rate` must be from 0 to 1, found 1.5",
        ),
        (
            "latency_rate = -0.1",
            "`latency_rate` must be from 0 to 1, found -0.1",
        ),
        ("fault = \"transiant\"", "unknown fault class `transiant`"),
        ("falt_rate = 0.1", "unknown key `falt_rate`"),
        (
            "latency = \"11m\"\nlatency_rate = 0.1",
            "`chaos.latency` must be at most 10m",
        ),
        (
            "latency = \"300ms\"\nlatency_max = \"100ms\"\nlatency_rate = 0.1",
            "`chaos.latency_max` must be at least `latency`",
        ),
        (
            "fault_rate = 0.1\nretry_after = \"1s\"",
            "only a throttled fault carries a Retry-After",
        ),
    ];
    for (body, expected) in cases {
        let text = format!("[policies.a.chaos]\n{body}\n");
        let err = load(&text, &Options::new()).unwrap_err();
        assert!(err.contains(expected), "{body}: {err}");
        assert!(
            err.contains("retry.toml:"),
            "{body}: placed at its text: {err}"
        );
    }
    let err = load(
        "[policies.a.chaos]\nfault = \"transiant\"\n",
        &Options::new(),
    )
    .unwrap_err();
    assert!(err.contains("transient"), "did you mean: {err}");
    let err = load("[policies.a.chaos]\nfalt_rate = 0.1\n", &Options::new()).unwrap_err();
    assert!(err.contains("fault_rate"), "did you mean: {err}");
    let err = load(
        "[policies.a]\n[profiles.p]\nproduction = \"yes\"\n",
        &Options::new(),
    )
    .unwrap_err();
    assert!(
        err.contains("`profiles.p.production` must be true or false"),
        "{err}"
    );
}

#[test]
fn chaos_in_the_base_file_applies_and_extends_inherits_it() {
    let text =
        "[policies.a.chaos]\nfault_rate = 0.3\n[policies.b]\nextends = \"a\"\n[profiles.staging]\n";
    let cfg = load(text, &Options::new()).unwrap();
    assert_eq!(cfg.policy("b").unwrap().chaos().unwrap().fault_rate(), 0.3);
    // With no profile selected, it is what production runs: a warning each.
    let warnings = cfg.warnings().render();
    assert!(
        warnings.contains("policy `a` injects chaos with no profile selected"),
        "{warnings}"
    );
    assert!(warnings.contains("policy `b` injects chaos with no profile selected"));
    let staged = load(text, &Options::new().profile("staging")).unwrap();
    assert!(
        staged.warnings().is_empty(),
        "{}",
        staged.warnings().render()
    );
    assert!(staged.policy("a").unwrap().chaos().is_some());
    // Rates of 0 inject nothing: no chaos at all.
    let cfg = load("[policies.a.chaos]\nfault_rate = 0\n", &Options::new()).unwrap();
    assert!(cfg.policy("a").unwrap().chaos().is_none());
}

#[test]
fn a_hedging_policy_with_chaos_is_an_error_at_its_hedge_after() {
    let text = "[policies.a]\nhedge_after = \"10ms\"\n[profiles.staging.policies.a.chaos]\nfault_rate = 0.1\n";
    let err = load(text, &Options::new().profile("staging")).unwrap_err();
    assert!(err.contains("cannot be combined with chaos yet"), "{err}");
    assert!(
        err.contains("retry.toml:2:15"),
        "placed at hedge_after: {err}"
    );
    assert!(load(text, &Options::new()).is_ok());
}
