//! Org (`.org`): headlines (`*`, `**`, ...) as heading paths, without their TODO keywords,
//! priorities, statistics cookies and tags; `#+TITLE:` the title and `#+FILETAGS:` the tags;
//! paragraphs and list items (bullets and checkboxes left out, a description's term before its
//! text) as blocks; source, example and fixed-width blocks as blocks of their own, verbatim;
//! tables as table blocks; comment and export blocks, comment lines, drawers (`:PROPERTIES:`)
//! and planning lines (`SCHEDULED:`) left out; links shown by their description, footnote
//! references left out, emphasis marks taken off.

use super::markup_body::{find_near, literal_text, strip_paired_marks, table_text, LineReader, MarkupBody};
use super::text::decode_raw_text;
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let mut reader = Reader {
        todo_keywords: vec!["TODO".into(), "DONE".into()],
        ..Default::default()
    };
    reader.read(&text.lines().collect::<Vec<_>>());
    let title = reader
        .title
        .clone()
        .or(reader.body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, reader.body.blocks);
    document.tags = reader.tags;
    Ok(Parsed::one(document))
}

#[derive(Default)]
struct Reader {
    body: MarkupBody,
    title: Option<String>,
    tags: Vec<String>,
    /// The keywords a headline may start with (`TODO`, `DONE`, and those `#+TODO:` adds).
    todo_keywords: Vec<String>,
    /// Whether the paragraph being read is a list item.
    in_item: bool,
    /// The rows of the table being read.
    table: Vec<Vec<String>>,
}

impl LineReader for Reader {
    fn end_paragraph(&mut self) {
        self.body.end_paragraph(inline);
        self.in_item = false;
        if !self.table.is_empty() {
            let rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
                .into_iter()
                .map(|row| row.iter().map(|cell| inline(cell)).collect())
                .collect();
            self.body.push(table_text(&rows), ContentType::Table);
        }
    }

    fn step(&mut self, lines: &[&str], i: usize) -> usize {
        let line = lines[i].trim_end();
        let content = line.trim_start();
        if let Some(level) = headline_level(line) {
            self.end_paragraph();
            let title = self.headline_text(&line[level..]);
            self.body.heading(level, inline(&title));
            return i + 1;
        }
        if content.is_empty() {
            self.end_paragraph();
            return i + 1;
        }
        if content.starts_with('|') {
            if !self.in_table() {
                self.end_paragraph();
            }
            if !content.starts_with("|-") {
                let cells = content
                    .trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect();
                self.table.push(cells);
            }
            return i + 1;
        }
        if self.in_table() {
            self.end_paragraph();
        }
        if content == "#" || content.starts_with("# ") {
            return i + 1; // a comment line
        }
        if let Some(rest) = keyword_line(content, "#+begin_") {
            self.end_paragraph();
            return self.block(lines, i, rest);
        }
        if keyword_line(content, "#+end_").is_some() {
            self.end_paragraph();
            return i + 1;
        }
        if let Some((key, value)) = keyword(content) {
            self.keyword(&key, value);
            return i + 1;
        }
        if is_drawer_start(content) {
            self.end_paragraph();
            let end = lines[i + 1..]
                .iter()
                .position(|l| l.trim().eq_ignore_ascii_case(":end:"));
            return end.map_or(i + 1, |p| i + 2 + p);
        }
        if ["SCHEDULED:", "DEADLINE:", "CLOSED:"]
            .iter()
            .any(|p| content.starts_with(p))
        {
            return i + 1;
        }
        if content.len() >= 5 && content.chars().all(|c| c == '-') {
            self.end_paragraph();
            return i + 1; // a horizontal rule
        }
        if let Some(fixed) = content.strip_prefix(": ").or_else(|| (content == ":").then_some("")) {
            self.end_paragraph();
            let mut end = i;
            let mut fixed_lines = vec![fixed];
            while let Some(next) = lines.get(end + 1).map(|l| l.trim()) {
                match next.strip_prefix(": ").or_else(|| (next == ":").then_some("")) {
                    Some(more) => fixed_lines.push(more),
                    None => break,
                }
                end += 1;
            }
            self.body.push(fixed_lines.join("\n"), ContentType::Text);
            return end + 1;
        }
        if !self.body.in_paragraph() || self.in_item {
            if let Some(text) = item_text(line) {
                self.end_paragraph();
                self.in_item = true;
                self.body.line(&text);
                return i + 1;
            }
        }
        if let Some(rest) = content.strip_prefix("[fn:") {
            if let Some((_, text)) = rest.split_once(']').filter(|(label, _)| !label.contains(' ')) {
                self.end_paragraph();
                self.body.line(text);
                return i + 1;
            }
        }
        self.body.line(content);
        i + 1
    }
}

impl Reader {
    fn in_table(&self) -> bool {
        !self.table.is_empty()
    }

