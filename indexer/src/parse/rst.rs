//! reStructuredText (`.rst`): section titles (underlined, or over- and underlined; their levels
//! in the order the file first uses each adornment, as docutils orders them) make the heading
//! paths, the first one the title; paragraphs, list items (bullets left out, `#.` items
//! numbered) and fields as blocks; literal blocks (after `::`) and code directives as blocks of
//! their own; grid, simple, list and CSV tables as table blocks; a directive read for its text
//! (a note's, a function's signature, a figure's caption), its options left out, and those
//! that hold none of the page's text (`toctree`, `image`, `include`, `raw`, ...) skipped with
//! comments and link targets; inline markup taken off its text (roles, references,
//! substitutions, footnote references, literals, emphasis).

use std::collections::HashMap;

use super::markup_body::{find_near, indentation, literal_text, table_text, MarkupBody, PairedMarks};
use super::text::decode_raw_text;
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Directives whose content and argument are none of the page's text.
const SKIPPED: &[&str] = &[
    "toctree",
    "image",
    "include",
    "raw",
    "contents",
    "sectnum",
    "section-numbering",
    "header",
    "footer",
    "meta",
    "highlight",
    "index",
    "literalinclude",
    "tabularcolumns",
    "default-role",
    "role",
    "title",
    "class",
    "target-notes",
    "currentmodule",
    "moduleauthor",
    "sectionauthor",
    "codeauthor",
    "autosummary",
    "automodule",
    "autoclass",
    "autofunction",
    "automethod",
    "autoattribute",
    "autodata",
    "autoexception",
];

/// Directives whose content is a literal block (its argument a language, left out).
const LITERAL: &[&str] = &[
    "code-block",
    "code",
    "sourcecode",
    "parsed-literal",
    "doctest",
    "testcode",
    "testoutput",
    "productionlist",
];

/// Columns a table may have; wider, its lines are read as text.
const MAX_COLUMNS: usize = 256;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let (blocks, first_title) = read(&text);
    let title = first_title.unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

/// The blocks of a reStructuredText file, and its first section title.
fn read(text: &str) -> (Vec<super::Block>, Option<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut reader = Reader {
        substitutions: substitutions(&lines),
        lines,
        ..Default::default()
    };
    let mut i = 0;
    while i < reader.lines.len() {
        i = reader.step(i);
    }
    reader.end_paragraph();
    (reader.body.blocks, reader.body.first_heading)
}

#[derive(Default)]
struct Reader<'a> {
    lines: Vec<&'a str>,
    body: MarkupBody,
    /// Each adornment (its character, and whether it has an overline) in the order of first
    /// use: a title's level is its place here, plus one.
    styles: Vec<(char, bool)>,
    /// `|name|` to the text a `replace::` gives it.
    substitutions: HashMap<String, String>,
    /// The `#.` lists open: their indentation and the last number given.
    auto_numbers: Vec<(usize, u64)>,
    /// The indentation of the paragraph being read.
    paragraph_indent: usize,
    /// Whether the paragraph being read is a list item, a field, a footnote or a directive's
    /// argument, whose text may go on in lines indented more (and a marker on the next line
    /// starts the next item).
    in_item: bool,
    /// Whether the paragraph being read ends with `::`.
    ends_with_literal_marker: bool,
    /// After a paragraph ending with `::`: its indentation (the literal block is indented more).
    literal_after: Option<usize>,
    /// What an admonition or version note shows before its first paragraph (`Note`, `New in
    /// version 3.2`), until that paragraph starts.
    label: Option<String>,
}

