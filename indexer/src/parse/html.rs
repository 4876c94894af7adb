//! HTML (scraper/html5ever): the title and the visible text, one block per block-level
//! element, headings h1-h6 giving each block its heading path, tables a row a line, an
//! ordered list's items with the numbers a browser draws before them; script,
//! style and hidden elements are left out, and so are a note's reference mark and its link
//! back (DPUB-ARIA's `doc-noteref` and `doc-backlink`: the `1` after a word, a note's `↩`).

use scraper::{ElementRef, Html, Node, Selector};

use super::html_lists::OpenList;
use super::legacy_encoding::declared_in_html;
use super::text::{collapse_whitespace, declared_by_source, decode_text_declared};
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

const INVISIBLE: &[&str] = &[
    "script", "style", "noscript", "template", "head", "svg", "iframe", "object",
];
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "li",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "form",
    "address",
    "hr",
    "body",
];

/// DPUB-ARIA roles (and EPUB's `epub:type`s) of marks that are not the text: a note's
/// reference (`spring<sup>1</sup>` would read `spring1`) and a note's link back to it.
const MARKS: &[&str] = &["doc-noteref", "doc-backlink", "noteref", "backlink"];

/// Headings open at a point of a page: (level 1-6, text), outermost first.
pub(super) type OpenHeadings = Vec<(usize, String)>;

struct Walker {
    headings: OpenHeadings,
    blocks: Vec<Block>,
    current: String,
    table_depth: usize,
    /// The lists open, innermost last.
    lists: Vec<OpenList>,
    /// List markers (`3. `) waiting for their item's first text, which may be in a block
    /// inside the item (`<li><p>`).
    markers: String,
}

impl Walker {
    fn new(headings: OpenHeadings) -> Self {
        Self {
            headings,
            blocks: Vec::new(),
            current: String::new(),
            table_depth: 0,
            lists: Vec::new(),
            markers: String::new(),
        }
    }

    fn flush(&mut self) {
        let text = collapse_whitespace(&self.current);
        let text = if self.table_depth > 0 {
            self.current
                .lines()
                .map(collapse_whitespace)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            text
        };
        if !text.is_empty() {
            let text = std::mem::take(&mut self.markers) + &text;
            let kind = if self.table_depth > 0 {
                ContentType::Table
            } else {
                ContentType::Text
            };
            let heading_path = self.headings.iter().map(|(_, h)| h.clone()).collect();
            self.blocks.push(Block {
                text,
                heading_path,
                kind,
                ..Default::default()
            });
        }
        self.current.clear();
    }

    /// Walks the tree under `root` in document order with a stack of its own (a page can
    /// nest elements as deep as it likes: 100,000 unclosed `<b>` make a tree that deep).
    fn walk(&mut self, root: ElementRef<'_>) {
        enum Step<'a> {
            Enter(ElementRef<'a>),
            Text(&'a str),
            Leave(&'a str),
        }
        let mut steps = vec![Step::Enter(root)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Text(text) => self.push_text(text),
                Step::Leave(name) => self.leave(name),
                Step::Enter(element) => {
                    if !self.enter(element) {
                        continue;
                    }
                    steps.push(Step::Leave(element.value().name()));
                    // Children in reverse, so the first is taken first.
                    let first_step = steps.len();
                    for child in element.children() {
                        match child.value() {
                            Node::Text(text) => steps.push(Step::Text(text)),
                            Node::Element(_) => steps.extend(ElementRef::wrap(child).map(Step::Enter)),
                            _ => {}
                        }
                    }
                    steps[first_step..].reverse();
                }
            }
        }
    }

    /// A text node's text. Inside a table a row is a line, so the line breaks of a page's
    /// layout (`<tr>\n<td>a</td>\n<td>b</td>`) are spaces there.
    fn push_text(&mut self, text: &str) {
        match self.table_depth {
            0 => self.current.push_str(text),
            _ => self
                .current
                .extend(text.chars().map(|c| if c.is_whitespace() { ' ' } else { c })),
        }
    }

    /// Opens `element`; false when its content is not walked (invisible, a note's mark, or a
    /// heading, taken whole here).
    fn enter(&mut self, element: ElementRef<'_>) -> bool {
        let name = element.value().name();
        let is_mark = |attribute| {
            element
                .value()
                .attr(attribute)
                .is_some_and(|v| v.split_whitespace().any(|v| MARKS.contains(&v)))
        };
        if INVISIBLE.contains(&name)
            || element.value().attr("hidden").is_some()
            || element.value().attr("aria-hidden") == Some("true")
            || is_mark("role")
            || is_mark("epub:type")
        {
            return false;
        }
        if let Some(level) = name
            .strip_prefix('h')
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| (1..=6).contains(l))
        {
            self.flush();
            let mut title = element
                .text()
                .collect::<Vec<_>>()
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if !title.is_empty() {
                title = std::mem::take(&mut self.markers) + &title;
            }
            self.headings.retain(|(l, _)| *l < level);
            self.headings.push((level, title.clone()));
            if !title.is_empty() {
                let path = self.headings.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>();
                self.blocks.push(Block::text(title, &path));
            }
            return false;
        }
        if name == "table" {
            self.flush();
            self.table_depth += 1;
        } else if BLOCKS.contains(&name) && self.table_depth == 0 {
            self.flush();
        }
        if let Some(list) = OpenList::open(element) {
            self.lists.push(list);
        } else if name == "li" {
            let marker = self.lists.last_mut().and_then(|list| list.marker(element));
            match (marker, self.table_depth) {
                (Some(marker), 0) => self.markers.push_str(&marker),
                (Some(marker), _) => self.current.push_str(&marker),
                (None, _) => {}
            }
        }
        true
    }

