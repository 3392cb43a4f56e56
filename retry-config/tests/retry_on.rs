//! `retry_on` class names: a class that differs from a known one only in
//! case or by one typo can never match, so it is an error with a
//! did-you-mean; `permanent` is never retried, so naming it is an error too;
//! a class that is near nothing keeps its old treatment (a warning when the
//! program's classes are known, nothing otherwise).

use retrykit_config::{Config, Diagnostic, Env, Options, Severity, check_str};

fn file(classes: &str) -> String {
    format!("[policies.a]\ncap = \"1s\"\nretry_on = [{classes}]\n")
}

fn first_error(text: &str, options: &Options) -> Diagnostic {
    match Config::load_str(text, "f.toml", options) {
        Ok(_) => panic!("{text:?} loaded"),
        Err(diags) => diags.errors().next().unwrap().clone(),
    }
}

#[test]
fn a_builtin_class_in_the_wrong_case_or_misspelt_is_an_error() {
    for (written, meant) in [
        ("Transient", "transient"),
        ("THROTTLED", "throttled"),
        ("throtled", "throttled"),
        ("timeuot", "timeout"),
    ] {
        let text = file(&format!("\"{written}\""));
        let e = first_error(&text, &Options::new());
        assert_eq!(e.suggestion.as_deref(), Some(meant), "{written}: {e}");
        assert!(e.message.contains(&format!("`{written}`")), "{}", e.message);
        assert!(e.message.contains("never match"), "{}", e.message);
        // The caret is under the class itself, not the whole list.
        assert_eq!(
            e.span.unwrap().text(),
            format!("\"{written}\""),
            "{written}"
        );
    }
}

#[test]
fn permanent_in_retry_on_is_an_error() {
    let e = first_error(&file("\"transient\", \"permanent\""), &Options::new());
    assert!(e.message.contains("`permanent`"), "{}", e.message);
    assert!(e.message.contains("never retried"), "{}", e.message);
    assert_eq!(e.span.unwrap().text(), "\"permanent\"");
}

#[test]
fn retry_policy_check_knows_the_builtin_classes() {
    let diags = check_str(
        &file("\"transient\", \"Throttled\""),
        "f.toml",
        &Options::new(),
    );
    let e = diags.errors().next().expect("an error for `Throttled`");
    assert_eq!(e.suggestion.as_deref(), Some("throttled"));
    assert!(
        check_str(
            &file("\"transient\", \"throttled\", \"timeout\""),
            "f",
            &Options::new()
        )
        .is_empty()
    );
}

#[test]
fn declared_classes_are_accepted_and_their_near_misses_are_errors() {
    let known = Options::new().known_classes(["conflict", "stale-read"]);
    let ok = Config::load_str(
        &file("\"conflict\", \"stale-read\", \"transient\""),
        "f",
        &known,
    );
    assert!(ok.unwrap().warnings().is_empty());

    let e = first_error(&file("\"conflikt\""), &known);
    assert_eq!(e.suggestion.as_deref(), Some("conflict"));
    let e = first_error(&file("\"Stale-Read\""), &known);
    assert_eq!(e.suggestion.as_deref(), Some("stale-read"));
}

#[test]
fn a_class_near_nothing_warns_only_when_the_classes_are_known() {
    let text = file("\"quota\"");
    // Unknown to `check`: the program may declare it.
    let unknown = Config::load_str(&text, "f", &Options::new()).unwrap();
    assert!(
        unknown.warnings().is_empty(),
        "{}",
        unknown.warnings().render()
    );
    // Known classes, and `quota` is none of them: nothing produces it.
    let known = Options::new().known_classes(["conflict"]);
    let c = Config::load_str(&text, "f", &known).unwrap();
    let w = c.warnings().iter().next().expect("a warning");
    assert_eq!(w.severity, Severity::Warning);
    assert!(w.message.contains("`quota`"), "{}", w.message);
}

