//! Where the policy file is: one rule for the build-time check and the run
//! time, so that a name the build accepted is found again when the program runs.
//!
//! 1. `RETRY_CONFIG`, when set and not empty, names the file. A relative path
//!    is taken from the starting directory (and, at build time, also from
//!    the workspace root cargo runs the compiler in).
//! 2. Otherwise the nearest [`FILE_NAME`] found walking up from the starting
//!    directory to the filesystem root, the way cargo finds `Cargo.toml`.
//!    The starting directory is the working directory at run time, and the
//!    crate's directory (`CARGO_MANIFEST_DIR`) at build time.
//! 3. At run time only, when neither finds a file: the file each
//!    `#[retry]` call site was checked against at build time (its absolute
//!    path is compiled into the call site), so `cargo run -p app` from the
//!    workspace root, or a binary started elsewhere on the build machine,
//!    reads the same file the build checked.
//!
//! Every path tried is kept, so "nothing found" can list them.
//!
//! ```
//! use retrykit_schema::discover::{Discovery, FILE_NAME};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join(FILE_NAME), "").unwrap();
//! let nested = dir.path().join("a/b");
//! std::fs::create_dir_all(&nested).unwrap();
//! let found = Discovery::new().start(&nested).run();
//! assert_eq!(found.file.as_deref(), Some(dir.path().join(FILE_NAME).as_path()));
//! assert_eq!(found.searched.len(), 3); // a/b, a, then the directory holding it
//! ```

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// The file's name when no variable names it.
///
/// ```
/// assert_eq!(retrykit_schema::discover::FILE_NAME, "retry.toml");
/// ```
pub const FILE_NAME: &str = "retry.toml";

/// The variable that names the file.
///
/// ```
/// assert_eq!(retrykit_schema::discover::CONFIG_VAR, "RETRY_CONFIG");
/// ```
pub const CONFIG_VAR: &str = "RETRY_CONFIG";

/// How a file was found.
///
/// ```
/// use retrykit_schema::discover::How;
/// assert_eq!(How::Named.to_string(), "named by RETRY_CONFIG");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `RETRY_CONFIG` named it.
    Named,
    /// Found walking up from the starting directory.
    Nearest,
    /// The file a `#[retry]` call site was checked against at build time.
    BuildTime,
}

impl fmt::Display for How {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            How::Named => "named by RETRY_CONFIG",
            How::Nearest => "the nearest retry.toml",
            How::BuildTime => "the file checked at build time",
        })
    }
}

/// The search to run: its inputs are explicit so that tests (and the build
/// side, which has no working directory of its own) can set them.
///
/// ```
/// use retrykit_schema::discover::Discovery;
/// let found = Discovery::new().named(Some("/no/such/retry.toml".into())).run();
/// assert!(found.file.is_none());
/// assert_eq!(found.searched, [std::path::PathBuf::from("/no/such/retry.toml")]);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a search does nothing until `.run()`"]
pub struct Discovery {
    named: Option<OsString>,
    start: Option<PathBuf>,
    also_relative_to: Vec<PathBuf>,
    fallbacks: Vec<PathBuf>,
}

/// What a search found, and every path it tried.
///
/// ```
/// let found = retrykit_schema::discover::Discovery::new().fallbacks(["/no/such.toml".into()]).run();
/// assert_eq!((found.file, found.searched.len()), (None, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file, when one exists.
    pub file: Option<PathBuf>,
    /// How it was found (meaningful when `file` is set).
    pub how: How,
    /// Every path tried, in order, the found one last.
    pub searched: Vec<PathBuf>,
}

impl Discovery {
    /// A search with no variable and no starting directory.
    ///
    /// ```
    /// assert!(retrykit_schema::discover::Discovery::new().run().file.is_none());
    /// ```
    pub fn new() -> Self {
        Discovery::default()
    }

    /// The run-time search: `RETRY_CONFIG` from the process environment,
    /// starting in the working directory.
    ///
    /// ```
    /// let _ = retrykit_schema::discover::Discovery::from_process().run();
    /// ```
    pub fn from_process() -> Self {
        let mut d = Discovery::new().named(std::env::var_os(CONFIG_VAR));
        if let Ok(dir) = std::env::current_dir() {
            d = d.start(dir);
        }
        d
    }

    /// The value of `RETRY_CONFIG` (empty counts as unset).
    ///
    /// ```
    /// let d = retrykit_schema::discover::Discovery::new().named(Some("".into()));
    /// assert!(d.run().searched.is_empty());
    /// ```
    pub fn named(mut self, value: Option<OsString>) -> Self {
        self.named = value.filter(|v| !v.is_empty());
        self
    }

    /// The directory the search starts from (and a relative `RETRY_CONFIG` is taken from).
    ///
    /// ```
    /// let d = retrykit_schema::discover::Discovery::new().start("/");
    /// assert!(!d.run().searched.is_empty());
    /// ```
    pub fn start(mut self, dir: impl Into<PathBuf>) -> Self {
        self.start = Some(dir.into());
        self
    }

    /// Another directory a relative `RETRY_CONFIG` may be taken from, after the start.
    ///
    /// ```
    /// let d = retrykit_schema::discover::Discovery::new().named(Some("r.toml".into())).also_relative_to("/tmp");
    /// assert_eq!(d.run().searched[0], std::path::PathBuf::from("/tmp/r.toml"));
    /// ```
    pub fn also_relative_to(mut self, dir: impl Into<PathBuf>) -> Self {
        self.also_relative_to.push(dir.into());
        self
    }