impl Reader<'_> {
    fn end_paragraph(&mut self) {
        let substitutions = &self.substitutions;
        self.body.end_paragraph(|text| paragraph_text(text, substitutions));
        if std::mem::take(&mut self.ends_with_literal_marker) {
            self.literal_after = Some(self.paragraph_indent);
        }
        self.in_item = false;
    }

    fn start_paragraph(&mut self, indent: usize, first_line: &str, item: bool) {
        self.end_paragraph();
        self.paragraph_indent = indent;
        self.in_item = item;
        match self.label.take() {
            Some(label) => self.add_line(&format!("{label}: {}", first_line.trim_start())),
            None => self.add_line(first_line),
        }
    }

    fn add_line(&mut self, line: &str) {
        self.ends_with_literal_marker = line.trim_end().ends_with("::");
        self.body.line(line);
    }

    /// Reads the construct starting at line `i`; returns the line after it.
    fn step(&mut self, i: usize) -> usize {
        let line = self.lines[i];
        if line.trim().is_empty() {
            self.end_paragraph();
            return i + 1;
        }
        let indent = indentation(line);
        let content = line.trim();
        if let Some(after) = self.literal_after.take() {
            if indent > after && !self.body.in_paragraph() {
                return self.literal_block(i, after);
            }
        }
        // A line indented under a paragraph's line (not an item's, whose text goes on indented)
        // starts that line's definition (a definition list's term is a line of its own).
        if self.body.in_paragraph() && !self.in_item && indent > self.paragraph_indent {
            self.end_paragraph();
        }
        if !self.body.in_paragraph() {
            if let Some(next) = self.section_title(i) {
                return next;
            }
            if is_adornment(content) && content.chars().count() >= 4 {
                return i + 1; // a transition
            }
            if content == ".." || content.starts_with(".. ") {
                return self.explicit_markup(i, indent, content);
            }
            if let Some(next) = self.grid_table(i, indent).or_else(|| self.simple_table(i, indent)) {
                return next;
            }
        }
        self.auto_numbers
            .retain(|(d, _)| *d < indent || (*d == indent && content.starts_with("#.")));
        if !self.body.in_paragraph() || self.in_item {
            if let Some(text) = self.item_text(indent, content) {
                self.start_paragraph(indent, &text, true);
                return i + 1;
            }
        }
        if !self.body.in_paragraph() {
            let text = content.strip_prefix("| ").unwrap_or(content);
            self.start_paragraph(indent, text, false);
        } else {
            self.add_line(content.strip_prefix("| ").unwrap_or(content));
        }
        i + 1
    }

    /// A list item's or field's text at the start of a line, if it starts one: a bullet left
    /// out, a `#.` item numbered, a field's name without its colons' first.
    fn item_text(&mut self, indent: usize, content: &str) -> Option<String> {
        if let Some(rest) = ["- ", "* ", "+ ", "• ", "‣ ", "⁃ "]
            .iter()
            .find_map(|b| content.strip_prefix(b))
        {
            return Some(rest.to_string());
        }
        if let Some(rest) = content.strip_prefix("#. ").or_else(|| content.strip_prefix("#) ")) {
            let number = match self.auto_numbers.last_mut() {
                Some((d, n)) if *d == indent => {
                    *n = n.saturating_add(1);
                    *n
                }
                _ => {
                    self.auto_numbers.push((indent, 1));
                    1
                }
            };
            return Some(format!("{number}. {rest}"));
        }
        if is_enumerator(content) {
            return Some(content.to_string());
        }
        field(content)
    }

    /// An underlined (or over- and underlined) section title at line `i`: the heading, and the
    /// line after its underline.
    fn section_title(&mut self, i: usize) -> Option<usize> {
        let line = |k: usize| self.lines.get(k).copied().unwrap_or_default();
        let first = line(i);
        let (title, adornment, overline, next) = if is_adornment(first.trim_end()) && indentation(first) == 0 {
            let (title, under) = (line(i + 1).trim(), line(i + 2).trim_end());
            let c = first.chars().next()?;
            if title.is_empty() || !is_adornment(under) || !under.starts_with(c) {
                return None;
            }
            (title, c, true, i + 3)
        } else {
            let under = line(i + 1).trim_end();
            if indentation(first) != 0 || !is_adornment(under) || under.starts_with(char::is_whitespace) {
                return None;
            }
            let length = under.chars().count();
            if length < 4 && length < first.trim().chars().count() {
                return None;
            }
            (first.trim(), under.chars().next()?, false, i + 2)
        };
        let style = (adornment, overline);
        let level = match self.styles.iter().position(|s| *s == style) {
            Some(p) => p + 1,
            None => {
                self.styles.push(style);
                self.styles.len()
            }
        };
        let title = inline(title, &self.substitutions);
        self.body.heading(level, title);
        Some(next)
    }

    /// A literal block from line `i`: the lines indented more than `after`, and blank lines
    /// between them.
    fn literal_block(&mut self, i: usize, after: usize) -> usize {
        let end = self.extent(i, after);
        let text = literal_text(&self.lines[i..end]);
        self.body.push(text, ContentType::Text);
        end
    }

    /// The line after the block starting at `start` whose lines are blank or indented more than
    /// `indent`.
    fn extent(&self, start: usize, indent: usize) -> usize {
        let mut end = start;
        let mut last_text = start;
        while end < self.lines.len() {
            let line = self.lines[end];
            if !line.trim().is_empty() {
                if indentation(line) <= indent {
                    break;
                }
                last_text = end + 1;
            }
            end += 1;
        }
        last_text.max(start)
    }

    /// A directive, comment, link target, footnote or substitution definition at line `i`.
    /// Only what the markup skips or reads whole is measured for its extent here; a directive
    /// whose content is read as the page's text leaves its lines to the main loop, so no line
    /// is measured twice however deep directives nest.
    fn explicit_markup(&mut self, i: usize, indent: usize, content: &str) -> usize {
        self.end_paragraph();
        let marker = content.strip_prefix("..").unwrap_or_default().trim_start();
        // A footnote or citation: its text is the page's.
        if let Some((label, text)) = marker.strip_prefix('[').and_then(|m| m.split_once(']')) {
            if !label.is_empty() && !label.contains(char::is_whitespace) {
                self.start_paragraph(indent, text, true);
                return i + 1;
            }
        }
        let Some((name, argument)) = directive(marker) else {
            return self.extent(i + 1, indent); // a comment, a link target, a substitution's definition
        };
        let name = name.rsplit(':').next().unwrap_or(name).to_ascii_lowercase();
        if SKIPPED.contains(&name.as_str()) {
            return self.extent(i + 1, indent);
        }
        // Options: the lines right after the directive that are `:name: value`.
        let mut body = i + 1;
        while body < self.lines.len()
            && indentation(self.lines[body]) > indent
            && field(self.lines[body].trim()).is_some()
        {
            body += 1;
        }
        let label = label_of(&name, argument);
        match name.as_str() {
            _ if LITERAL.contains(&name.as_str()) => {
                let end = self.extent(body, indent);
                let mut text = literal_text(&self.lines[body..end]);
                if name == "parsed-literal" {
                    // Laid out as written, its inline markup read as a paragraph's is.
                    text = inline(&text, &self.substitutions);
                }
                self.body.push(text, ContentType::Text);
                end
            }
            "math" => {
                let end = self.extent(body, indent);
                let mut text = literal_text(&self.lines[body..end]);
                if !argument.is_empty() {
                    text = format!("{argument}\n{text}");
                }
                self.body.push(text, ContentType::Text);
                end
            }
            "list-table" => {
                let end = self.extent(body, indent);
                self.table_title(argument);
                let rows = list_table_rows(&self.lines[body..end]);
                self.push_table(rows);
                end
            }
            "csv-table" => {
                let end = self.extent(body, indent);
                self.table_title(argument);
                let header = self.lines[i + 1..body]
                    .iter()
                    .find_map(|l| l.trim().strip_prefix(":header:"));
                let mut rows: Vec<Vec<String>> = header.map(|h| csv_rows(h.trim())).unwrap_or_default();
                let lines: Vec<&str> = self.lines[body..end].iter().map(|l| l.trim()).collect();
                rows.extend(csv_rows(&lines.join("\n")));
                self.push_table(rows);
                end
            }
            // A figure's argument is its image's path, `only`'s and `ifconfig`'s a condition;
            // their content (a caption, what the condition holds) is read.
            "figure" | "only" | "ifconfig" => body,
            _ if label.is_some() => {
                let (label, text) = label.expect("just matched");
                let next_text = self.lines[body..].iter().find(|l| !l.trim().is_empty());
                let has_content = !text.is_empty() || next_text.is_some_and(|l| indentation(l) > indent);
                match has_content {
                    true => {
                        self.label = Some(label);
                        if !text.is_empty() {
                            self.start_paragraph(indent, text, true);
                        }
                    }
                    false => self.body.push(format!("{label}."), ContentType::Text),
                }
                body
            }
            _ => {
                if !argument.is_empty() {
                    self.start_paragraph(indent, argument, true);
                }
                body
            }
        }
    }

    /// A table directive's title, a block of its own before the table.
    fn table_title(&mut self, title: &str) {
        let title = inline(title, &self.substitutions);
        self.body.push(title, ContentType::Text);
    }

    fn push_table(&mut self, rows: Vec<Vec<String>>) {
        let substitutions = &self.substitutions;
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|row| row.iter().map(|cell| inline(cell, substitutions)).collect())
            .collect();
        self.body.push(table_text(&rows), ContentType::Table);
    }

    /// A grid table (`+---+---+`) at line `i`: its rows, each cell's lines joined.
    fn grid_table(&mut self, i: usize, indent: usize) -> Option<usize> {
        let border: Vec<char> = self.lines[i].trim().chars().collect();
        let is_border = |l: &[char]| l.first() == Some(&'+') && l.last() == Some(&'+') && l.len() > 2;
        if !is_border(&border) || !matches!(border.get(1), Some('-' | '=')) {
            return None;
        }
        let columns: Vec<usize> = border
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == '+')
            .map(|(p, _)| p)
            .collect();
        if columns.len() > MAX_COLUMNS + 1 {
            return None;
        }
        let mut end = i + 1;
        let mut rows = Vec::new();
        let mut cells = vec![String::new(); columns.len() - 1];
        while let Some(line) = self.lines.get(end) {
            let trimmed = line.trim();
            if !(trimmed.starts_with('+') || trimmed.starts_with('|')) || indentation(line) != indent {
                break;
            }
            let chars: Vec<char> = trimmed.chars().collect();
            if chars[0] == '+' {
                rows.push(std::mem::replace(&mut cells, vec![String::new(); columns.len() - 1]));
            } else {
                for (k, pair) in columns.windows(2).enumerate() {
                    let fragment: String = chars
                        .get(pair[0] + 1..pair[1].min(chars.len()))
                        .unwrap_or_default()
                        .iter()
                        .collect();
                    let fragment = fragment.trim().trim_matches('|').trim();
                    if !fragment.is_empty() {
                        if !cells[k].is_empty() {
                            cells[k].push(' ');
                        }
                        cells[k].push_str(fragment);
                    }
                }
            }
            end += 1;
        }
        self.end_paragraph();
        self.push_table(rows);
        Some(end)
    }

    /// A simple table (`=====  =====` borders) at line `i`: its rows, a line whose first column
    /// is blank going on with the row above.
    fn simple_table(&mut self, i: usize, indent: usize) -> Option<usize> {
        let columns = simple_table_columns(self.lines[i].trim())?;
        let mut borders = 1;
        let mut end = i + 1;
        let mut rows: Vec<Vec<String>> = Vec::new();
        while let Some(line) = self.lines.get(end) {
            end += 1;
            let content = line.get(indent.min(line.len())..).unwrap_or_default().trim_end();
            if content.trim().is_empty() {
                continue;
            }
            if simple_table_columns(content.trim()).is_some() {
                borders += 1;
                let next_blank = self.lines.get(end).is_none_or(|l| l.trim().is_empty());
                if borders >= 3 || next_blank {
                    break;
                }
                continue;
            }
            if content.trim().chars().all(|c| c == '-' || c == ' ') {
                continue; // the underline of a cell spanning columns
            }
            let chars: Vec<char> = content.chars().collect();
            let cell = |k: usize| -> String {
                let from = columns[k].min(chars.len());
                let to = columns.get(k + 1).map_or(chars.len(), |c| (*c).min(chars.len()));
                chars[from..to].iter().collect::<String>().trim().to_string()
            };
            let cells: Vec<String> = (0..columns.len()).map(cell).collect();
            match rows.last_mut() {
                Some(row) if cells[0].is_empty() => {
                    for (held, more) in row.iter_mut().zip(cells) {
                        if !more.is_empty() {
                            held.push(' ');
                            held.push_str(&more);
                        }
                    }
                }
                _ => rows.push(cells),
            }
        }
        self.end_paragraph();
        self.push_table(rows);
        Some(end)
    }
}

