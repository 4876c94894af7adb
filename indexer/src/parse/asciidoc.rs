//! AsciiDoc (`.adoc`, `.asciidoc`): the document title (`= Title`) and section titles (`==` to
//! `======`, or Markdown's `#`) as heading paths; paragraphs, list items (bullets left out, `.`
//! items numbered by depth, a description list's term before its text) and block titles as
//! blocks; listing and literal blocks (`----`, `....`) as blocks of their own, verbatim; tables
//! (`|===`, and `,===` / `:===` of comma- and colon-separated values) as table blocks; the text
//! of example, sidebar, quote and open blocks read where it is; comments, block attributes and
//! block macros (`image::`, `include::`, `ifdef::`) left out; attribute entries (`:name: value`)
//! substituted where they are referenced (`{name}`); inline macros and cross references shown
//! by their text, formatting marks taken off.

use std::collections::HashMap;

use super::markup_body::{find_near, literal_text, strip_paired_marks, table_text, LineReader, MarkupBody};
use super::text::decode_raw_text;
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Attributes an AsciiDoc processor defines for writing characters (`{nbsp}`, `{plus}`).
const CHARACTER_ATTRIBUTES: &[(&str, &str)] = &[
    ("nbsp", " "),
    ("sp", " "),
    ("empty", ""),
    ("blank", ""),
    ("zwsp", ""),
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("startsb", "["),
    ("endsb", "]"),
    ("vbar", "|"),
    ("caret", "^"),
    ("asterisk", "*"),
    ("tilde", "~"),
    ("apos", "'"),
    ("quot", "\""),
    ("backslash", "\\"),
    ("backtick", "`"),
    ("plus", "+"),
    ("two-colons", "::"),
    ("two-semicolons", ";;"),
    ("cpp", "C++"),
    ("pp", "++"),
];

/// Attribute entries kept at most (later ones are not kept).
const MAX_ATTRIBUTES: usize = 4_096;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let mut reader = Reader::default();
    reader.read(&text.lines().collect::<Vec<_>>());
    let title = reader
        .title
        .or(reader.body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, reader.body.blocks)))
}

#[derive(Default)]
struct Reader {
    body: MarkupBody,
    attributes: HashMap<String, String>,
    /// The document title (`= Title`).
    title: Option<String>,
    /// The next number of each depth of `.` lists open (`.` is depth 1, `..` depth 2).
    numbers: Vec<u64>,
    /// Whether the paragraph being read is a list item (a marker on the next line starts the
    /// next one).
    in_item: bool,
    /// The last block attribute line (`[cols="1,3"]`), for the table after it.
    block_attributes: Option<String>,
    /// Whether the document header is being read: the lines after the document title up to the
    /// first blank line (an author line, a revision line, attribute entries).
    in_header: bool,
}

impl LineReader for Reader {
    fn end_paragraph(&mut self) {
        let attributes = &self.attributes;
        self.body.end_paragraph(|text| inline(text, attributes));
        self.in_item = false;
    }

    fn step(&mut self, lines: &[&str], i: usize) -> usize {
        let line = lines[i].trim_end();
        let content = line.trim_start();
        if content.is_empty() || content == "+" {
            self.end_paragraph();
            self.in_header = false;
            return i + 1;
        }
        if content.starts_with("//") && !is_delimiter(content) {
            return i + 1; // a comment line
        }
        if self.in_header {
            // An author or revision line is a block of its own; attribute entries are set.
            if self.block_line(content, i).is_none() {
                self.body.push(inline(content, &self.attributes), ContentType::Text);
            }
            return i + 1;
        }
        if is_delimiter(content) {
            self.end_paragraph();
            return self.delimited_block(lines, i, content);
        }
        if !self.body.in_paragraph() {
            if let Some(next) = self.block_line(content, i) {
                return next;
            }
        }
        if !self.body.in_paragraph() || self.in_item {
            if let Some(text) = self.item_text(content) {
                self.end_paragraph();
                self.in_item = true;
                self.body.line(&text);
                return i + 1;
            }
        }
        if !self.body.in_paragraph() {
            self.numbers.clear();
        }
        self.body.line(content.strip_suffix(" +").unwrap_or(content));
        i + 1
    }
}

