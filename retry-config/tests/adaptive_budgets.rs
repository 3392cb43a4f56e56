//! `mode = "adaptive"` budgets from the file, and policies that compose
//! several budgets (`budget = ["broker", "aws"]`). The invalid cases (an
//! unknown mode, a key that does not apply to the mode, a name listed twice
//! or undefined, `none` in a list) are in the corpus.

use retrykit_config::{Config, Env, Options};
use std::sync::Arc;

const FILE: &str = r#"
[policies.p]
budget = ["broker", "aws"]

[policies.q]
budget = "aws"

[budgets.broker]
ratio = 0.2

[budgets.aws]
mode = "adaptive"
"#;

fn load(env: Env) -> Config {
    Config::load_str(FILE, "retry.toml", &Options::new().env(env)).expect("a valid file")
}

#[test]
fn a_policy_uses_every_budget_it_lists() {
    let config = load(Env::new());
    let (broker, aws) = (
        config.budget("broker").unwrap(),
        config.budget("aws").unwrap(),
    );
    assert_eq!(
        (broker.mode().as_str(), aws.mode().as_str()),
        ("window", "adaptive")
    );
    assert!(aws.limiter().is_some() && broker.limiter().is_none());
    let p = config.policy("p").unwrap();
    assert_eq!(p.budgets().len(), 2);
    assert!(Arc::ptr_eq(&p.budgets()[0], broker));
    assert!(Arc::ptr_eq(&p.budgets()[1], aws));
    // Shared: the other policy's adaptive budget is the same limiter.
    assert!(Arc::ptr_eq(&config.policy("q").unwrap().budgets()[0], aws));
    let budget = config.explain("p").unwrap();
    let budget = budget.iter().find(|e| e.key == "budget").unwrap();
    assert_eq!(budget.value, r#"["broker", "aws"]"#);
    let mode = config.explain_budget("aws").unwrap();
    assert_eq!(
        mode.iter().find(|e| e.key == "mode").unwrap().value,
        "adaptive"
    );
}

#[test]
fn the_environment_lists_budgets_separated_by_commas() {
    let env = Env::new().with("RETRY_POLICY__Q__BUDGET", "aws, broker");
    let config = load(env);
    let q = config.policy("q").unwrap();
    let modes: Vec<&str> = q.budgets().iter().map(|b| b.mode().as_str()).collect();
    assert_eq!(modes, ["adaptive", "window"]);
}

#[test]
fn a_reload_keeps_every_budget_of_a_policy_and_the_limiters_state() {
    let config = load(Env::new());
    let first = config.registry(None);
    let aws = first.budget("aws").unwrap().clone();
    aws.limiter()
        .unwrap()
        .record(std::time::Instant::now(), true);
    let second = load(Env::new()).registry(Some(&first));
    let p = second.policy("p").unwrap();
    assert!(Arc::ptr_eq(&p.budgets()[1], &aws));
    assert!(Arc::ptr_eq(
        &p.budgets()[0],
        first.budget("broker").unwrap()
    ));
    assert!(p.budgets()[1].limiter().unwrap().is_limiting());
}

#[test]
fn a_budget_changed_to_adaptive_is_a_new_budget() {
    let first = load(Env::new()).registry(None);
    let env = Env::new().with("RETRY_BUDGET__BROKER__MODE", "adaptive");
    let text = FILE.replace("ratio = 0.2\n", "");
    let config = Config::load_str(&text, "retry.toml", &Options::new().env(env)).unwrap();
    let second = config.registry(Some(&first));
    let broker = second.budget("broker").unwrap();
    assert_eq!(broker.mode().as_str(), "adaptive");
    assert!(!Arc::ptr_eq(broker, first.budget("broker").unwrap()));
}