    /// A headline's text: its TODO keyword, priority cookie, statistics cookies and tags left out.
    fn headline_text(&self, text: &str) -> String {
        let mut text = text.trim();
        if let Some(rest) = self.todo_keywords.iter().find_map(|k| {
            text.strip_prefix(k.as_str())
                .filter(|r| r.is_empty() || r.starts_with(' '))
        }) {
            text = rest.trim_start();
        }
        for cookie in ["[#A] ", "[#B] ", "[#C] "] {
            text = text.strip_prefix(cookie).unwrap_or(text);
        }
        text = text.strip_prefix("COMMENT ").unwrap_or(text);
        // Tags: `:work:urgent:` at the end, after white space.
        if let Some((head, tags)) = text.rsplit_once(char::is_whitespace) {
            let is_tags = tags.len() > 2
                && tags.starts_with(':')
                && tags.ends_with(':')
                && tags
                    .trim_matches(':')
                    .split(':')
                    .all(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || "_@#%".contains(c)));
            if is_tags {
                text = head.trim_end();
            }
        }
        text.split_whitespace()
            .filter(|word| !is_statistics_cookie(word))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// An in-buffer setting: the title, the file's tags, TODO keywords; others are left out.
    fn keyword(&mut self, key: &str, value: &str) {
        match key {
            "title" => {
                let title = inline(value);
                if !title.is_empty() {
                    self.title = Some(match self.title.take() {
                        Some(earlier) => format!("{earlier} {title}"),
                        None => title,
                    });
                }
            }
            "filetags" => {
                let tags = value.split([':', ' ']).filter(|t| !t.is_empty()).map(str::to_string);
                self.tags.extend(tags);
                self.tags.truncate(64);
            }
            "todo" | "seq_todo" | "typ_todo" => {
                let words = value.split_whitespace().filter(|w| *w != "|");
                let keywords = words.map(|w| w.split('(').next().unwrap_or(w).to_string());
                self.todo_keywords.extend(keywords);
                self.todo_keywords.truncate(64);
            }
            "caption" => {
                let caption = inline(value);
                self.body.push(caption, ContentType::Text);
            }
            _ => {}
        }
    }

    /// A block from `#+begin_<rest>` at line `i`: source and example blocks read verbatim to
    /// their `#+end_`, comment and export blocks skipped; the text of others (quote, center,
    /// verse, a special block) is read where it is, so only their first line is passed (and
    /// blocks nested however deep need no recursion).
    fn block(&mut self, lines: &[&str], i: usize, rest: &str) -> usize {
        let kind = rest.split_whitespace().next().unwrap_or_default().to_ascii_lowercase();
        if !matches!(kind.as_str(), "src" | "example" | "comment" | "export") {
            return i + 1;
        }
        let end_line = format!("#+end_{kind}");
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.trim().eq_ignore_ascii_case(&end_line))
            .map_or(lines.len(), |p| i + 1 + p);
        if matches!(kind.as_str(), "src" | "example") {
            self.body.push(literal_text(&lines[i + 1..end]), ContentType::Text);
        }
        (end + 1).min(lines.len())
    }
}

/// A headline's level: the count of its leading `*`, followed by a space.
fn headline_level(line: &str) -> Option<usize> {
    let level = line.bytes().take_while(|b| *b == b'*').count();
    (level > 0 && line[level..].starts_with(' ')).then_some(level)
}

/// `#+KEY: value` as (lowercased key, value).
fn keyword(content: &str) -> Option<(String, &str)> {
    let rest = content.strip_prefix("#+")?;
    let (key, value) = rest.split_once(':')?;
    (!key.is_empty() && !key.contains(' ')).then(|| (key.to_ascii_lowercase(), value.trim()))
}

/// What follows `prefix` (matched without regard to case) at the start of `content`.
fn keyword_line<'a>(content: &'a str, prefix: &str) -> Option<&'a str> {
    let head = content.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &content[prefix.len()..])
}

/// Whether a line opens a drawer (`:PROPERTIES:`, `:LOGBOOK:`): a name between colons alone.
fn is_drawer_start(content: &str) -> bool {
    let Some(name) = content.strip_prefix(':').and_then(|r| r.strip_suffix(':')) else {
        return false;
    };
    !name.is_empty()
        && !name.eq_ignore_ascii_case("end")
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// `[2/5]` or `[40%]`.
fn is_statistics_cookie(word: &str) -> bool {
    word.strip_prefix('[')
        .and_then(|w| w.strip_suffix(']'))
        .is_some_and(|inner| !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == '/' || c == '%'))
}

