//! Reading the configuration file. Each way it can fail gets a message that
//! names the path and a hint that fits that failure: a missing default file
//! is not fixed the way a directory, a permission or a Latin-1 file is.

use crate::diagnostic::{Diagnostic, Diagnostics};
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The largest file read (16 MiB): far beyond any policy file, and small
/// enough that a path naming a disk image or `/dev/zero` fails at once
/// instead of filling memory.
///
/// ```
/// assert_eq!(retrykit_config::MAX_FILE_BYTES, 16 * 1024 * 1024);
/// ```
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// How the path to read was chosen. Only a default file that was looked for
/// and is missing is fixed by setting `RETRY_CONFIG`.
///
/// ```
/// use retrykit_config::{FileOrigin, read_file};
/// let err = read_file("/no/such/retry.toml", FileOrigin::Given).unwrap_err();
/// assert!(!err.render().contains("RETRY_CONFIG"));
/// let err = read_file("/no/such/retry.toml", FileOrigin::Default).unwrap_err();
/// assert!(err.render().contains("set RETRY_CONFIG"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOrigin {
    /// Named by the caller: a command-line argument, `--config`, [`Setup::new`](crate::Setup::new).
    Given,
    /// Named by the `RETRY_CONFIG` environment variable.
    Env,
    /// Nothing named a file, so [`DEFAULT_FILE`](crate::DEFAULT_FILE) was looked for.
    Default,
}

/// The text of the file at `path`, or one error saying why it cannot be
/// read, with a hint that fits the cause.
///
/// # Errors
///
/// One diagnostic when the path is missing, a directory, unreadable,
/// not UTF-8 or over the size limit, with the fix for that cause.
///
/// ```
/// use retrykit_config::{FileOrigin, read_file};
/// let dir = std::env::temp_dir();
/// let err = read_file(&dir, FileOrigin::Given).unwrap_err();
/// assert!(err.to_string().contains("is a directory"), "{err}");
/// ```
pub fn read_file(path: impl AsRef<Path>, origin: FileOrigin) -> Result<String, Diagnostics> {
    let path = path.as_ref();
    let fail = |reason: String, hint: String| -> Diagnostics {
        std::iter::once(
            Diagnostic::error("", format!("cannot read {}: {reason}", path.display())).note(hint),
        )
        .collect()
    };
    let bytes = read_bounded(path).map_err(|e| fail(reason(&e), hint(e.kind(), origin, path)))?;
    String::from_utf8(bytes).map_err(|e| {
        let (line, column) = position(&e.as_bytes()[..e.utf8_error().valid_up_to()]);
        fail(
            format!(
                "it is not UTF-8 text (the byte at line {line}, column {column} is not valid UTF-8)"
            ),
            "TOML files are UTF-8: save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)"
                .to_owned(),
        )
    })
}

/// The file's bytes, refusing directories up front (on some systems they
/// open, and read as empty) and anything past [`MAX_FILE_BYTES`].
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.is_dir() {
        return Err(ErrorKind::IsADirectory.into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ErrorKind::FileTooLarge.into());
    }
    Ok(bytes)
}

/// What went wrong, in words (the OS's message, or ours for our own refusals).
fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::IsADirectory => "it is a directory".to_owned(),
        ErrorKind::FileTooLarge => format!("it is larger than {} MiB", MAX_FILE_BYTES >> 20),
        _ => e.to_string(),
    }
}

/// The fix for a read failure of `kind`.
fn hint(kind: ErrorKind, origin: FileOrigin, path: &Path) -> String {
    let cwd = || {
        std::env::current_dir()
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default()
    };
    match (kind, origin) {
        (ErrorKind::NotFound, FileOrigin::Default) => format!(
            "no file was named, so {} in the working directory{} was looked for: create it, or set RETRY_CONFIG to the file's path",
            path.display(),
            cwd()
        ),
        (ErrorKind::NotFound, FileOrigin::Env) => {
            "RETRY_CONFIG names this file: correct the path it holds, or unset it to use retry.toml in the working directory".to_owned()
        }
        (ErrorKind::NotFound, FileOrigin::Given) if path.is_relative() => format!(
            "check the path; it is relative to the working directory{}",
            cwd()
        ),
        (ErrorKind::NotFound, FileOrigin::Given) => "check the path".to_owned(),
        (ErrorKind::IsADirectory, _) => {
            let inside = path.join(crate::DEFAULT_FILE);
            if inside.is_file() {
                format!("name the file itself: {}", inside.display())
            } else {
                "name the policy file itself, not the directory that holds it".to_owned()
            }
        }
        (ErrorKind::PermissionDenied, _) => {
            "this user may not read it: check the permissions of the file and of its directories"
                .to_owned()
        }
        (ErrorKind::FileTooLarge, _) => "a policy file is a few kilobytes; check that the path names the right file".to_owned(),
        _ => "check that the path names a readable file".to_owned(),
    }
}

/// The 1-based line and column (in characters) just past `valid`, the UTF-8 prefix of a file.
fn position(valid: &[u8]) -> (usize, usize) {
    let text = std::str::from_utf8(valid).unwrap_or_default();
    let line_start = text.rfind('\n').map_or(0, |i| i + 1);
    (
        text.matches('\n').count() + 1,
        text[line_start..].chars().count() + 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denied_says_permissions_whatever_the_origin() {
        // Tests may run as root, who reads any file: check the hint directly.
        for origin in [FileOrigin::Given, FileOrigin::Env, FileOrigin::Default] {
            let h = hint(ErrorKind::PermissionDenied, origin, Path::new("retry.toml"));
            assert!(h.contains("permissions"), "{h}");
            assert!(!h.contains("RETRY_CONFIG"), "{h}");
        }
    }

    #[test]
    fn only_a_missing_default_file_suggests_retry_config() {
        let missing = |origin| hint(ErrorKind::NotFound, origin, Path::new("retry.toml"));
        assert!(missing(FileOrigin::Default).contains("set RETRY_CONFIG"));
        assert!(missing(FileOrigin::Env).contains("RETRY_CONFIG names this file"));
        assert!(missing(FileOrigin::Given).starts_with("check the path"));
    }

    #[test]
    fn positions_count_lines_and_characters() {
        assert_eq!(position(b""), (1, 1));
        assert_eq!(position("a\n\u{e9}t\u{e9} ".as_bytes()), (2, 5));
    }

    #[test]
    fn a_file_past_the_limit_is_refused_without_reading_it_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap(); // sparse: no disk used
        let err = read_file(&path, FileOrigin::Given).unwrap_err().to_string();
        assert!(err.contains("larger than 16 MiB"), "{err}");
    }
}