    /// Closes the element `name` once its content is walked.
    fn leave(&mut self, name: &str) {
        let is_block = BLOCKS.contains(&name);
        match name {
            "br" if self.table_depth > 0 => self.current.push(' '),
            "br" => self.current.push('\n'),
            "td" | "th" => self.current.push_str(" | "),
            "tr" => {
                let trimmed = self.current.trim_end_matches([' ', '|']).len();
                self.current.truncate(trimmed);
                self.current.push('\n');
            }
            _ if is_block => self.current.push(' '),
            _ => {}
        }
        if name == "table" {
            self.flush();
            self.table_depth -= 1;
        } else if is_block && self.table_depth == 0 {
            self.flush();
        }
        match name {
            "ol" | "ul" | "menu" => {
                self.lists.pop();
            }
            // An item with no text: its number is not shown before the next one's.
            "li" => self.markers.clear(),
            _ => {}
        }
    }
}

/// What one page holds: its `<title>`, its first heading, its blocks.
pub(super) struct Page {
    pub title: Option<String>,
    pub first_heading: Option<String>,
    pub blocks: Vec<Block>,
}

/// Reads one page's visible text (an EPUB's chapters are pages too).
pub(super) fn read_page(text: &str) -> Page {
    let html = Html::parse_document(text);
    let title_selector = Selector::parse("title").expect("static selector");
    let title = html
        .select(&title_selector)
        .next()
        .map(|t| {
            t.text()
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|t| !t.is_empty());
    let mut walker = Walker::new(Vec::new());
    walker.walk(html.root_element());
    walker.flush();
    Page {
        title,
        first_heading: walker.headings.first().map(|(_, h)| h.clone()),
        blocks: walker.blocks,
    }
}

/// Reads a piece of HTML met inside another format (a Markdown file's HTML blocks) under
/// the headings open there: its blocks, and the headings open after it.
pub(super) fn read_fragment(text: &str, headings: OpenHeadings) -> (Vec<Block>, OpenHeadings) {
    let html = Html::parse_fragment(text);
    let mut walker = Walker::new(headings);
    walker.walk(html.root_element());
    walker.flush();
    (walker.blocks, walker.headings)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    // The source's charset before the page's own, as the HTML standard has a transport's.
    let declared = declared_by_source(raw).or_else(|| declared_in_html(&raw.bytes));
    let text = decode_text_declared(&raw.bytes, declared)?;
    let page = read_page(&text);
    let title = page
        .title
        .or(page.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, page.blocks)))
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, ContentType};

    #[test]
    fn visible_text_title_and_headings() {
        let page = r#"<!doctype html><html><head><title> GPU  Search </title><style>p{}</style></head>
            <body><script>var secret = 1;</script><h1>Overview</h1><p>Vectors are <b>fast</b>.</p>
            <div hidden>invisible text</div><h2>Tables</h2><table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>
            <p>End.</p></body></html>"#;
        let doc = document_of("page.html", page);
        assert_eq!(doc.title, "GPU Search");
        let all: String = doc
            .blocks
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !all.contains("secret") && !all.contains("invisible") && !all.contains("p{}"),
            "{all}"
        );
        let para = doc
            .blocks
            .iter()
            .find(|b| b.text == "Vectors are fast.")
            .expect("paragraph block");
        assert_eq!(para.heading_path, ["Overview"]);
        let table = doc.blocks.iter().find(|b| b.kind == ContentType::Table).unwrap();
        assert_eq!(table.text, "k | v\n1 | 2");
        assert_eq!(table.heading_path, ["Overview", "Tables"]);
    }

    /// A table laid out over lines, as pages are written (a row's cells each on a line, a
    /// cell's text broken): a row is still one line. Notes' reference marks and their links
    /// back are not text (pandoc's and EPUB's DPUB-ARIA roles).
    #[test]
    fn a_table_over_many_lines_and_notes_marks() {
        let page = "<html><body><h1>Piers</h1><p>The pier opens in spring<a href=\"#fn1\" role=\"doc-noteref\"><sup>1</sup></a> after the dredging.</p>
            <table>
            <thead>
            <tr>
            <th>berth</th>
            <th>depth</th>
            </tr>
            </thead>
            <tbody>
            <tr>
            <td>A<a href=\"#fn2\" class=\"footnote-ref\" epub:type=\"noteref\"><sup>2</sup></a></td>
            <td>12
              m<br>at low tide</td>
            </tr>
            </tbody>
            </table>
            <section role=\"doc-endnotes\"><ol><li id=\"fn1\"><p>Subject to inspection.<a href=\"#fnref1\" role=\"doc-backlink\">\u{21a9}\u{fe0e}</a></p></li></ol></section>
            </body></html>";
        let doc = document_of("notes.html", page);
        let blocks: Vec<(&str, ContentType)> = doc.blocks.iter().map(|b| (b.text.as_str(), b.kind)).collect();
        assert_eq!(
            blocks,
            [
                ("Piers", ContentType::Text),
                ("The pier opens in spring after the dredging.", ContentType::Text),
                ("berth | depth\nA | 12 m at low tide", ContentType::Table),
                ("1. Subject to inspection.", ContentType::Text),
            ]
        );
    }

    /// Deep pages are walked without the native stack (a recursive walk overflowed a
    /// thread's 2 MiB at a few thousand): 20,000 unclosed elements of each kind. (html5ever
    /// takes time quadratic in the depth of some, `<div>` and `<li>`: 1 s and 2.5 s here; the
    /// parse deadline bounds deeper ones.)
    #[test]
    fn pages_nested_twenty_thousand_deep() {
        for open in ["<div>", "<b>", "<table><tr><td>", "<ul><li>"] {
            let page = format!("<html><body>{}deep text</body></html>", open.repeat(20_000));
            let doc = document_of("deep.html", page);
            assert!(
                doc.blocks.iter().any(|b| b.text.contains("deep text")),
                "{open}: {:?}",
                doc.blocks
            );
        }
    }

    /// Ordered lists as a browser numbers them: `start`, `type`, `reversed` (counting down
    /// from its own items, not a nested list's), an item's `value`; an item's number before
    /// its first text wherever that is (a paragraph, a heading, a nested list's item); bullet
    /// lists, lists whose markers an inline style hides, and empty items give no number (an
    /// item holding only a list shows its number on its first line, as a browser does).
    #[test]
    fn ordered_lists_are_numbered_as_a_browser_draws_them() {
        let page = "<html><body>\
            <ol start=\"3\"><li>Moor.</li><li value=\"7\"><p>Check the nets.</p>\
              <ol type=\"a\"><li>Top</li><li>Bottom</li></ol></li><li>Stow.</li></ol>\
            <ol reversed><li>three</li><li><ul><li>bullet</li><li>bullet</li></ul></li><li>one</li></ol>\
            <ol type=\"I\" start=\"-1\"><li>minus one</li><li>zero</li><li>one</li><li><h3>Fees</h3><p>Due monthly.</p></li></ol>\
            <ol style=\"list-style-type: none\"><li>plain</li></ol>\
            <ol><li></li><li>second</li><li><ol start=\"5\"><li>nested first</li></ol></li></ol>\
            <table><tr><td><ol><li>cell one</li><li>cell two</li></ol></td></tr></table>\
            <p>after</p></body></html>";
        let doc = document_of("steps.html", page);
        let blocks: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            blocks,
            [
                "3. Moor.",
                "7. Check the nets.",
                "a. Top",
                "b. Bottom",
                "8. Stow.",
                "3. three",
                "2. bullet",
                "bullet",
                "1. one",
                "-1. minus one",
                "0. zero",
                "I. one",
                "II. Fees",
                "Due monthly.",
                "plain",
                "2. second",
                "3. 5. nested first",
                "1. cell one 2. cell two",
                "after",
            ]
        );
        let fees = doc.blocks.iter().find(|b| b.text == "Due monthly.").unwrap();
        assert_eq!(fees.heading_path, ["II. Fees"]);
    }
}
