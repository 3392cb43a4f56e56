//! Settings that cannot work as written are named, by `check` and by a
//! load (what `init()` does), each at the value with the fix.

use retrykit_config::{Config, Diagnostics, Options, Severity, check_str};

fn warnings(text: &str) -> Diagnostics {
    let loaded = Config::load_str(text, "retry.toml", &Options::new())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let checked = check_str(text, "retry.toml", &Options::new());
    assert_eq!(
        checked.to_string(),
        loaded.warnings().to_string(),
        "check and a load say the same"
    );
    loaded.warnings().clone()
}

/// The one warning of `text`, whose message contains `words`, at `key` with text `at`.
fn the_warning(text: &str, words: &str, key: &str, at: &str) -> retrykit_config::Diagnostic {
    let diags = warnings(text);
    let found: Vec<_> = diags.iter().filter(|d| d.message.contains(words)).collect();
    assert_eq!(found.len(), 1, "{}", diags.render());
    let d = found[0].clone();
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(d.key, key, "{}", d.render());
    assert_eq!(d.span.as_ref().unwrap().text(), at, "{}", d.render());
    assert!(!d.notes.is_empty(), "a fix: {}", d.render());
    d
}

#[test]
fn hedge_floor_or_share_without_hedge_after_is_named() {
    for (key, value) in [("hedge_floor", "\"5ms\""), ("hedge_share", "0.1")] {
        let text = format!("[policies.a]\ncap = \"1s\"\n{key} = {value}\n");
        let d = the_warning(
            &text,
            &format!("{key} is unused without hedge_after"),
            &format!("policies.a.{key}"),
            value,
        );
        assert!(
            d.notes.iter().any(|n| n.contains("set hedge_after")),
            "{}",
            d.render()
        );
    }
}

#[test]
fn a_fixed_hedge_after_at_or_beyond_the_deadline_is_named() {
    for after in ["\"2s\"", "\"3s\""] {
        let text = format!(
            "[budgets.b]\n[policies.a]\ncap = \"1s\"\ndeadline = \"2s\"\nbudget = \"b\"\nhedge_after = {after}\n"
        );
        let d = the_warning(
            &text,
            "hedge_after is not shorter than the deadline",
            "policies.a.hedge_after",
            after,
        );
        assert!(
            d.notes.iter().any(|n| n.contains("no hedge is ever sent")),
            "{}",
            d.render()
        );
    }
    // Below the deadline: nothing to say.
    let fine = "[budgets.b]\n[policies.a]\ncap = \"1s\"\ndeadline = \"2s\"\nbudget = \"b\"\nhedge_after = \"50ms\"\n";
    assert!(warnings(fine).is_empty(), "{}", warnings(fine).render());
}

#[test]
fn a_schedule_that_adds_up_to_a_hot_loop_is_named_though_no_value_is_zero() {
    let text = "[policies.a]\nbase = \"1ns\"\ncap = \"1ns\"\nmax_attempts = 50\n";
    let d = the_warning(text, "a hot retry loop", "policies.a.cap", "\"1ns\"");
    assert!(d.message.contains("49 retries"), "{}", d.message);
    // Waits that add up to at least 1ms a retry are fine, however small the first.
    let fine = "[policies.a]\nbase = \"1us\"\ncap = \"1s\"\nmax_attempts = 30\n";
    assert!(warnings(fine).is_empty(), "{}", warnings(fine).render());
}

#[test]
fn a_class_listed_twice_is_named_at_the_repeat() {
    let text = "[policies.a]\ncap = \"1s\"\nretry_on = [\"transient\", \"transient\"]\n";
    let d = the_warning(
        text,
        "lists `transient` twice",
        "policies.a.retry_on",
        "\"transient\"",
    );
    assert_eq!(d.span.as_ref().unwrap().line_column(), (3, 26));
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("first listed at retry.toml:3:13")),
        "{}",
        d.render()
    );
}

#[test]
fn an_unclosed_table_header_is_one_error_without_a_spurious_unknown_key() {
    let text = "[policies.x\nbase = \"1s\"\n[policies.y]\nbsae = \"1s\"\n";
    let diags = Config::load_str(text, "retry.toml", &Options::new()).unwrap_err();
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(messages[0].contains("unclosed table"), "{}", diags.render());
    assert!(
        !messages.iter().any(|m| m.contains("unknown key `base`")),
        "{}",
        diags.render()
    );
    // A real mistake under the next header is still named.
    assert!(
        messages.iter().any(|m| m.contains("unknown key `bsae`")),
        "{}",
        diags.render()
    );
    assert!(
        diags
            .iter()
            .next()
            .unwrap()
            .notes
            .iter()
            .any(|n| n.contains("not checked until the header is fixed"))
    );
}

#[test]
fn hedge_share_in_defaults_used_by_a_hedging_policy_is_not_named() {
    let text = "[defaults]\nhedge_share = 0.05\n[budgets.b]\n[policies.hedged]\ncap = \"1s\"\nbudget = \"b\"\nhedge_after = \"20ms\"\n[policies.plain]\ncap = \"1s\"\n";
    assert!(warnings(text).is_empty(), "{}", warnings(text).render());
}

#[test]
fn a_grpc_code_whose_class_retry_on_leaves_out_is_named() {
    // RESOURCE_EXHAUSTED is throttled and ABORTED (permanent by default)
    // counts as transient once named: retry_on keeps only transient.
    let text = "[policies.a]\ncap = \"1s\"\nretry_on = [\"transient\"]\n\
                grpc_retry_on = [\"ABORTED\", \"RESOURCE_EXHAUSTED\"]\n";
    let d = the_warning(
        text,
        "never retried",
        "policies.a.grpc_retry_on",
        "[\"ABORTED\", \"RESOURCE_EXHAUSTED\"]",
    );
    assert!(
        d.message.contains("RESOURCE_EXHAUSTED (throttled)") && !d.message.contains("ABORTED"),
        "{}",
        d.render()
    );
    // Each class retried: nothing to say.
    let fine = "[policies.a]\ncap = \"1s\"\nretry_on = [\"transient\", \"throttled\"]\n\
                grpc_retry_on = [\"ABORTED\", \"RESOURCE_EXHAUSTED\"]\n";
    assert!(
        !warnings(fine)
            .iter()
            .any(|d| d.message.contains("never retried")),
        "{}",
        warnings(fine).render()
    );
}