impl Reader {
    /// A line that is a block of its own where a paragraph could start: a section title, an
    /// attribute entry, a block attribute line, a block title or a block macro.
    fn block_line(&mut self, content: &str, i: usize) -> Option<usize> {
        if let Some((level, title)) = section_title(content) {
            let title = inline(title, &self.attributes);
            if level == 1 && self.title.is_none() {
                self.title = Some(title.clone());
                self.in_header = self.body.blocks.is_empty();
            }
            self.body.heading(level, title);
            return Some(i + 1);
        }
        if let Some((name, value)) = attribute_entry(content) {
            match value {
                Some(value) if self.attributes.len() < MAX_ATTRIBUTES => {
                    let value = inline(value, &self.attributes);
                    self.attributes.insert(name.to_string(), value);
                }
                Some(_) => {}
                None => {
                    self.attributes.remove(name);
                }
            }
            return Some(i + 1);
        }
        if content.starts_with('[') && content.ends_with(']') {
            self.block_attributes = Some(content.to_string());
            return Some(i + 1);
        }
        if let Some(title) = content
            .strip_prefix('.')
            .filter(|t| !t.starts_with(['.', ' ']) && !t.is_empty())
        {
            let title = inline(title, &self.attributes);
            self.body.push(title, ContentType::Text);
            return Some(i + 1);
        }
        is_block_macro(content).then_some(i + 1)
    }

    /// A list item's text, if `content` starts one: a bullet and a checkbox left out, a `.`
    /// item numbered by its depth, a description list's term and its text joined by `: `.
    fn item_text(&mut self, content: &str) -> Option<String> {
        let marker_end = content.find(' ')?;
        let (marker, text) = (&content[..marker_end], content[marker_end..].trim_start());
        let all = |c: char| !marker.is_empty() && marker.len() <= 5 && marker.chars().all(|m| m == c);
        if (all('*') || marker == "-") && !text.is_empty() {
            let text = ["[ ] ", "[x] ", "[X] ", "[*] "]
                .iter()
                .find_map(|b| text.strip_prefix(b))
                .unwrap_or(text);
            return Some(text.to_string());
        }
        if all('.') && !text.is_empty() {
            let depth = marker.len();
            self.numbers.resize(depth, 0);
            let number = &mut self.numbers[depth - 1];
            *number = number.saturating_add(1);
            return Some(format!("{number}. {text}"));
        }
        let explicit = marker.strip_suffix(['.', ')']).is_some_and(|n| {
            !n.is_empty()
                && n.len() <= 9
                && (n.chars().all(|c| c.is_ascii_digit()) || n.chars().all(|c| c.is_ascii_alphabetic()))
        });
        if explicit && !text.is_empty() {
            return Some(content.to_string());
        }
        if let Some(callout) = marker.strip_prefix('<').and_then(|m| m.strip_suffix('>')) {
            if callout.chars().all(|c| c.is_ascii_digit() || c == '.') && !text.is_empty() {
                return Some(text.to_string());
            }
        }
        description_item(content)
    }

