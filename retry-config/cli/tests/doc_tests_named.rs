//! The tests that docs/grpc.md's tables name as pinning a rule exist: each
//! name in a table's `test` column is a `fn` of some Rust file of the
//! repository, so a renamed or removed test cannot leave the doc citing it.

use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, build output and Git's files left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The test names in the `test` column of each table of `doc`: the
/// backquoted snake_case words of that column.
fn named_tests(doc: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut column = None;
    for line in doc.lines() {
        if !line.starts_with('|') {
            column = None;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        match column {
            None => column = cells.iter().position(|c| *c == "test"),
            Some(at) => {
                let Some(cell) = cells.get(at) else { continue };
                let quoted = cell.split('`').skip(1).step_by(2);
                names.extend(
                    quoted
                        .filter(|w| w.matches('_').count() >= 2)
                        .filter(|w| {
                            w.bytes()
                                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                        })
                        .map(str::to_owned),
                );
            }
        }
    }
    names
}

#[test]
fn every_test_docs_grpc_md_names_exists() {
    let doc = std::fs::read_to_string(root().join("docs/grpc.md")).unwrap();
    let names = named_tests(&doc);
    assert!(names.len() >= 10, "the tables name their tests: {names:?}");
    let mut files = Vec::new();
    rust_files(&root(), &mut files);
    let sources: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect();
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| {
            let defined = format!("fn {name}(");
            !sources.iter().any(|s| s.contains(&defined))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/grpc.md names tests that do not exist: {missing:?}"
    );
}
