//! Issue 41 point 11: a fleet breaker's `store_timeout` and `refresh`
//! (the Redis round trip's limit and the sync period, `FleetOptions`'
//! `timeout` and `refresh`) from the file or the environment: bounded to
//! 1 ms – 10 s (the error names the key, the rule and the fix), with a
//! did-you-mean for a misspelling, and unused (a warning) on a local
//! breaker. Nothing listens on the stores' port 1: loading only starts a
//! link, which falls back; the values are read back from the breaker. The
//! fleet cases need retrykit-config's `redis` feature (`--features redis`);
//! the misspelling and the local breaker are checked in either build.

#[cfg(feature = "redis")]
use retrykit_config::Layer;
use retrykit_config::{Config, Diagnostics, Env, Options};

/// `[breakers.db]` with a fleet scope and `extra` lines, named by a policy.
fn file(extra: &str) -> String {
    format!(
        "[policies.p]\nbreaker = \"db\"\nattempt_timeout = \"1s\"\n\n\
         [breakers.db]\nscope = \"fleet\"\nstore = \"redis://127.0.0.1:1/\"\n{extra}"
    )
}

fn load(text: &str, env: Env) -> Result<Config, Diagnostics> {
    Config::load_str(text, "retry.toml", &Options::new().env(env))
}

/// The diagnostic whose key is `key`, and its rendered text.
fn diagnostic(problems: &Diagnostics, key: &str) -> String {
    let d = problems
        .iter()
        .find(|d| d.key == key)
        .unwrap_or_else(|| panic!("no diagnostic for {key}:\n{}", problems.render()));
    d.render()
}

#[cfg(feature = "redis")]
#[test]
fn a_fleet_breaker_takes_both_keys_from_the_file_and_explains_them() {
    let config = load(
        &file("store_timeout = \"50ms\"\nrefresh = \"2ms\"\n"),
        Env::new(),
    )
    .unwrap_or_else(|d| panic!("{}", d.render()));
    let options = config.breaker("db").unwrap().fleet_options().unwrap();
    assert_eq!(options.timeout().as_millis(), 50);
    assert_eq!(options.refresh().as_millis(), 2);
    let explained = config.explain_breaker("db").unwrap();
    let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap();
    assert_eq!(
        (
            get("store_timeout").value.as_str(),
            &get("store_timeout").layer
        ),
        ("50ms", &Layer::File)
    );
    assert_eq!(get("refresh").value, "2ms");
    let at = get("refresh").span.as_ref().unwrap().to_string();
    assert!(at.starts_with("retry.toml:9:"), "{at}");
}

#[cfg(feature = "redis")]
#[test]
fn unset_they_are_fleet_options_defaults_and_the_bounds_are_inclusive() {
    let config = load(&file(""), Env::new()).unwrap();
    let options = config.breaker("db").unwrap().fleet_options().unwrap();
    assert_eq!(
        (options.timeout().as_millis(), options.refresh().as_millis()),
        (5, 20)
    );
    let explained = config.explain_breaker("db").unwrap();
    let timeout = explained.iter().find(|e| e.key == "store_timeout").unwrap();
    assert_eq!(
        (timeout.value.as_str(), &timeout.layer),
        ("5ms", &Layer::Builtin)
    );

    let edges = file("store_timeout = \"1ms\"\nrefresh = \"10s\"\n");
    let config = load(&edges, Env::new()).unwrap_or_else(|d| panic!("{}", d.render()));
    let options = config.breaker("db").unwrap().fleet_options().unwrap();
    assert_eq!(
        (options.timeout().as_millis(), options.refresh().as_secs()),
        (1, 10)
    );
}

