//! MediaWiki's wikitext (`.wiki`, `.mediawiki`, `.wikitext`, and each page of a MediaWiki XML
//! dump: [`super::wiki_dump`]) read for what the wiki shows: `== Section ==` headings as
//! heading paths; paragraphs and list items (`*` bullets left out, `#` items numbered, `; term
//! : definition` as `term: definition`) as blocks; tables (`{| ... |}`, cell attributes left
//! out, a table inside a cell read into that cell) as table blocks after their caption;
//! preformatted lines (a leading space), `<pre>` and `<syntaxhighlight>` as literal blocks;
//! templates, references and comments left out; links by their text and category links as
//! the document's tags ([`super::wikitext_markup`]). It runs in this process: every step is
//! linear in the page, none recursive.

use super::markup_body::{literal_text, table_text, LineReader, MarkupBody};
use super::text::{collapse_whitespace, decode_raw_text};
use super::wikitext_markup::{inline, segments, LinkNames, Segment};
use super::wikitext_templates::without_templates;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// A `.wiki` file: one page, titled by its file's name (a wiki keeps a page's title outside
/// its text).
pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let page = read_wikitext(&text, &LinkNames::default());
    let mut document = Document::from_raw(raw, Document::stem_of(raw).replace('_', " "), page.blocks);
    document.tags = page.categories;
    Ok(Parsed::one(document))
}

/// What a page shows, and the categories its links put it in.
pub(super) struct WikiPage {
    pub blocks: Vec<Block>,
    pub categories: Vec<String>,
}

/// A page's wikitext read; `names` are its wiki's names for the file and category namespaces.
pub(super) fn read_wikitext(text: &str, names: &LinkNames) -> WikiPage {
    let mut reader = Reader {
        names,
        body: MarkupBody::default(),
        categories: Vec::new(),
        numbers: Vec::new(),
        in_item: false,
        table: None,
    };
    // A table or a paragraph goes on past a literal block inside it (code in a table's cell).
    for segment in segments(text) {
        match segment {
            Segment::Wikitext(text) => {
                let text = without_templates(&text);
                let lines: Vec<&str> = text.lines().collect();
                let mut i = 0;
                while i < lines.len() {
                    i = reader.step(&lines, i);
                }
            }
            Segment::Literal(text) => match reader.table.as_mut() {
                Some(table) => table.go_on(&collapse_whitespace(&text)),
                None => {
                    reader.end_paragraph();
                    reader.body.push(text, ContentType::Text);
                }
            },
        }
    }
    reader.end_paragraph();
    WikiPage {
        blocks: reader.body.blocks,
        categories: reader.categories,
    }
}

struct Reader<'n> {
    names: &'n LinkNames,
    body: MarkupBody,
    categories: Vec<String>,
    /// The numbers of the `#` items open, by depth.
    numbers: Vec<u32>,
    /// Whether the paragraph being read is a list item.
    in_item: bool,
    table: Option<Table>,
}

/// A table being read: its rows of cells (markup not yet read) and its caption.
#[derive(Default)]
struct Table {
    /// Tables open: the one being read and those inside its cells.
    depth: usize,
    rows: Vec<Vec<String>>,
    caption: Vec<String>,
}

impl Table {
    fn row(&mut self) -> &mut Vec<String> {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        self.rows.last_mut().expect("a row")
    }

    /// Text that goes on with the current cell (a line after it, a table inside it).
    fn go_on(&mut self, text: &str) {
        let row = self.row();
        match row.last_mut() {
            Some(cell) => {
                cell.push(' ');
                cell.push_str(text);
            }
            None => row.push(text.to_string()),
        }
    }

    /// A line of cells, `!` header cells (`!!` between them) or `|` ones (`||`).
    fn cells(&mut self, line: &str) {
        let (cells, header) = match line.strip_prefix('!') {
            Some(rest) => (rest, true),
            None => (&line[1..], false),
        };
        let split: Vec<&str> = match header {
            true => cells.split("!!").flat_map(|c| c.split("||")).collect(),
            false => cells.split("||").collect(),
        };
        if self.depth > 1 {
            let text: Vec<&str> = split.into_iter().map(without_attributes).collect();
            self.go_on(&text.join(" "));
            return;
        }
        let row = self.row();
        row.extend(split.into_iter().map(|c| without_attributes(c).to_string()));
    }
}

