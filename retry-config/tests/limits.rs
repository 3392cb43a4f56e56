//! Bounded cost: a file within the size cap can still ask for work without
//! bound (hundreds of thousands of policies, an `extends` chain as deep),
//! so the loader refuses past documented limits, before resolving anything,
//! with an error naming the limit and the fix. Bounded output: a diagnostic
//! shows a window of a long line, never the whole line.

use retrykit_config::{
    Config, Diagnostics, MAX_CLASSES, MAX_EXTENDS_DEPTH, MAX_POLICIES, MAX_SHOWN_DIAGNOSTICS,
    Options, check_str,
};

fn load(text: &str) -> Result<Config, Diagnostics> {
    Config::load_str(text, "retry.toml", &Options::new())
}

fn policies(n: usize) -> String {
    (0..n).map(|i| format!("[policies.p{i}]\n")).collect()
}

/// A chain `p0 <- p1 <- ... <- p{n-1}`: policy `p{i}` is `i` deep.
fn chain(n: usize) -> String {
    let mut text = String::from("[policies.p0]\ncap = \"1s\"\n");
    for i in 1..n {
        text.push_str(&format!("[policies.p{i}]\nextends = \"p{}\"\n", i - 1));
    }
    text
}

#[test]
fn the_limits_are_sensible() {
    assert_eq!(MAX_POLICIES, 10_000);
    assert_eq!(MAX_EXTENDS_DEPTH, 32);
}

#[test]
fn more_policies_than_the_limit_is_one_clear_error() {
    let diags = load(&policies(MAX_POLICIES + 1)).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags}");
    let e = diags.errors().next().unwrap();
    assert_eq!(e.key, "policies");
    assert!(e.message.contains("10001 policies"), "{}", e.message);
    assert!(e.message.contains("at most 10000"), "{}", e.message);
    assert!(!e.notes.is_empty(), "a fix: {e:?}");
    // `check` says the same, once.
    assert_eq!(
        check_str(&policies(MAX_POLICIES + 1), "f", &Options::new()).len(),
        1
    );
}

#[test]
fn the_policy_limit_is_checked_before_any_policy_is_read() {
    // Four times the limit, each policy with a bad value: had any been read,
    // its error would be reported too.
    let text: String = (0..4 * MAX_POLICIES)
        .map(|i| format!("[policies.p{i}]\nbase = {i}\n"))
        .collect();
    let diags = load(&text).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags}");
    assert!(diags.to_string().contains("40000 policies"), "{diags}");
}

#[test]
fn an_extends_chain_deeper_than_the_limit_is_one_error_at_the_first_policy_past_it() {
    let depth = MAX_EXTENDS_DEPTH;
    assert!(
        load(&chain(depth + 1)).is_ok(),
        "a chain {depth} deep loads"
    );
    let diags = load(&chain(2_000)).unwrap_err();
    assert_eq!(diags.len(), 1, "{}", diags.render());
    let e = diags.errors().next().unwrap();
    let past = format!("p{}", depth + 1);
    assert_eq!(e.key, format!("policies.{past}.extends"));
    assert!(
        e.message.contains(&format!("policy `{past}`")),
        "{}",
        e.message
    );
    assert!(e.message.contains("at most 32"), "{}", e.message);
    assert_eq!(e.span.as_ref().unwrap().text(), format!("\"p{depth}\""));
}