/// A simple table's border: runs of `=` separated by spaces, at least two; where each column
/// starts (in characters).
fn simple_table_columns(line: &str) -> Option<Vec<usize>> {
    if !line.contains(' ') || !line.chars().all(|c| c == '=' || c == ' ') || !line.starts_with('=') {
        return None;
    }
    let chars: Vec<char> = line.chars().collect();
    let starts: Vec<usize> = (0..chars.len())
        .filter(|&p| chars[p] == '=' && (p == 0 || chars[p - 1] == ' '))
        .collect();
    (starts.len() >= 2 && starts.len() <= MAX_COLUMNS).then_some(starts)
}

/// A list table's rows: `* -` starts a row, `-` a cell, other lines go on with the cell.
fn list_table_rows(lines: &[&str]) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        let (new_row, rest) = match line.strip_prefix("* ") {
            Some(rest) => (true, rest.trim_start()),
            None => (false, line),
        };
        if new_row || rows.is_empty() {
            rows.push(Vec::new());
        }
        let row = rows.last_mut().expect("a row was pushed");
        match rest.strip_prefix("- ").or_else(|| (rest == "-").then_some("")) {
            Some(cell) => row.push(cell.to_string()),
            None => match row.last_mut() {
                Some(cell) => {
                    cell.push(' ');
                    cell.push_str(rest);
                }
                None => row.push(rest.to_string()),
            },
        }
    }
    rows
}

