//! Names and variables that cannot meet: a policy or budget name no
//! `RETRY_POLICY__<NAME>__<KEY>` variable can address is refused, and a
//! `RETRY_*` variable that matches no known form warns with the spelling
//! that would work.

use retrykit_config::{Config, Diagnostics, Env, Options, Severity};

const FILE: &str = "[policies.fetch]\ncap = \"1s\"\n[policies.outbox-fast]\ncap = \"1s\"\n[budgets.broker]\n[policies.pub]\ncap = \"1s\"\nbudget = \"broker\"\n";

fn warnings_with(vars: &[(&str, &str)]) -> Diagnostics {
    let env: Env = vars.iter().copied().collect();
    match Config::load_str(FILE, "retry.toml", &Options::new().env(env)) {
        Ok(config) => config.warnings().clone(),
        Err(diags) => panic!("{}", diags.render()),
    }
}

fn errors(text: &str) -> Diagnostics {
    Config::load_str(text, "retry.toml", &Options::new()).unwrap_err()
}

#[test]
fn a_name_with_a_double_underscore_is_refused_with_the_reason() {
    for (text, name) in [
        ("[policies.a__b]\ncap = \"1s\"\n", "a__b"),
        ("[policies.a-_b]\ncap = \"1s\"\n", "a-_b"),
        ("[policies.a_]\ncap = \"1s\"\n", "a_"),
        ("[budgets.b--x]\n", "b--x"),
    ] {
        let diags = errors(text);
        let e = diags.errors().next().unwrap();
        assert!(e.message.contains(&format!("`{name}`")), "{}", e.message);
        let notes = e.notes.join("\n");
        assert!(
            notes.contains("__"),
            "the reason names the separator: {notes}"
        );
    }
    // A double underscore is harmless in a profile name (RETRY_PROFILE holds it whole).
    let text = "[policies.a]\ncap = \"1s\"\n[profiles.eu__west.policies.a]\ncap = \"2s\"\n";
    assert!(Config::load_str(text, "f", &Options::new().profile("eu__west")).is_ok());
}

#[test]
fn a_retry_variable_with_single_underscores_warns_with_the_right_spelling() {
    let w = warnings_with(&[("RETRY_POLICY_FETCH_BASE", "5ms")]);
    let d = w.iter().next().expect("a warning");
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.contains("RETRY_POLICY_FETCH_BASE"),
        "{}",
        d.message
    );
    assert_eq!(d.suggestion.as_deref(), Some("RETRY_POLICY__FETCH__BASE"));

    let w = warnings_with(&[("RETRY_POLICY_OUTBOX_FAST_MAX_ATTEMPTS", "2")]);
    let suggested = w.iter().next().and_then(|d| d.suggestion.clone());
    assert_eq!(
        suggested.as_deref(),
        Some("RETRY_POLICY__OUTBOX_FAST__MAX_ATTEMPTS")
    );

    let w = warnings_with(&[("RETRY_BUDGET_BROKER_RATIO", "0.2")]);
    let suggested = w.iter().next().and_then(|d| d.suggestion.clone());
    assert_eq!(suggested.as_deref(), Some("RETRY_BUDGET__BROKER__RATIO"));
}

#[test]
fn a_misspelt_retry_variable_warns_with_a_did_you_mean() {
    let w = warnings_with(&[("RETRY_POLICES__FETCH__BASE", "5ms")]);
    let suggested = w.iter().next().and_then(|d| d.suggestion.clone());
    assert_eq!(suggested.as_deref(), Some("RETRY_POLICY__FETCH__BASE"));

    let w = warnings_with(&[("RETRY_PROFLE", "test")]);
    let suggested = w.iter().next().and_then(|d| d.suggestion.clone());
    assert_eq!(suggested.as_deref(), Some("RETRY_PROFILE"));

    // Near nothing: still a warning, listing what is read.
    let w = warnings_with(&[("RETRY_SOMETHING", "1")]);
    let d = w.iter().next().expect("a warning");
    assert!(
        d.notes.join("\n").contains("RETRY_POLICY__"),
        "{:?}",
        d.notes
    );
}

#[test]
fn known_variables_and_other_prefixes_do_not_warn() {
    let w = warnings_with(&[
        ("RETRY_CONFIG", "retry.toml"),
        ("RETRY_PROFILE", "test"),
        ("RETRY_STRICT", "1"),
        ("RETRYING", "x"),
        ("HOME", "/root"),
        ("RETRY_POLICY__FETCH__BASE", "5ms"),
    ]);
    assert!(w.is_empty(), "{}", w.render());
}

#[test]
fn a_profile_name_with_surrounding_whitespace_is_refused_clearly() {
    let text = "[policies.a]\ncap = \"1s\"\n[profiles.test]\n";
    let diags = Config::load_str(text, "retry.toml", &Options::new().profile(" test")).unwrap_err();
    let e = diags.errors().next().unwrap();
    assert!(e.message.contains("whitespace"), "{}", e.message);
    assert_eq!(e.suggestion.as_deref(), Some("test"));
    let rendered = diags.render();
    assert!(!rendered.contains("[profiles. test]"), "{rendered}");
}

#[test]
fn control_characters_in_quoted_names_are_escaped() {
    let diags = Config::load_str(
        "[policies.a]\ncap = \"1s\"\n",
        "retry.toml",
        &Options::new().profile("te\u{1b}[31mst"),
    )
    .unwrap_err();
    let rendered = format!("{diags}{}", diags.render());
    assert!(!rendered.contains('\u{1b}'), "{rendered:?}");
    assert!(rendered.contains("te\\u{1b}[31mst"), "{rendered}");
    let text = "[policies.\"a\\u001bb\"]\ncap = \"1s\"\njitter = \"none\"\n";
    let diags = Config::load_str(text, "retry.toml", &Options::new()).unwrap_err();
    let rendered = format!("{diags}{}{}", diags.render(), diags.render_ansi());
    assert!(
        rendered.contains("invalid policy name `a\\u{1b}b`"),
        "{rendered}"
    );
    assert!(!rendered.contains("a\u{1b}b"), "{rendered:?}");
}
