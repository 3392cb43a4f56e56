//! `retry-policy import grpc`: a gRPC service config's output passes
//! `check`, and bad input fails with the JSON path.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retry-policy"))
        .args(args)
        .env_remove("RETRY_CONFIG")
        .env_remove("RETRY_PROFILE")
        .output()
        .unwrap()
}

/// `retry-policy import grpc json`, which must succeed.
fn imported(json: &std::path::Path) -> Output {
    let out = run(&["import", "grpc", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    out
}

const SERVICE_CONFIG: &str = r#"{
  "methodConfig": [
    { "name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
      "timeout": "2s",
      "retryPolicy": { "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
                       "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED", "ABORTED"] } },
    { "name": [{"service": "helloworld.Search"}],
      "hedgingPolicy": { "maxAttempts": 3, "hedgingDelay": "0.05s", "nonFatalStatusCodes": ["UNAVAILABLE"] } }
  ],
  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
}"#;

#[test]
fn the_imported_policies_pass_check_and_list_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("service_config.json");
    std::fs::write(&json, SERVICE_CONFIG).unwrap();
    let out = imported(&json);
    let toml = dir.path().join("retry.toml");
    std::fs::write(&toml, &out.stdout).unwrap();
    let config = toml.to_str().unwrap();
    let check = run(&["--config", config, "check"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(
        check.status.code(),
        Some(0),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let list = run(&["--config", config, "list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("helloworld-Greeter-SayHello"), "{listed}");
    assert!(listed.contains("helloworld-Search"), "{listed}");
    // The codes, ABORTED included, as list, explain and show print them.
    assert!(
        listed.contains("gRPC UNAVAILABLE|RESOURCE_EXHAUSTED|ABORTED"),
        "{listed}"
    );
    assert!(listed.contains("gRPC UNAVAILABLE, hedge after"), "{listed}");
    let explain = run(&["--config", config, "explain", "helloworld-Greeter-SayHello"]);
    let explained = String::from_utf8_lossy(&explain.stdout);
    let line = explained
        .lines()
        .find(|l| l.starts_with("grpc_retry_on"))
        .unwrap_or_else(|| panic!("{explained}"));
    assert!(
        line.contains("[\"UNAVAILABLE\", \"RESOURCE_EXHAUSTED\", \"ABORTED\"]")
            && line.contains("retry.toml:"),
        "{line}"
    );
    let show = run(&["--config", config, "show", "helloworld-Search"]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("the gRPC codes UNAVAILABLE are retried"),
        "{shown}"
    );
    let json = run(&[
        "--config",
        config,
        "show",
        "helloworld-Greeter-SayHello",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        json["grpc_retry_on"],
        serde_json::json!(["UNAVAILABLE", "RESOURCE_EXHAUSTED", "ABORTED"])
    );
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(!warned.contains("ABORTED"), "no longer left out: {warned}");
    assert!(warned.is_empty(), "nothing left out: {warned}");
    // retryThrottling: one grpc_throttling budget that both policies name.
    assert!(
        listed.contains(
            "grpc-throttling  grpc_throttling: 10 tokens, +0.1 per success, -1 per failure; \
             retries and hedges while above 5 (fed by gRPC calls); used by \
             helloworld-Greeter-SayHello, helloworld-Search"
        ),
        "{listed}"
    );
    let explain = run(&["--config", config, "explain", "grpc-throttling"]);
    let explained = String::from_utf8_lossy(&explain.stdout);
    for (key, value) in [
        ("mode", "grpc_throttling"),
        ("max_tokens", "10"),
        ("token_ratio", "0.1"),
        ("ratio", "- (unused by grpc_throttling budgets)"),
        ("scope", "- (unused by grpc_throttling budgets)"),
    ] {
        let line = explained
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("{key}: {explained}"));
        assert!(line.contains(value), "{line}");
    }
    assert!(
        shown.contains("budget grpc_throttling: 10 tokens"),
        "{shown}"
    );
}

/// A `grpc_throttling` budget's bad settings are errors at their
/// file:line:col naming the field, A6's rule and the fix; a misspelled mode
/// gets a did-you-mean.
#[test]
fn check_places_a_bad_bucket_setting_and_a_misspelled_mode() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("retry.toml");
    let check = |text: &str| {
        std::fs::write(&toml, text).unwrap();
        let out = run(&["--config", toml.to_str().unwrap(), "check"]);
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = check(
        "[policies.a]\nbudget = \"g\"\n\n[budgets.g]\nmode = \"grpc_throttling\"\nmax_tokens = 10\ntoken_ratio = 0.1555\n",
    );
    for expected in [
        "error: budget `g`: `token_ratio` must be at least 0.001 and at most 1000000, with three decimals at most (gRFC A6's retryThrottling.tokenRatio",
        "retry.toml:7:15",
        "fix: use a ratio such as 0.1 (got 0.1555)",
    ] {
        assert!(said.contains(expected), "{expected}: {said}");
    }
    let said =
        check("[budgets.g]\nmode = \"grpc_throtling\"\nmax_tokens = 10\ntoken_ratio = 0.1\n");
    assert!(said.contains("retry.toml:2:8"), "{said}");
    assert!(said.contains("did you mean `grpc_throttling`?"), "{said}");
}

#[test]
fn check_places_a_misspelled_code_with_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("retry.toml");
    std::fs::write(
        &toml,
        "[policies.a]\nmax_attempts = 3\ngrpc_retry_on = [\"UNAVAILABLE\", \"ABORTD\"]\n",
    )
    .unwrap();
    let check = run(&[
        "--config",
        toml.to_str().unwrap(),
        "check",
        "--format",
        "short",
    ]);
    let said = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(said.contains("retry.toml:3:33"), "{said}");
    assert!(said.contains("ABORTED"), "{said}");
}

#[test]
fn bad_input_is_an_error_with_the_json_path() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bad.json");
    let bad = r#"{"methodConfig": [{"name": [{"service": "a.B"}],
        "retryPolicy": {"maxAttempts": 1, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    std::fs::write(&json, bad).unwrap();
    let out = run(&["import", "grpc", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "$.methodConfig[0].retryPolicy.maxAttempts: 1 must be a whole number of at least 2"
        ),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn the_demos_policies_are_what_import_makes_of_its_service_config() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let json = root.join("grpc_service_config.json");
    let out = imported(&json);
    let committed = std::fs::read_to_string(root.join("grpc.toml")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        committed,
        "examples/grpc.toml is out of date: run `retry-policy import grpc examples/grpc_service_config.json > examples/grpc.toml`"
    );
}
