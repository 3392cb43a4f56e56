//! Overlay order (defaults, extends chain, profile, environment), extends
//! chains and cycles, environment value forms, warnings, and budgets that
//! survive a reload.

use retrykit_config::{Config, Diagnostics, Env, Layer, Options, check_str};
use retrykit_core::{Backoff, Jitter};
use std::sync::Arc;
use std::time::Duration;

const FILE: &str = r#"
[defaults]
jitter = "equal"
max_attempts = 5
cap = "10s"

[policies.root]
base = "100ms"
cap = "30s"
deadline = "2m"

[policies.middle]
extends = "root"
base = "200ms"

[policies.leaf]
extends = "middle"
max_attempts = 7

[budgets.broker]
ratio = 0.1

[policies.billing]
budget = "broker"
cap = "1s"

[profiles.test.policies.root]
base = "1ms"
cap = "5ms"

[profiles.test.policies.leaf]
cap = "4ms"

[profiles.test.budgets.broker]
ratio = 0.5

[profiles.prod]
"#;

fn load(options: &Options) -> Config {
    match Config::load_str(FILE, "retry.toml", options) {
        Ok(c) => c,
        Err(d) => panic!("{}", d.render()),
    }
}

fn layer_of(config: &Config, policy: &str, key: &str) -> (String, Layer) {
    let f = config
        .explain(policy)
        .unwrap()
        .into_iter()
        .find(|f| f.key == key)
        .unwrap();
    (f.value, f.layer)
}

#[test]
fn extends_chain_inherits_nearest_ancestor_first() {
    let c = load(&Options::new());
    let leaf = c.policy("leaf").unwrap();
    assert_eq!(leaf.base(), Duration::from_millis(200)); // middle beats root
    assert_eq!(leaf.cap(), Duration::from_secs(30)); // root beats [defaults]
    assert_eq!(leaf.max_attempts(), Some(7)); // own table beats [defaults]
    assert_eq!(leaf.jitter(), Jitter::Equal); // [defaults]
    assert_eq!(leaf.deadline(), Some(Duration::from_secs(120)));
    assert_eq!(c.extends("leaf").unwrap(), ["middle", "root"]);
    assert_eq!(
        layer_of(&c, "leaf", "base").1,
        Layer::Extends("middle".into())
    );
    assert_eq!(layer_of(&c, "leaf", "cap").1, Layer::Extends("root".into()));
    assert_eq!(layer_of(&c, "leaf", "max_attempts").1, Layer::File);
    assert_eq!(layer_of(&c, "leaf", "jitter").1, Layer::Defaults);
    assert_eq!(layer_of(&c, "leaf", "min_delay").1, Layer::Builtin);
}

#[test]
fn profile_overlays_beat_the_file_and_apply_along_the_chain() {
    let c = load(&Options::new().profile("test"));
    let root = c.policy("root").unwrap();
    assert_eq!(
        (root.base(), root.cap()),
        (Duration::from_millis(1), Duration::from_millis(5))
    );
    let middle = c.policy("middle").unwrap();
    // middle's own base (200ms) loses to the profile's overlay of its ancestor.
    assert_eq!(middle.base(), Duration::from_millis(1));
    assert_eq!(
        layer_of(&c, "middle", "base").1,
        Layer::Profile("test".into())
    );
    let leaf = c.policy("leaf").unwrap();
    assert_eq!(leaf.cap(), Duration::from_millis(4)); // the leaf's own overlay is nearer
    assert_eq!(c.budget("broker").unwrap().ratio(), 0.5);
    // An empty profile selects the base settings.
    let prod = load(&Options::new().profile("prod"));
    assert_eq!(
        prod.policy("root").unwrap().base(),
        Duration::from_millis(100)
    );
    assert_eq!(prod.profile(), Some("prod"));
}

