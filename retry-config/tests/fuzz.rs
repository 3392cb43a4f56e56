//! Fuzzing the loader with mutated TOML: no input may make it panic, and
//! every rejection carries at least one error whose span lies in the text.

use proptest::prelude::*;
use retrykit_config::{Config, Env, Options, check_str};

const SEED_FILE: &str = r#"[defaults]
jitter = "full"
max_attempts = 5

[policies.outbox]
backoff = "exponential"
base = "100ms"
factor = 2.0
cap = "30s"
min_delay = "0ms"
jitter = { proportional = 0.25 }
max_attempts = 8
deadline = "2m"
attempt_timeout = "5s"
retry_on = ["transient", "throttled"]
max_retry_after = "60s"
budget = "broker"

[policies.outbox-fast]
extends = "outbox"
cap = "2s"

[budgets.broker]
ratio = 0.1
min_per_sec = 10
window = "10s"

[profiles.test.policies.outbox]
base = "1ms"
cap = "5ms"
"#;

/// Fragments that are meaningful to the loader, to splice in.
const FRAGMENTS: &[&str] = &[
    "\"",
    "[",
    "]",
    "{",
    "}",
    "=",
    "\n",
    "#",
    ".",
    ",",
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "\"0s\"",
    "\"1e9h\"",
    "\"999999999999999999999s\"",
    "extends = \"outbox-fast\"",
    "[policies.x]",
    "[profiles.test.policies.x]",
    "max_attempts = 0",
    "max_attempts = 4294967296",
    "factor = 1e300",
    "jitter = { proportional = nan }",
    "\"none\"",
    "é",
    "\u{0}",
    "[[policies]]",
    "budget = \"none\"",
    "window = \"0ms\"",
    "ratio = inf",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    Duplicate { at: usize, len: usize },
    Byte { at: usize, byte: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len())
            .prop_map(|(at, fragment)| Mutation::Insert { at, fragment }),
        (any::<usize>(), 1..80usize).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), 0x20u8..0x7f).prop_map(|(at, byte)| Mutation::Byte { at, byte }),
    ]
}

fn apply(text: &mut String, m: &Mutation) {
    let boundary = |text: &String, at: usize| {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match *m {
        Mutation::Delete { at, len } => {
            let start = boundary(text, at);
            let end = boundary(text, (start + len).min(text.len()));
            text.replace_range(start..end, "");
        }
        Mutation::Insert { at, fragment } => {
            let at = boundary(text, at);
            text.insert_str(at, FRAGMENTS[fragment]);
        }
        Mutation::Duplicate { at, len } => {
            let start = boundary(text, at);
            let end = boundary(text, (start + len).min(text.len()));
            let copy = text[start..end].to_owned();
            text.insert_str(end, &copy);
        }
        Mutation::Byte { at, byte } => {
            let start = boundary(text, at);
            let end = boundary(text, (start + 1).min(text.len()));
            text.replace_range(start..end, &char::from(byte).to_string());
        }
    }
}

fn assert_sound(text: &str, options: &Options) {
    match Config::load_str(text, "fuzz.toml", options) {
        Ok(config) => {
            for name in config.policy_names() {
                assert!(config.explain(name).is_some());
            }
            let _ = config.registry(None);
        }
        Err(diags) => {
            assert!(diags.has_errors(), "rejected without an error");
            for d in &diags {
                if let Some(span) = &d.span {
                    assert!(span.range().end <= span.source().text().len());
                }
                let _ = d.render();
            }
        }
    }
    let _ = check_str(text, "fuzz.toml", options).render();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn mutated_files_never_panic(mutations in prop::collection::vec(mutation(), 1..8)) {
        let mut text = SEED_FILE.to_owned();
        for m in &mutations {
            apply(&mut text, m);
        }
        assert_sound(&text, &Options::new());
        assert_sound(&text, &Options::new().profile("test"));
    }

    #[test]
    fn arbitrary_environment_values_never_panic(key in "[A-Z_]{0,20}", value in any::<String>()) {
        let env = Env::new()
            .with(format!("RETRY_POLICY__OUTBOX__{key}"), value.clone())
            .with(format!("RETRY_BUDGET__BROKER__{key}"), value.clone())
            .with("RETRY_POLICY__OUTBOX__BASE", value);
        assert_sound(SEED_FILE, &Options::new().env(env));
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        assert_sound(&text, &Options::new());
    }
}