    /// A delimited block starting at line `i` (its delimiter `delimiter`): literal blocks and
    /// tables read whole, comments and passthroughs skipped or read for their text; other blocks
    /// (example, sidebar, quote, open) hold text read where it is, so only their delimiter is
    /// passed.
    fn delimited_block(&mut self, lines: &[&str], i: usize, delimiter: &str) -> usize {
        let kind = delimiter.chars().next().unwrap_or_default();
        let holds_text = matches!(kind, '=' | '*' | '_') || delimiter == "--";
        if holds_text {
            return i + 1;
        }
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.trim_end() == delimiter)
            .map_or(lines.len(), |p| i + 1 + p);
        let inside = &lines[i + 1..end];
        match kind {
            '-' | '.' => self.body.push(literal_text(inside), ContentType::Text),
            '+' => {
                let text: Vec<String> = inside.iter().map(|l| without_tags(l)).collect();
                self.body.push(text.join("\n").trim().to_string(), ContentType::Text);
            }
            '|' | ',' | ':' | '!' => self.table(inside, kind),
            _ => {} // a comment block
        }
        (end + 1).min(lines.len())
    }

    fn table(&mut self, lines: &[&str], separator: char) {
        let attributes = self.block_attributes.take().unwrap_or_default();
        let rows: Vec<Vec<String>> = match separator {
            ',' | ':' => lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.split(separator).map(str::to_string).collect())
                .collect(),
            _ => {
                let first_line = lines.iter().find(|l| !l.trim().is_empty()).copied().unwrap_or_default();
                let cells = table_cells(lines, separator);
                let columns = column_count(&attributes).unwrap_or_else(|| table_cells(&[first_line], separator).len());
                cells.chunks(columns.max(1)).map(<[String]>::to_vec).collect()
            }
        };
        let attributes_map = &self.attributes;
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|row| row.iter().map(|cell| inline(cell.trim(), attributes_map)).collect())
            .collect();
        self.body.push(table_text(&rows), ContentType::Table);
    }
}

/// Whether a line delimits a block: four or more of one of `-`, `.`, `=`, `*`, `_`, `+`, `/`,
/// an open block's `--`, or a table's `|===` (or `,===`, `:===`, `!===`).
fn is_delimiter(content: &str) -> bool {
    let mut chars = content.chars();
    let first = chars.next().unwrap_or_default();
    let repeated = content.len() >= 4 && "-.=*_+/".contains(first) && content.chars().all(|c| c == first);
    let table = content.len() == 4 && "|,:!".contains(first) && &content[1..] == "===";
    repeated || table || content == "--"
}

/// A section title's level (1 for the document title `= `) and text.
fn section_title(content: &str) -> Option<(usize, &str)> {
    let mark = content.chars().next().filter(|c| *c == '=' || *c == '#')?;
    let level = content.chars().take_while(|c| *c == mark).count();
    let title = content[level..].strip_prefix(' ')?.trim();
    (level <= 6 && !title.is_empty()).then_some((level, title))
}

/// An attribute entry (`:name: value`, `:name!:` unsets it): its name, and its value unless
/// it is unset.
fn attribute_entry(content: &str) -> Option<(&str, Option<&str>)> {
    let rest = content.strip_prefix(':')?;
    let close = rest.find(':')?;
    let (name, value) = (&rest[..close], rest[close + 1..].trim());
    let (name, unset) = match name.strip_suffix('!').or_else(|| name.strip_prefix('!')) {
        Some(name) => (name, true),
        None => (name, false),
    };
    let well_formed = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    well_formed.then_some((name, (!unset).then_some(value)))
}

/// Whether a line is a block macro (`image::path[]`, `include::file[]`, `ifdef::name[]`,
/// `toc::[]`): a name, `::`, a target without spaces and attributes in brackets.
fn is_block_macro(content: &str) -> bool {
    let Some((name, rest)) = content.split_once("::") else {
        return false;
    };
    let named = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    named && rest.ends_with(']') && rest.split('[').next().is_some_and(|target| !target.contains(' '))
}

/// A description list item (`CPU:: The processor`, `term;;`), as `term: text`.
fn description_item(content: &str) -> Option<String> {
    for separator in ["::::", ":::", "::", ";;"] {
        if let Some(at) = content.find(separator) {
            let (term, text) = (&content[..at], &content[at + separator.len()..]);
            let ends_term = text.is_empty() || text.starts_with(' ');
            if !term.trim().is_empty() && ends_term && !term.ends_with(':') {
                let text = text.trim();
                return Some(match text.is_empty() {
                    true => term.trim().to_string(),
                    false => format!("{}: {text}", term.trim()),
                });
            }
        }
    }
    None
}

