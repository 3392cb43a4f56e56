//! The README's examples are correct as written: its policy file loads, every
//! `#[retry(policy = ...)]` it shows names a policy that file defines, and a
//! snippet whose policy sets `attempt_timeout` gives its error type a
//! `#[classify(timeout)]` variant (without one, that code would not build).

use retrykit_config::{Config, Options};

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

/// The `name = "..."` of a Cargo.toml's `[package]`, and whether it may be published.
fn package(dir: &std::path::Path) -> (String, bool, String) {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let name = manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("a package name")
        .to_string();
    (name, !manifest.contains("publish = false"), manifest)
}

#[test]
fn the_readme_dependency_lines_name_crates_this_checkout_holds() {
    let text = readme();
    let section = &text[text.find("## Using it").expect("the section")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let deps = blocks(section, "toml")
        .into_iter()
        .next()
        .expect("its toml block");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut lines = 0;
    for line in deps.lines().filter(|l| l.contains(" = {")) {
        let key = line.split(" = ").next().unwrap().trim();
        let path = line
            .split("path = \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| {
                panic!("`{line}` is not a path dependency, which works before publishing")
            });
        let dir = root.join(
            path.strip_prefix("../retry/")
                .expect("a path into the checkout"),
        );
        let (name, publishable, manifest) = package(&dir);
        assert_eq!(key, name, "`{line}` names the package at {path}");
        assert!(publishable, "{name} is marked publish = false");
        if let Some(features) = line.split("features = [").nth(1) {
            for feature in features.split(']').next().unwrap().split(',') {
                let feature = feature.trim().trim_matches('"');
                assert!(
                    manifest.contains(&format!("\n{feature} = [")),
                    "{name} has no feature `{feature}`"
                );
            }
        }
        // The published form of the same line is given beside it.
        assert!(
            section.contains(&format!("`{name} = ")),
            "no published line for {name}"
        );
        lines += 1;
    }
    assert_eq!(lines, 2, "the engine and the config loader");
    let cli = section
        .split("cargo install --path retry/")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("how to install the tool");
    let (name, publishable, manifest) = package(&root.join(cli));
    assert!(
        publishable && manifest.contains("name = \"retry-policy\""),
        "{cli} builds retry-policy"
    );
    assert!(
        section.contains(&format!("cargo install {name}`")),
        "the tool's published install line"
    );
}