/// A cell's text without the attributes before its single `|` (`style="..." | text`).
fn without_attributes(cell: &str) -> &str {
    let bar = cell.find('|');
    let link = cell.find("[[").unwrap_or(cell.len());
    match bar {
        Some(bar) if bar < link && cell[..bar].contains('=') => &cell[bar + 1..],
        _ => cell,
    }
    .trim()
}

/// A paragraph's text with the spaces left where markup was taken out (`a <ref/> b`) made one,
/// and the brackets a left-out template leaves empty (`Bodmin ({{IPA|...}})`) taken away.
fn without_space_runs(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty() && *w != "()").collect();
            words.join(" ").replace(" ()", "").replace("()", "")
        })
        .filter(|line| !line.is_empty())
        .collect();
    lines.join("\n")
}

/// A heading line's level and text (`== History ==`: 2, `History`).
fn heading(line: &str) -> Option<(usize, &str)> {
    let lead = line.bytes().take_while(|b| *b == b'=').count();
    let trail = line.bytes().rev().take_while(|b| *b == b'=').count();
    let level = lead.min(trail).min(6);
    (level > 0 && line.len() > 2 * level).then(|| (level, line[level..line.len() - level].trim()))
}

impl Reader<'_> {
    fn inline(&mut self, text: &str) -> String {
        inline(text, self.names, &mut self.categories)
    }

    /// A list item (its marks `*#:;` before `text`): numbered if its last mark is `#`, a
    /// term and its definition joined by `: `.
    fn item(&mut self, marks: &str, text: &str) {
        let depth = marks.len();
        self.numbers.truncate(depth);
        let text = match marks.as_bytes()[depth - 1] {
            b'#' => {
                self.numbers.resize(depth, 0);
                let number = &mut self.numbers[depth - 1];
                *number = number.saturating_add(1);
                format!("{number}. {text}")
            }
            b';' => {
                self.numbers.truncate(depth - 1);
                match text.split_once(" : ") {
                    Some((term, definition)) => format!("{}: {}", term.trim(), definition.trim()),
                    None => text.to_string(),
                }
            }
            _ => {
                self.numbers.truncate(depth - 1);
                text.to_string()
            }
        };
        self.end_paragraph();
        self.in_item = true;
        self.body.line(&text);
    }

    /// A line of the table being read.
    fn table_line(&mut self, line: &str) {
        let table = self.table.as_mut().expect("a table");
        if line.starts_with("{|") {
            table.depth += 1;
        } else if line.starts_with("|}") {
            table.depth -= 1;
            if table.depth == 0 {
                self.end_table();
            }
        } else if table.depth == 1 && line.starts_with("|+") {
            table.caption.push(without_attributes(&line[2..]).to_string());
        } else if line.starts_with("|-") {
            if table.depth == 1 {
                table.rows.push(Vec::new());
            }
        } else if line.starts_with(['|', '!']) {
            table.cells(line);
        } else if !line.is_empty() {
            table.go_on(line);
        }
    }

    /// The table being read ends: its caption, then its rows, each a block.
    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let caption = self.inline(&table.caption.join(" "));
        self.body.push(caption, ContentType::Text);
        let rows: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|row| row.iter().map(|cell| self.inline(cell)).collect())
            .collect();
        self.body.push(table_text(&rows), ContentType::Table);
    }
}