    /// Files tried last, when neither the variable nor the walk finds one
    /// (at run time: the files the build checked).
    ///
    /// ```
    /// let d = retrykit_schema::discover::Discovery::new().fallbacks(["/no/such/retry.toml".into()]);
    /// assert_eq!(d.run().searched.len(), 1);
    /// ```
    pub fn fallbacks(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        for file in files {
            if !self.fallbacks.contains(&file) {
                self.fallbacks.push(file);
            }
        }
        self
    }

    /// Runs the search.
    ///
    /// ```
    /// let found = retrykit_schema::discover::Discovery::new().run();
    /// assert!(found.file.is_none());
    /// ```
    pub fn run(self) -> Found {
        let mut searched = Vec::new();
        let try_file = |path: PathBuf, searched: &mut Vec<PathBuf>| {
            let hit = path.is_file();
            searched.push(path);
            hit
        };
        if let Some(named) = self.named {
            let named = PathBuf::from(named);
            let candidates: Vec<PathBuf> = if named.is_absolute() {
                vec![named]
            } else {
                self.start
                    .iter()
                    .chain(&self.also_relative_to)
                    .map(|dir| dir.join(&named))
                    .chain(self.start.is_none().then(|| named.clone()))
                    .collect()
            };
            for candidate in candidates {
                if try_file(candidate, &mut searched) {
                    return found(searched, How::Named);
                }
            }
            // A named file that does not exist is not replaced by another:
            // the user said which file, and reading a different one would hide it.
            return Found {
                file: None,
                how: How::Named,
                searched,
            };
        }
        if let Some(start) = &self.start {
            for dir in start.ancestors() {
                if try_file(dir.join(FILE_NAME), &mut searched) {
                    return found(searched, How::Nearest);
                }
            }
        }
        for file in self.fallbacks {
            if try_file(file, &mut searched) {
                return found(searched, How::BuildTime);
            }
        }
        Found {
            file: None,
            how: How::Nearest,
            searched,
        }
    }
}

fn found(searched: Vec<PathBuf>, how: How) -> Found {
    Found {
        file: searched.last().cloned(),
        how,
        searched,
    }
}

impl Found {
    /// The paths tried, for a message: `a, b, c`.
    ///
    /// ```
    /// let found = retrykit_schema::discover::Discovery::new().named(Some("/x/r.toml".into())).run();
    /// assert_eq!(found.searched_list(), "/x/r.toml");
    /// ```
    pub fn searched_list(&self) -> String {
        list(&self.searched)
    }
}

/// Paths joined with `, `.
///
/// ```
/// use std::path::PathBuf;
/// assert_eq!(retrykit_schema::discover::list(&[PathBuf::from("a"), PathBuf::from("b")]), "a, b");
/// ```
pub fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `path` is an absolute path to an existing file (the build
/// records only such paths).
///
/// ```
/// assert!(!retrykit_schema::discover::is_existing_file(std::path::Path::new("relative.toml")));
/// ```
pub fn is_existing_file(path: &Path) -> bool {
    path.is_absolute() && path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_relative_path_is_taken_from_the_start_then_the_other_roots() {
        let root = tempfile::tempdir().unwrap();
        let crate_dir = root.path().join("app");
        std::fs::create_dir_all(&crate_dir).unwrap();
        std::fs::write(root.path().join("cfg.toml"), "").unwrap();
        let found = Discovery::new()
            .named(Some("cfg.toml".into()))
            .start(&crate_dir)
            .also_relative_to(root.path())
            .run();
        assert_eq!(found.how, How::Named);
        assert_eq!(found.file, Some(root.path().join("cfg.toml")));
        assert_eq!(
            found.searched,
            [crate_dir.join("cfg.toml"), root.path().join("cfg.toml")]
        );
    }

    #[test]
    fn a_named_file_that_is_missing_is_not_replaced_by_a_nearer_one() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(FILE_NAME), "").unwrap();
        let found = Discovery::new()
            .named(Some("missing.toml".into()))
            .start(root.path())
            .run();
        assert_eq!(found.file, None);
        assert_eq!(found.searched, [root.path().join("missing.toml")]);
    }

    #[test]
    fn the_build_time_file_is_the_last_resort() {
        let root = tempfile::tempdir().unwrap();
        let built = tempfile::tempdir().unwrap();
        let checked = built.path().join(FILE_NAME);
        std::fs::write(&checked, "").unwrap();
        let found = Discovery::new()
            .start(root.path())
            .fallbacks([checked.clone(), checked.clone()])
            .run();
        assert_eq!(found.how, How::BuildTime);
        assert_eq!(found.file, Some(checked.clone()));
        assert_eq!(found.searched.last(), Some(&checked));
        assert_eq!(
            found.searched.iter().filter(|p| **p == checked).count(),
            1,
            "a fallback named by several call sites is tried once"
        );
    }

    #[test]
    fn the_walk_reaches_the_filesystem_root_and_lists_every_step() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("x/y");
        std::fs::create_dir_all(&deep).unwrap();
        let found = Discovery::new().start(&deep).run();
        // Unless some ancestor of the temp dir holds a retry.toml, nothing is found.
        if found.file.is_none() {
            assert_eq!(found.searched.len(), deep.ancestors().count());
            assert_eq!(found.searched[0], deep.join(FILE_NAME));
        }
    }
}