/// A table's cells in order: a cell starts at `|` (after its spec, such as `2+` or `a`, which is
/// left out), and a line without one goes on with the cell before.
fn table_cells(lines: &[&str], separator: char) -> Vec<String> {
    let mut cells: Vec<String> = Vec::new();
    for line in lines {
        let mut parts = line.split(separator);
        let before = parts.next().unwrap_or_default();
        let mut pending = before.to_string();
        let mut first = true;
        for part in parts {
            // What stands before this `|`: text of the cell before, then maybe this cell's spec.
            let (text, _spec) = split_spec(&pending);
            match (first, cells.last_mut()) {
                (true, Some(cell)) if !text.trim().is_empty() => {
                    cell.push(' ');
                    cell.push_str(text.trim());
                }
                (true, _) => {}
                (false, _) => cells.push(text.trim().to_string()),
            }
            first = false;
            pending = part.to_string();
        }
        match (first, cells.last_mut()) {
            (true, Some(cell)) if !pending.trim().is_empty() => {
                cell.push(' ');
                cell.push_str(pending.trim());
            }
            (true, _) => {}
            (false, _) => cells.push(pending.trim().to_string()),
        }
    }
    cells
}

/// Splits a cell's spec (`2+`, `3*`, `.^`, `a`) off the end of the text before a `|`.
fn split_spec(text: &str) -> (&str, &str) {
    let start = text.rfind(char::is_whitespace).map_or(0, |p| p + 1);
    let token = &text[start..];
    let spec_chars = |t: &str| t.chars().all(|c| c.is_ascii_digit() || ".+*^<>".contains(c));
    let is_spec = match token.char_indices().last() {
        Some((last, style)) if "adehlmsv".contains(style) => spec_chars(&token[..last]),
        Some(_) => spec_chars(token) && token.contains(['+', '*', '.', '^', '<', '>']),
        None => false,
    };
    match is_spec {
        true => (&text[..start], token),
        false => (text, ""),
    }
}

/// The column count a table's `cols` attribute gives (`cols="1,2,3"`, `cols="3*"`, `cols=3`).
fn column_count(attributes: &str) -> Option<usize> {
    let value = attributes.split("cols=").nth(1)?;
    let value = value.trim_start_matches(['"', '\'']);
    let value: &str = value.split(['"', '\'', ']']).next()?;
    if let Ok(n) = value.trim().parse::<usize>() {
        return Some(n.min(256));
    }
    let count: usize = value
        .split([',', ';'])
        .map(|spec| match spec.split_once('*') {
            Some((n, _)) => n.trim().parse::<usize>().unwrap_or(1),
            None => 1,
        })
        .sum();
    (count > 0).then_some(count.min(256))
}

/// A line of HTML without its tags.
fn without_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_tag = false;
    for c in line.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Inline macros shown by their text (`link:url[text]`), or by their target where the text is
