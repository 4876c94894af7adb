//! The text an HTML fragment shows (a feed item's description, a note's ENML, a post's body),
//! read without an HTML parser so that it runs in the indexing process in time linear in the
//! fragment: tags taken off, `script` and `style` elements and comments with their content;
//! block elements part paragraphs; headings head the blocks after them and tables are read a
//! row a block, as `html.rs` reads a page; character references decoded last, so `&lt;b&gt;`
//! reads `<b>` as the page shows it.

use super::character_references::decode_character_references;
use super::text::collapse_whitespace;
use super::{Block, ContentType};

/// Elements that part paragraphs.
const BLOCKS: [&str; 24] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "blockquote",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "dd",
    "dt",
    "hr",
    "figure",
];

/// The text `html` shows, its blocks apart by a blank line.
pub(super) fn html_text(html: &str) -> String {
    html_blocks(html)
        .into_iter()
        .map(|block| block.text)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The blocks `html` shows: its paragraphs; headings `h1`-`h6`, each a block heading the
/// blocks after it until one of its level or above; tables a row a block (cells apart by
/// ` | `, a first row of header cells each row's header).
pub(super) fn html_blocks(html: &str) -> Vec<Block> {
    let mut blocks = BlockReader::default();
    read_markup(html, |piece| match piece {
        Piece::Text(text) => blocks.text(text),
        Piece::Tag { name, closing } => blocks.tag(name, closing),
    });
    blocks.finish()
}

/// What the markup is read as: text, and tags by their lower-case names.
enum Piece<'a> {
    Text(&'a str),
    Tag { name: &'a str, closing: bool },
}

/// Reads `html` a piece at a time, in one pass: tags (their names), text; comments and the
/// content of `script` and `style` elements left out.
fn read_markup(html: &str, mut each: impl FnMut(Piece)) {
    let lower = html.to_ascii_lowercase();
    let mut at = 0;
    // Once a `<` has no `>` after it, none after it has: the rest is text.
    let mut closed_tags = true;
    while let Some(offset) = html[at..].find('<') {
        let open = at + offset;
        each(Piece::Text(&html[at..open]));
        let rest = &lower[open..];
        if rest.starts_with("<!--") {
            at = rest.find("-->").map_or(html.len(), |end| open + end + 3);
            continue;
        }
        let is_tag = rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?');
        let end = match is_tag && closed_tags {
            true => rest.find('>'),
            false => None,
        };
        let Some(end) = end else {
            closed_tags &= !is_tag;
            each(Piece::Text("<"));
            at = open + 1;
            continue;
        };
        let tag = &rest[1..end];
        let closing = tag.starts_with('/');
        let name = tag.trim_start_matches('/');
        let name = &name[..name.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(name.len())];
        at = open + end + 1;
        if (name == "script" || name == "style") && !closing {
            // Its content up to its end tag goes with it.
            let closing = format!("</{name}");
            at = lower[at..].find(&closing).map_or(html.len(), |close| {
                let after = at + close;
                lower[after..].find('>').map_or(html.len(), |gt| after + gt + 1)
            });
            continue;
        }
        each(Piece::Tag { name, closing });
    }
    each(Piece::Text(&html[at..]));
}

/// The blocks of a fragment as its pieces come.
#[derive(Default)]
struct BlockReader {
    blocks: Vec<Block>,
    /// Headings open: (level, text), outermost first.
    headings: Vec<(usize, String)>,
    /// The text of the paragraph, heading or table being read.
    current: String,
    /// The level of the heading being read.
    heading: Option<usize>,
    /// Tables open (one in another reads as its cells' text).
    tables: usize,
    table: TableRows,
}

/// The rows of the table being read.
#[derive(Default)]
struct TableRows {
    /// Each row's text and whether its cells are all header cells (None: text outside any
    /// cell, a caption's).
    rows: Vec<(String, Option<bool>)>,
    /// Whether the cells begun in the row being read are all header cells; None before its
    /// first cell.
    header_cells: Option<bool>,
}

impl BlockReader {
    fn text(&mut self, text: &str) {
        match self.tables {
            0 => self.current.push_str(text),
            // A row is a line: a page's layout's line breaks inside one are spaces.
            _ => self
                .current
                .extend(text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c })),
        }
    }

    fn tag(&mut self, name: &str, closing: bool) {
        if self.tables > 0 {
            return self.table_tag(name, closing);
        }
        let level = name
            .strip_prefix('h')
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| (1..=6).contains(l));
        match (level, name) {
            (Some(level), _) if !closing => {
                self.flush();
                self.heading = Some(level);
            }
            (Some(_), _) => self.flush(),
            (None, "table") if !closing => {
                self.flush();
                self.tables = 1;
            }
            // Inside a heading, a block before its text (`<h2><div>Tides</div></h2>`) is
            // part of it; one after its text (a heading never closed) ends it.
            (None, _) if self.heading.is_some() && (name == "br" || self.current.trim().is_empty()) => {
                self.current.push(' ')
            }
            (None, "td" | "th") => self.current.push(' '),
            (None, name) if BLOCKS.contains(&name) => self.flush(),
            _ => {}
        }
    }

    fn table_tag(&mut self, name: &str, closing: bool) {
        match (name, closing) {
            ("table", false) => self.tables += 1,
            ("table", true) => {
                self.tables -= 1;
                if self.tables == 0 {
                    self.end_row();
                    self.flush_table();
                }
            }
            ("tr", false) if self.tables == 1 => self.end_row(),
            ("td" | "th", false) if self.tables == 1 => {
                if self.table.header_cells.is_some() {
                    self.current.push_str(" | ");
                }
                self.table.header_cells = Some(self.table.header_cells.unwrap_or(true) && name == "th");
            }
            _ if BLOCKS.contains(&name) || matches!(name, "td" | "th") => self.current.push(' '),
            _ => {}
        }
    }

    /// The row being read ends (a new one begins, or the table ends).
    fn end_row(&mut self) {
        let row = clean(&std::mem::take(&mut self.current));
        // Empty cells at its end are no text; at its start they keep its cells in their columns.
        let row = row.trim_end_matches(['|', ' ']);
        let header_cells = self.table.header_cells.take();
        if !row.is_empty() {
            self.table.rows.push((row.to_string(), header_cells));
        }
    }

    /// The table read: the text before its first row of cells (a caption) a paragraph, then
    /// its rows' blocks, under its first row of cells where that is of header cells.
    fn flush_table(&mut self) {
        let TableRows { rows: mut captions, .. } = std::mem::take(&mut self.table);
        let path = self.heading_path();
        let first_cells = captions
            .iter()
            .position(|(_, cells)| cells.is_some())
            .unwrap_or(captions.len());
        let rows = captions.split_off(first_cells);
        for (caption, _) in captions {
            self.blocks.push(Block::text(caption, &path));
        }
        let header = match rows.as_slice() {
            [(header, Some(true)), _, ..] => Some(header.clone()),
            _ => None,
        };
        for (row, _) in rows.into_iter().skip(header.is_some() as usize) {
            let mut block = Block::of_kind(row, ContentType::Table, path.clone());
            block.header = header.clone();
            self.blocks.push(block);
        }
    }

    /// The paragraph or heading being read ends.
    fn flush(&mut self) {
        let text = clean(&std::mem::take(&mut self.current));
        match self.heading.take() {
            Some(level) => {
                self.headings.retain(|(l, _)| *l < level);
                if !text.is_empty() {
                    self.headings.push((level, text.clone()));
                    self.blocks.push(Block::text(text, &self.heading_path()));
                }
            }
            None if !text.is_empty() => self.blocks.push(Block::text(text, &self.heading_path())),
            None => {}
        }
    }

    fn heading_path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn finish(mut self) -> Vec<Block> {
        if self.tables > 0 {
            self.end_row();
            self.flush_table();
        }
        self.flush();
        self.blocks
    }
}

