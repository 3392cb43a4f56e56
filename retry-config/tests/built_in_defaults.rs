//! The schema's built-in defaults (what `explain` and the build-time check
//! take for a key no layer sets) are retrykit-core's: a policy that writes every
//! default out is the policy that writes nothing, and `Policy::default()`.

use retrykit_config::{Config, Layer, Options};
use retrykit_core::{Policy, RetryBudget};
use retrykit_schema::keys::{BREAKER_KEYS, BUDGET_KEYS, Key};
use std::fmt::Write;

/// A file with `[policies.written]`, `[budgets.written]` and
/// `[breakers.written]` setting every key to its schema default, and an
/// empty `built-in` of each.
fn defaults_file() -> String {
    let mut text = String::new();
    for (table, keys) in [
        ("policies", retrykit_schema::keys::POLICY_KEYS),
        ("budgets", BUDGET_KEYS),
        ("breakers", BREAKER_KEYS),
    ] {
        writeln!(text, "[{table}.written]").unwrap();
        for key in keys {
            if let Some(value) = key.built_in().as_toml() {
                writeln!(text, "{} = {value}", key.name()).unwrap();
            }
        }
        writeln!(text, "[{table}.built-in]").unwrap();
    }
    text
}

#[test]
fn built_in_defaults_are_retry_cores() {
    let text = defaults_file();
    let config = Config::load_str(&text, "defaults.toml", &Options::new())
        .unwrap_or_else(|d| panic!("{}\n{text}", d.render()));
    let explained = [
        (config.explain("written"), config.explain("built-in")),
        (
            config.explain_budget("written"),
            config.explain_budget("built-in"),
        ),
        (
            config.explain_breaker("written"),
            config.explain_breaker("built-in"),
        ),
    ];
    for (written, built_in) in explained {
        let (written, built_in) = (written.unwrap(), built_in.unwrap());
        assert_eq!(written.len(), built_in.len());
        for (w, b) in written.iter().zip(&built_in) {
            assert_eq!(w.key, b.key);
            assert_eq!(
                w.value, b.value,
                "`{}`: the schema's default is not retrykit-core's",
                w.key
            );
            assert_eq!(b.layer, Layer::Builtin, "`{}`", b.key);
        }
    }
    // And field by field, against retrykit-core's own defaults.
    let written = config.policy("written").unwrap();
    let core = Policy::default();
    assert_eq!(written.backoff(), core.backoff());
    assert_eq!(written.base(), core.base());
    assert_eq!(written.cap(), core.cap());
    assert_eq!(written.min_delay(), core.min_delay());
    assert_eq!(written.jitter(), core.jitter());
    assert_eq!(written.max_attempts(), core.max_attempts());
    assert_eq!(written.deadline(), core.deadline());
    assert_eq!(written.attempt_timeout(), core.attempt_timeout());
    assert_eq!(written.retry_on(), core.retry_on());
    assert_eq!(written.max_retry_after(), core.max_retry_after());
    assert_eq!(written.retry_on_status(), core.retry_on_status());
    assert_eq!(written.retry_methods(), core.retry_methods());
    assert_eq!(written.max_replay_body(), core.max_replay_body());
    assert!(written.budget().is_none() && core.budget().is_none());
    assert!(written.breaker().is_none() && core.breaker().is_none());
    let breaker = config.breaker("written").unwrap();
    let core_breaker = retrykit_core::breaker::CircuitBreaker::builder()
        .name("written")
        .build()
        .unwrap();
    assert!(
        breaker.same_settings(&core_breaker),
        "a breaker that writes every default out is retrykit-core's default"
    );
    let budget = config.explain_budget("written").unwrap();
    let core_budget = RetryBudget::builder().build().unwrap();
    let value = |key: Key| &budget.iter().find(|f| f.key == key.name()).unwrap().value;
    assert_eq!(
        value(Key::Ratio),
        &retrykit_config::show_number(core_budget.ratio())
    );
    assert_eq!(
        value(Key::MinPerSec),
        &retrykit_config::show_number(core_budget.min_per_sec())
    );
    assert_eq!(
        value(Key::Window),
        &retrykit_config::show_duration(core_budget.window())
    );
}