#[test]
fn a_diagnostic_on_a_very_long_line_shows_a_bounded_window() {
    // One line of 2 MB whose last item is bad.
    let filler = "409, ".repeat(400_000);
    let text = format!("[policies.api]\nretry_on_status = [{filler}-1, 409]\n");
    assert!(text.len() > 2_000_000);
    let diags = load(&text).unwrap_err();
    let rendered = diags.render();
    assert!(rendered.len() < 4_000, "{} bytes rendered", rendered.len());
    assert!(rendered.contains("409, -1, 409]"), "{rendered}");
    assert!(
        rendered.contains(" ^^ not an error status"),
        "the caret: {rendered}"
    );
    assert!(
        rendered.contains("retry.toml:2:2000020"),
        "the real column: {rendered}"
    );
    assert!(
        rendered.contains("`retry_on_status[400000]`"),
        "the key: {rendered}"
    );
    assert!(rendered.contains("400 to 599"), "the rule: {rendered}");
    assert!(
        rendered.contains('…'),
        "an ellipsis marks the cut: {rendered}"
    );
    assert!(rendered.len() < 4_000 && diags.render_ansi().len() < 5_000);
}

/// One policy whose `retry_on` lists `Transient` (a near miss of
/// `transient`, so each entry is an error) `n` times.
fn bad_retry_on(n: usize) -> String {
    let list = vec!["\"Transient\""; n].join(", ");
    format!("[policies.api]\nretry_on = [{list}]\n")
}

#[test]
fn a_hundred_thousand_bad_entries_print_at_most_the_cap_then_how_many_more() {
    // Every one is found (and kept: `iter` returns them all), but what is
    // printed stays small. The time this takes is measured by
    // `cargo bench -p retrykit-config --bench diagnostics`, not asserted.
    let diags = check_str(&bad_retry_on(100_000), "retry.toml", &Options::new());
    assert_eq!(diags.errors().count(), 100_000);
    let last = diags.iter().last().unwrap();
    assert_eq!(
        last.span.as_ref().unwrap().line_column(),
        (2, 13 + 13 * 99_999),
        "the last entry's real column"
    );
    for rendered in [diags.render(), diags.render_ansi(), diags.to_string()] {
        assert!(rendered.len() < 100_000, "{} bytes", rendered.len());
        let shown = MAX_SHOWN_DIAGNOSTICS;
        assert!(
            rendered.contains(&format!(
                "... {} more not shown (the first {shown} are); `retry-policy check --all` prints every one",
                100_000 - shown
            )),
            "{}",
            &rendered[rendered.len().saturating_sub(600)..]
        );
    }
    assert!(diags.render().ends_with("100000 errors, 0 warnings\n"));
    assert_eq!(
        diags.render().matches("can never match").count(),
        MAX_SHOWN_DIAGNOSTICS
    );
    // Every one, when asked for.
    assert_eq!(
        diags.render_all(false).matches("can never match").count(),
        100_000
    );
}

#[test]
fn more_distinct_classes_than_the_limit_is_one_clear_error() {
    let names = |n: usize| -> String {
        (0..n)
            .map(|i| format!("\"c{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // At the limit, split over a policy and a profile's overlay: loads.
    let half = MAX_CLASSES / 2;
    let at_limit = format!(
        "[policies.a]\nretry_on = [{}]\n[profiles.p.policies.a]\nretry_on = [{}, \"c0\"]\n",
        names(half),
        (half..MAX_CLASSES)
            .map(|i| format!("\"c{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(load(&at_limit).is_ok());
    // One more distinct name, in the overlay: one error there, naming the limit and the fix.
    let past = at_limit.replace("\"c0\"]", "\"one-more\"]");
    let diags = load(&past).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags}");
    let e = diags.errors().next().unwrap();
    assert_eq!(e.key, "retry_on");
    assert!(
        e.message.contains("more than 1000 distinct classes"),
        "{}",
        e.message
    );
    assert_eq!(e.span.as_ref().unwrap().line_column().0, 4);
    assert!(e.notes.iter().any(|n| n.contains("MAX_CLASSES")), "{e:?}");
    assert!(
        e.notes.iter().any(|n| n.contains("name at most 1000")),
        "{e:?}"
    );
    // Far past it, in one list: refused before any entry is judged.
    let many = format!(
        "[policies.a]\nretry_on = [{}, \"Transient\"]\n",
        names(50_000)
    );
    assert_eq!(load(&many).unwrap_err().len(), 1);
}