/// `text` as it shows: its character references decoded, its white space one space.
fn clean(text: &str) -> String {
    collapse_whitespace(&decode_character_references(text))
}

#[cfg(test)]
mod tests {
    use super::{html_blocks, html_text};
    use crate::parse::ContentType;

    /// Each block as (text, heading path, whether a table row, its header).
    fn shown(html: &str) -> Vec<(String, String, bool, Option<String>)> {
        html_blocks(html)
            .into_iter()
            .map(|b| {
                (
                    b.text,
                    b.heading_path.join(" > "),
                    b.kind == ContentType::Table,
                    b.header,
                )
            })
            .collect()
    }

    fn text(text: &str, path: &str) -> (String, String, bool, Option<String>) {
        (text.into(), path.into(), false, None)
    }

    #[test]
    fn headings_head_the_blocks_after_them_to_one_of_their_level() {
        let html = "<h1>Tides</h1><p>Low water.</p><h2>Spring <b>tides</b></h2><ul><li>Full moon</li><li>New moon</li></ul>\
                    <h2><div>Neap &amp; tides</div></h2>Quarter moons.<h3></h3><p>Still neap.</p><h1>Wind</h1><p>Gusts.</p>";
        assert_eq!(
            shown(html),
            [
                text("Tides", "Tides"),
                text("Low water.", "Tides"),
                text("Spring tides", "Tides > Spring tides"),
                text("Full moon", "Tides > Spring tides"),
                text("New moon", "Tides > Spring tides"),
                text("Neap & tides", "Tides > Neap & tides"),
                text("Quarter moons.", "Tides > Neap & tides"),
                text("Still neap.", "Tides > Neap & tides"),
                text("Wind", "Wind"),
                text("Gusts.", "Wind"),
            ]
        );
        // A heading never closed ends at the next block after its text.
        assert_eq!(
            shown("<h2>Berths<p>Berth A is dredged.</p><p>Berth B is not.</p>"),
            [
                text("Berths", "Berths"),
                text("Berth A is dredged.", "Berths"),
                text("Berth B is not.", "Berths")
            ]
        );
    }

