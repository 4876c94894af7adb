//! What the plain-text markup languages (reStructuredText, AsciiDoc, Org) have in common as
//! they are read line by line: lines gathered into paragraphs under the headings above them,
//! literal (code) blocks and tables as blocks of their own, and paired inline marks (`*strong*`,
//! `_emphasis_`) taken off their text. Every step is linear in the file: a closing mark is found
//! by a search that never goes over the same text twice.

use super::html::OpenHeadings;
use super::{Block, ContentType};

/// The blocks of a file read so far, and the paragraph being read.
#[derive(Default)]
pub(super) struct MarkupBody {
    pub blocks: Vec<Block>,
    headings: OpenHeadings,
    /// The paragraph's lines, indentation taken off.
    lines: Vec<String>,
    /// The first heading's text, a title where the file states none.
    pub first_heading: Option<String>,
}

impl MarkupBody {
    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    /// Whether a paragraph is being read (a line now would go on with it).
    pub fn in_paragraph(&self) -> bool {
        !self.lines.is_empty()
    }

    /// A line of the paragraph being read (one starts if none is).
    pub fn line(&mut self, line: &str) {
        let line = line.trim();
        if !line.is_empty() {
            self.lines.push(line.to_string());
        }
    }

    /// The paragraph ends: its lines, through `inline` (the language's inline markup taken off),
    /// are a block under the current headings.
    pub fn end_paragraph(&mut self, inline: impl FnOnce(&str) -> String) {
        if self.lines.is_empty() {
            return;
        }
        let text = inline(&std::mem::take(&mut self.lines).join("\n"));
        self.push(text, ContentType::Text);
    }

    /// A heading of `level` (1 the outermost): the headings under it close, and its text is a
    /// block of its own, as a Markdown heading is.
    pub fn heading(&mut self, level: usize, title: String) {
        let title = title.trim().to_string();
        if title.is_empty() {
            return;
        }
        self.first_heading.get_or_insert_with(|| title.clone());
        self.headings.retain(|(l, _)| *l < level);
        self.headings.push((level, title.clone()));
        self.push(title, ContentType::Text);
    }

    /// A block of `kind` under the current headings (a literal block, a table), if it holds text.
    pub fn push(&mut self, text: String, kind: ContentType) {
        if text.trim().is_empty() {
            return;
        }
        self.blocks.push(Block::of_kind(text, kind, self.path()));
    }
}

/// A reader of a markup language, line by line.
pub(super) trait LineReader {
    /// Reads the construct starting at line `i` of `lines`; returns the line after it.
    fn step(&mut self, lines: &[&str], i: usize) -> usize;

    /// The paragraph being read (and whatever else is open) ends.
    fn end_paragraph(&mut self);

    /// Reads every line.
    fn read(&mut self, lines: &[&str]) {
        let mut i = 0;
        while i < lines.len() {
            i = self.step(lines, i);
        }
        self.end_paragraph();
    }
}

/// A table's rows, each a line of its cells joined by ` | ` (as a Markdown table's are).
pub(super) fn table_text(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|cells| cells.iter().map(|c| c.trim()).collect::<Vec<_>>().join(" | "))
        .filter(|row| !row.trim_matches([' ', '|']).is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines of a literal block, their common indentation taken off and blank lines at either end
/// dropped.
pub(super) fn literal_text(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indentation(l))
        .min()
        .unwrap_or(0);
    let kept: Vec<String> = lines
        .iter()
        .map(|l| drop_columns(l, indent).trim_end().to_string())
        .collect();
    kept.join("\n").trim_matches('\n').to_string()
}

/// The columns a line is indented by, a tab reaching the next multiple of 8.
pub(super) fn indentation(line: &str) -> usize {
    let mut column = 0;
    for c in line.chars() {
        match c {
            ' ' => column += 1,
            '\t' => column = (column / 8 + 1) * 8,
            _ => break,
        }
    }
    column
}

/// `line` without its first `columns` columns of indentation.
fn drop_columns(line: &str, columns: usize) -> &str {
    let mut column = 0;
    for (i, c) in line.char_indices() {
        if column >= columns || !matches!(c, ' ' | '\t') {
            return &line[i..];
        }
        column = match c {
            '\t' => (column / 8 + 1) * 8,
            _ => column + 1,
        };
    }
    ""
}

/// Whether `c` may stand before an opening mark or after a closing one: the text's edge,
/// white space or punctuation, not a letter or digit (so `snake_case` and `2*3*4` keep theirs).
fn is_boundary(c: Option<char>) -> bool {
    c.is_none_or(|c| !c.is_alphanumeric())
}

/// Where the next closing `mark` at or after a position is: one that follows text (not white
/// space) and is followed by a boundary. Positions asked for only grow, so the answer found
/// last is kept and no text is searched twice.
struct NextCloser<'a> {
    mark: &'a str,
    /// The closer found from `from` on (none: none after `from`).
    found: Option<usize>,
    from: usize,
    searched: bool,
}

