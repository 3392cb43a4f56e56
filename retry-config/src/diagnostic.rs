//! Diagnostics: every problem found while loading, each pointing at the
//! text it is about (a line of the file or an environment variable) with a
//! caret, the key, what is wrong, and how to fix it.

use crate::limits::MAX_SHOWN_DIAGNOSTICS;
use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::files::{self, Files, SimpleFile};
use codespan_reporting::term::{self, Chars, Config as TermConfig, termcolor};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// `text` as a message quotes it: control characters (an escape sequence,
/// a newline) are written escaped (`\u{1b}`, `\n`), so that a name taken
/// from a file or a variable cannot drive the terminal or break the line.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The most characters of a value [`quoted`] shows.
const MAX_QUOTED: usize = 48;

/// A value as a message quotes it: [`shown`] (control characters escaped),
/// cut after [`MAX_QUOTED`] characters with `…`.
pub(crate) fn quoted(value: &str) -> String {
    let mut out: String = value.chars().take(MAX_QUOTED).collect();
    if value.chars().nth(MAX_QUOTED).is_some() {
        out.push('…');
    }
    shown(&out).into_owned()
}

/// How serious a [`Diagnostic`] is.
///
/// ```
/// use retrykit_config::Severity;
/// assert_eq!(Severity::Warning.to_string(), "warning");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The configuration is rejected.
    Error,
    /// The configuration loads, but the setting is risky (an error under `deny_warnings`).
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// A named text that diagnostics point into: the configuration file, or the
/// `NAME=value` line of an environment variable.
///
/// ```
/// let src = retrykit_config::Source::new("retry.toml", "[defaults]\nmax_attempts = 3\n");
/// assert_eq!(src.line_column(11), (2, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Source {
    name: String,
    text: String,
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

