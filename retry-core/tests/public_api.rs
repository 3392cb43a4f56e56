//! The public API, pinned: every public item of every public module, each
//! feature's modules and items included, is listed in `public_api.txt`, so
//! any addition or removal shows as a diff of that file in review.
//!
//! The listing is read from the source: from `src/lib.rs`, every `pub mod`
//! that is not `#[doc(hidden)]` is followed into its file, and each file's
//! top-level `pub` items (and each name a `pub use` re-exports) are listed
//! by path. `cfg` attributes are ignored, so an item behind a feature is
//! listed whatever this test was built with. `#[macro_export]` macros that
//! are not hidden are listed at the root, where Rust puts them. Methods and
//! fields are not listed: they belong to a listed type.
//!
//! After a deliberate change, write the new listing with
//! `RETRYKIT_BLESS=1 cargo test -p retrykit-core --test public_api` and
//! commit `public_api.txt` with the change.
//!
//! Hidden or moved, and why:
//! - `__private` (hidden) holds what generated code and retrykit-config's
//!   loader name: a call's state and loop (`Run`, `drive!`, a hedged
//!   round's `Race`), a call site's registration and policy cache
//!   (`CallSite`, `PolicyCache`), and the loader plumbing (`LazyLoader`,
//!   `set_origin`, `set_withheld`, `call_sites`, `declared_classes`,
//!   `missing_policies`);
//! - the fleet simulator: its own crate, retrykit-sim (retry-config/simulate),
//!   with `rand_distr`, so no user builds it;
//! - `Clock`, `Sleeper`, `BlockingSleeper` and their impls: in `clock`, not
//!   the root (a user who injects time names them; most never do);
//! - `inventory`: re-exported once, as `__private::inventory`;
//! - the jitter generator (`rng`): crate-private, so `rand` is not in the public API.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

// The paths the listing's main names resolve to: the import itself is the
// check that the source reading and the compiler agree on them.
#[allow(unused_imports)]
use retrykit_core::{
    AdaptiveLimiter, AttemptTimeout, Backoff, CarriesTimeout, Class, Classify, Ending, GiveUpEvent,
    Hooks, Jitter, Oracle, OracleState, Policy, PolicyBuilder, PolicyError, PolicyErrorKind,
    Problem, Registry, Report, Retry, RetryBudget, RetryBudgetBuilder, RetryEvent, Verdict,
    clock::{BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock},
    hedge::{HedgeAfter, HedgeSettings, LatencyEstimate},
    kernel::next_hedge,
    registry::{RegistryBuilder, current, install, is_strict, policy, set_strict, with_policy},
};

/// The public items of the module whose source is `file`, each as
/// `prefix` + its name, into `out`; public modules are followed.
fn walk(file: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    let source =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let items = top_level(&source);
    // A module's own directory: `foo/` for `foo.rs`, the file's for `mod.rs`
    // and `lib.rs`.
    let dir = match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib") => file.parent().unwrap().to_path_buf(),
        Some(stem) => file.parent().unwrap().join(stem),
        None => unreachable!("a source file has a name"),
    };
    for item in items {
        let path = format!("{prefix}{}", item.name);
        if item.is_mod {
            let child = module_file(&dir, &item.name, item.path.as_deref());
            walk(&child, &format!("{path}::"), out);
        }
        if item.is_macro {
            out.insert(format!("{}!", item.name));
        } else {
            out.insert(path);
        }
    }
}