#[test]
fn environment_beats_profile_and_file_and_is_named_in_explain() {
    let env = Env::new()
        .with("RETRY_POLICY__ROOT__BASE", "2ms")
        .with("RETRY_POLICY__LEAF__JITTER", "{ proportional = 0.3 }")
        .with("RETRY_POLICY__LEAF__RETRY_ON", "transient, throttled")
        .with("RETRY_POLICY__MIDDLE__DEADLINE", "none")
        .with("RETRY_BUDGET__BROKER__RATIO", "0.25")
        .with("UNRELATED", "ignored");
    let c = load(&Options::new().profile("test").env(env));
    assert_eq!(c.policy("root").unwrap().base(), Duration::from_millis(2));
    assert_eq!(
        layer_of(&c, "root", "base").1,
        Layer::Env("RETRY_POLICY__ROOT__BASE".into())
    );
    let leaf = c.policy("leaf").unwrap();
    assert_eq!(leaf.base(), Duration::from_millis(2)); // the root's variable reaches its descendants
    assert_eq!(leaf.jitter(), Jitter::Proportional(0.3));
    assert_eq!(leaf.retry_on().unwrap().len(), 2);
    assert_eq!(leaf.deadline(), None);
    assert_eq!(c.budget("broker").unwrap().ratio(), 0.25);
}

#[test]
fn a_policy_name_with_a_dash_maps_to_an_underscore() {
    let text = "[policies.outbox-fast]\ncap = \"1s\"\n";
    let env = Env::new().with("RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS", "2");
    let c = Config::load_str(text, "f", &Options::new().env(env)).unwrap();
    assert_eq!(c.policy("outbox-fast").unwrap().max_attempts(), Some(2));
}

#[test]
fn an_environment_error_names_the_variable_and_blocks_the_load() {
    let env = Env::new().with("RETRY_POLICY__ROOT__CAP", "soon");
    let err = Config::load_str(FILE, "retry.toml", &Options::new().env(env)).unwrap_err();
    let d = err.errors().next().unwrap();
    assert_eq!(d.key, "RETRY_POLICY__ROOT__CAP");
    assert!(
        d.render().contains("RETRY_POLICY__ROOT__CAP=soon"),
        "{}",
        d.render()
    );
}

#[test]
fn cycles_are_reported_once_and_other_policies_still_checked() {
    let text = "[policies.a]\nextends = \"b\"\n[policies.b]\nextends = \"a\"\n[policies.c]\nextends = \"a\"\n[policies.d]\nbase = 5\n";
    let err = Config::load_str(text, "f", &Options::new()).unwrap_err();
    let messages: Vec<_> = err.errors().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages.iter().filter(|m| m.contains("cycle")).count(),
        1,
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("`base` needs a unit")),
        "{messages:?}"
    );
}

#[test]
fn a_chain_as_deep_as_the_limit_resolves() {
    let deepest = retrykit_config::MAX_EXTENDS_DEPTH;
    let mut text = String::from("[policies.p0]\ncap = \"1s\"\nmax_attempts = 2\n");
    for i in 1..=deepest {
        text.push_str(&format!("[policies.p{i}]\nextends = \"p{}\"\n", i - 1));
    }
    let c = Config::load_str(&text, "f", &Options::new()).unwrap();
    let last = format!("p{deepest}");
    assert_eq!(c.policy(&last).unwrap().max_attempts(), Some(2));
    assert_eq!(c.extends(&last).unwrap().len(), deepest);
}

#[test]
fn check_covers_every_profile_but_load_only_the_selected_one() {
    let text = "[policies.a]\nbase = \"1s\"\ncap = \"2s\"\n[profiles.slow.policies.a]\nbase = \"5s\"\n[profiles.fast]\n";
    assert!(Config::load_str(text, "f", &Options::new()).is_ok());
    assert!(Config::load_str(text, "f", &Options::new().profile("fast")).is_ok());
    let diags = check_str(text, "f", &Options::new());
    let e = diags
        .errors()
        .next()
        .expect("the slow profile breaks cap >= base");
    assert!(
        e.notes.iter().any(|n| n.contains("with profile `slow`")),
        "{e:?}"
    );
    assert_eq!(diags.errors().count(), 1);
}

fn warnings(text: &str) -> Diagnostics {
    Config::load_str(text, "f", &Options::new())
        .unwrap_or_else(|d| panic!("{}", d.render()))
        .warnings()
        .clone()
}