/// A source's lines and characters, counted once: the byte offset where each
/// line starts, and the characters before every [`CHECKPOINT`]th byte, so a
/// column on a long line costs at most one checkpoint's bytes to count.
#[derive(Debug, Clone)]
struct LineIndex {
    line_starts: Vec<usize>,
    chars_before: Vec<usize>,
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
        }
    }

    /// The 0-based line holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// The characters before byte `offset` (a character boundary) of `text`.
    fn chars_to(&self, text: &str, offset: usize) -> usize {
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

    fn index(&self) -> &LineIndex {
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
    source: Arc<Source>,
    range: Range<usize>,
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

/// One problem: what is wrong, where, with which key, and how to fix it.
///
/// ```
/// let err = retrykit_config::Config::load_str("[defaults]\nmax_atempts = 3\n", "a.toml", &Default::default())
///     .unwrap_err();
/// let d = &err.errors().next().unwrap();
/// assert_eq!(d.key, "defaults.max_atempts");
/// assert_eq!(d.suggestion.as_deref(), Some("max_attempts"));
/// assert_eq!(d.span.as_ref().unwrap().line_column(), (2, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// One line saying what is wrong, e.g. "unknown key `bsae` in policy `outbox`".
    pub message: String,
    /// The dotted key it is about, e.g. `policies.outbox.base` (or the environment variable).
    pub key: String,
    /// Where it points; `None` for problems with no text behind them (a missing file).
    pub span: Option<Span>,
    /// The text under the caret.
    pub label: String,
    /// The closest valid word, for misspellings.
    pub suggestion: Option<String>,
    /// How to fix it, and other notes.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error about `key` with `message`.
    ///
    /// ```
    /// let d = retrykit_config::Diagnostic::error("defaults", "oops");
    /// assert_eq!(d.severity, retrykit_config::Severity::Error);
    /// ```
    pub fn error(key: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            key: key.into(),
            span: None,
            label: String::new(),
            suggestion: None,
            notes: Vec::new(),
        }
    }

    /// A warning about `key` with `message`.
    ///
    /// ```
    /// let d = retrykit_config::Diagnostic::warning("policies.a.jitter", "no jitter");
    /// assert_eq!(d.severity, retrykit_config::Severity::Warning);
    /// ```
    pub fn warning(key: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(key, message)
        }
    }

    /// Points the diagnostic at `span`, with `label` under the caret.
    ///
    /// ```
    /// # use retrykit_config::{Diagnostic, Source, Span};
    /// # use std::sync::Arc;
    /// let span = Span::new(Arc::new(Source::new("a", "x = 1")), 0..1);
    /// let d = Diagnostic::error("x", "bad").at(Some(span), "here");
    /// assert_eq!(d.label, "here");
    /// ```
    pub fn at(mut self, span: Option<Span>, label: impl Into<String>) -> Self {
        self.span = span;
        self.label = label.into();
        self
    }

    /// Adds a did-you-mean suggestion.
    ///
    /// ```
    /// let d = retrykit_config::Diagnostic::error("x", "bad").suggest(Some("y".into()));
    /// assert_eq!(d.suggestion.as_deref(), Some("y"));
    /// ```
    pub fn suggest(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// Adds a note (a fix, or context).
    ///
    /// ```
    /// let d = retrykit_config::Diagnostic::error("x", "bad").note("write y instead");
    /// assert_eq!(d.notes, ["write y instead"]);
    /// ```
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The rendered diagnostic: header, `--> file:line:column`, the source
    /// line with a caret, the suggestion and the notes. No colour.
    ///
    /// ```
    /// # use retrykit_config::{Diagnostic, Source, Span};
    /// # use std::sync::Arc;
    /// let span = Span::new(Arc::new(Source::new("a.toml", "bsae = \"1s\"")), 0..4);
    /// let text = Diagnostic::error("bsae", "unknown key `bsae`").at(Some(span), "unknown key").render();
    /// assert!(text.contains("a.toml:1:1"));
    /// assert!(text.contains("^^^^"));
    /// ```
    pub fn render(&self) -> String {
        self.render_to(false)
    }

    /// Like [`render`](Self::render), coloured with ANSI escapes for a terminal.
    ///
    /// ```
    /// let text = retrykit_config::Diagnostic::error("k", "bad").render_ansi();
    /// assert!(text.contains("\u{1b}["));
    /// ```
    pub fn render_ansi(&self) -> String {
        self.render_to(true)
    }

    fn render_to(&self, color: bool) -> String {
        let severity = match self.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        // Names quoted from a file or a variable may hold control characters:
        // they are shown escaped, never sent to the terminal.
        let mut notes = Vec::new();
        if let Some(s) = &self.suggestion {
            notes.push(format!("help: did you mean `{}`?", shown(s)));
        }
        notes.extend(self.notes.iter().map(|n| shown(n).into_owned()));
        let mut report = Report::new(severity)
            .with_message(shown(&self.message))
            .with_notes(notes);
        let config = TermConfig {
            chars: Chars::ascii(),
            ..TermConfig::default()
        };
        let excerpt = match &self.span {
            Some(span) => {
                let excerpt = Excerpt::around(span);
                report = report.with_label(
                    Label::primary((), excerpt.range.clone()).with_message(&self.label),
                );
                excerpt
            }
            None => Excerpt::empty(),
        };
        let file = &excerpt;
        let rendered = if color {
            let mut buffer = termcolor::Buffer::ansi();
            term::emit_to_write_style(&mut buffer, &config, file, &report)
                .map(|()| String::from_utf8_lossy(buffer.as_slice()).into_owned())
        } else {
            term::emit_into_string(&config, file, &report)
        };
        // Rendering only fails for spans outside the file, which `Span::new` rules out.
        rendered.unwrap_or_else(|_| format!("{}: {}\n", self.severity, self.message))
    }
}

/// The most characters of a source line a diagnostic shows: a longer line
/// is cut to a window around the span, each cut marked with [`ELLIPSIS`].
const EXCERPT_WIDTH: usize = 120;
/// How much of a cut line is kept before the span.
const EXCERPT_BEFORE: usize = 40;
/// The most lines a span may cover and still be shown whole.
const EXCERPT_LINES: usize = 20;
/// Marks where a line was cut.
const ELLIPSIS: &str = "…";

/// The part of a source a diagnostic shows: the lines its span covers, or a
/// window of one long line, numbered as in the source.
struct Excerpt<'s> {
    file: SimpleFile<&'s str, String>,
    /// The line number of the excerpt's first line in the source (0-based).
    first_line: usize,
    /// Characters of the first line cut before the excerpt, less the ellipsis.
    columns_cut: usize,
    /// The span, in the excerpt.
    range: Range<usize>,
}

impl<'s> Excerpt<'s> {
    fn empty() -> Self {
        Excerpt {
            file: SimpleFile::new("", String::new()),
            first_line: 0,
            columns_cut: 0,
            range: 0..0,
        }
    }

