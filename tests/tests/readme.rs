//! The README's examples are correct as written: its policy file loads, every
//! `#[retry(policy = ...)]` it shows names a policy that file defines, and a
//! snippet whose policy sets `attempt_timeout` gives its error type a
//! `#[classify(timeout)]` variant (without one, that code would not build).

use retry_config::{Config, Options};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap()
}

/// The fenced blocks of `lang` in `text`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == fence => current = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

fn policy_file(text: &str) -> Config {
    let section = &text[text.find("## The policy file").expect("the section")..];
    let toml = blocks(section, "toml")
        .into_iter()
        .next()
        .expect("its toml block");
    Config::load_str(&toml, "README.md", &Options::new())
        .unwrap_or_else(|d| panic!("the README's policy file is invalid:\n{}", d.render()))
}

#[test]
fn every_policy_the_readme_names_is_in_its_policy_file_and_can_be_honoured() {
    let text = readme();
    let config = policy_file(&text);
    let mut named = 0;
    for block in blocks(&text, "rust") {
        for (at, _) in block.match_indices("#[retry(policy = \"") {
            let rest = &block[at + "#[retry(policy = \"".len()..];
            let name = &rest[..rest.find('"').unwrap()];
            named += 1;
            let policy = config.policy(name).unwrap_or_else(|| {
                panic!("the README uses policy `{name}`, which its policy file lacks")
            });
            if policy.attempt_timeout().is_some() && block.contains("enum ") {
                assert!(
                    block.contains("#[classify(timeout)]"),
                    "policy `{name}` sets attempt_timeout, but the README's error type in this snippet has no timeout variant:\n{block}"
                );
            }
        }
    }
    assert!(
        named >= 2,
        "the README's #[retry] snippets were found ({named})"
    );
}