#[test]
fn a_class_misspelt_in_defaults_is_reported_once() {
    let text = "[defaults]\nretry_on = [\"Transient\"]\n[policies.a]\ncap = \"1s\"\n[policies.b]\ncap = \"1s\"\n";
    let diags = Config::load_str(text, "f", &Options::new()).unwrap_err();
    assert_eq!(diags.len(), 1, "{}", diags.render());
}

#[test]
fn a_misspelt_class_from_the_environment_names_the_variable() {
    let env = Env::new().with("RETRY_POLICY__A__RETRY_ON", "transient,Throttled");
    let e = first_error(&file("\"transient\""), &Options::new().env(env));
    assert_eq!(e.suggestion.as_deref(), Some("throttled"));
    assert_eq!(e.key, "RETRY_POLICY__A__RETRY_ON");
}

#[test]
fn every_bad_status_is_reported_at_once_with_its_index() {
    let text = "[policies.a]\ncap = \"1s\"\nretry_on_status = [999, 409, 200, -1]\n";
    let diags = Config::load_str(text, "f.toml", &Options::new()).unwrap_err();
    let errors: Vec<&Diagnostic> = diags.errors().collect();
    assert_eq!(errors.len(), 3, "{}", diags.render());
    for (d, index, value) in [
        (errors[0], 0, "999"),
        (errors[1], 2, "200"),
        (errors[2], 3, "-1"),
    ] {
        assert!(
            d.message.contains(&format!("`retry_on_status[{index}]`")),
            "{}",
            d.message
        );
        assert_eq!(d.span.as_ref().unwrap().text(), value);
        assert!(d.message.contains("400 to 599"), "the rule: {}", d.message);
    }
    // From the environment, each bad item too, at its own text.
    let env = Env::new().with("RETRY_POLICY__A__RETRY_ON_STATUS", "409, abc,700");
    let diags = Config::load_str(
        "[policies.a]\ncap = \"1s\"\n",
        "f",
        &Options::new().env(env),
    )
    .unwrap_err();
    let texts: Vec<&str> = diags
        .errors()
        .map(|d| d.span.as_ref().unwrap().text())
        .collect();
    assert_eq!(texts, ["abc", "700"], "{}", diags.render());
}

#[test]
fn every_bad_method_is_reported_and_a_fix_is_suggested_only_when_it_differs() {
    let text =
        "[policies.a]\ncap = \"1s\"\nretry_methods = [\"FOO BAR\", \"PATCH\", \"post\", 7]\n";
    let diags = Config::load_str(text, "f.toml", &Options::new()).unwrap_err();
    let errors: Vec<&Diagnostic> = diags.errors().collect();
    assert_eq!(errors.len(), 3, "{}", diags.render());
    let rendered = diags.render();
    assert!(
        !rendered.contains("instead of `FOO BAR`"),
        "no suggestion equal to the input:\n{rendered}"
    );
    let foo = errors[0];
    assert_eq!(foo.span.as_ref().unwrap().text(), "\"FOO BAR\"");
    assert_eq!(foo.suggestion, None);
    assert!(
        foo.notes.join("\n").contains("upper case"),
        "the rule is stated: {rendered}"
    );
    assert!(
        foo.message.contains("`retry_methods[0]`"),
        "{}",
        foo.message
    );
    let post = errors[1];
    assert_eq!(post.suggestion.as_deref(), Some("POST"));
    assert!(
        post.message.contains("`retry_methods[2]`"),
        "{}",
        post.message
    );
    assert!(
        errors[2].message.contains("`retry_methods[3]`"),
        "{}",
        errors[2].message
    );
}

#[test]
fn known_classes_are_listed_once() {
    let env = Env::new().with("RETRY_POLICY__A__RETRY_ON", "Transient");
    let known = Options::new()
        .known_classes(["transient", "conflict", "conflict"])
        .env(env);
    let e = first_error(&file("\"timeout\""), &known);
    let notes = e.notes.join("\n");
    assert_eq!(notes.matches("transient").count(), 1, "{notes}");
    assert_eq!(notes.matches("conflict").count(), 1, "{notes}");
}
