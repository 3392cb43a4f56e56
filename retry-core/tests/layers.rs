//! retry-core's layers, pinned: each top-level module sits in one layer
//! of [`LAYERS`], and a module names only modules of its own layer or of
//! the layers below it, without a cycle. docs/architecture.md draws the
//! same table.
//!
//! The reading is from the source: every `crate::` (or `$crate::`) path
//! in a module's files is a use of the module it names, and a name that
//! `lib.rs` re-exports (`crate::Policy`) is a use of the module it comes
//! from. Comments, test files (`tests.rs`, `tests/`) and inline
//! `#[cfg(test)]` modules are not read: a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// retry-core's layers, lowest first, each with its top-level modules.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundation: values, time and arithmetic",
        &[
            "say", "class", "problem", "rng", "jitter", "backoff", "window", "timer", "observe",
        ],
    ),
    (
        "shared state: what a policy holds across calls",
        &[
            "adaptive", "budget", "breaker", "fleet", "hedge", "classify", "limit", "chaos",
        ],
    ),
    (
        "policy: the settings a call reads",
        &["policy", "schedule", "report", "hooks", "registry"],
    ),
    (
        "decisions: what to do after an attempt",
        &["decide", "kernel", "oracle"],
    ),
    (
        "the loop: one driver for every entry point",
        &["clock", "attempt", "run", "site", "round", "race", "retry"],
    ),
    (
        "integrations: behind cargo features, and generated code's door",
        &[
            "metrics",
            "http",
            "grpc",
            "policy_source",
            "tower",
            "reqwest",
            "__private",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules `lib.rs` declares, each with its file, and the
/// names `lib.rs` re-exports, each with the module it comes from.
fn crate_root() -> (BTreeMap<String, PathBuf>, BTreeMap<String, String>) {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let (mut modules, mut exports) = (BTreeMap::new(), BTreeMap::new());
    let mut path_attr = None;
    for line in lib.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.split('"').next().map(str::to_owned);
            continue;
        }
        let item = line
            .strip_prefix("pub ")
            .unwrap_or(line)
            .trim_start_matches("(crate) ");
        if let Some(name) = item.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            let file = match path_attr.take() {
                Some(path) => src().join(path),
                None if src().join(format!("{name}.rs")).exists() => {
                    src().join(format!("{name}.rs"))
                }
                None => src().join(name).join("mod.rs"),
            };
            modules.insert(name.to_owned(), file);
        } else if let Some(tree) = item.strip_prefix("use ") {
            let tree = tree.trim_end_matches(';');
            let (module, rest) = tree.split_once("::").unwrap_or((tree, ""));
            for name in rest.trim_matches(|c| c == '{' || c == '}').split(',') {
                let name = name.rsplit("::").next().unwrap().trim();
                let name = name.rsplit(" as ").next().unwrap().trim();
                if !name.is_empty() && modules.contains_key(module) {
                    exports.insert(name.to_owned(), module.to_owned());
                }
            }
        }
    }
    (modules, exports)
}

/// The source files of the module whose root file is `root`: the file
/// and, for `foo.rs` or `foo/mod.rs`, every file under `foo/`, test files
/// left out.
fn module_files(root: &Path) -> Vec<PathBuf> {
    let dir = match root.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") => root.parent().unwrap().to_path_buf(),
        _ => root.with_extension(""),
    };
    let mut files = vec![root.to_path_buf()];
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if name == "tests" || name == "tests.rs" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".rs") && path != root {
                files.push(path);
            }
        }
    }
    files
}

/// `source` without comments and without inline `#[cfg(test)]` modules.
fn code(source: &str) -> String {
    let mut out = String::new();
    let (mut test_attr, mut skip_depth) = (false, 0i32);
    for line in source.lines() {
        let trimmed = line.trim();
        if skip_depth > 0 {
            skip_depth += brace_balance(line);
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        if test_attr && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            skip_depth = brace_balance(line);
            test_attr = false;
            continue;
        }
        test_attr = trimmed == "#[cfg(test)]";
        out.push_str(line.split(" // ").next().unwrap());
        out.push('\n');
    }
    out
}