/// Rows of comma-separated values, a line each, quoted as CSV quotes them (`""` a quote),
/// spaces after a comma skipped, as docutils reads a CSV table.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines().filter(|l| !l.trim().is_empty()).map(csv_fields).collect()
}

fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ').is_some() {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '"' if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    '"' => break,
                    c => field.push(c),
                }
            }
            chars.by_ref().take_while(|c| *c != ',').for_each(drop);
            fields.push(field);
        } else {
            field.extend(chars.by_ref().take_while(|c| *c != ','));
            fields.push(field.trim().to_string());
        }
        if chars.peek().is_none() {
            return fields;
        }
    }
}

/// A directive's name and argument (`code-block:: python`), if `marker` is one.
fn directive(marker: &str) -> Option<(&str, &str)> {
    let at = marker.find("::")?;
    let (name, rest) = (&marker[..at], &marker[at + 2..]);
    let is_name_char = |c: char| c.is_alphanumeric() || "-_.:+".contains(c);
    let well_formed = !name.is_empty() && name.chars().all(is_name_char) && (rest.is_empty() || rest.starts_with(' '));
    well_formed.then(|| (name, rest.trim()))
}

/// A field (`:Author: Ada`, `:param path: where`) as text (`Author: Ada`), if `content` is one.
fn field(content: &str) -> Option<String> {
    let rest = content.strip_prefix(':')?;
    let close = rest
        .find(": ")
        .or_else(|| rest.ends_with(':').then(|| rest.len() - 1))?;
    let name = &rest[..close];
    if name.is_empty() || name.starts_with(' ') || name.contains('`') {
        return None;
    }
    Some(format!("{name}:{}", &rest[close + 1..]))
}

