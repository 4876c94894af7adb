//! Markdown (pulldown-cmark): one block per paragraph, list item, code block or table,
//! each with its heading path; an ordered list's items numbered as they are shown (from
//! the list's first number up, whatever numbers the later items are written with); HTML
//! blocks read for their visible text, inline tags left out; front matter `title:` and
//! `tags:` are honoured.

use pulldown_cmark::{Event, Options, Parser as MdParser, Tag, TagEnd};

use super::html::{read_fragment, OpenHeadings};
use super::text::decode_raw_text;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Splits `---\n...\n---` front matter off the top; returns (key/values, body).
fn split_front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (Vec::new(), text);
    };
    let Some(end) = rest.find("\n---") else {
        return (Vec::new(), text);
    };
    let fields = rest[..end]
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect();
    let body = rest[end + 4..].trim_start_matches(['-', '\r', '\n']);
    (fields, body)
}

fn parse_tag_list(value: &str) -> Vec<String> {
    value
        .trim_matches(['[', ']'])
        .split(',')
        .map(|t| t.trim().trim_matches(['"', '\'']).to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// A Markdown file's reading state: the blocks so far, the headings open, the text of the
/// block being read and the list numbers waiting for their item's text.
#[derive(Default)]
struct Reader {
    blocks: Vec<Block>,
    headings: OpenHeadings,
    current: String,
    /// Each open list's next number (none for a bullet list), innermost last.
    lists: Vec<Option<u64>>,
    /// List markers (`3. `) waiting for their item's first text, which may be in a
    /// paragraph inside the item.
    markers: String,
    /// The HTML block being read, if one is.
    html: Option<String>,
    in_heading: Option<usize>,
    in_table: bool,
    first_h1: Option<String>,
}

impl Reader {
    fn flush(&mut self, kind: ContentType) {
        let text = self.current.trim();
        if !text.is_empty() {
            self.blocks.push(Block {
                text: std::mem::take(&mut self.markers) + text,
                heading_path: self.heading_path(),
                kind,
                ..Default::default()
            });
        }
        self.current.clear();
    }

    fn heading_path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn open_heading(&mut self, level: usize, title: String) {
        if level == 1 && self.first_h1.is_none() && !title.is_empty() {
            self.first_h1 = Some(title.clone());
        }
        self.headings.retain(|(l, _)| *l < level);
        self.headings.push((level, title.clone()));
        if !title.is_empty() {
            self.blocks.push(Block::text(title, &self.heading_path()));
        }
    }

    /// An HTML block read for its visible text, its headings opening as Markdown's do.
    fn read_html(&mut self, html: &str) {
        let (blocks, headings) = read_fragment(html, std::mem::take(&mut self.headings));
        if self.first_h1.is_none() {
            self.first_h1 = headings
                .iter()
                .find(|(level, title)| *level == 1 && !title.is_empty())
                .map(|(_, h)| h.clone());
        }
        self.blocks.extend(blocks);
        self.headings = headings;
    }

    fn read(&mut self, event: Event<'_>) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.flush(ContentType::Text);
                self.in_heading = Some(level as usize);
            }
            Event::End(TagEnd::Heading(_)) => {
                let level = self.in_heading.take().unwrap_or(1);
                let title = self.current.trim().to_string();
                self.current.clear();
                let title = match title.is_empty() {
                    true => title,
                    false => std::mem::take(&mut self.markers) + &title,
                };
                self.open_heading(level, title);
            }
            Event::Start(Tag::Table(_)) => {
                self.flush(ContentType::Text);
                self.in_table = true;
            }
            Event::End(TagEnd::Table) => {
                self.flush(ContentType::Table);
                self.in_table = false;
            }
            Event::End(TagEnd::TableCell) => self.current.push_str(" | "),
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                let trimmed = self.current.trim_end_matches([' ', '|']).len();
                self.current.truncate(trimmed);
                self.current.push('\n');
            }
            // A list inside an item starts after the item's own text.
            Event::Start(Tag::List(start)) => {
                self.flush(ContentType::Text);
                self.lists.push(start);
            }
            Event::End(TagEnd::List(_)) => {
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                if let Some(Some(number)) = self.lists.last_mut() {
                    self.markers.push_str(&format!("{number}. "));
                    *number = number.saturating_add(1);
                }
            }
            Event::End(TagEnd::Item) => {
                self.flush(ContentType::Text);
                self.markers.clear();
            }
            Event::End(TagEnd::Paragraph | TagEnd::CodeBlock | TagEnd::BlockQuote(_)) if !self.in_table => {
                self.flush(ContentType::Text)
            }
            Event::Start(Tag::HtmlBlock) => {
                self.flush(ContentType::Text);
                self.html = Some(String::new());
            }
            Event::Html(html) => self.html.get_or_insert_default().push_str(&html),
            Event::End(TagEnd::HtmlBlock) => {
                let html = self.html.take().unwrap_or_default();
                self.read_html(&html);
            }
            // Inline tags are markup, not text (the text between them comes as text); a line
            // break is one.
            Event::InlineHtml(tag) if is_line_break(&tag) => match self.in_table {
                true => self.current.push(' '),
                false => self.current.push('\n'),
            },
            Event::Text(t) | Event::Code(t) => self.current.push_str(&t),
            Event::SoftBreak | Event::HardBreak => self.current.push('\n'),
            _ => {}
        }
    }
}