/// A list item's text, if `line` starts one: its bullet (`-`, `+`, or `*` when indented) or
/// counter (`1.`, `1)`) and checkbox left out (a counter kept), a description's `term ::`
/// written `term:`.
fn item_text(line: &str) -> Option<String> {
    let content = line.trim_start();
    let indented = content.len() < line.len();
    let (marker, rest) = content.split_once(' ')?;
    let bullet = marker == "-" || marker == "+" || (marker == "*" && indented);
    let counter = marker.strip_suffix(['.', ')']).is_some_and(|n| {
        !n.is_empty()
            && n.len() <= 9
            && (n.chars().all(|c| c.is_ascii_digit()) || (n.len() == 1 && n.chars().all(|c| c.is_ascii_alphabetic())))
    });
    if !(bullet || counter) || rest.trim().is_empty() {
        return None;
    }
    let rest = rest.trim_start();
    let rest = ["[ ] ", "[X] ", "[x] ", "[-] "]
        .iter()
        .find_map(|b| rest.strip_prefix(b))
        .unwrap_or(rest);
    let rest = match rest.split_once(" :: ") {
        Some((term, text)) if bullet => format!("{term}: {text}"),
        _ => rest.to_string(),
    };
    Some(match counter {
        true => format!("{marker} {rest}"),
        false => rest,
    })
}

/// `text` with Org's inline markup taken off: links shown by their description (`[[url][the
/// site]]`) or their target, footnote references (`[fn:1]`) left out, then emphasis marks
/// (`*bold*`, `/italic/`, `_underline_`, `=verbatim=`, `~code~`, `+strike+`). Each search
/// ahead is bounded, so the time is linear in the text.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("[[") {
            if let Some(p) = find_near(text, i + 2, "]]", 2048) {
                let link = &rest[2..2 + p];
                let shown = match link.split_once("][") {
                    Some((_, description)) => description,
                    None => link,
                };
                out.push_str(shown);
                i += p + 4;
                continue;
            }
        }
        if rest.starts_with("[fn:") {
            if let Some(p) = find_near(text, i + 4, "]", 64) {
                if !rest[4..4 + p].contains(' ') {
                    i += p + 5;
                    continue;
                }
            }
        }
        let c = rest.chars().next().expect("within the text");
        out.push(c);
        i += c.len_utf8();
    }
    strip_paired_marks(&out, &["*", "/", "_", "=", "~", "+"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{document_of, Block};

    const NOTES: &str = "\
#+TITLE: Harbour Notes
#+FILETAGS: :harbour:ops:
#+TODO: TODO WAIT | DONE

# A comment.

* Berths
The harbour keeps /twelve/ berths; see [[https://example.org/port][the port site]][fn:1].

** TODO [#A] Fees [1/2]                                      :money:
:PROPERTIES:
:OWNER: Ada
:END:
SCHEDULED: <2026-12-04 Fri>

| Berth | Fee  |
|-------+------|
| North | 12 € |

#+BEGIN_SRC python
def fee(length):
    return 12 * length
#+END_SRC

#+begin_comment
Not read.
#+end_comment

* WAIT Mooring
1. Come alongside.
2. Make fast the lines.
- [X] Check the nets.
- radio :: channel 12
#+begin_quote
Bow line first.
#+end_quote
: moor --berth 4

[fn:1] The site is in English.
";

    #[test]
    fn headlines_keywords_blocks_tables_and_inline_markup() {
        let doc = document_of("notes.org", NOTES.to_string());
        assert_eq!(doc.title, "Harbour Notes");
        assert_eq!(doc.tags, ["harbour", "ops"]);
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Berths",
                "The harbour keeps twelve berths; see the port site.",
                "Fees",
                "Berth | Fee\nNorth | 12 €",
                "def fee(length):\n    return 12 * length",
                "Mooring",
                "1. Come alongside.",
                "2. Make fast the lines.",
                "Check the nets.",
                "radio: channel 12",
                "Bow line first.",
                "moor --berth 4",
                "The site is in English.",
            ]
        );
        let path = |b: &Block| b.heading_path.join(" / ");
        assert_eq!(path(&doc.blocks[3]), "Berths / Fees");
        assert_eq!(doc.blocks[3].kind, ContentType::Table);
        assert_eq!(path(&doc.blocks[6]), "Mooring");
    }

    #[test]
    fn inline_markup_in_linear_time() {
        assert_eq!(
            inline("a =verbatim= and ~code~ at /usr/bin/ 3/4"),
            "a verbatim and code at usr/bin 3/4"
        );
        assert_eq!(inline("[[file:notes.org]] and [[#top][Top]]"), "file:notes.org and Top");
        let hostile = "[[a [fn:b *c /d ".repeat(20_000);
        let read = inline(&hostile);
        for letter in ['a', 'b', 'c', 'd'] {
            assert_eq!(read.matches(letter).count(), 20_000, "{letter}");
        }
    }

    #[test]
    fn blocks_nested_deep_need_no_recursion() {
        let deep = "#+begin_quote\n".repeat(200_000) + "Deepest.\n" + &"#+end_quote\n".repeat(200_000);
        let doc = document_of("deep.org", deep);
        assert_eq!(doc.blocks.len(), 1);
        assert_eq!(doc.blocks[0].text, "Deepest.");
    }
}