/// Whether `content` starts with an enumerator: `1.`, `a)`, `(iv)`, `#.`, then a space.
fn is_enumerator(content: &str) -> bool {
    let (inner, rest) = match content.strip_prefix('(') {
        Some(rest) => match rest.split_once(") ") {
            Some(split) => split,
            None => return false,
        },
        None => match content.find(['.', ')']) {
            Some(p) if content[p + 1..].starts_with(' ') => (&content[..p], &content[p + 1..]),
            _ => return false,
        },
    };
    let roman = |s: &str| s.chars().all(|c| "ivxlcdm".contains(c)) || s.chars().all(|c| "IVXLCDM".contains(c));
    let one_letter = inner.len() == 1 && inner.chars().all(|c| c.is_ascii_alphabetic());
    !inner.is_empty()
        && inner.len() <= 9
        && !rest.trim().is_empty()
        && (inner.chars().all(|c| c.is_ascii_digit()) || one_letter || roman(inner) || inner == "#")
}

/// Whether a line is an adornment: one punctuation character, repeated, nothing else (`::` and
/// `..` are markup, not adornments).
fn is_adornment(line: &str) -> bool {
    let mut chars = line.chars();
    let Some(first) = chars.next() else { return false };
    first.is_ascii_punctuation() && chars.all(|c| c == first) && line != "::" && line != ".."
}

/// A paragraph's text: a closing `::` (which introduces a literal block) read as docutils
/// shows it (`Example::` as `Example:`, `Example ::` and `::` as nothing), inline markup off.
fn paragraph_text(text: &str, substitutions: &HashMap<String, String>) -> String {
    let text = match text.strip_suffix("::") {
        Some(before) if before.is_empty() || before.ends_with(char::is_whitespace) => before.trim_end(),
        Some(_) => &text[..text.len() - 1],
        None => text,
    };
    inline(text, substitutions)
}

/// `|name|` to the text of its `.. |name| replace:: text` definition (which may go on over
/// the indented lines after it), its inline markup taken off.
fn substitutions(lines: &[&str]) -> HashMap<String, String> {
    let mut found = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((name, definition)) = line.trim().strip_prefix(".. |").and_then(|rest| rest.split_once('|')) else {
            continue;
        };
        let Some(first) = definition.trim().strip_prefix("replace::") else {
            continue;
        };
        let indent = indentation(line);
        let more = lines[i + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty() && indentation(l) > indent)
            .take(64)
            .map(|l| l.trim());
        let text: Vec<&str> = std::iter::once(first.trim())
            .chain(more)
            .filter(|l| !l.is_empty())
            .collect();
        found.insert(name.to_string(), inline(&text.join(" "), &HashMap::new()));
        if found.len() == 65_536 {
            break;
        }
    }
    found
}

/// What an admonition or a version note shows before its text (Sphinx's words: `Note`, `New
/// in version 3.2`), and the text its argument starts (an admonition's argument is its first
/// paragraph; a version note's argument is the version, then text; a generic admonition's its
/// title).
fn label_of<'a>(name: &str, argument: &'a str) -> Option<(String, &'a str)> {
    let version_note = |words: &str| {
        let (version, text) = argument.split_once(' ').unwrap_or((argument, ""));
        Some((format!("{words} {version}"), text.trim()))
    };
    let admonition = |label: &str| Some((label.to_string(), argument));
    match name {
        "versionadded" => version_note("New in version"),
        "versionchanged" => version_note("Changed in version"),
        "deprecated" => version_note("Deprecated since version"),
        "versionremoved" => version_note("Removed in version"),
        "note" => admonition("Note"),
        "warning" => admonition("Warning"),
        "tip" => admonition("Tip"),
        "hint" => admonition("Hint"),
        "important" => admonition("Important"),
        "caution" => admonition("Caution"),
        "danger" => admonition("Danger"),
        "attention" => admonition("Attention"),
        "error" => admonition("Error"),
        "seealso" => admonition("See also"),
        "todo" => admonition("Todo"),
        "admonition" if !argument.is_empty() => Some((argument.to_string(), "")),
        _ => None,
    }
}