fn brace_balance(line: &str) -> i32 {
    line.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}

/// The first segment of every `crate::` path in `code`, braces expanded:
/// `crate::{a::X, b}` names `a` and `b`.
fn crate_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(tree) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0, 0);
            for (i, c) in tree.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.insert(ident(&tree[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(ident(&tree[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.remove("");
    names
}

fn ident(text: &str) -> String {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    text[..end].to_owned()
}

/// Each top-level module and the other top-level modules it names.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let (modules, exports) = crate_root();
    let mut edges = BTreeMap::new();
    for (module, root) in &modules {
        let mut uses = BTreeSet::new();
        for file in module_files(root) {
            let source = std::fs::read_to_string(&file).unwrap();
            for name in crate_names(&code(&source)) {
                let target = if modules.contains_key(&name) {
                    name
                } else if let Some(from) = exports.get(&name) {
                    from.clone()
                } else {
                    continue;
                };
                if &target != module {
                    uses.insert(target);
                }
            }
        }
        edges.insert(module.clone(), uses);
    }
    edges
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

#[test]
fn every_module_has_one_layer() {
    let (modules, _) = crate_root();
    let unplaced: Vec<_> = modules.keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules in no layer: {unplaced:?}; add each to LAYERS here and to docs/architecture.md"
    );
    let mut seen = BTreeSet::new();
    for (_, members) in LAYERS {
        for m in *members {
            assert!(seen.insert(*m), "{m} is in two layers");
            assert!(
                modules.contains_key(*m),
                "{m} is in LAYERS but not in lib.rs"
            );
        }
    }
}

#[test]
fn no_module_names_a_higher_layer() {
    let mut upward = Vec::new();
    for (module, uses) in edges() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for used in uses {
            if layer_of(&used).is_some_and(|l| l > own) {
                upward.push(format!("{module} (layer {own}) -> {used}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports up the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn modules_form_a_dag() {
    let edges = edges();
    // Depth-first search; a grey module met again closes a cycle.
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(true) => return None,
            Some(false) => {
                let at = path.iter().position(|p| *p == m).unwrap();
                let mut cycle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                cycle.push(m.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        state.insert(m, false);
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, state, path) {
                return Some(cycle);
            }
        }
        path.pop();
        state.insert(m, true);
        None
    }
    let mut state = BTreeMap::new();
    for m in edges.keys() {
        if let Some(cycle) = visit(m, &edges, &mut state, &mut Vec::new()) {
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_reading_finds_known_edges() {
    // The reader itself can fail: these edges exist, so an empty reading
    // (a path or parsing mistake) fails here rather than passing above.
    let edges = edges();
    assert!(edges["run"].contains("policy"), "{:?}", edges["run"]);
    assert!(edges["kernel"].contains("decide"), "{:?}", edges["kernel"]);
    assert_eq!(
        crate_names("use crate::{a::X, b::{c, d}, e};\n$crate::f::g(); my_crate::no"),
        ["a", "b", "e", "f"].map(String::from).into()
    );
}

#[test]
fn the_architecture_doc_draws_these_layers() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md"),
    )
    .unwrap();
    for (i, (_, modules)) in LAYERS.iter().enumerate() {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {i} ")))
            .unwrap_or_else(|| panic!("docs/architecture.md has no row for layer {i}"));
        let listed = row.split('|').nth(2).unwrap();
        let named: BTreeSet<&str> = listed.split('`').skip(1).step_by(2).collect();
        let ours: BTreeSet<&str> = modules.iter().copied().collect();
        assert_eq!(named, ours, "docs/architecture.md, layer {i}");
    }
}

#[test]
#[ignore = "prints the module graph: cargo test -p retrykit-core --test layers -- --ignored --nocapture"]
fn print_edges() {
    for (module, uses) in edges() {
        println!("{module} ({:?}) -> {uses:?}", layer_of(&module));
    }
}
