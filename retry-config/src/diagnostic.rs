//! Diagnostics: every problem found while loading, each pointing at the
//! text it is about (a line of the file or an environment variable) with a
//! caret, the key, what is wrong, and how to fix it.

mod excerpt;
mod list;
mod source;

pub use list::Diagnostics;
pub use source::{Source, Span};

use codespan_reporting::diagnostic::{Diagnostic as Report, Label, Severity as ReportSeverity};
use codespan_reporting::term::{self, Chars, Config as TermConfig, termcolor};
use excerpt::Excerpt;
use retrykit_schema::keys::credentials;
use std::borrow::Cow;
use std::fmt;

/// `text` as a message quotes it: a URL's user and password are written
/// `***` (see [`credentials`]), and control characters (an escape sequence,
/// a newline) are written escaped (`\u{1b}`, `\n`), so that a value taken
/// from a file or a variable can neither leak a secret nor drive the
/// terminal or break the line.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    let hidden: Vec<_> = credentials(text).collect();
    if hidden.is_empty() && !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut hidden = hidden.into_iter().peekable();
    for (at, c) in text.char_indices() {
        while hidden.next_if(|h| h.end <= at).is_some() {}
        match hidden.peek() {
            Some(h) if h.start == at => out.push_str(HIDDEN),
            Some(h) if h.contains(&at) => {}
            _ if c.is_control() => out.extend(c.escape_debug()),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// What a message or an excerpt prints in place of a URL's user and password.
pub(crate) const HIDDEN: &str = "***";

/// The most characters of a value [`quoted`] shows.
const MAX_QUOTED: usize = 48;

/// The most characters of a message or a note [`said`] shows. The longest
/// written one is some 300; only a value quoted whole (a 100 KB duration
/// string, say) runs past this.
const MAX_SAID: usize = 400;

/// `text` [`shown`] (control characters escaped), cut after `most`
/// characters with `…`.
/// The text is shown before it is cut, so that a cut cannot split a URL's
/// password from the `@` that marks it.
fn cut(text: &str, most: usize) -> Cow<'_, str> {
    let text = shown(text);
    match text.char_indices().nth(most) {
        None => text,
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
    }
}

/// A value as a message quotes it: [`shown`] (control characters escaped),
/// cut after [`MAX_QUOTED`] characters with `…`.
pub(crate) fn quoted(value: &str) -> String {
    cut(value, MAX_QUOTED).into_owned()
}

/// A message or a note as it is printed: [`shown`], and cut after
/// [`MAX_SAID`] characters with `…`, so that one that quotes a long value
/// whole stays a line (its excerpt shows where the value is).
pub(crate) fn said(text: &str) -> Cow<'_, str> {
    cut(text, MAX_SAID)
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
            notes.push(format!("help: did you mean `{}`?", said(s)));
        }
        notes.extend(self.notes.iter().map(|n| said(n).into_owned()));
        let mut report = Report::new(severity)
            .with_message(said(&self.message))
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
        rendered.unwrap_or_else(|_| format!("{}: {}\n", self.severity, said(&self.message)))
    }
}

impl fmt::Display for Diagnostic {
    /// The one-line form: `file:line:column: severity: message [key] (did you mean ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(span) = &self.span {
            write!(f, "{span}: ")?;
        }
        write!(f, "{}: {}", self.severity, said(&self.message))?;
        if !self.key.is_empty() {
            write!(f, " [{}]", said(&self.key))?;
        }
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean `{}`?)", said(s))?;
        }
        Ok(())
    }
}