/// Where `mod name;` declared in a module whose directory is `dir` lives.
fn module_file(dir: &Path, name: &str, path_attr: Option<&str>) -> PathBuf {
    if let Some(path) = path_attr {
        return dir.join(path);
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// One public item at a file's top level.
#[derive(Debug, PartialEq)]
struct Item {
    name: String,
    is_mod: bool,
    is_macro: bool,
    /// Its `#[path = "..."]`, for a module.
    path: Option<String>,
}

/// The items a source file makes public at its top level: `pub use` (each
/// name in braces, nested braces included, or the last path segment, or
/// the name after `as`), `pub mod`, `pub fn`, `pub struct`, `pub enum`,
/// `pub trait`, `pub type`, `pub const`, `pub static`, and `#[macro_export]`
/// macros. Items after `#[doc(hidden)]` are skipped; a `cfg` pair defines
/// one name twice, which the caller's set merges.
fn top_level(source: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let (mut hidden, mut exported, mut path) = (false, false, None);
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("#[doc(hidden)]") {
            hidden = true;
            continue;
        }
        if line.starts_with("#[macro_export]") {
            exported = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path = rest.split('"').next().map(str::to_owned);
            continue;
        }
        if line.starts_with("#[") || line.starts_with("///") || line.starts_with("//!") {
            continue;
        }
        let was_hidden = std::mem::take(&mut hidden);
        let was_exported = std::mem::take(&mut exported);
        let path = path.take();
        if was_hidden {
            continue;
        }
        if let Some(rest) = line.strip_prefix("macro_rules! ") {
            if was_exported {
                items.push(Item {
                    name: ident(rest),
                    is_mod: false,
                    is_macro: true,
                    path: None,
                });
            }
            continue;
        }
        let Some(item) = line.strip_prefix("pub ") else {
            continue;
        };
        if let Some(tree) = item.strip_prefix("use ") {
            let mut statement = tree.to_owned();
            while !statement.contains(';') {
                statement.push_str(lines.next().expect("a `pub use` ends with `;`"));
            }
            for name in use_names(statement.trim_end_matches(';')) {
                items.push(Item {
                    name,
                    is_mod: false,
                    is_macro: false,
                    path: None,
                });
            }
            continue;
        }
        let words: Vec<&str> = item.split_whitespace().collect();
        let (kind, name) = match words.as_slice() {
            ["const", "fn", name, ..] | ["async", "fn", name, ..] => ("fn", *name),
            ["unsafe", kind, name, ..] | [kind, name, ..] => (*kind, *name),
            _ => continue,
        };
        items.push(Item {
            name: ident(name),
            is_mod: kind == "mod",
            is_macro: false,
            path,
        });
    }
    items
}

/// The identifier `text` starts with.
fn ident(text: &str) -> String {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_'));
    text[..end.unwrap_or(text.len())].to_owned()
}

/// The names a `use` tree (without `use` and `;`) brings in: the last
/// segment of each leaf, or its `as` name.
fn use_names(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        let leaf = tree.rsplit(" as ").next().unwrap_or(&tree);
        let name = leaf.rsplit("::").next().unwrap_or(leaf).trim();
        return vec![name.to_owned()];
    };
    let inner = &tree[open + 1..tree.rfind('}').expect("a `{` has its `}`")];
    // Split on the commas at this level only.
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "self")
        .flat_map(use_names)
        .collect()
}

fn listing() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = BTreeSet::new();
    walk(&root.join("src/lib.rs"), "", &mut names);
    names.into_iter().map(|n| n + "\n").collect()
}

#[test]
fn the_public_api_is_the_committed_listing() {
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/public_api.txt");
    let found = listing();
    if std::env::var_os("RETRYKIT_BLESS").is_some() {
        std::fs::write(&pinned, &found).unwrap();
    }
    let committed = std::fs::read_to_string(&pinned).unwrap_or_default();
    if found != committed {
        let found: BTreeSet<&str> = found.lines().collect();
        let committed: BTreeSet<&str> = committed.lines().collect();
        let added: Vec<_> = found.difference(&committed).collect();
        let removed: Vec<_> = committed.difference(&found).collect();
        panic!(
            "the public API changed\n  added: {added:?}\n  removed: {removed:?}\n  \
             fix: if the change is meant, run `RETRYKIT_BLESS=1 cargo test -p retrykit-core \
             --test public_api` and commit tests/public_api.txt; otherwise make the item \
             crate-private or move it into `__private`"
        );
    }
}

#[test]
fn the_listing_covers_every_public_module_and_feature() {
    let found = listing();
    let modules = [
        "breaker", "clock", "fleet", "grpc", "hedge", "hooks", "http", "kernel", "metrics",
        "registry", "reqwest", "tower",
    ];
    for module in modules {
        assert!(
            found.lines().any(|l| l.starts_with(&format!("{module}::"))),
            "no item listed in `{module}`"
        );
    }
    assert!(!found.contains("__private"), "hidden items are not listed");
    // Behind features this test may be built without.
    for item in [
        "fleet::FleetOptions",
        "retry",
        "Classify",
        "tower::RetryLayer",
    ] {
        assert!(found.lines().any(|l| l == item), "{item} is not listed");
    }
}

#[test]
fn the_reader_sees_what_it_should_and_skips_what_is_hidden() {
    let source = "#[doc(hidden)]\npub mod hidden;\npub mod shown;\npub use a::{B,\n    C};\n\
                  pub use d::E;\n#[cfg(x)]\npub type F = u8;\n#[cfg(not(x))]\npub type F = u16;\n\
                  pub const fn g() {}\npub(crate) fn h() {}\n    pub fn nested() {}\n\
                  pub use i::{j::{K, L as M}, self};\npub use n::O as P;\n\
                  #[macro_export]\nmacro_rules! q {}\n#[doc(hidden)]\n#[macro_export]\n\
                  macro_rules! r {}\nmacro_rules! s {}\npub const T: u8 = 1;\n\
                  #[path = \"u/mod.rs\"]\npub mod u;\n";
    let names: Vec<String> = top_level(source).into_iter().map(|i| i.name).collect();
    assert_eq!(
        names,
        [
            "shown", "B", "C", "E", "F", "F", "g", "K", "M", "P", "q", "T", "u"
        ]
    );
    let u = top_level(source).pop().unwrap();
    assert_eq!((u.is_mod, u.path.as_deref()), (true, Some("u/mod.rs")));
}
