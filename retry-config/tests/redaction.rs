//! No rendered diagnostic prints a URL's password: not the excerpt of a
//! file's line, of an environment variable, or of a long line cut to a
//! window, and not a message or a note that quotes the value.

use retrykit_config::{Config, Diagnostics, Env, Options};

const SECRET: &str = "hunter2";

fn rendered(text: &str, vars: &[(&str, &str)]) -> String {
    let env: Env = vars.iter().copied().collect();
    let diags: Diagnostics = match Config::load_str(text, "retry.toml", &Options::new().env(env)) {
        Ok(config) => config.warnings().clone(),
        Err(diags) => diags,
    };
    assert!(
        !diags.is_empty(),
        "expected a diagnostic for {text:?} {vars:?}"
    );
    diags.render()
}

fn assert_hidden(rendered: &str) {
    assert!(
        !rendered.contains(SECRET),
        "the password is printed:\n{rendered}"
    );
    assert!(rendered.contains("***"), "the hiding is shown:\n{rendered}");
}

// Local tables: a store there is unused, which is said whatever the build's
// features (a fleet scope needs the `redis` feature to be read at all).
const BREAKER: &str = "[policies.a]\nbreaker = \"b\"\n[breakers.b]\n";
const BUDGET: &str = "[policies.a]\nbudget = \"b\"\n[budgets.b]\n";

#[test]
fn a_files_store_line_is_shown_without_its_password() {
    for table in [BREAKER, BUDGET] {
        let text = format!("{table}store = \"redis://u:{SECRET}@h:1/0x\"\n");
        let out = rendered(&text, &[]);
        assert_hidden(&out);
        // The caret still covers the whole value as shown.
        let lines: Vec<&str> = out.lines().collect();
        let at = lines.iter().position(|l| l.contains("store =")).unwrap();
        let (line, caret) = (lines[at], lines[at + 1]);
        assert_eq!(line.find('"'), caret.find('^'), "{out}");
        assert_eq!(line.rfind('"'), caret.rfind('^'), "{out}");
        assert!(
            out.contains("retry.toml:4:9"),
            "columns count the source: {out}"
        );
    }
}

#[test]
fn a_store_variable_is_shown_without_its_password() {
    let value = format!("redis://u:{SECRET}@h:1/0x");
    for (table, var) in [
        (BREAKER, "RETRY_BREAKER__B__STORE"),
        (BUDGET, "RETRY_BUDGET__B__STORE"),
    ] {
        let text = format!("{table}store = \"redis://h:1/\"\n");
        let out = rendered(&text, &[(var, &value)]);
        assert_hidden(&out);
        assert!(out.contains(&format!("{var}=redis://***@h:1/0x")), "{out}");
    }
}

#[test]
fn a_variable_that_names_nothing_is_shown_without_its_password() {
    let value = format!("redis://u:{SECRET}@h:1/");
    let out = rendered(BUDGET, &[("RETRY_BUDGET__NOPE__STORE", &value)]);
    assert_hidden(&out);
}

#[test]
fn a_long_line_cut_to_a_window_hides_the_password_it_shows() {
    // The window starts 40 characters before the span, inside the
    // password, so the cut leaves no `://` before what it shows of it.
    let padding = "x".repeat(300);
    let long_secret = format!("{SECRET}{}", "y".repeat(60));
    let text = format!(
        "[policies.a]\nbreaker = \"c\"\n[breakers]\nc = {{ store = \"redis://u:{long_secret}@h:1/\", probes = 0 }} # {padding}\n"
    );
    let out = rendered(&text, &[]);
    assert!(!out.contains(SECRET), "{out}");
    assert!(!out.contains("yyyy"), "no part of the password: {out}");
    assert!(out.contains('…'), "the line is cut: {out}");
}

#[test]
fn a_message_quoting_a_url_hides_its_password_even_when_cut() {
    // `scope` quotes what it was given; the quote is cut after 48
    // characters, here before the `@`.
    let user = "u".repeat(50);
    for value in [
        format!("redis://u:{SECRET}@h/"),
        format!("redis://{user}:{SECRET}@h/"),
    ] {
        let text = format!("[policies.a]\nbreaker = \"b\"\n[breakers.b]\nscope = \"{value}\"\n");
        let out = rendered(&text, &[]);
        assert!(!out.contains(SECRET), "{out}");
        assert!(!out.contains(&user), "{out}");
    }
}

#[test]
fn a_url_without_a_password_is_shown_whole() {
    let text = format!("{BREAKER}store = \"redis://cache:1/0x\"\n");
    let out = rendered(&text, &[]);
    assert!(out.contains("redis://cache:1/0x"), "{out}");
    assert!(!out.contains("***"), "{out}");
}