#[test]
fn each_risky_policy_gets_its_warning() {
    let cases = [
        (
            "[policies.a]\ncap = \"1m\"\nmax_attempts = 100\n",
            "bounds nothing in practice",
        ),
        (
            "[policies.a]\ncap = \"1s\"\njitter = \"none\"\n",
            "no jitter",
        ),
        (
            "[policies.a]\nbase = \"2s\"\ncap = \"2s\"\ndeadline = \"1s\"\n",
            "not longer than the first wait",
        ),
        (
            "[policies.a]\ncap = \"5m\"\ndeadline = \"1m\"\n",
            "beyond the deadline",
        ),
        (
            "[policies.a]\ncap = \"1s\"\nmax_attempts = 10\nattempt_timeout = \"30s\"\ndeadline = \"1m\"\n",
            "far beyond the deadline",
        ),
        (
            "[policies.a]\ncap = \"1s\"\nretry_on = [\"transport\"]\n",
            "no code declares",
        ),
        (
            "[policies.a]\ncap = \"1s\"\nretry_on = []\n",
            "no error is retried",
        ),
        (
            "[policies.a]\nbackoff = \"linear\"\nfactor = 3.0\ncap = \"1s\"\n",
            "ignored by linear",
        ),
        (
            "[budgets.b]\n[policies.a]\ncap = \"1s\"\n",
            "not used by any policy",
        ),
    ];
    for (text, expected) in cases {
        let w = warnings(text);
        assert!(
            w.iter().any(|d| d.message.contains(expected)),
            "{text:?}: expected {expected:?} in\n{}",
            w.render()
        );
        assert!(!w.has_errors());
    }
    // A sound policy warns about nothing.
    let sound = "[policies.a]\nbase = \"100ms\"\ncap = \"5s\"\nmax_attempts = 4\ndeadline = \"30s\"\nattempt_timeout = \"2s\"\n";
    assert!(warnings(sound).is_empty(), "{}", warnings(sound).render());
}

#[test]
fn retry_on_is_checked_against_declared_classes_when_known() {
    let text = "[policies.a]\ncap = \"1s\"\nretry_on = [\"conflict\", \"transient\"]\n";
    assert!(warnings(text).is_empty()); // unknown classes: nothing to say
    let opts = Options::new().known_classes(["conflikt"]);
    let err = Config::load_str(text, "f", &opts).unwrap_err();
    let e = err.errors().next().unwrap();
    assert_eq!(e.suggestion.as_deref(), Some("conflikt"));
    let opts = Options::new().known_classes(["conflict"]);
    assert!(
        Config::load_str(text, "f", &opts)
            .unwrap()
            .warnings()
            .is_empty()
    );
}

#[test]
fn deny_warnings_fails_the_load() {
    let text = "[policies.a]\ncap = \"1s\"\njitter = \"none\"\n";
    assert!(Config::load_str(text, "f", &Options::new()).is_ok());
    let err = Config::load_str(text, "f", &Options::new().deny_warnings(true)).unwrap_err();
    assert!(err.has_errors());
}

#[test]
fn the_issue_example_loads_with_every_field() {
    let text = r#"
[defaults]
jitter = "full"
max_attempts = 5

[policies.outbox]
backoff = "exponential"
base = "100ms"
factor = 2.0
cap = "30s"
min_delay = "0ms"
jitter = "full"
max_attempts = 8
deadline = "2m"
attempt_timeout = "5s"
retry_on = ["transient", "throttled"]
max_retry_after = "60s"
budget = "broker"

[policies.outbox-fast]
extends = "outbox"
cap = "2s"

[budgets.broker]
ratio = 0.1
min_per_sec = 10
window = "10s"

[profiles.test.policies.outbox]
base = "1ms"
cap = "5ms"
"#;
    let c = Config::load_str(text, "retry.toml", &Options::new()).unwrap();
    assert!(c.warnings().is_empty(), "{}", c.warnings().render());
    let p = c.policy("outbox").unwrap();
    assert_eq!(p.backoff(), Backoff::Exponential { factor: 2.0 });
    assert_eq!(p.max_retry_after(), Some(Duration::from_secs(60)));
    assert_eq!(p.attempt_timeout(), Some(Duration::from_secs(5)));
    let fast = c.policy("outbox-fast").unwrap();
    assert_eq!(fast.cap(), Duration::from_secs(2));
    // Both policies share the one broker budget.
    assert!(Arc::ptr_eq(p.budget().unwrap(), fast.budget().unwrap()));
    assert!(Arc::ptr_eq(
        p.budget().unwrap(),
        c.budget("broker").unwrap()
    ));
    let b = c.budget("broker").unwrap();
    assert_eq!(
        (b.ratio(), b.min_per_sec(), b.window()),
        (0.1, 10.0, Duration::from_secs(10))
    );
}

