//! Warnings worth reading: each risky value warns once, at the line that set
//! it (however many policies inherit it), built-in defaults are not judged,
//! and an attempt limit that bounds nothing in practice is flagged.

use retrykit_config::{Config, Diagnostic, Diagnostics, Options, check_str};

fn warnings(text: &str) -> Diagnostics {
    match Config::load_str(text, "retry.toml", &Options::new()) {
        Ok(config) => config.warnings().clone(),
        Err(diags) => panic!("{}", diags.render()),
    }
}

fn only(diags: &Diagnostics) -> &Diagnostic {
    assert_eq!(diags.len(), 1, "expected one warning:\n{}", diags.render());
    diags.iter().next().unwrap()
}

#[test]
fn no_jitter_in_defaults_warns_once_at_its_line() {
    let text = "[defaults]\njitter = \"none\"\n[policies.a]\ncap = \"1s\"\n[policies.b]\ncap = \"1s\"\n[policies.c]\ncap = \"1s\"\n";
    let w = warnings(text);
    let d = only(&w);
    assert_eq!(d.span.as_ref().unwrap().line_column(), (2, 10));
    assert_eq!(d.key, "defaults.jitter");
    let notes = d.notes.join("\n");
    assert!(
        notes.contains("`a`") && notes.contains("`b`") && notes.contains("`c`"),
        "{notes}"
    );
    // `check` goes through every profile and still says it once.
    let profiled = format!("{text}[profiles.test.policies.a]\njitter = \"full\"\n");
    let checked = check_str(&profiled, "retry.toml", &Options::new());
    assert_eq!(checked.len(), 1, "{}", checked.render());
}

#[test]
fn a_value_inherited_through_extends_warns_once() {
    let text = "[policies.root]\ncap = \"1s\"\njitter = \"none\"\n[policies.mid]\nextends = \"root\"\n[policies.leaf]\nextends = \"mid\"\n";
    let w = warnings(text);
    let d = only(&w);
    assert_eq!(d.span.as_ref().unwrap().text(), "\"none\"");
    assert!(d.message.contains("policy `root`"), "{}", d.message);
}

#[test]
fn a_builtin_cap_is_not_judged_against_the_deadline() {
    // The cap is the built-in 10 s; the user set only the deadline.
    let text = "[policies.a]\nbackoff = \"constant\"\ndeadline = \"5s\"\n";
    assert!(warnings(text).is_empty(), "{}", warnings(text).render());
    // An exponential policy without a cap gets the built-in one: nothing to say either.
    assert!(warnings("[policies.a]\nbackoff = \"exponential\"\n").is_empty());
    // A cap the user set beyond the deadline warns, at the cap.
    let w = warnings("[policies.a]\ncap = \"5m\"\ndeadline = \"1m\"\n");
    let d = only(&w);
    assert!(d.message.contains("beyond the deadline"), "{}", d.message);
    assert_eq!(d.span.as_ref().unwrap().text(), "\"5m\"");
}

#[test]
fn unlimited_attempts_with_a_deadline_is_the_recommended_form() {
    let text = "[policies.a]\ncap = \"1s\"\nmax_attempts = 0\ndeadline = \"1m\"\n";
    assert!(warnings(text).is_empty(), "{}", warnings(text).render());
}

#[test]
fn an_attempt_limit_that_bounds_nothing_warns_at_the_limit() {
    let text = "[policies.a]\ncap = \"1s\"\nmax_attempts = 4294967295\n";
    let w = warnings(text);
    let d = only(&w);
    assert_eq!(d.span.as_ref().unwrap().text(), "4294967295");
    assert!(d.message.contains("no deadline"), "{}", d.message);
    let notes = d.notes.join("\n");
    assert!(notes.contains("1h"), "the note names the horizon: {notes}");
    // Just past the horizon: 3601 retries of 1 s; just inside: 3600.
    let past = warnings("[policies.a]\nbase = \"1s\"\ncap = \"1s\"\nmax_attempts = 3602\n");
    assert_eq!(past.len(), 1, "{}", past.render());
    let inside = warnings("[policies.a]\nbase = \"1s\"\ncap = \"1s\"\nmax_attempts = 3601\n");
    assert!(inside.is_empty(), "{}", inside.render());
    // The same limit under a deadline is bounded.
    let bounded = format!("{text}deadline = \"2m\"\n");
    assert!(
        warnings(&bounded).is_empty(),
        "{}",
        warnings(&bounded).render()
    );
}

#[test]
fn a_zero_base_on_a_policy_that_retries_is_a_hot_loop() {
    for base in ["\"0ms\"", "\"0s\"", "\"0.1ns\""] {
        let text = format!("[policies.hot]\nbase = {base}\ncap = \"1s\"\nmax_attempts = 5\n");
        let w = warnings(&text);
        let d = only(&w);
        assert_eq!(d.key, "policies.hot.base");
        assert_eq!(d.span.as_ref().unwrap().text(), base);
        assert!(d.message.contains("policy `hot`"), "{}", d.message);
        assert!(d.message.contains("hot retry loop"), "{}", d.message);
        let notes = d.notes.join("\n");
        assert!(
            notes.contains("at least 1ms") && notes.contains("max_attempts = 1"),
            "{notes}"
        );
    }
    // Unlimited attempts under a deadline retry too.
    let unlimited =
        "[policies.hot]\nbase = \"0ms\"\ncap = \"1s\"\nmax_attempts = 0\ndeadline = \"1m\"\n";
    assert_eq!(
        warnings(unlimited).len(),
        1,
        "{}",
        warnings(unlimited).render()
    );
    // No retry, or a floor under every wait: not hot.
    let once = "[policies.a]\nbase = \"0ms\"\ncap = \"1s\"\nmax_attempts = 1\n";
    assert!(warnings(once).is_empty(), "{}", warnings(once).render());
    let floored =
        "[policies.a]\nbase = \"0ms\"\nmin_delay = \"1ms\"\ncap = \"1s\"\nmax_attempts = 5\n";
    assert!(
        warnings(floored).is_empty(),
        "{}",
        warnings(floored).render()
    );
}