/// empty (`link`, `xref`, `mailto`); `None` for those left out (`indexterm`, `anchor`).
fn shown_by_macro(name: &str, target: &str, text: &str) -> Option<String> {
    let text = text.split(',').next().unwrap_or_default().trim().trim_matches('"');
    let or_target = || match text.is_empty() {
        true => target.to_string(),
        false => text.to_string(),
    };
    match name {
        "link" | "xref" | "mailto" | "http" | "https" | "ftp" | "irc" => Some(or_target()),
        "menu" => Some(match text.is_empty() {
            true => target.to_string(),
            false => format!(
                "{target} > {}",
                text.replace('>', " > ")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        }),
        "image" | "icon" | "kbd" | "btn" | "pass" | "stem" | "latexmath" | "asciimath" | "footnote" | "indexterm2" => {
            Some(text.to_string())
        }
        "indexterm" | "anchor" | "footnoteref" => Some(String::new()),
        _ => None,
    }
}

/// `text` with AsciiDoc's inline markup taken off: attribute references (`{name}`, as
/// defined; an undefined one kept), inline macros (`link:url[text]`, `https://host[text]`,
/// `kbd:[Ctrl+C]`, `footnote:[text]`), cross references (`<<id,text>>`), anchors (`[[id]]`),
/// index terms (`((term))` shown, `(((hidden)))` not), then formatting marks (`*strong*`,
/// `_emphasis_`, `` `code` ``, `#mark#`, `+passthrough+`). Each search ahead is bounded, so
/// the time is linear in the text.
fn inline(text: &str, attributes: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let at_boundary = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        if let Some(escaped) = rest.strip_prefix('\\').and_then(|r| r.chars().next()) {
            if "*_`#+{[<(".contains(escaped) {
                out.push(escaped);
                i += 1 + escaped.len_utf8();
                continue;
            }
        }
        if rest.starts_with('{') {
            if let Some(p) = find_near(text, i + 1, "}", 64) {
                let name = &rest[1..1 + p];
                let known = attributes
                    .get(name)
                    .map(String::as_str)
                    .or_else(|| CHARACTER_ATTRIBUTES.iter().find(|(n, _)| *n == name).map(|(_, v)| *v));
                if let Some(value) = known {
                    out.push_str(value);
                    i += p + 2;
                    continue;
                }
            }
        }
        if let Some((shown, length)) = span_at(text, i) {
            out.push_str(shown);
            i += length;
            continue;
        }
        if at_boundary {
            if let Some((shown, length)) = inline_macro(rest) {
                out.push_str(&shown);
                i += length;
                continue;
            }
        }
        let c = rest.chars().next().expect("within the text");
        out.push(c);
        i += c.len_utf8();
    }
    strip_paired_marks(&out, &["**", "*", "__", "_", "``", "`", "##", "#", "+++", "++", "+"])
}

/// What a span shows of what it holds.
type ShownOf = fn(&str) -> &str;

/// Spans shown by what they hold, tried in this order: the opening and closing marks, how
/// far the closing one is looked for, and what of the inside is shown.
const SPANS: &[(&str, &str, usize, ShownOf)] = &[
    // `+text+` inside backticks: monospace text passed through as written.
    ("`+", "+`", 1024, |inside| inside),
    // A cross reference `<<id,text>>` shows its text, `<<id>>` its id.
    ("<<", ">>", 256, |inside| {
        inside.split_once(',').map_or(inside, |(_, t)| t).trim()
    }),
    // An anchor `[[id]]` and a hidden index term `(((term)))` show nothing.
    ("[[", "]]", 256, |_| ""),
    ("(((", ")))", 256, |_| ""),
    // A visible index term `((term))` shows the term.
    ("((", "))", 256, |inside| inside),
];

/// The span of [`SPANS`] opening at `i`, if one closes near enough: what it shows, and its length.
fn span_at(text: &str, i: usize) -> Option<(&str, usize)> {
    let rest = &text[i..];
    SPANS.iter().find_map(|(open, close, limit, shown)| {
        let inside_start = open.len();
        rest.starts_with(open).then_some(())?;
        let p = find_near(text, i + inside_start, close, *limit)?;
        Some((
            shown(&rest[inside_start..inside_start + p]),
            inside_start + p + close.len(),
        ))
    })
}