#[cfg(feature = "redis")]
#[test]
fn out_of_range_at_either_end_is_an_error_naming_the_key_the_rule_and_the_fix() {
    for (timeout, refresh) in [("0ms", "10s 1ms"), ("11s", "0ms")] {
        let text = file(&format!(
            "store_timeout = \"{timeout}\"\nrefresh = \"{refresh}\"\n"
        ));
        let problems = load(&text, Env::new()).unwrap_err();
        assert!(problems.has_errors());
        for (key, line, value) in [("store_timeout", 8, timeout), ("refresh", 9, refresh)] {
            let shown = diagnostic(&problems, &format!("breakers.db.{key}"));
            assert!(
                shown.contains(&format!("`{key}` must be from 1ms to 10s")),
                "{shown}"
            );
            assert!(shown.contains(&format!("retry.toml:{line}:")), "{shown}");
            assert!(shown.contains(&format!("{key} = \"{value}\"")), "{shown}");
            assert!(shown.contains(&format!("fix: set {key} = \"")), "{shown}");
            assert!(shown.contains("in [breakers.db]"), "{shown}");
        }
    }
}

#[test]
fn a_misspelled_key_is_an_error_with_a_did_you_mean() {
    for (wrong, right) in [("store_timout", "store_timeout"), ("refesh", "refresh")] {
        let problems = load(&file(&format!("{wrong} = \"5ms\"\n")), Env::new()).unwrap_err();
        let shown = diagnostic(&problems, &format!("breakers.db.{wrong}"));
        assert!(shown.contains(&format!("`{right}`")), "{shown}");
        let d = problems.iter().find(|d| d.key.ends_with(wrong)).unwrap();
        assert_eq!(d.suggestion.as_deref(), Some(right), "{shown}");
    }
}

#[cfg(feature = "redis")]
#[test]
fn the_environment_sets_both_and_an_out_of_range_value_says_where_it_came_from() {
    let env = Env::new()
        .with("RETRY_BREAKER__DB__STORE_TIMEOUT", "40ms")
        .with("RETRY_BREAKER__DB__REFRESH", "3ms");
    let config = load(&file("store_timeout = \"50ms\"\n"), env).unwrap();
    let options = config.breaker("db").unwrap().fleet_options().unwrap();
    assert_eq!(
        (options.timeout().as_millis(), options.refresh().as_millis()),
        (40, 3)
    );
    let explained = config.explain_breaker("db").unwrap();
    let refresh = explained.iter().find(|e| e.key == "refresh").unwrap();
    assert_eq!(
        refresh.layer,
        Layer::Env("RETRY_BREAKER__DB__REFRESH".into())
    );

    let env = Env::new().with("RETRY_BREAKER__DB__REFRESH", "20s");
    let problems = load(&file(""), env).unwrap_err();
    let shown = diagnostic(&problems, "breakers.db.refresh");
    assert!(shown.contains("must be from 1ms to 10s"), "{shown}");
    assert!(shown.contains("RETRY_BREAKER__DB__REFRESH"), "{shown}");
}

#[test]
fn on_a_local_breaker_each_is_a_warning_that_it_is_unused() {
    let text = "[breakers.db]\nprobes = 2\nstore_timeout = \"50ms\"\nrefresh = \"0ms\"\n";
    let config = load(text, Env::new()).unwrap_or_else(|d| panic!("{}", d.render()));
    let warnings = config.warnings();
    for (key, line) in [("store_timeout", 3), ("refresh", 4)] {
        let shown = diagnostic(warnings, &format!("breakers.db.{key}"));
        assert!(shown.starts_with("warning"), "{shown}");
        assert!(shown.contains(&format!("`{key}` is unused: the breaker's scope is local")));
        assert!(shown.contains(&format!("retry.toml:{line}:")), "{shown}");
        assert!(shown.contains("add scope = \"fleet\""), "{shown}");
    }
    let breaker = config.breaker("db").unwrap();
    assert_eq!(breaker.probes(), 2);
    let explained = config.explain_breaker("db").unwrap();
    let timeout = explained.iter().find(|e| e.key == "store_timeout").unwrap();
    assert_eq!(timeout.value, "- (unused by a local breaker)");
    let strict = Options::new().deny_warnings(true);
    let problems = Config::load_str(text, "retry.toml", &strict).unwrap_err();
    assert!(problems.has_errors(), "{}", problems.render());
}