    fn around(span: &'s Span) -> Self {
        let text = span.source.text.as_str();
        let index = span.source.index();
        let Range { start, end } = span.range();
        // Found through the source's line index: placing each of many
        // diagnostics costs its own lines, never the file before it.
        let first_line = index.line_of(start);
        let line_start = index.line_starts[first_line];
        let line_end = |line: usize| {
            index
                .line_starts
                .get(line + 1)
                .map_or(text.len(), |next| next - 1)
        };
        let first_line_end = line_end(first_line);
        // A span over a few short lines is shown whole.
        let last_line = index.line_of(end.max(start));
        let last_end = line_end(last_line);
        if last_line - first_line < EXCERPT_LINES
            && (first_line..=last_line).all(|l| line_end(l) - index.line_starts[l] <= EXCERPT_WIDTH)
        {
            let covered = &text[line_start..last_end];
            return Excerpt {
                file: SimpleFile::new(span.source.name.as_str(), covered.to_owned()),
                first_line,
                columns_cut: 0,
                range: start - line_start..end - line_start,
            };
        }
        // Otherwise a window of the span's first line, around its start.
        let floor = |mut i: usize| {
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let from = floor(start.saturating_sub(EXCERPT_BEFORE).max(line_start));
        let to = floor((from + EXCERPT_WIDTH).min(first_line_end));
        let mut shown = String::with_capacity(to - from + 2 * ELLIPSIS.len());
        let cut_before = from > line_start;
        if cut_before {
            shown.push_str(ELLIPSIS);
        }
        shown.push_str(&text[from..to]);
        if to < first_line_end {
            shown.push_str(ELLIPSIS);
        }
        let shift = if cut_before { ELLIPSIS.len() } else { 0 };
        let span_start = start.min(to) - from + shift;
        let span_end = end.clamp(start, to) - from + shift;
        Excerpt {
            file: SimpleFile::new(span.source.name.as_str(), shown),
            first_line,
            columns_cut: (index.chars_to(text, from) - index.chars_to(text, line_start))
                .saturating_sub(cut_before as usize),
            range: span_start..span_end.max(span_start),
        }
    }
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.file.name())
    }

    fn source(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.file.source().as_str())
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, files::Error> {
        self.file.line_index((), byte_index)
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, files::Error> {
        Ok(self.first_line + line_index + 1)
    }

    fn column_number(
        &'a self,
        (): (),
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let column = self.file.column_number((), line_index, byte_index)?;
        Ok(if line_index == 0 {
            column + self.columns_cut
        } else {
            column
        })
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, files::Error> {
        self.file.line_range((), line_index)
    }
}

impl fmt::Display for Diagnostic {
    /// The one-line form: `file:line:column: severity: message [key] (did you mean ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(span) = &self.span {
            write!(f, "{span}: ")?;
        }
        write!(f, "{}: {}", self.severity, shown(&self.message))?;
        if !self.key.is_empty() {
            write!(f, " [{}]", shown(&self.key))?;
        }
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean `{}`?)", shown(s))?;
        }
        Ok(())
    }
}

