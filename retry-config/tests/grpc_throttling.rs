//! `mode = "grpc_throttling"` budgets from the file: gRFC A6's token bucket
//! (`max_tokens`, `token_ratio`), one per table, shared by every policy
//! that names it, set from the environment and profiles too, and kept with
//! its count across a reload. The gRPC tower layer feeds the bucket
//! (`examples/tests/grpc.rs` runs a file's bucket over tonic); here the
//! tests record outcomes in it as the layer does and watch the calls of
//! every policy sharing it. The invalid files are in the corpus
//! (`budget_grpc_throttling_*`, `budget_window_with_bucket_keys`,
//! `env_budget_grpc_throttling_token_ratio`).

use retrykit_config::{Config, Env, Options};
use retrykit_core::{Ending, GrpcThrottling, Policy, Report, Retry};
use std::io::{Error, ErrorKind};
use std::sync::Arc;

const FILE: &str = r#"
[defaults]
base = "1us"
cap = "1us"
jitter = "none"
max_attempts = 3

[policies.orders]
budget = "grpc"

[policies.search]
budget = ["grpc", "broker"]

[budgets.grpc]
mode = "grpc_throttling"
max_tokens = 4
token_ratio = 0.5

[budgets.broker]
ratio = 0.5
"#;

fn load(text: &str, env: Env) -> Config {
    Config::load_str(text, "retry.toml", &Options::new().env(env))
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

/// A call whose every attempt fails with a transient error, and its report.
fn failing_call(policy: &Policy) -> Report {
    let (result, report) = Retry::blocking(policy)
        .call_blocking_with_report(|| Err::<(), _>(Error::from(ErrorKind::ConnectionReset)));
    assert!(result.is_err());
    report
}

fn bucket(config: &Config) -> &GrpcThrottling {
    config.budget("grpc").unwrap().throttling().unwrap()
}

#[test]
fn the_file_names_a6s_bucket_and_every_policy_naming_it_shares_it() {
    let config = load(FILE, Env::new());
    let grpc = config.budget("grpc").unwrap();
    assert_eq!(grpc.mode().as_str(), "grpc_throttling");
    let b = bucket(&config);
    assert_eq!(
        (b.max_tokens(), b.token_ratio(), b.tokens()),
        (4.0, 0.5, 4.0)
    );
    let (orders, search) = (
        config.policy("orders").unwrap(),
        config.policy("search").unwrap(),
    );
    assert!(Arc::ptr_eq(&orders.budgets()[0], grpc));
    assert!(Arc::ptr_eq(&search.budgets()[0], grpc));
    // The loop feeds the bucket: each failed attempt the policy would
    // retry drains a token. 4 -> 3 (more than half: retried) -> 2 (half:
    // A6 sends no retry and no hedge while the count is at most half).
    let report = failing_call(orders);
    assert_eq!((report.ending, report.attempts), (Ending::BudgetEmpty, 2));
    assert_eq!(b.tokens(), 2.0);
    // The other policy naming it shares it: at half, no retry (2 -> 1).
    let report = failing_call(search);
    assert_eq!((report.ending, report.attempts), (Ending::BudgetEmpty, 1));
    assert_eq!(b.tokens(), 1.0);
    // Each success gives back token_ratio: 1 -> 3.5 after five, above
    // half: retries resume (3.5 -> 2.5, retried -> 1.5, not).
    for _ in 0..5 {
        b.record(false);
    }
    assert_eq!(b.tokens(), 3.5);
    let report = failing_call(search);
    assert_eq!((report.ending, report.attempts), (Ending::BudgetEmpty, 2));
    // A policy without the budget is not held back by it.
    let plain = load(
        "[policies.plain]\nbase = \"1us\"\ncap = \"1us\"\n",
        Env::new(),
    );
    assert_eq!(failing_call(plain.policy("plain").unwrap()).attempts, 3);
}

#[test]
fn explain_says_which_keys_the_mode_uses_and_where_each_came_from() {
    let env = Env::new().with("RETRY_BUDGET__GRPC__TOKEN_RATIO", "0.25");
    let config = load(FILE, env);
    assert_eq!(bucket(&config).token_ratio(), 0.25);
    let explained = config.explain_budget("grpc").unwrap();
    let row = |key: &str| explained.iter().find(|e| e.key == key).unwrap();
    assert_eq!(row("mode").value, "grpc_throttling");
    assert_eq!(row("max_tokens").value, "4");
    assert_eq!(row("token_ratio").value, "0.25");
    assert_eq!(
        row("token_ratio").layer.to_string(),
        "environment RETRY_BUDGET__GRPC__TOKEN_RATIO"
    );
    for key in ["ratio", "min_per_sec", "window", "scope", "store"] {
        assert_eq!(
            row(key).value,
            "- (unused by grpc_throttling budgets)",
            "{key}"
        );
    }
    // A window budget says the bucket's keys are not its own.
    let broker = config.explain_budget("broker").unwrap();
    let max = broker.iter().find(|e| e.key == "max_tokens").unwrap();
    assert_eq!(max.value, "- (unused by window budgets)");
}

#[test]
fn the_environment_and_profiles_make_a_budget_a6s_bucket() {
    let text = "[policies.p]\nbudget = \"b\"\n[budgets.b]\n\
                [profiles.grpc.budgets.b]\nmode = \"grpc_throttling\"\nmax_tokens = 10\n";
    let env = Env::new().with("RETRY_BUDGET__B__TOKEN_RATIO", "0.1");
    let options = Options::new().env(env).profile("grpc");
    let config =
        Config::load_str(text, "retry.toml", &options).unwrap_or_else(|d| panic!("{}", d.render()));
    let t = config.budget("b").unwrap().throttling().unwrap();
    assert_eq!((t.max_tokens(), t.token_ratio()), (10.0, 0.1));
    // Without the profile, the variable sets a key a window budget lacks.
    let env = Env::new().with("RETRY_BUDGET__B__TOKEN_RATIO", "0.1");
    let errors = Config::load_str(text, "retry.toml", &Options::new().env(env)).unwrap_err();
    let rendered = errors.to_string();
    assert!(
        rendered.contains("`token_ratio` does not apply to a budget whose mode is \"window\""),
        "{rendered}"
    );
}

#[test]
fn a_reload_keeps_the_bucket_and_its_count_while_its_settings_are_unchanged() {
    let first = load(FILE, Env::new()).registry(None);
    let grpc = first.budget("grpc").unwrap().clone();
    grpc.throttling().unwrap().record(true);
    let second = load(FILE, Env::new()).registry(Some(&first));
    let kept = second.budget("grpc").unwrap();
    assert!(Arc::ptr_eq(kept, &grpc));
    assert_eq!(kept.throttling().unwrap().tokens(), 3.0);
    // A new max_tokens is a new bucket, full.
    let changed = FILE.replace("max_tokens = 4", "max_tokens = 6");
    let third = load(&changed, Env::new()).registry(Some(&second));
    let fresh = third.budget("grpc").unwrap();
    assert!(!Arc::ptr_eq(fresh, &grpc));
    assert_eq!(fresh.throttling().unwrap().tokens(), 6.0);
    assert!(Arc::ptr_eq(
        &third.policy("orders").unwrap().budgets()[0],
        fresh
    ));
}