impl LineReader for Reader<'_> {
    fn end_paragraph(&mut self) {
        let (names, categories) = (self.names, &mut self.categories);
        self.body
            .end_paragraph(|text| without_space_runs(&inline(text, names, categories)));
        self.in_item = false;
        self.end_table();
    }

    fn step(&mut self, lines: &[&str], i: usize) -> usize {
        let line = lines[i].trim_end();
        let content = line.trim_start();
        if self.table.is_some() {
            self.table_line(content);
            return i + 1;
        }
        if content.starts_with("{|") {
            self.end_paragraph();
            self.numbers.clear();
            self.table = Some(Table {
                depth: 1,
                ..Default::default()
            });
            return i + 1;
        }
        if content.is_empty() {
            self.end_paragraph();
            self.numbers.clear();
            return i + 1;
        }
        if let Some((level, title)) = heading(content) {
            self.end_paragraph();
            self.numbers.clear();
            let title = self.inline(title);
            self.body.heading(level, title);
            return i + 1;
        }
        if content.len() >= 4 && content.bytes().all(|b| b == b'-') {
            self.end_paragraph();
            return i + 1; // a horizontal rule
        }
        if line.starts_with(' ') {
            self.end_paragraph();
            let end = (i..lines.len())
                .find(|&j| !lines[j].starts_with(' ') || lines[j].trim().is_empty())
                .unwrap_or(lines.len());
            let preformatted: Vec<String> = lines[i..end].iter().map(|l| self.inline(&l[1..])).collect();
            let preformatted: Vec<&str> = preformatted.iter().map(String::as_str).collect();
            self.body.push(literal_text(&preformatted), ContentType::Text);
            return end;
        }
        let marks = line.bytes().take_while(|b| b"*#:;".contains(b)).count();
        if marks > 0 {
            self.item(&line[..marks], line[marks..].trim());
            return i + 1;
        }
        self.numbers.clear();
        if self.in_item {
            self.end_paragraph();
        }
        self.body.line(line);
        i + 1
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, outline_of, ContentType};

    const ARTICLE: &str = "{{Infobox software\n| name = Quarry\n| license = {{MIT}}\n}}\n\
'''Quarry''' ({{IPA|kwɒri}}) is a [[batch processing|batch]] indexer.<ref>{{cite web|url=https://x}}</ref>\n\
It runs nightly.\n\
\n\
== Features ==\n\
* Parses [[PDF]]s\n\
** and ''nested'' items\n\
# First step\n\
# Second step\n\
#: a note\n\
# Third step\n\
; Term : its definition\n\
\n\
=== Speed ===\n\
\x20cargo build --release\n\
\x20  quarry index\n\
{| class=\"wikitable\"\n\
|+ Measured [[throughput]]\n\
! Machine !! Tokens/s\n\
|-\n\
| style=\"text-align:right\" | H100 || 6.35 M\n\
|-\n\
| CPU\n\
|\n\
{|\n\
| inner || cell\n\
|}\n\
|-\n\
| GPU || <pre>--features\ncuda</pre>\n\
|}\n\
<syntaxhighlight lang=\"bash\">\nquarry serve\n</syntaxhighlight>\n\
----\n\
== See also ==\n\
[[File:Quarry.png|thumb|The quarry [[logo]]]]\n\
[[Category:Search software]] [[fr:Quarry]]";

    #[test]
    fn an_article_reads_as_the_wiki_shows_it() {
        let document = document_of("Quarry_indexer.wiki", ARTICLE);
        assert_eq!(document.title, "Quarry indexer");
        assert_eq!(document.tags, ["Search software"]);
        let features = vec!["Features"];
        let speed = vec!["Features", "Speed"];
        assert_eq!(
            outline_of(&document),
            vec![
                ("name | Quarry", vec![], ContentType::Table),
                (
                    "Quarry is a batch indexer.\nIt runs nightly.",
                    vec![],
                    ContentType::Text
                ),
                ("Features", features.clone(), ContentType::Text),
                ("Parses PDFs", features.clone(), ContentType::Text),
                ("and nested items", features.clone(), ContentType::Text),
                ("1. First step", features.clone(), ContentType::Text),
                ("2. Second step", features.clone(), ContentType::Text),
                ("a note", features.clone(), ContentType::Text),
                ("3. Third step", features.clone(), ContentType::Text),
                ("Term: its definition", features.clone(), ContentType::Text),
                ("Speed", speed.clone(), ContentType::Text),
                (
                    "cargo build --release\n  quarry index",
                    speed.clone(),
                    ContentType::Text
                ),
                ("Measured throughput", speed.clone(), ContentType::Text),
                (
                    "Machine | Tokens/s\nH100 | 6.35 M\nCPU | inner cell\nGPU | --features cuda",
                    speed.clone(),
                    ContentType::Table
                ),
                ("quarry serve", speed.clone(), ContentType::Text),
                ("See also", vec!["See also"], ContentType::Text),
                ("The quarry logo", vec!["See also"], ContentType::Text),
            ]
        );
    }

    #[test]
    fn hostile_pages_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 50_000;
        let pages = [
            "{|\n".repeat(n) + "| cell\n",
            "* [[a|b]]\n".repeat(n) + &"== [[x ==\n".repeat(n) + &" pre\n".repeat(n),
            "{|\n|+ caption\n".to_string() + &"|-\n".repeat(n) + &"| a || b\n".repeat(n) + "|}",
        ];
        for page in pages {
            assert!(!document_of("deep.wiki", page).blocks.is_empty());
        }
        let page = "#".repeat(n) + " deep\n" + &"=".repeat(n) + "\n";
        let document = document_of("marks.wiki", page);
        assert!(
            document.blocks[0].text.ends_with("1. deep"),
            "{:?}",
            document.blocks[0].text.len()
        );
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