/// Every problem found in one pass, errors and warnings, in source order.
///
/// ```
/// let text = "[policies.a]\nbase = 100\njitter = \"fulll\"\n";
/// let diags = retrykit_config::Config::load_str(text, "retry.toml", &Default::default()).unwrap_err();
/// assert_eq!(diags.errors().count(), 2);
/// assert!(diags.to_string().contains("retry.toml:2:8"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// No diagnostics.
    ///
    /// ```
    /// assert!(retrykit_config::Diagnostics::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one.
    ///
    /// ```
    /// let mut d = retrykit_config::Diagnostics::new();
    /// d.push(retrykit_config::Diagnostic::error("k", "bad"));
    /// assert_eq!(d.len(), 1);
    /// ```
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    /// How many there are.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Diagnostics::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// assert!(retrykit_config::Diagnostics::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every diagnostic.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Diagnostics::new().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    /// The errors only.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Diagnostics::new().errors().count(), 0);
    /// ```
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }

    /// The warnings only.
    ///
    /// ```
    /// assert_eq!(retrykit_config::Diagnostics::new().warnings().count(), 0);
    /// ```
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }

    /// Whether any is an error.
    ///
    /// ```
    /// assert!(!retrykit_config::Diagnostics::new().has_errors());
    /// ```
    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// The first [`MAX_SHOWN_DIAGNOSTICS`] diagnostics rendered with their
    /// source excerpts, a line saying how many more there are and how to see
    /// them all (when there are more), then a summary line counting every one.
    ///
    /// ```
    /// let mut d = retrykit_config::Diagnostics::new();
    /// d.push(retrykit_config::Diagnostic::error("k", "bad"));
    /// assert!(d.render().ends_with("1 error, 0 warnings\n"));
    /// ```
    pub fn render(&self) -> String {
        self.render_to(false, MAX_SHOWN_DIAGNOSTICS)
    }

    /// Like [`render`](Self::render), coloured with ANSI escapes for a terminal.
    ///
    /// ```
    /// assert!(retrykit_config::Diagnostics::new().render_ansi().contains("0 errors"));
    /// ```
    pub fn render_ansi(&self) -> String {
        self.render_to(true, MAX_SHOWN_DIAGNOSTICS)
    }

    /// Like [`render`](Self::render) (or [`render_ansi`](Self::render_ansi)
    /// when `ansi`), with every diagnostic however many there are: what
    /// `retry-policy check --all` prints.
    ///
    /// ```
    /// let d: retrykit_config::Diagnostics = (0..=retrykit_config::MAX_SHOWN_DIAGNOSTICS)
    ///     .map(|i| retrykit_config::Diagnostic::error("k", format!("bad {i}")))
    ///     .collect();
    /// assert!(d.render().contains("1 more not shown"));
    /// assert!(!d.render_all(false).contains("not shown"));
    /// ```
    pub fn render_all(&self, ansi: bool) -> String {
        self.render_to(ansi, usize::MAX)
    }

    fn render_to(&self, color: bool, limit: usize) -> String {
        let mut out = String::new();
        for d in self.items.iter().take(limit) {
            out.push_str(&d.render_to(color));
        }
        if let Some(more) = self.not_shown(limit) {
            out.push_str(&more);
            out.push('\n');
        }
        let (e, w) = (self.errors().count(), self.warnings().count());
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        out.push_str(&format!(
            "{e} error{}, {w} warning{}\n",
            plural(e),
            plural(w)
        ));
        out
    }

    /// Turns every warning into an error (for `deny_warnings`).
    ///
    /// ```
    /// let mut d = retrykit_config::Diagnostics::new();
    /// d.push(retrykit_config::Diagnostic::warning("k", "risky"));
    /// d.deny_warnings();
    /// assert!(d.has_errors());
    /// ```
    pub fn deny_warnings(&mut self) {
        for d in &mut self.items {
            if d.severity == Severity::Warning {
                d.severity = Severity::Error;
                d.notes.push("warnings are denied (deny_warnings)".into());
            }
        }
    }

    /// The line that ends a list cut at `shown` diagnostics, when it was cut.
    fn not_shown(&self, shown: usize) -> Option<String> {
        let more = self.items.len().checked_sub(shown).filter(|&n| n > 0)?;
        Some(format!(
            "... {more} more not shown (the first {shown} are); \
             `retry-policy check --all` prints every one, `--format json` one line each"
        ))
    }

    /// Sorts by source, then position, errors before warnings; drops exact duplicates.
    pub(crate) fn sort_and_dedup(&mut self) {
        self.items.sort_by(|a, b| {
            fn pos(d: &Diagnostic) -> Option<(bool, &str, usize)> {
                d.span.as_ref().map(|s| {
                    (
                        s.source().name() != "environment",
                        s.source().name(),
                        s.range.start,
                    )
                })
            }
            pos(a)
                .cmp(&pos(b))
                .then(a.severity.cmp(&b.severity))
                .then(a.message.cmp(&b.message))
        });
        self.items.dedup();
    }

    pub(crate) fn into_iter_owned(self) -> std::vec::IntoIter<Diagnostic> {
        self.items.into_iter()
    }
}

impl fmt::Display for Diagnostics {
    /// One line per diagnostic (see [`Diagnostic`]'s `Display`), the first
    /// [`MAX_SHOWN_DIAGNOSTICS`] only, then how many more there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in self.items.iter().take(MAX_SHOWN_DIAGNOSTICS) {
            writeln!(f, "{d}")?;
        }
        if let Some(more) = self.not_shown(MAX_SHOWN_DIAGNOSTICS) {
            writeln!(f, "{more}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        Diagnostics {
            items: iter.into_iter().collect(),
        }
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