    #[test]
    fn tables_are_read_a_row_a_block_under_their_header_row() {
        let row =
            |text: &str, header: Option<&str>| (text.to_string(), "Depths".to_string(), true, header.map(String::from));
        let html = "<h2>Depths</h2><table><thead><tr><th>Berth</th><th>Depth</th><th>Note</th></tr></thead>\
                    <tbody><tr>\n<td>A</td>\n<td>12 m</td><td></td></tr><tr><td></td><td>9&nbsp;m</td><td>silting</td></tr>\
                    <tr><td>C<td>7 m<p>at low</p>tide<td><table><tr><td>inner</td></tr></table></td></tr><tr><td></td></tr></tbody></table>\
                    <p>After the table.</p>";
        assert_eq!(
            shown(html),
            [
                text("Depths", "Depths"),
                row("A | 12 m", Some("Berth | Depth | Note")),
                row("| 9 m | silting", Some("Berth | Depth | Note")),
                row("C | 7 m at low tide | inner", Some("Berth | Depth | Note")),
                text("After the table.", "Depths"),
            ]
        );
        // Text before the first row (a caption) a paragraph before the rows.
        assert_eq!(
            shown("<table><caption>MP4</caption><tr><th>Segment</th><th>Size</th></tr><tr><td>one</td><td>2 GB</td></tr></table>"),
            [
                text("MP4", ""),
                (
                    "one | 2 GB".to_string(),
                    String::new(),
                    true,
                    Some("Segment | Size".to_string())
                )
            ]
        );
        // No header row: rows alone; a table never closed ends with the fragment.
        assert_eq!(
            shown("<table><tr><td>Pier</td><td>open</td></tr><tr><th>Gate</th><td>shut"),
            [row("Pier | open", None), row("Gate | shut", None)].map(|(t, _, k, h)| (t, String::new(), k, h))
        );
        assert_eq!(
            html_text("<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"),
            "1 | 2"
        );
    }

    #[test]
    fn tags_off_paragraphs_apart_references_decoded() {
        assert_eq!(
            html_text("<p>Low water at <b>06:10</b> &amp; 18:40.</p><script>if (a<b) x()</script><p>Next<br/>line</p><!-- note -->"),
            "Low water at 06:10 & 18:40.\n\nNext\n\nline"
        );
        assert_eq!(html_text("a < b and &lt;b&gt; shown"), "a < b and <b> shown");
        assert_eq!(html_text("plain words"), "plain words");
        assert_eq!(html_text("<style>p{}</style>"), "");
    }

    #[test]
    fn hostile_fragments_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 300_000;
        assert_eq!(html_text(&"<a".repeat(n)).len(), 2 * n);
        assert_eq!(html_text(&"<script>".repeat(n)), "");
        assert_eq!(html_text(&format!("{}x", "<!--".repeat(n))), "");
        assert_eq!(html_text(&"<b>x</b>".repeat(n)).len(), n);
        assert_eq!(html_blocks(&"<h2>x".repeat(n)).len(), n);
        assert_eq!(
            html_blocks(&"<table><tr><td>x".repeat(n)).len(),
            1,
            "tables in tables: their cells' text"
        );
        assert_eq!(html_blocks(&"<td>x</td>".repeat(n)).len(), 1);
        assert_eq!(
            html_blocks(&format!("<table>{}", "<tr><td>x</td><td>y".repeat(n))).len(),
            n
        );
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
}