/// `<br>`, `<br/>`, `<BR >`.
fn is_line_break(tag: &str) -> bool {
    let name = tag
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_end_matches('/')
        .trim();
    name.eq_ignore_ascii_case("br")
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    Ok(Parsed::one(read_markdown(raw, &text)))
}

/// `text`, the Markdown of the file `raw` (or what it shows, as a notebook's), as a document.
pub(super) fn read_markdown(raw: &RawDocument, text: &str) -> Document {
    let (front_matter, body) = split_front_matter(text);
    let mut reader = Reader::default();
    // Footnotes: a reference's mark is left out (as every format's note marks are), a
    // definition's text is read where it is written. A task list's checkbox is left out.
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_FOOTNOTES | Options::ENABLE_TASKLISTS;
    for event in MdParser::new_ext(body, options) {
        reader.read(event);
    }
    reader.flush(ContentType::Text);
    let Reader { blocks, first_h1, .. } = reader;

    let field = |name: &str| {
        front_matter
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let title = field("title").or(first_h1).unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, blocks);
    document.tags = field("tags").map(|v| parse_tag_list(&v)).unwrap_or_default();
    for (key, value) in front_matter
        .into_iter()
        .filter(|(k, _)| !matches!(k.as_str(), "title" | "tags"))
    {
        document.metadata.insert(key, serde_json::Value::String(value));
    }
    document
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, ContentType};

    const DOC: &str = "---\ntitle: Guide\ntags: [gpu, search]\nowner: ops\n---\n# Intro\n\nFirst para.\n\n## Setup\n\nInstall it.\n\n- item one\n- item two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n# Usage\n\nRun it.\n";

    #[test]
    fn heading_paths_front_matter_and_tables() {
        let doc = document_of("guide.md", DOC);
        assert_eq!(doc.title, "Guide");
        assert_eq!(doc.tags, ["gpu", "search"]);
        assert_eq!(doc.metadata["owner"], "ops");
        let find = |t: &str| {
            doc.blocks
                .iter()
                .find(|b| b.text.contains(t))
                .unwrap_or_else(|| panic!("{t} in {:?}", doc.blocks))
        };
        assert_eq!(find("First para").heading_path, ["Intro"]);
        assert_eq!(find("Install").heading_path, ["Intro", "Setup"]);
        assert_eq!(find("item two").heading_path, ["Intro", "Setup"]);
        assert_eq!(find("Run it").heading_path, ["Usage"]);
        let table = find("1 | 2");
        assert_eq!(table.kind, ContentType::Table);
        assert_eq!(table.text, "a | b\n1 | 2");
    }

    #[test]
    fn title_falls_back_to_first_h1_then_file_stem() {
        let doc = document_of("x/notes.md", "# Hello\n\ntext");
        assert_eq!(doc.title, "Hello");
        let doc = document_of("x/notes.md", "just text");
        assert_eq!(doc.title, "notes");
    }

    #[test]
    fn footnote_marks_and_task_boxes_are_left_out() {
        let texts = crate::parse::block_texts_of(
            "notes.md",
            "Moor at berth four[^berth].\n\n- [x] Check the nets.\n- [ ] Call the office.\n\n[^berth]: The north quay.\n",
        );
        assert_eq!(
            texts,
            [
                "Moor at berth four.",
                "Check the nets.",
                "Call the office.",
                "The north quay."
            ]
        );
    }

    /// A README as such files are written: a banner heading holding only a picture (not the
    /// title), a centred logo and title in HTML, inline tags,
    /// a list whose items are all written `1.` starting at 3, a nested list, a loose list,
    /// a `<details>` block around Markdown.
    #[test]
    fn ordered_lists_are_numbered_and_html_is_read_for_its_text() {
        let readme = "<h1><img src=\"banner.png\"></h1>\n\n<p align=\"center\">\n  <img src=\"logo.png\" alt=\"logo\" width=\"200\">\n</p>\n<h1 align=\"center\">Harbour</h1>\n\n\
            Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop<br>the tide table.\n\n\
            ## Mooring\n\n\
            3. Moor the boat.\n1. Check the nets.\n   1. Top nets\n   1. Bottom nets\n1. \n\n\
            - a bullet\n\n\
            1. First loose step.\n\n   Its second paragraph.\n\n2. Second loose step.\n\n\
            <details>\n<summary>Dredging</summary>\n\n\
            Every spring.\n\n</details>\n";
        let doc = document_of("README.md", readme);
        assert_eq!(doc.title, "Harbour");
        let blocks: Vec<(&str, Vec<&str>)> = doc
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.iter().map(String::as_str).collect()))
            .collect();
        let mooring = vec!["Harbour", "Mooring"];
        assert_eq!(
            blocks,
            [
                ("Harbour", vec!["Harbour"]),
                ("Press Ctrl+C to stop\nthe tide table.", vec!["Harbour"]),
                ("Mooring", mooring.clone()),
                ("3. Moor the boat.", mooring.clone()),
                ("4. Check the nets.", mooring.clone()),
                ("1. Top nets", mooring.clone()),
                ("2. Bottom nets", mooring.clone()),
                ("a bullet", mooring.clone()),
                ("1. First loose step.", mooring.clone()),
                ("Its second paragraph.", mooring.clone()),
                ("2. Second loose step.", mooring.clone()),
                ("Dredging", mooring.clone()),
                ("Every spring.", mooring.clone()),
            ]
        );
    }
}
