//! The part of a source a rendered diagnostic shows, as the
//! `codespan_reporting` file it is rendered against.

use super::Span;
use codespan_reporting::files::{self, Files, SimpleFile};
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
}

impl<'s> Excerpt<'s> {
    pub(super) fn empty() -> Self {
        Excerpt {
            file: SimpleFile::new("", String::new()),
            first_line: 0,
            columns_cut: 0,
            range: 0..0,
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
