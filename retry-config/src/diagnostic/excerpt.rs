//! The part of a source a rendered diagnostic shows, as the
//! `codespan_reporting` file it is rendered against.

use super::{HIDDEN, Span};
use codespan_reporting::files::{self, Files, SimpleFile};
use retrykit_schema::keys::credentials;
use std::ops::Range;

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
pub(super) struct Excerpt<'s> {
    pub(super) file: SimpleFile<&'s str, String>,
    /// The line number of the excerpt's first line in the source (0-based).
    first_line: usize,
    /// Characters of the first line cut before the excerpt, less the ellipsis.
    columns_cut: usize,
    /// The span, in the excerpt.
    pub(super) range: Range<usize>,
    /// Where the excerpt's text differs in length from the source's: a
    /// control character escaped or a password hidden. Each is its offset in
    /// the excerpt and the characters it adds (fewer than none for a long
    /// password); the columns take them off.
    escapes: Vec<(usize, isize)>,
}

impl<'s> Excerpt<'s> {
    pub(super) fn empty() -> Self {
        Excerpt {
            file: SimpleFile::new("", String::new()),
            first_line: 0,
            columns_cut: 0,
            range: 0..0,
            escapes: Vec::new(),
        }
    }

    /// The excerpt of `text` from line `first_line` (0-based), its span at
    /// `range` there, with its control characters escaped and the ranges
    /// `hidden` (credentials) replaced as messages show them (see [`escaped`]).
    fn new(
        name: &'s str,
        text: &str,
        first_line: usize,
        columns_cut: usize,
        range: Range<usize>,
        hidden: &[Range<usize>],
    ) -> Self {
        let (text, range, escapes) = escaped(text, range, hidden);
        Excerpt {
            file: SimpleFile::new(name, text),
            first_line,
            columns_cut,
            range,
            escapes,
        }
    }

    pub(super) fn around(span: &'s Span) -> Self {
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
            let lines = &text[line_start..last_end];
            let hidden: Vec<_> = credentials(lines).collect();
            return Excerpt::new(
                span.source.name.as_str(),
                lines,
                first_line,
                0,
                start - line_start..end - line_start,
                &hidden,
            );
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
        // Credentials are found on the whole source (once, by its index), so
        // that a cut through one still hides what the window shows of it.
        let hidden: Vec<_> = index
            .credentials_in(from..to)
            .map(|r| r.start.max(from)..r.end.min(to))
            .filter(|r| r.start < r.end)
            .map(|r| r.start - from + shift..r.end - from + shift)
            .collect();
        let span_start = start.min(to) - from + shift;
        let span_end = end.clamp(start, to) - from + shift;
        Excerpt::new(
            span.source.name.as_str(),
            &shown,
            first_line,
            (index.chars_to(text, from) - index.chars_to(text, line_start))
                .saturating_sub(cut_before as usize),
            span_start..span_end.max(span_start),
            &hidden,
        )
    }
}

/// `text` with each control character written escaped (`\u{1b}`), as
/// messages write them, so that a source's text (a variable's value) cannot
/// drive the terminal, and each range of `hidden` (a password) written
/// [`HIDDEN`]; line breaks and tabs are kept, and a `\r` before a line
/// break. Returns the text, `range` moved with it, and each change's offset
/// in the text with the characters it adds.
fn escaped(
    text: &str,
    range: Range<usize>,
    hidden: &[Range<usize>],
) -> (String, Range<usize>, Vec<(usize, isize)>) {
    let kept = |at: usize, c: char| match c {
        '\n' | '\t' => true,
        '\r' => matches!(text[at + 1..].chars().next(), None | Some('\n')),
        c => !c.is_control(),
    };
    if hidden.is_empty() && text.char_indices().all(|(at, c)| kept(at, c)) {
        return (text.to_owned(), range, Vec::new());
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut escapes = Vec::new();
    let (mut start, mut end) = (0, 0);
    let hidden_at = |at: usize| hidden.iter().find(|h| h.contains(&at));
    for (at, c) in text.char_indices() {
        let inside = hidden_at(at);
        if at == range.start {
            // A span that starts inside a password starts at its `***`.
            start = match inside {
                Some(h) if h.start < at => out.len() - HIDDEN.len(),
                _ => out.len(),
            };
        }
        if at == range.end {
            end = out.len();
        }
        match inside {
            Some(h) if h.start == at => {
                let chars = text[h.clone()].chars().count();
                escapes.push((out.len(), HIDDEN.len() as isize - chars as isize));
                out.push_str(HIDDEN);
            }
            Some(_) => {}
            None if kept(at, c) => out.push(c),
            None => {
                let from = out.len();
                out.extend(c.escape_debug());
                escapes.push((from, (out.len() - from - 1) as isize));
            }
        }
    }
    if range.start >= text.len() {
        start = out.len();
    }
    if range.end >= text.len() {
        end = out.len();
    }
    (out, start..end, escapes)
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
        // Columns count the source's characters: an escape counts as one.
        let line_start = self.file.line_range((), line_index)?.start;
        let added: isize = self
            .escapes
            .iter()
            .filter(|(at, _)| (line_start..byte_index).contains(at))
            .map(|(_, n)| n)
            .sum();
        let column = self
            .file
            .column_number((), line_index, byte_index)?
            .saturating_add_signed(-added);
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

#[cfg(test)]
mod tests {
    use crate::diagnostic::{Diagnostic, Source, Span};
    use std::sync::Arc;

    #[test]
    fn control_characters_are_escaped_and_count_one_column_each() {
        // `y` is the 9th character; two escapes come before it.
        let source = Arc::new(Source::new("environment", "A=\u{1b}[1mx\u{1b}y\r\n"));
        let d = Diagnostic::error("A", "bad").at(Some(Span::new(source, 8..9)), "here");
        let rendered = d.render();
        assert!(!rendered.contains('\u{1b}'), "{rendered:?}");
        assert!(rendered.contains("environment:1:9"), "{rendered}");
        assert!(rendered.contains("A=\\u{1b}[1mx\\u{1b}y"), "{rendered}");
        assert!(!rendered.contains("\\r"), "a line's own \\r: {rendered:?}");
        // The caret is under `y`, after the two escapes' 12 characters.
        let caret = rendered.lines().find(|l| l.contains('^')).unwrap();
        let line = rendered.lines().find(|l| l.contains("A=")).unwrap();
        assert_eq!(caret.find('^'), line.find('y'), "{rendered}");
    }
}