#[test]
fn a_reload_keeps_unchanged_budgets_and_replaces_changed_ones() {
    let text = "[budgets.same]\n[budgets.changed]\nratio = 0.1\n[policies.a]\ncap = \"1s\"\nbudget = \"same\"\n[policies.b]\ncap = \"1s\"\nbudget = \"changed\"\n";
    let first = Config::load_str(text, "f", &Options::new())
        .unwrap()
        .registry(None);
    let now = std::time::Instant::now();
    first.budget("same").unwrap().deposit(now);
    let edited = text.replace("ratio = 0.1", "ratio = 0.2");
    let second = Config::load_str(&edited, "f", &Options::new())
        .unwrap()
        .registry(Some(&first));
    assert!(Arc::ptr_eq(
        first.budget("same").unwrap(),
        second.budget("same").unwrap()
    ));
    assert_eq!(second.budget("same").unwrap().totals(now), (1, 0)); // counts carried over
    assert!(!Arc::ptr_eq(
        first.budget("changed").unwrap(),
        second.budget("changed").unwrap()
    ));
    let a = second.policy("a").unwrap();
    assert!(Arc::ptr_eq(
        a.budget().unwrap(),
        second.budget("same").unwrap()
    ));
    let b = second.policy("b").unwrap();
    assert!(Arc::ptr_eq(
        b.budget().unwrap(),
        second.budget("changed").unwrap()
    ));
}

#[test]
fn durations_accept_the_documented_units() {
    for (text, expected) in [
        ("250ms", Duration::from_millis(250)),
        ("1.5s", Duration::from_millis(1500)),
        ("2m", Duration::from_secs(120)),
        ("1h", Duration::from_secs(3600)),
        ("1m 30s", Duration::from_secs(90)),
        ("0", Duration::ZERO),
    ] {
        let file = format!("[policies.a]\nmin_delay = \"{text}\"\ncap = \"2h\"\n");
        let c = Config::load_str(&file, "f", &Options::new()).unwrap();
        assert_eq!(c.policy("a").unwrap().min_delay(), expected, "{text}");
    }
}

/// The HTTP keys layer like every other key: `[defaults]`, the extends
/// chain, the profile, then the environment (a comma-separated list there).
#[test]
fn http_keys_follow_the_layer_order() {
    let file = r#"
[defaults]
retry_on_status = [409]

[policies.api]
retry_methods = ["POST"]

[policies.api-bulk]
extends = "api"
max_replay_body = 1048576

[profiles.test.policies.api]
retry_on_status = [425, 409]
"#;
    let env = Env::new().with("RETRY_POLICY__API_BULK__RETRY_METHODS", "PATCH, POST");
    let options = Options::new().profile("test").env(env);
    let config =
        Config::load_str(file, "retry.toml", &options).unwrap_or_else(|d| panic!("{}", d.render()));
    let bulk = config.policy("api-bulk").unwrap();
    assert_eq!(
        bulk.retry_on_status(),
        &[425, 409],
        "the profile's overlay of its ancestor"
    );
    let methods: Vec<&str> = bulk.retry_methods().iter().map(|m| &**m).collect();
    assert_eq!(methods, ["PATCH", "POST"], "the environment, last");
    assert_eq!(bulk.max_replay_body(), 1_048_576);
    let api = config.policy("api").unwrap();
    assert_eq!(api.max_replay_body(), 65_536, "the built-in default");
    assert_eq!(
        layer_of(&config, "api-bulk", "retry_methods"),
        (
            "[\"PATCH\", \"POST\"]".to_owned(),
            Layer::Env("RETRY_POLICY__API_BULK__RETRY_METHODS".into())
        )
    );
    assert_eq!(
        layer_of(&config, "api-bulk", "retry_on_status").0,
        "[425, 409]"
    );
    assert_eq!(
        layer_of(&config, "api", "max_replay_body").1,
        Layer::Builtin
    );
}
