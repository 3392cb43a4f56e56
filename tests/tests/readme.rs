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
    let ours = deps.lines().filter(|l| l.starts_with("retrykit-"));
    for line in ours.filter(|l| l.contains(" = {")) {
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

/// The README's first example, as a crate: its dependencies are the lines
/// under "Using it" (pointed at this checkout), its `src/main.rs` the first
/// Rust block there, and its retry.toml the README's policy file. Returns
/// the crate's directory.
fn readme_example_crate() -> std::path::PathBuf {
    let text = readme();
    let section = &text[text.find("## Using it").expect("the section")..];
    let deps = blocks(section, "toml")
        .into_iter()
        .next()
        .expect("its toml block");
    let main = blocks(section, "rust")
        .into_iter()
        .next()
        .expect("its rust block");
    let policies = &text[text.find("## The policy file").expect("the section")..];
    let policies = blocks(policies, "toml")
        .into_iter()
        .next()
        .expect("the policy file");
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let dir = tests::scratch_target_dir().join("readme-example");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let deps = deps.replace("\"../retry/", &format!("\"{}/", workspace.display()));
    let manifest = format!(
        "[package]\nname = \"readme-example\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n{deps}\n[workspace]\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    std::fs::write(dir.join("retry.toml"), policies).unwrap();
    dir
}

/// Issue 31: the dependency lines alone did not build the example (no
/// tokio, then no multi-threaded runtime). They do now.
#[test]
fn the_readme_example_builds_from_the_dependency_lines_alone() {
    let dir = readme_example_crate();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--quiet", "--offline"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", tests::scratch_target_dir())
        .env_remove("RETRY_CONFIG")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the README's example does not build:\n{stderr}"
    );
}

/// Issue 31: `cargo test --workspace` installs redis-server and PostgreSQL
/// when missing (as root); the README says so next to the command.
#[test]
fn the_test_command_says_what_it_installs() {
    let text = readme();
    let at = text
        .find("cargo test --workspace")
        .expect("the test command");
    let next = &text[at..(at + 800).min(text.len())];
    for word in [
        "redis-server",
        "postgresql",
        "apt-get",
        "as root",
        "sudo apt-get install -y redis-server postgresql",
    ] {
        assert!(next.contains(word), "{word:?} next to the command:\n{next}");
    }
}