/// An inline macro at the start of `rest` (`name:target[text]`, a URL with `[text]`): what it
/// shows, and its length.
fn inline_macro(rest: &str) -> Option<(String, usize)> {
    let colon = find_near(rest, 0, ":", 16)?;
    let name = &rest[..colon];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let is_url = matches!(name, "http" | "https" | "ftp" | "irc") && rest[colon..].starts_with("://");
    if !is_url && shown_by_macro(name, "", "").is_none() {
        return None;
    }
    let open = find_near(rest, colon + 1, "[", 512)?;
    let target = &rest[colon + 1..colon + 1 + open];
    if target.contains(char::is_whitespace) {
        return None;
    }
    let text_start = colon + 1 + open + 1;
    let close = find_near(rest, text_start, "]", 1024)?;
    let text = &rest[text_start..text_start + close];
    let target = match is_url {
        true => format!("{name}:{target}"),
        false => target.to_string(),
    };
    Some((shown_by_macro(name, &target, text)?, text_start + close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{document_of, Block};

    fn blocks_of(text: &str) -> (String, Vec<Block>) {
        let doc = document_of("guide.adoc", text.to_string());
        (doc.title, doc.blocks)
    }

    const GUIDE: &str = "\
= Harbour Guide
Ada Lovelace <ada@example.org>
:product: Harbour Master
:toc:

// A comment.

== Berths

The *{product}* keeps twelve berths; see <<fees,the fee table>> and
https://example.org/port[the port site] or link:rules.pdf[].

NOTE: Fees are paid at the office.

image::berths.png[Berths]

[[fees]]
=== Fees

.Fees a day
[cols=\"2,1\"]
|===
|Berth |Fee

|North
|12 €

|South |9 €
|===

[source,python]
----
def fee(length):
    return 12 * length
----

////
A comment block.
////

== Mooring

. Come alongside.
. Make fast the lines.
.. Bow line first.
* Check the nets.
* [x] Call `harbour-master` on channel 12.
+
Wait for the answer.

CPU:: The processor.
";

    #[test]
    fn sections_attributes_blocks_tables_and_inline_markup() {
        let (title, blocks) = blocks_of(GUIDE);
        assert_eq!(title, "Harbour Guide");
        let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Harbour Guide",
                "Ada Lovelace <ada@example.org>",
                "Berths",
                "The Harbour Master keeps twelve berths; see the fee table and\nthe port site or rules.pdf.",
                "NOTE: Fees are paid at the office.",
                "Fees",
                "Fees a day",
                "Berth | Fee\nNorth | 12 €\nSouth | 9 €",
                "def fee(length):\n    return 12 * length",
                "Mooring",
                "1. Come alongside.",
                "2. Make fast the lines.",
                "1. Bow line first.",
                "Check the nets.",
                "Call harbour-master on channel 12.",
                "Wait for the answer.",
                "CPU: The processor.",
            ]
        );
        let path = |b: &Block| b.heading_path.join(" / ");
        assert_eq!(path(&blocks[3]), "Harbour Guide / Berths");
        assert_eq!(path(&blocks[7]), "Harbour Guide / Berths / Fees");
        assert_eq!(blocks[7].kind, ContentType::Table);
        assert_eq!(path(&blocks[10]), "Harbour Guide / Mooring");
    }

    #[test]
    fn table_cells_with_specs_and_lines_going_on() {
        let cells = table_cells(&["|a 2+|spans", "more of it", "a|styled"], '|');
        assert_eq!(cells, ["a", "spans more of it", "styled"]);
        assert_eq!(column_count("[cols=\"3*\"]"), Some(3));
        assert_eq!(column_count("[cols=\"1,2a\",options=header]"), Some(2));
    }

    #[test]
    fn inline_markup_is_taken_off_in_linear_time() {
        let attributes = HashMap::from([("v".to_string(), "2.1".to_string())]);
        assert_eq!(
            inline("version {v}{nbsp}and {unknown}", &attributes),
            "version 2.1 and {unknown}"
        );
        assert_eq!(
            inline("press kbd:[Ctrl+C] in menu:File[Save]", &attributes),
            "press Ctrl+C in File > Save"
        );
        assert_eq!(
            inline("a((term)) and(((hidden))) snake_case_name", &attributes),
            "aterm and snake_case_name"
        );
        let hostile = "{a <<b [[c ((d link:e[f *g `h ".repeat(20_000);
        let read = inline(&hostile, &attributes);
        for letter in ['a', 'b', 'c', 'd', 'f', 'g', 'h'] {
            assert_eq!(read.matches(letter).count(), 20_000, "{letter}");
        }
    }

    #[test]
    fn an_unclosed_block_reads_to_the_end() {
        let (_, blocks) = blocks_of("Intro.\n\n----\ncode\n\nmore code\n");
        assert_eq!(blocks[1].text, "code\n\nmore code");
    }
}