/// An interpreted text's or reference's shown text: `Title <target>` shows `Title`, `<target>`
/// its target; Sphinx's `~a.b.c` shows `c`, and a leading `!` is not shown.
fn shown_text(inner: &str) -> String {
    let inner = inner.trim();
    let inner = match inner.strip_suffix('>').and_then(|s| s.rsplit_once('<')) {
        Some((title, target)) if title.trim().is_empty() => target,
        Some((title, _)) if title.ends_with(char::is_whitespace) => title.trim_end(),
        _ => inner,
    };
    let inner = inner.strip_prefix('!').unwrap_or(inner);
    match inner.strip_prefix('~') {
        Some(path) => path.rsplit('.').next().unwrap_or(path).to_string(),
        None => inner.to_string(),
    }
}

/// `text` with reStructuredText's inline markup taken off: escapes, ``` ``literals`` ```,
/// roles (`:ref:`Title <label>`` shows `Title`), `` `references`_ ``, `word_` references,
/// footnote references (`[1]_`, left out), substitutions (`|name|`, as its `replace::` gives
/// it), `**strong**` and `*emphasis*`. Every search for a closing mark is either bounded or
/// never goes over the same text twice, so the time is linear in the text.
fn inline(text: &str, substitutions: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut literal_end = Finder::new("``");
    let mut backtick = Finder::new("`");
    let mut emphasis = PairedMarks::new(&["**", "*"]);
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let at_boundary = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        if let Some(escaped) = rest.strip_prefix('\\') {
            let next = escaped.chars().next();
            if let Some(c) = next.filter(|c| !c.is_whitespace()) {
                out.push(c);
            }
            i += 1 + next.map_or(0, char::len_utf8);
            continue;
        }
        if rest.starts_with("``") {
            if let Some(end) = literal_end.at_or_after(text, i + 2) {
                out.push_str(&text[i + 2..end]);
                i = end + 2;
                continue;
            }
        }
        if at_boundary && rest.starts_with(':') {
            let role_end = find_near(text, i + 1, ":`", 64).filter(|&p| {
                p > 0
                    && rest[1..1 + p]
                        .chars()
                        .all(|c| c.is_alphanumeric() || "-_.:+".contains(c))
            });
            if let Some(p) = role_end {
                let start = i + 1 + p + 2;
                if let Some(end) = backtick.at_or_after(text, start) {
                    out.push_str(&shown_text(&text[start..end]));
                    i = end + 1;
                    continue;
                }
            }
        }
        if at_boundary && rest.starts_with('`') && !rest.starts_with("``") {
            if let Some(end) = backtick.at_or_after(text, i + 1) {
                out.push_str(&shown_text(&text[i + 1..end]));
                i = end + 1;
                let after = &text[i..];
                i += match after.bytes().take(2).take_while(|b| *b == b'_').count() {
                    0 => role_suffix(after),
                    underscores => underscores,
                };
                continue;
            }
        }
        if rest.starts_with('[') {
            if let Some(p) = find_near(text, i + 1, "]_", 64).filter(|&p| p > 0) {
                let label = &rest[1..1 + p];
                if !label.contains(char::is_whitespace) && !label.contains('[') {
                    if out.ends_with(' ') {
                        out.pop();
                    }
                    i += 1 + p + 2;
                    continue;
                }
            }
        }
        if at_boundary && rest.starts_with('|') {
            if let Some(p) = find_near(text, i + 1, "|", 128).filter(|&p| p > 0) {
                let name = &rest[1..1 + p];
                if !name.starts_with(' ') && !name.ends_with(' ') && !name.contains('\n') {
                    out.push_str(substitutions.get(name).map_or(name, String::as_str));
                    i += 1 + p + 1;
                    i += text[i..].bytes().take(2).take_while(|b| *b == b'_').count();
                    continue;
                }
            }
        }
        if let Some((inner, next)) = emphasis.at(text, i) {
            out.push_str(inner);
            i = next;
            continue;
        }
        let underscores = rest.bytes().take(2).take_while(|b| *b == b'_').count();
        if underscores > 0 && is_reference_end(&out, &rest[underscores..]) {
            i += underscores;
            continue;
        }
        let c = rest.chars().next().expect("within the text");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The length of a role written after interpreted text (`` `x`:math: ``), if one is.
fn role_suffix(after: &str) -> usize {
    if !after.starts_with(':') {
        return 0;
    }
    match find_near(after, 1, ":", 64) {
        Some(p)
            if p > 0
                && after[1..1 + p]
                    .chars()
                    .all(|c| c.is_alphanumeric() || "-_.+".contains(c)) =>
        {
            p + 2
        }
        _ => 0,
    }
}

/// Whether `_` written after `out` ends a `word_` reference: the word (64 characters at most)
/// is letters, digits, `-` and `.`, with no `_` of its own (so `snake_case_` and `__init__`
/// stay), and a boundary follows.
fn is_reference_end(out: &str, after: &str) -> bool {
    let boundary_follows = after.chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '_');
    // The word backwards, an opening bracket or quote before it left out.
    let backwards: String = out.chars().rev().take_while(|c| !c.is_whitespace()).take(65).collect();
    let backwards = backwards.trim_end_matches(['(', '[', '{', '"', '\'']);
    boundary_follows
        && !backwards.is_empty()
        && backwards.chars().count() <= 64
        && backwards.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '.')
}