impl<'a> NextCloser<'a> {
    fn new(mark: &'a str) -> Self {
        Self {
            mark,
            found: None,
            from: 0,
            searched: false,
        }
    }

    fn at_or_after(&mut self, text: &str, start: usize) -> Option<usize> {
        if self.searched && self.from <= start && self.found.is_none_or(|p| p >= start) {
            return self.found;
        }
        let mut at = start;
        self.found = loop {
            let Some(offset) = text[at..].find(self.mark) else {
                break None;
            };
            let p = at + offset;
            let before = text[..p].chars().next_back();
            let after = text[p + self.mark.len()..].chars().next();
            if before.is_some_and(|c| !c.is_whitespace()) && is_boundary(after) {
                break Some(p);
            }
            at = p + self.mark.len();
        };
        self.from = start;
        self.searched = true;
        self.found
    }
}

/// Paired inline marks (`*strong*`, `_emphasis_`) found where they open: an opening mark
/// stands after a boundary and before text, a closing one after text and before a boundary;
/// the marks are tried in their order at each place (the longer of two sharing a character
/// first: `**` before `*`).
pub(super) struct PairedMarks<'a> {
    closers: Vec<NextCloser<'a>>,
}

impl<'a> PairedMarks<'a> {
    pub fn new(marks: &[&'a str]) -> Self {
        Self {
            closers: marks.iter().map(|m| NextCloser::new(m)).collect(),
        }
    }

    /// If a pair opens at `i` (positions asked for only grow): the text inside it, and the
    /// position after its closing mark.
    pub fn at<'t>(&mut self, text: &'t str, i: usize) -> Option<(&'t str, usize)> {
        let rest = &text[i..];
        for closer in self.closers.iter_mut() {
            let mark = closer.mark;
            if !rest.starts_with(mark) || !is_boundary(text[..i].chars().next_back()) {
                continue;
            }
            let inner_start = i + mark.len();
            let Some(first) = text[inner_start..].chars().next().filter(|c| !c.is_whitespace()) else {
                continue;
            };
            // The closer must leave at least one character inside.
            if let Some(end) = closer.at_or_after(text, inner_start + first.len_utf8()) {
                return Some((&text[inner_start..end], end + mark.len()));
            }
        }
        None
    }
}

/// `text` with paired inline marks taken off (`*strong*` reads `strong`; see [`PairedMarks`]);
/// a mark with no closing one is kept as it is.
pub(super) fn strip_paired_marks(text: &str, marks: &[&str]) -> String {
    let mut pairs = PairedMarks::new(marks);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if let Some((inner, next)) = pairs.at(text, i) {
            out.push_str(inner);
            i = next;
            continue;
        }
        let c = text[i..].chars().next().expect("within the text");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Where `needle` starts within the `limit` bytes after `from` in `text`, counted from `from`
/// (a search bounded so that many openings without a close cost linear time).
pub(super) fn find_near(text: &str, from: usize, needle: &str, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let end = (from + limit + needle.len()).min(bytes.len());
    bytes
        .get(from..end)?
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_marks_are_taken_off_where_they_open_and_close() {
        let marks = ["**", "*", "_"];
        assert_eq!(
            strip_paired_marks("a **bold** and *this* one", &marks),
            "a bold and this one"
        );
        assert_eq!(
            strip_paired_marks("_under_ snake_case_name", &marks),
            "under snake_case_name"
        );
        assert_eq!(strip_paired_marks("2*3*4 and a * b * c", &marks), "2*3*4 and a * b * c");
        assert_eq!(strip_paired_marks("*open with no end", &marks), "*open with no end");
        assert_eq!(strip_paired_marks("(*aside*), *ünïcode*.", &marks), "(aside), ünïcode.");
        assert_eq!(strip_paired_marks("**", &marks), "**");
        // Many marks that never close: each is kept, and the text is searched once.
        let hostile = "*a ".repeat(50_000);
        assert_eq!(strip_paired_marks(&hostile, &marks), hostile);
    }

    #[test]
    fn literal_text_keeps_relative_indentation() {
        assert_eq!(
            literal_text(&["", "    def f():", "        return 1", ""]),
            "def f():\n    return 1"
        );
        assert_eq!(indentation("\t  x"), 10);
    }

    #[test]
    fn paragraphs_and_headings_make_blocks_under_their_paths() {
        let mut body = MarkupBody::default();
        body.heading(1, "Guide".into());
        body.line("  first line");
        body.line("second");
        body.end_paragraph(|t| t.to_uppercase());
        body.heading(2, "Setup".into());
        body.heading(1, "Usage".into());
        body.push("a | b".into(), ContentType::Table);
        let texts: Vec<(&str, Vec<String>)> = body
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.clone()))
            .collect();
        assert_eq!(texts[1], ("FIRST LINE\nSECOND", vec!["Guide".to_string()]));
        assert_eq!(texts[2].1, vec!["Guide".to_string(), "Setup".to_string()]);
        assert_eq!(texts[4], ("a | b", vec!["Usage".to_string()]));
        assert_eq!(body.first_heading.as_deref(), Some("Guide"));
    }
}
