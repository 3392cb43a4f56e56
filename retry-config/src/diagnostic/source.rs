//! Where a diagnostic points: a named text ([`Source`]) with its lines
//! indexed once, and a byte range in it ([`Span`]).

use retrykit_schema::keys::credentials;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// A named text that diagnostics point into: the configuration file, or the
/// `NAME=value` line of an environment variable.
///
/// ```
/// let src = retrykit_config::Source::new("retry.toml", "[defaults]\nmax_attempts = 3\n");
/// assert_eq!(src.line_column(11), (2, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Source {
    pub(super) name: String,
    pub(super) text: String,
    /// Where each line starts, built on the first position asked for, so
    /// that placing n diagnostics costs O(n log lines), not O(n × file).
    index: OnceLock<LineIndex>,
}

impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.text == other.text
    }
}

impl Eq for Source {}

/// How many bytes one [`LineIndex`] character checkpoint covers.
const CHECKPOINT: usize = 1024;

/// A source's lines, characters and credentials, found once: the byte offset
/// where each line starts, the characters before every [`CHECKPOINT`]th
/// byte, so a column on a long line costs at most one checkpoint's bytes to
/// count, and where each password is (see [`credentials`]), so a window of a
/// long line finds the ones it shows without reading the line.
#[derive(Debug, Clone)]
pub(super) struct LineIndex {
    pub(super) line_starts: Vec<usize>,
    chars_before: Vec<usize>,
    /// In order, none overlapping, none across a line break.
    credentials: Vec<Range<usize>>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        let mut chars_before = Vec::with_capacity(bytes.len() / CHECKPOINT + 1);
        let mut chars = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if i % CHECKPOINT == 0 {
                chars_before.push(chars);
            }
            if b == b'\n' {
                line_starts.push(i + 1);
            }
            chars += usize::from(!is_continuation(b));
        }
        LineIndex {
            line_starts,
            chars_before,
            credentials: credentials(text).collect(),
        }
    }

    /// The credentials that overlap the bytes `range`.
    pub(super) fn credentials_in(
        &self,
        range: Range<usize>,
    ) -> impl Iterator<Item = &Range<usize>> + '_ {
        let first = self.credentials.partition_point(|c| c.end <= range.start);
        self.credentials[first..]
            .iter()
            .take_while(move |c| c.start < range.end)
    }

    /// The 0-based line holding byte `offset`.
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// The characters before byte `offset` (a character boundary) of `text`.
    pub(super) fn chars_to(&self, text: &str, offset: usize) -> usize {
        let checkpoint = offset / CHECKPOINT;
        let Some(&before) = self.chars_before.get(checkpoint) else {
            return 0;
        };
        let from = checkpoint * CHECKPOINT;
        before
            + text.as_bytes()[from..offset]
                .iter()
                .filter(|&&b| !is_continuation(b))
                .count()
    }
}

/// Whether `b` continues a UTF-8 character (is not its first byte).
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

impl Source {
    /// A source called `name` (a path, or `environment`) holding `text`.
    ///
    /// ```
    /// let src = retrykit_config::Source::new("a.toml", "x = 1");
    /// assert_eq!(src.name(), "a.toml");
    /// ```
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
            index: OnceLock::new(),
        }
    }

    /// The name shown in `name:line:column`.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Source::new("a.toml", "").name(), "a.toml");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full text.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Source::new("a", "x = 1").text(), "x = 1");
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    /// Offsets past the end, or inside a character, are moved back to a valid one.
    ///
    /// ```
    /// let src = retrykit_config::Source::new("a", "ab\ncd");
    /// assert_eq!(src.line_column(4), (2, 2));
    /// assert_eq!(src.line_column(999), (2, 3));
    /// ```
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let index = self.index();
        let line = index.line_of(offset);
        let line_start = index.line_starts[line];
        let column = index.chars_to(&self.text, offset) - index.chars_to(&self.text, line_start);
        (line + 1, column + 1)
    }

    pub(super) fn index(&self) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::new(&self.text))
    }
}

/// Where a diagnostic points: a byte range in a [`Source`].
///
/// ```
/// use retrykit_config::{Source, Span};
/// use std::sync::Arc;
/// let span = Span::new(Arc::new(Source::new("a.toml", "base = 100")), 7..10);
/// assert_eq!(span.to_string(), "a.toml:1:8");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub(super) source: Arc<Source>,
    pub(super) range: Range<usize>,
}

impl Span {
    /// The bytes `range` of `source` (clamped to the text).
    ///
    /// ```
    /// # use retrykit_config::{Source, Span};
    /// # use std::sync::Arc;
    /// let span = Span::new(Arc::new(Source::new("a", "abc")), 1..99);
    /// assert_eq!(span.range(), 1..3);
    /// ```
    pub fn new(source: Arc<Source>, range: Range<usize>) -> Self {
        let len = source.text.len();
        let start = range.start.min(len);
        let end = range.end.clamp(start, len);
        Span {
            source,
            range: start..end,
        }
    }

    /// The source text it points into.
    ///
    /// ```
    /// # use retrykit_config::{Source, Span};
    /// # use std::sync::Arc;
    /// let span = Span::new(Arc::new(Source::new("a", "abc")), 0..1);
    /// assert_eq!(span.source().name(), "a");
    /// ```
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The byte range.
    ///
    /// ```
    /// # use retrykit_config::{Source, Span};
    /// # use std::sync::Arc;
    /// assert_eq!(Span::new(Arc::new(Source::new("a", "abc")), 0..2).range(), 0..2);
    /// ```
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// The 1-based line and column where it starts.
    ///
    /// ```
    /// # use retrykit_config::{Source, Span};
    /// # use std::sync::Arc;
    /// assert_eq!(Span::new(Arc::new(Source::new("a", "x\ny")), 2..3).line_column(), (2, 1));
    /// ```
    pub fn line_column(&self) -> (usize, usize) {
        self.source.line_column(self.range.start)
    }

    /// The text it covers.
    ///
    /// ```
    /// # use retrykit_config::{Source, Span};
    /// # use std::sync::Arc;
    /// assert_eq!(Span::new(Arc::new(Source::new("a", "base = 1")), 7..8).text(), "1");
    /// ```
    pub fn text(&self) -> &str {
        self.source.text.get(self.range.clone()).unwrap_or("")
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column) = self.line_column();
        write!(f, "{}:{line}:{column}", self.source.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_handles_multibyte_text() {
        let src = Source::new("a", "é = 1\nµs");
        assert_eq!(src.line_column(1), (1, 1)); // inside 'é': moved back
        assert_eq!(src.line_column(2), (1, 2));
        assert_eq!(src.line_column(9), (2, 2));
    }
}
