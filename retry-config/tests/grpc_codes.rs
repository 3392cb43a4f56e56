//! `grpc_retry_on`: gRPC status codes by name, as service configs write
//! them. A misspelled code is an error at its text with a did-you-mean; the
//! codes reach the built policy; an environment variable sets them as a
//! comma-separated list.

use retrykit_config::{Config, Env, Options};

fn file(codes: &str) -> String {
    format!("[policies.a]\ncap = \"1s\"\ngrpc_retry_on = {codes}\n")
}

#[test]
fn named_codes_reach_the_policy_and_unset_means_the_defaults() {
    let text = file("[\"UNAVAILABLE\", \"ABORTED\", \"RESOURCE_EXHAUSTED\"]");
    let config = Config::load_str(&text, "f.toml", &Options::new()).unwrap();
    let policy = config.policy("a").unwrap();
    assert_eq!(policy.grpc_retry_on(), Some(&[14, 10, 8][..]));
    let explained = config.explain("a").unwrap();
    let field = explained.iter().find(|f| f.key == "grpc_retry_on").unwrap();
    assert_eq!(
        field.value,
        "[\"UNAVAILABLE\", \"ABORTED\", \"RESOURCE_EXHAUSTED\"]"
    );
    let plain =
        Config::load_str("[policies.a]\ncap = \"1s\"\n", "f.toml", &Options::new()).unwrap();
    assert_eq!(plain.policy("a").unwrap().grpc_retry_on(), None);
}

#[test]
fn every_misspelled_code_is_an_error_at_its_text_with_a_did_you_mean() {
    let text = file(
        "[\"UNAVAILABLE\", \"ABORTD\", \"unavailable\", \"OK\", 14, \"NOTHING_LIKE_A_CODE_AT_ALL\"]",
    );
    let diags = Config::load_str(&text, "f.toml", &Options::new()).unwrap_err();
    let errors: Vec<_> = diags.errors().collect();
    let rendered = diags.render();
    assert_eq!(errors.len(), 5, "{rendered}");
    let at: Vec<(usize, usize)> = errors
        .iter()
        .map(|e| e.span.as_ref().unwrap().line_column())
        .collect();
    assert_eq!(
        at,
        [(3, 33), (3, 43), (3, 58), (3, 64), (3, 68)],
        "{rendered}"
    );
    assert!(rendered.contains("f.toml:3:33"), "{rendered}");
    let suggestions: Vec<Option<&str>> = errors.iter().map(|e| e.suggestion.as_deref()).collect();
    assert_eq!(
        suggestions,
        [Some("ABORTED"), Some("UNAVAILABLE"), None, None, None],
        "{rendered}"
    );
    assert!(
        errors[0].message.contains("`grpc_retry_on[1]` is `ABORTD`"),
        "{rendered}"
    );
    assert!(
        errors[2].message.contains("OK, which is a success"),
        "{rendered}"
    );
    assert!(errors[3].message.contains("a string"), "{rendered}");
    assert!(
        errors[4]
            .notes
            .join("\n")
            .contains("UNAVAILABLE, DATA_LOSS"),
        "the codes are listed: {rendered}"
    );
}

#[test]
fn an_empty_list_is_an_error_naming_a6s_rule_and_the_fix() {
    let diags = Config::load_str(&file("[]"), "f.toml", &Options::new()).unwrap_err();
    let rendered = diags.render();
    let e = diags.errors().next().unwrap();
    assert_eq!(
        e.span.as_ref().unwrap().line_column(),
        (3, 17),
        "{rendered}"
    );
    assert!(rendered.contains("may not be empty"), "{rendered}");
    assert!(
        rendered.contains("leave the key out for the defaults"),
        "{rendered}"
    );
}

#[test]
fn an_environment_variable_sets_the_codes_and_a_misspelled_one_is_placed_in_it() {
    let base = "[policies.a]\ncap = \"1s\"\n";
    let env = Env::new().with("RETRY_POLICY__A__GRPC_RETRY_ON", "ABORTED, UNAVAILABLE");
    let config = Config::load_str(base, "f.toml", &Options::new().env(env)).unwrap();
    assert_eq!(
        config.policy("a").unwrap().grpc_retry_on(),
        Some(&[10, 14][..])
    );
    let env = Env::new().with("RETRY_POLICY__A__GRPC_RETRY_ON", "UNAVAILABLE,ABORTD");
    let diags = Config::load_str(base, "f.toml", &Options::new().env(env)).unwrap_err();
    let e = diags.errors().next().unwrap();
    assert_eq!(
        e.span.as_ref().unwrap().text(),
        "ABORTD",
        "{}",
        diags.render()
    );
    assert_eq!(e.suggestion.as_deref(), Some("ABORTED"));
}
