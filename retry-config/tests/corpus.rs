//! Snapshot tests over a corpus of invalid files: each `corpus/invalid/X.toml`
//! must fail to load with exactly the diagnostics in `X.expected` (position,
//! message, key, suggestion, and the rendered excerpt with its caret).
//!
//! A file may start with directives in comments: `# profile: NAME`,
//! `# env: VAR=value` (repeatable), `# deny-warnings`, and `# feature: redis`
//! for a file whose diagnostics are those of a build with retrykit-config's
//! `redis` feature (without it, its fleet budget is the one error that names
//! the feature, which `fleet_budgets.rs` tests): such a file is skipped
//! without the feature (`cargo test -p retrykit-config --features redis` runs it).
//! Run with `UPDATE_SNAPSHOTS=1` to rewrite the `.expected` files, then review the diff.

use retrykit_config::{Config, Env, Options};
use std::fs;
use std::path::Path;

fn options_from_directives(text: &str) -> Options {
    let mut options = Options::new();
    let mut env = Env::new();
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        let directive = line.trim_start_matches('#').trim();
        if let Some(p) = directive.strip_prefix("profile:") {
            options = options.profile(p.trim());
        } else if let Some(var) = directive.strip_prefix("env:") {
            let (k, v) = var
                .trim()
                .split_once('=')
                .expect("env directive is VAR=value");
            env = env.with(k, v);
        } else if directive == "deny-warnings" {
            options = options.deny_warnings(true);
        }
    }
    options.env(env)
}

/// Whether `text` asks for a feature this build lacks (`# feature: redis`).
fn lacks_a_feature(text: &str) -> bool {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').trim().strip_prefix("feature:"))
        .any(|feature| match feature.trim() {
            "redis" => !cfg!(feature = "redis"),
            other => panic!("unknown feature directive `{other}`"),
        })
}

fn snapshot(name: &str, text: &str) -> String {
    let options = options_from_directives(text);
    let diags = match Config::load_str(text, &format!("invalid/{name}.toml"), &options) {
        Ok(_) => {
            panic!("{name}.toml loaded, but every file in the invalid corpus must be rejected")
        }
        Err(diags) => diags,
    };
    assert!(diags.has_errors(), "{name}.toml: rejected without an error");
    format!("{diags}---\n{}", diags.render())
}

#[test]
fn every_invalid_file_gets_its_expected_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/invalid");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 30,
        "the corpus has only {} files",
        files.len()
    );
    let mut mismatches = Vec::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let text = fs::read_to_string(path).unwrap();
        if lacks_a_feature(&text) {
            eprintln!("skipped {name}.toml: it needs a feature this build lacks");
            continue;
        }
        let actual = snapshot(name, &text);
        let expected_path = path.with_extension("expected");
        if update {
            fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "{} is missing; run with UPDATE_SNAPSHOTS=1",
                expected_path.display()
            )
        });
        if expected != actual {
            mismatches.push(format!(
                "--- {name}.expected\n{expected}\n+++ actual\n{actual}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} snapshot(s) differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn every_expected_file_has_a_toml_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/invalid");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "expected") {
            assert!(
                path.with_extension("toml").exists(),
                "stale snapshot {}",
                path.display()
            );
        }
    }
}
