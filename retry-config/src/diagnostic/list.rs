//! [`Diagnostics`]: every problem of one load, in source order, rendered
//! with a cap on how many are shown.

use super::{Diagnostic, Severity};
use crate::limits::MAX_SHOWN_DIAGNOSTICS;
use std::fmt;

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