/// The next place a string is found at or after a position, for positions that only grow:
/// the answer found last is kept, so no text is searched twice.
struct Finder {
    needle: &'static str,
    found: Option<usize>,
    from: Option<usize>,
}

impl Finder {
    fn new(needle: &'static str) -> Self {
        Self {
            needle,
            found: None,
            from: None,
        }
    }

    fn at_or_after(&mut self, text: &str, start: usize) -> Option<usize> {
        let cached = self.from.is_some_and(|from| from <= start) && self.found.is_none_or(|p| p >= start);
        if !cached {
            self.found = text[start..].find(self.needle).map(|p| start + p);
            self.from = Some(start);
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::document_of;

    fn blocks_of(text: &str) -> Vec<(String, Vec<String>, ContentType)> {
        let doc = document_of("guide.rst", text.to_string());
        doc.blocks
            .into_iter()
            .map(|b| (b.text, b.heading_path, b.kind))
            .collect()
    }

    fn texts(blocks: &[(String, Vec<String>, ContentType)]) -> Vec<&str> {
        blocks.iter().map(|(t, _, _)| t.as_str()).collect()
    }

    const GUIDE: &str = "\
=============
 Harbour Guide
=============

.. contents:: Table of contents
   :depth: 2

Berths and fees
===============

The harbour has *twelve* berths; see :ref:`the fee table <fees>` and
`the port site <https://example.org/port>`_ for |authority|.

.. |authority| replace:: the Port Authority

.. _fees:

Fees
----

.. note:: Fees are paid
   at the office.

.. code-block:: python
   :linenos:

   def fee(length):
       return 12 * length

.. parsed-literal::

   moor(`BERTH`_ <n>, :ref:`LINES <lines>`)

.. toctree::
   :maxdepth: 1

   berths
   moorings

Example::

    moor --berth 4

Mooring
=======

#. Come alongside.
#. Make fast the lines [1]_.

- Check the nets.
- Call ``harbour-master`` on channel 12.

:Author: Ada Lovelace

.. [1] Bow line first.

.. This comment is not read.
   Nor is this line.
";

    #[test]
    fn sections_paragraphs_directives_and_inline_markup() {
        let doc = document_of("guide.rst", GUIDE);
        assert_eq!(doc.title, "Harbour Guide");
        let blocks = blocks_of(GUIDE);
        let path = |texts: &[&str]| texts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(
            texts(&blocks),
            [
                "Harbour Guide",
                "Berths and fees",
                "The harbour has twelve berths; see the fee table and\nthe port site for the Port Authority.",
                "Fees",
                "Note: Fees are paid\nat the office.",
                "def fee(length):\n    return 12 * length",
                "moor(BERTH <n>, LINES)",
                "Example:",
                "moor --berth 4",
                "Mooring",
                "1. Come alongside.",
                "2. Make fast the lines.",
                "Check the nets.",
                "Call harbour-master on channel 12.",
                "Author: Ada Lovelace",
                "Bow line first.",
            ]
        );
        assert_eq!(blocks[2].1, path(&["Harbour Guide", "Berths and fees"]));
        assert_eq!(blocks[5].1, path(&["Harbour Guide", "Berths and fees", "Fees"]));
        assert_eq!(blocks[9].1, path(&["Harbour Guide", "Mooring"]));
    }

    #[test]
    fn tables_are_read_as_rows() {
        let text = "\
Berths
======

+--------+-------------+
| Berth  | Length      |
+========+=============+
| North  | 120 m, deep |
|        | water       |
+--------+-------------+

=====  =====
Berth  Fee
=====  =====
North  12 €
South  9 €
       a day
=====  =====

.. list-table:: Tides
   :header-rows: 1

   * - Day
     - High
   * - Monday
     - 06:10

.. csv-table:: Crews
   :header: \"Name\", \"Boat\"

   \"Ada\", \"Swift, the second\"
";
        let blocks = blocks_of(text);
        let tables: Vec<&str> = blocks
            .iter()
            .filter(|(_, _, kind)| *kind == ContentType::Table)
            .map(|(t, _, _)| t.as_str())
            .collect();
        assert_eq!(
            tables,
            [
                "Berth | Length\nNorth | 120 m, deep water",
                "Berth | Fee\nNorth | 12 €\nSouth | 9 € a day",
                "Day | High\nMonday | 06:10",
                "Name | Boat\nAda | Swift, the second",
            ]
        );
        assert!(blocks.iter().all(|(_, path, _)| path == &vec!["Berths".to_string()]));
    }

    #[test]
    fn title_levels_follow_the_order_adornments_are_first_used() {
        let text = "Top\n~~~\n\nA\n***\n\ntext a\n\nB\n~~~\n\ntext b\n";
        let blocks = blocks_of(text);
        assert_eq!(texts(&blocks), ["Top", "A", "text a", "B", "text b"]);
        assert_eq!(blocks[2].1, vec!["Top".to_string(), "A".to_string()]);
        assert_eq!(blocks[4].1, vec!["B".to_string()]);
        // Not titles: an underline shorter than a long title, a transition.
        let blocks = blocks_of("A long line of text\n===\n\nMore.\n\n----------\n\nLast.\n");
        assert_eq!(texts(&blocks), ["A long line of text\n===", "More.", "Last."]);
    }

    #[test]
    fn version_notes_and_admonitions_read_as_sphinx_shows_them() {
        let text = "Title\n=====\n\n.. versionadded:: 3.20\n\n.. versionchanged:: 3.21 The *spam* option.\n\n\
                    .. deprecated:: 4.0\n   Use |new| instead.\n\n.. |new| replace::\n   the ``ham``\n   option\n\n\
                    .. only:: html\n\n   Shown on the web.\n\n.. seealso:: The guide.\n\nLast.\n";
        assert_eq!(
            texts(&blocks_of(text)),
            [
                "Title",
                "New in version 3.20.",
                "Changed in version 3.21: The spam option.",
                "Deprecated since version 4.0: Use the ham option instead.",
                "Shown on the web.",
                "See also: The guide.",
                "Last.",
            ]
        );
        // A definition list's term, then its definition starting with a version note.
        let text = "``IS_64BIT``\n  .. versionadded:: 3.10\n\n  One if the processor is 64-bit.\n";
        assert_eq!(
            texts(&blocks_of(text)),
            ["IS_64BIT", "New in version 3.10.", "One if the processor is 64-bit."]
        );
        // Directives nested deep are read in time linear in the file.
        let deep: String = (0..3_000)
            .map(|d| format!("{}.. note::\n", " ".repeat(d * 3)))
            .collect();
        let blocks = blocks_of(&format!("{deep}{}deepest\n", " ".repeat(9_000)));
        assert_eq!(texts(&blocks), ["Note: deepest"]);
    }

    #[test]
    fn inline_markup_is_taken_off() {
        let none = HashMap::new();
        assert_eq!(inline(":py:func:`~boto3.session.Session.client`", &none), "client");
        assert_eq!(
            inline("see `Python`_ and pip_, not snake_case_ or __init__", &none),
            "see Python and pip, not snake_case_ or __init__"
        );
        assert_eq!(
            inline("\\*not emphasis\\* and ``*literal*``", &none),
            "*not emphasis* and *literal*"
        );
        assert_eq!(inline("E = mc\\ :sup:`2` and `x`:math:", &none), "E = mc2 and x");
        assert_eq!(
            inline(":prop_tgt:`VS_REFERENCE_<refname>`", &none),
            "VS_REFERENCE_<refname>"
        );
        // Unclosed marks stay; many of them are read in time linear in the text.
        let hostile = "`a ``b :r:`c |d [e] *f _".repeat(20_000);
        let read = inline(&hostile, &none);
        for letter in ['a', 'b', 'c', 'd', 'e', 'f'] {
            assert_eq!(read.matches(letter).count(), 20_000, "{letter}");
        }
    }
}
