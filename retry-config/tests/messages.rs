//! Messages say what is true of the key they are about: a breaker's counts
//! are not "unlimited" at 0, a breaker's scope is not a budget's, a repeat
//! in `trip_on` is not about retrying, and a bad `RETRY_STRICT` is refused
//! by every load that reads the environment.

use retrykit_config::{Config, Diagnostics, Env, Options};

fn errors(text: &str) -> Diagnostics {
    Config::load_str(text, "retry.toml", &Options::new()).unwrap_err()
}

fn breaker(line: &str) -> String {
    format!("[policies.a]\nattempt_timeout = \"1s\"\nbreaker = \"b\"\n[breakers.b]\n{line}\n")
}

#[test]
fn a_breakers_counts_never_say_zero_is_unlimited() {
    for key in ["min_calls", "probes"] {
        for value in ["\"x\"", "-1", "0", "1.5"] {
            let out = errors(&breaker(&format!("{key} = {value}"))).render();
            assert!(!out.contains("unlimited"), "{key} = {value}:\n{out}");
            assert!(out.contains(key), "{out}");
        }
        let out = errors(&breaker(&format!("{key} = -1"))).render();
        assert!(out.contains("must be at least 1, found -1"), "{out}");
        let out = errors(&breaker(&format!("{key} = 5000000000"))).render();
        assert!(out.contains("must be at most 4294967295"), "{out}");
    }
    // For max_attempts 0 is unlimited, and its messages say so.
    let out = errors("[policies.a]\nmax_attempts = \"x\"\n").render();
    assert!(out.contains("0 = unlimited"), "{out}");
    let out = errors("[policies.a]\nmax_attempts = -1\n").render();
    assert!(out.contains("from 0 to 4294967295"), "{out}");
}

#[test]
fn a_scope_error_names_the_table_it_is_in() {
    let out = errors(&breaker("scope = \"Fleet\"")).render();
    assert!(out.contains("unknown breaker scope `Fleet`"), "{out}");
    assert!(out.contains("did you mean `fleet`"), "{out}");
    let out = errors("[policies.a]\nbudget = \"b\"\n[budgets.b]\nscope = \"Fleet\"\n").render();
    assert!(out.contains("unknown budget scope `Fleet`"), "{out}");
}

#[test]
fn a_repeat_in_trip_on_is_said_as_a_breakers_matter() {
    let text = breaker("trip_on = [\"timeout\", \"timeout\"]");
    let config = Config::load_str(&text, "retry.toml", &Options::new()).unwrap();
    let out = config.warnings().render();
    assert!(out.contains("lists `timeout` twice"), "{out}");
    assert!(!out.contains("retried"), "{out}");
    assert!(out.contains("opening the breaker"), "{out}");
    // In retry_on the same repeat is about retrying.
    let text = "[policies.a]\nretry_on = [\"timeout\", \"timeout\"]\n";
    let config = Config::load_str(text, "retry.toml", &Options::new()).unwrap();
    assert!(config.warnings().render().contains("is retried"));
}

#[test]
fn a_retry_strict_that_is_neither_on_nor_off_fails_any_load_of_the_environment() {
    let load = |value: &str| {
        let env: Env = [("RETRY_STRICT", value)].into_iter().collect();
        Config::load_str("[policies.a]\n", "retry.toml", &Options::new().env(env))
    };
    let out = load("maybe").unwrap_err().render();
    assert!(out.contains("RETRY_STRICT is `maybe`"), "{out}");
    assert!(out.contains("1, true, yes, on"), "{out}");
    for fine in ["1", "off", " On ", ""] {
        assert!(load(fine).is_ok(), "{fine:?}");
    }
}
