//! The import's rules, on service configs in the test.

use super::*;

const CONFIG: &str = r#"{
  "methodConfig": [
    { "name": [{"service": "helloworld.Greeter", "method": "SayHello"}, {"service": "helloworld.Admin"}],
      "timeout": "2.5s",
      "retryPolicy": { "maxAttempts": 9, "initialBackoff": "0.1s", "maxBackoff": "1s",
                       "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", 8, "ABORTED"] } },
    { "name": [{}],
      "hedgingPolicy": { "maxAttempts": 3, "hedgingDelay": "0.05s", "nonFatalStatusCodes": ["UNAVAILABLE"] } }
  ],
  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
}"#;

#[test]
fn a_service_config_becomes_named_policies_with_warnings_for_what_is_left_out() {
    let out = import(CONFIG).unwrap();
    let t = &out.toml;
    assert!(t.contains("# helloworld.Greeter/SayHello: RetryLayer::policy(\"helloworld-Greeter-SayHello\").grpc()\n[policies.helloworld-Greeter-SayHello]\nmax_attempts = 5\n"), "{t}");
    assert!(t.contains("[policies.helloworld-Admin]"), "{t}");
    assert!(t.contains("base = \"100ms\"\ncap = \"1000ms\"\nfactor = 2.0\ngrpc_retry_on = [\"UNAVAILABLE\", \"RESOURCE_EXHAUSTED\", \"ABORTED\"]\ndeadline = \"2500ms\""), "{t}");
    assert!(t.contains("[policies.grpc-default]\nmax_attempts = 3\nhedge_after = \"50ms\"\nhedge_share = 2.0\ngrpc_retry_on = [\"UNAVAILABLE\"]"), "{t}");
    let warnings = out.warnings.join("\n");
    assert!(
        warnings.contains("$.methodConfig[0].retryPolicy.maxAttempts: 9 clamped to 5"),
        "{warnings}"
    );
    assert!(!warnings.contains("ABORTED"), "{warnings}");
    assert!(!warnings.contains("retryThrottling"), "{warnings}");
    // retryThrottling: one budget, named by every policy.
    assert!(t.contains("[budgets.grpc-throttling]\nmode = \"grpc_throttling\"\nmax_tokens = 10\ntoken_ratio = 0.1\n"), "{t}");
    assert_eq!(
        t.matches("budget = \"grpc-throttling\"\n").count(),
        3,
        "{t}"
    );
}

#[test]
fn retry_throttling_is_checked_by_a6s_rules_and_cut_to_three_decimals() {
    let with = |throttling: &str| {
        import(&format!(
            r#"{{ "retryThrottling": {throttling}, "methodConfig": [{{ "name": [{{}}] }}] }}"#
        ))
    };
    let out = with(r#"{ "maxTokens": 1000, "tokenRatio": 0.1555 }"#).unwrap();
    assert!(
        out.toml
            .contains("max_tokens = 1000\ntoken_ratio = 0.155\n"),
        "{}",
        out.toml
    );
    assert_eq!(
        out.warnings,
        [
            "$.retryThrottling.tokenRatio: 0.1555 cut to 0.155 (three decimals, as gRPC's clients keep)"
        ]
    );
    let out = with(r#"{ "maxTokens": 2.5, "tokenRatio": 1.001 }"#).unwrap();
    assert!(
        out.toml.contains("max_tokens = 2.5\ntoken_ratio = 1.001\n"),
        "{}",
        out.toml
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    for (throttling, expected) in [
        (
            r#"{ "maxTokens": 0, "tokenRatio": 0.1 }"#,
            "$.retryThrottling.maxTokens: 0 must be a number above 0 and at most 1000 (gRFC A6",
        ),
        (
            r#"{ "maxTokens": 1001, "tokenRatio": 0.1 }"#,
            "$.retryThrottling.maxTokens: 1001 must be",
        ),
        (
            r#"{ "tokenRatio": 0.1 }"#,
            "$.retryThrottling.maxTokens: missing: it must be",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": -1 }"#,
            "$.retryThrottling.tokenRatio: -1 must be a number of at least 0.001 (gRFC A6: required, greater than zero, up to 3 decimal places",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": 0.0004 }"#,
            "$.retryThrottling.tokenRatio: 0.0004 must be",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": "0.1" }"#,
            "$.retryThrottling.tokenRatio: \"0.1\" must be",
        ),
        (
            "[10, 0.1]",
            "$.retryThrottling: must be an object with maxTokens and tokenRatio",
        ),
    ] {
        let errors = with(throttling).unwrap_err().join("\n");
        assert!(errors.contains(expected), "{throttling}: {errors}");
    }
}

#[test]
fn invalid_input_names_the_json_path_and_a6s_rule() {
    let bad = r#"{ "methodConfig": [
      { "name": [{"service": "a.B"}], "retryPolicy": { "maxAttempts": 1, "initialBackoff": "100ms",
          "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": [] } },
      { "name": [{"service": "c.D"}], "retryPolicy": { "maxAttempts": 2, "initialBackoff": "0.1s",
          "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILIBLE"] } },
      { "name": [{"service": "e.F"}], "retryPolicy": {}, "hedgingPolicy": {} },
      { "name": [{"service": "g.H"}], "hedgingPolicy": { "maxAttempts": 2, "hedgingDelay": "0s",
          "nonFatalStatusCodes": ["OK"] } }
    ] }"#;
    let errors = import(bad).unwrap_err().join("\n");
    for expected in [
        "$.methodConfig[0].retryPolicy.maxAttempts: 1 must be a whole number of at least 2",
        "$.methodConfig[0].retryPolicy.initialBackoff: \"100ms\" is not a duration in proto JSON form",
        "$.methodConfig[0].retryPolicy.retryableStatusCodes: [] must be a list of at least one status code",
        "$.methodConfig[1].retryPolicy.retryableStatusCodes[0]: \"UNAVAILIBLE\" is not a gRPC status code (did you mean \"UNAVAILABLE\"?)",
        "$.methodConfig[3].hedgingPolicy.nonFatalStatusCodes[0]: OK is a success",
        "$.methodConfig[2]: has both retryPolicy and hedgingPolicy",
    ] {
        assert!(
            errors.contains(expected),
            "missing {expected:?} in:\n{errors}"
        );
    }
    assert!(import("[1]").unwrap_err()[0].contains("expected a JSON object"));
    assert!(import("{").unwrap_err()[0].contains("not JSON"));
}
