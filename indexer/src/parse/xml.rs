//! XML read for what it says, whatever its vocabulary (DocBook, TEI, JATS articles, a
//! sitemap, a configuration file), with its tags, attributes, comments and processing
//! instructions left out. PubMed's article sets go to [`super::pubmed`], one document per
//! article, news feeds (RSS, Atom) to [`super::feed`], one per item, and the Stack Exchange
//! data dump's posts, comments and users to [`super::stack_exchange`], one per row, Timed Text
//! captions (TTML, DFXP) to [`super::ttml`], a transcript as subtitles are, FictionBook e-books
//! to [`super::fictionbook`], Evernote exports to [`super::evernote`], one document per note;
//! every other XML is
//! one document read by [`XmlText`]:
//!
//! - an element that holds text directly is a paragraph, the elements inside it (`<i>`,
//!   `<xref>`) read into it; an element that holds only elements is a container;
//! - a `title`, `head`, `heading` or `h1`..`h6` element heads the container it is in (a
//!   DocBook `<section>`, a TEI `<div>`, a JATS `<sec>`): a heading path for what follows it
//!   there, closed with the container; the first such or `article-title` element titles the
//!   document;
//! - rows of cells (`tr` with `td`/`th`, CALS's `row` with `entry`) are table blocks;
//! - a value alone in an element (no space in it, 64 characters at most: an id, a number, a
//!   date, an address) reads `name: value`, as a JSON field does;
//! - `script` and `style` elements are left out.
//!
//! One quick-xml pass without recursion, in memory linear in the file. XML that breaks partway
//! keeps what was read before it and says so in the document's warnings; XML that breaks
//! before any text fails the file with the byte it broke at.

use quick_xml::events::{BytesStart, Event};

use super::character_references::decode_character_references;
use super::feed::is_feed_root;
use super::legacy_encoding::declared_in_xml;
use super::markup_body::table_text;
use super::text::{collapse_whitespace, declared_by_source, decode_text_declared};
use super::{Block, ContentType, Document, ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Extensions of XML vocabularies read as XML when their bytes begin with `<`.
pub(super) const EXTENSIONS: [&str; 11] = [
    "xml", "nxml", "rss", "atom", "dbk", "tei", "rdf", "ttml", "dfxp", "fb2", "enex",
];
/// A value this long at most, with no space in it, is read with its element's name.
const VALUE_CHARS: usize = 64;
/// Element names kept for labels this deep at most (a deeper element's value reads alone).
const NAMED_DEPTH: usize = 4096;
/// Elements left open inside the one an end tag names that it ends with it, at most.
pub(super) const UNCLOSED_REACH: usize = 64;
/// Headings in a heading path at most (a deeper section's heading is a block, not a path).
pub(super) const HEADING_DEPTH: usize = 16;

/// Whether a file's first bytes (lower case, white space off) begin XML that is no HTML:
/// an XML declaration, or `<` in a file with an XML vocabulary's extension.
pub(super) fn looks_like_xml(head: &str, ext: Option<&str>) -> bool {
    let head = head.trim_start_matches('\u{feff}');
    head.starts_with("<?xml") || (head.starts_with('<') && ext.is_some_and(|e| EXTENSIONS.contains(&e)))
}

/// Whether XML's first bytes (lower case, white space off) declare an XHTML page after the
/// XML declaration and comments: read as HTML.
pub(super) fn is_xhtml(head: &str) -> bool {
    let mut rest = head.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        let skipped = match () {
            _ if rest.starts_with("<?") => rest.find("?>").map(|end| end + 2),
            _ if rest.starts_with("<!--") => rest.find("-->").map(|end| end + 3),
            _ => break,
        };
        match skipped {
            Some(end) => rest = &rest[end..],
            None => return false,
        }
    }
    rest.starts_with("<!doctype html") || rest.starts_with("<html")
}

/// An XML file's text: where its bytes are not UTF-8, read in the encoding its source declares
/// for it (a `Content-Type`'s `charset`), else in the one its XML declaration names, else in
/// the likeliest.
pub(super) fn decode_xml_text(raw: &RawDocument) -> Result<String, ParseError> {
    let declared = declared_by_source(raw).or_else(|| declared_in_xml(&raw.bytes));
    decode_text_declared(&raw.bytes, declared)
}

/// `raw` read as XML; the files an Evernote export carries are parsed by `members`.
pub(super) fn parse(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    let text = decode_xml_text(raw)?;
    let root = root_name(&text).unwrap_or_default();
    if root == "PubmedArticleSet" {
        return super::pubmed::parse(raw, &text);
    }
    if root == "tt" {
        return super::ttml::parse(raw, &text);
    }
    if root == "FictionBook" {
        return super::fictionbook::parse(raw, &text);
    }
    if root == "en-export" {
        return super::evernote::parse(raw, &text, members);
    }
    if let Some(parsed) = super::stack_exchange::parse(raw, &text, &root)? {
        return Ok(parsed);
    }
    if is_feed_root(&root) {
        let parsed = super::feed::parse(raw, &text)?;
        // RDF that holds no RSS item is other data, read as other XML is.
        if root != "RDF" || !parsed.documents.is_empty() || !parsed.failures.is_empty() {
            return Ok(parsed);
        }
    }
    let read = read_xml(&text)?;
    let title = read.title.clone().unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, read.blocks);
    if let Some((at, error)) = read.damage {
        document.warn(format!(
            "the XML cannot be read on from byte {at} ({error}); the text after it was left out"
        ));
    }
    Ok(Parsed::one(document))
}

/// A reader that does not stop at an end tag naming another element than the one open:
/// hand-written XML (`<p>a<br>b</p>`) is read to its end rather than stopped at its first slip.
pub(super) fn lenient_reader(xml: &str) -> quick_xml::Reader<&[u8]> {
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = false;
    reader
}

/// The local name of the document's root element, if the XML reads that far.
pub(super) fn root_name(xml: &str) -> Option<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    loop {
        match reader.read_event().ok()? {
            Event::Start(start) | Event::Empty(start) => {
                return Some(String::from_utf8_lossy(start.local_name().as_ref()).into_owned())
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// The next event of `reader` that is no end of file, or `None` where the reading stops: at
/// the end of the file, or where the XML breaks once something of it was read (`read_any`),
/// which `damage` records (its byte and why). XML that breaks before fails the file, as
/// "`<what>` at byte N: why".
pub(super) fn next_event<'a>(
    reader: &mut quick_xml::Reader<&'a [u8]>,
    what: &str,
    read_any: bool,
    damage: &mut Option<(u64, String)>,
) -> Result<Option<Event<'a>>, ParseError> {
    match reader.read_event() {
        Ok(Event::Eof) => Ok(None),
        Ok(event) => Ok(Some(event)),
        Err(error) if !read_any => Err(ParseError::Corrupt(format!(
            "{what} at byte {}: {error}",
            reader.buffer_position()
        ))),
        Err(error) => {
            *damage = Some((reader.buffer_position(), error.to_string()));
            Ok(None)
        }
    }
}

/// Where XML broke (its byte), and why.
pub(super) type Damage = (u64, String);

/// The failed item of a file whose XML broke at byte `at` after some of its items were read:
/// `<file>#byte=N`, saying that `the_xml` (`the feed's XML`) cannot be read on and that the
/// `items` after it were not read.
pub(super) fn broken_partway(raw: &RawDocument, (at, error): (u64, String), the_xml: &str, items: &str) -> ItemFailure {
    ItemFailure {
        uri: format!("{}#byte={at}", raw.uri),
        reason: format!("byte {at}: {the_xml} cannot be read on ({error}); the {items} after it were not read"),
    }
}

/// A text node's text: its entities and character references decoded (HTML's names too, as
/// XHTML-like XML uses them without declaring them).
pub(super) fn text_of(text: &quick_xml::events::BytesText) -> String {
    text.unescape()
        .map(|t| t.into_owned())
        .unwrap_or_else(|_| decode_character_references(&String::from_utf8_lossy(text)))
}

/// What an element is to the reading.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Plain,
    /// Heads the container it is in.
    Heading,
    /// Titles the document when it is the first title read.
    Title,
    Row,
    Cell,
    Skipped,
}

fn role_of(start: &BytesStart) -> Role {
    let name = start.local_name();
    let name = name.as_ref().to_ascii_lowercase();
    match name.as_slice() {
        b"title" | b"head" | b"heading" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => Role::Heading,
        b"article-title" => Role::Title,
        b"tr" | b"row" => Role::Row,
        b"td" | b"th" | b"entry" => Role::Cell,
        b"script" | b"style" => Role::Skipped,
        _ => Role::Plain,
    }
}

/// What the XML says, as blocks.
pub(super) struct XmlText {
    pub blocks: Vec<Block>,
    pub title: Option<String>,
    /// Where the XML could not be read on, and why, once text had been read.
    pub damage: Option<(u64, String)>,
}

/// The paragraph being read.
struct Paragraph {
    text: String,
    /// The depth of the element holding it: the element its first text was in, then, once that
    /// element ended, its parent (text there goes on with it; an element or the parent's end
    /// ends it).
    depth: usize,
    /// Whether the element its first text was in has ended.
    ended: bool,
    /// Whether that element held an element (it is no value alone).
    holds_elements: bool,
    /// That element's name and role.
    name: String,
    role: Role,
}

#[derive(Default)]
struct Reading {
    blocks: Vec<Block>,
    title: Option<String>,
    /// Open headings: (the depth of the container they head, text).
    headings: Vec<(usize, String)>,
    paragraph: Option<Paragraph>,
    /// The roles and names of the open elements (names kept [`NAMED_DEPTH`] deep).
    open: Vec<(Role, String)>,
    /// The depth of a skipped element being read through.
    skipping: Option<usize>,
    /// The open row's depth and cells, the cell being read, and the table's rows.
    row: Option<(usize, Vec<String>)>,
    cell: Option<(usize, String)>,
    rows: Vec<Vec<String>>,
    /// The depth of the table's first row.
    rows_depth: usize,
}

impl Reading {
    fn depth(&self) -> usize {
        self.open.len()
    }

    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn start(&mut self, start: &BytesStart) {
        if self.skipping.is_some() {
            self.open.push((Role::Skipped, String::new()));
            return;
        }
        match self.paragraph.as_mut() {
            Some(paragraph) if !paragraph.ended => paragraph.holds_elements = true,
            Some(_) => self.end_paragraph(),
            None => {}
        }
        let role = role_of(start);
        let name = match self.depth() < NAMED_DEPTH {
            true => String::from_utf8_lossy(start.local_name().as_ref()).into_owned(),
            false => String::new(),
        };
        self.open.push((role, name));
        let depth = self.depth();
        match role {
            Role::Skipped => self.skipping = Some(depth),
            Role::Row => {
                self.end_row();
                self.row = Some((depth, Vec::new()));
            }
            Role::Cell if self.row.is_some() && self.cell.is_none() => self.cell = Some((depth, String::new())),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if self.skipping.is_some() {
            return;
        }
        let depth = self.depth();
        match self.paragraph.as_mut() {
            Some(paragraph) => {
                if paragraph.ended && !text.trim().is_empty() {
                    // Text after the element the paragraph began in: the parent holds text too.
                    paragraph.ended = false;
                    paragraph.holds_elements = true;
                }
                paragraph.text.push_str(text);
            }
            None if text.trim().is_empty() => {}
            None => {
                let (role, name) = self.open.last().cloned().unwrap_or((Role::Plain, String::new()));
                self.paragraph = Some(Paragraph {
                    text: text.to_string(),
                    depth,
                    ended: false,
                    holds_elements: false,
                    name,
                    role,
                });
            }
        }
    }

    fn end(&mut self) {
        let depth = self.depth();
        let Some((role, _)) = self.open.pop() else {
            return;
        };
        if let Some(skipped) = self.skipping {
            if skipped == depth {
                self.skipping = None;
            }
            return;
        }
        if let Some(paragraph) = self.paragraph.as_mut() {
            if paragraph.depth == depth {
                match paragraph.ended || matches!(role, Role::Heading | Role::Title | Role::Cell) {
                    true => self.end_paragraph(),
                    false => {
                        paragraph.ended = true;
                        paragraph.depth = depth - 1;
                    }
                }
            }
        }
        if self.cell.as_ref().is_some_and(|(d, _)| *d == depth) {
            self.end_paragraph();
            let (_, cell) = self.cell.take().unwrap_or_default();
            if let Some((_, cells)) = self.row.as_mut() {
                cells.push(collapse_whitespace(&cell));
            }
        }
        if self.row.as_ref().is_some_and(|(d, _)| *d == depth) {
            self.end_row();
        }
        // The table ends with the element holding its rows' parts (`thead`, `tbody`).
        if !self.rows.is_empty() && depth + 1 < self.rows_depth {
            self.end_paragraph();
            self.end_table();
        }
        // The headings of the container that ends close with it.
        self.headings.retain(|(container, _)| *container < depth);
    }

    /// An end tag: it ends the element it names and those left open inside it (`<br>` in a
    /// `<p>`), looked for among the innermost [`UNCLOSED_REACH`]; one that names none of them is
    /// left out. Past [`NAMED_DEPTH`], where names are not kept, it ends the innermost.
    fn end_named(&mut self, name: &[u8]) {
        if self.depth() > NAMED_DEPTH {
            return self.end();
        }
        let found = self
            .open
            .iter()
            .rev()
            .take(UNCLOSED_REACH)
            .position(|(_, open)| open.as_bytes() == name);
        if let Some(inside) = found {
            (0..=inside).for_each(|_| self.end());
        }
    }

    fn end_row(&mut self) {
        if let Some((depth, cells)) = self.row.take() {
            if cells.iter().any(|c| !c.is_empty()) {
                if self.rows.is_empty() {
                    self.rows_depth = depth;
                }
                self.rows.push(cells);
            }
        }
    }

    fn end_table(&mut self) {
        if !self.rows.is_empty() {
            let text = table_text(&std::mem::take(&mut self.rows));
            self.push(text, ContentType::Table);
        }
    }

    fn push(&mut self, text: String, kind: ContentType) {
        if text.trim().is_empty() {
            return;
        }
        self.blocks.push(Block::of_kind(text, kind, self.path()));
    }

    fn end_paragraph(&mut self) {
        let Some(paragraph) = self.paragraph.take() else {
            return;
        };
        let text = collapse_whitespace(&paragraph.text);
        if text.is_empty() {
            return;
        }
        if let Some((_, cell)) = self.cell.as_mut() {
            cell.push(' ');
            cell.push_str(&text);
            return;
        }
        if self.row.is_none() {
            self.end_table();
        }
        match paragraph.role {
            Role::Heading | Role::Title => {
                self.title.get_or_insert_with(|| text.clone());
                self.push(text.clone(), ContentType::Text);
                if paragraph.role == Role::Heading {
                    // Its container is the element it is in; the path holds each once.
                    let container = self.depth();
                    self.headings.retain(|(c, _)| *c < container);
                    if self.headings.len() < HEADING_DEPTH {
                        self.headings.push((container, text));
                    }
                }
            }
            _ => {
                let alone = !paragraph.holds_elements
                    && !paragraph.name.is_empty()
                    && !text.contains(' ')
                    && text.chars().count() <= VALUE_CHARS;
                match alone {
                    true => self.push(format!("{}: {text}", paragraph.name), ContentType::Text),
                    false => self.push(text, ContentType::Text),
                }
            }
        }
    }

    fn finish(mut self, damage: Option<(u64, String)>) -> XmlText {
        self.end_paragraph();
        if let Some((_, cell)) = self.cell.take() {
            if let Some((_, cells)) = self.row.as_mut() {
                cells.push(cell.trim().to_string());
            }
        }
        self.end_row();
        self.end_table();
        XmlText {
            blocks: self.blocks,
            title: self.title,
            damage,
        }
    }
}

/// Reads `xml` for its text.
pub(super) fn read_xml(xml: &str) -> Result<XmlText, ParseError> {
    let mut reader = lenient_reader(xml);
    let mut reading = Reading::default();
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(error) => {
                let at = reader.buffer_position();
                let read = reading.finish(Some((at, error.to_string())));
                if read.blocks.is_empty() {
                    return Err(ParseError::Corrupt(format!("XML at byte {at}: {error}")));
                }
                return Ok(read);
            }
        };
        match event {
            Event::Start(start) => reading.start(&start),
            Event::Empty(start) => {
                // An empty element parts the text around it as an element holding nothing does.
                reading.start(&start);
                reading.end();
            }
            Event::End(end) => reading.end_named(end.local_name().as_ref()),
            Event::Text(text) => reading.text(&text_of(&text)),
            Event::CData(data) => reading.text(&String::from_utf8_lossy(&data)),
            Event::Eof => {
                // A file cut short ends with elements open: what they held is kept, and told.
                let open = reading.depth();
                let damage = (open > 0).then(|| {
                    (
                        reader.buffer_position(),
                        format!("the file ends with {open} elements open"),
                    )
                });
                return Ok(reading.finish(damage));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{outline_of, raw_for_test, AutoParser, Parser};

    #[test]
    fn an_article_reads_as_paragraphs_under_its_sections_with_its_tables() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving DTD v1.2//EN" "JATS-archivearticle1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink">
  <front>
    <journal-meta><journal-title-group><journal-title>Quarry Letters</journal-title></journal-title-group></journal-meta>
    <article-meta>
      <article-id pub-id-type="doi">10.1000/ql.2026.7</article-id>
      <title-group><article-title>Rivers that <italic>run</italic> dry</article-title></title-group>
      <abstract><p>Dry rivers &amp; their beds.</p></abstract>
    </article-meta>
  </front>
  <body>
    <sec id="s1"><title>Introduction</title>
      <p>Some rivers run dry in <bold>summer</bold> <xref ref-type="bibr" rid="b1">[1]</xref>.</p>
      <sec><title>Method</title>
        <p><italic>We</italic> counted them.</p>
        <table-wrap><table><thead><tr><th>river</th><th>days dry</th></tr></thead>
          <tbody><tr><td>Ebro</td><td>40</td></tr><tr><td><p>Tagus</p></td><td>12</td></tr></tbody></table></table-wrap>
      </sec>
      <p>Back in the introduction.<!-- a comment --></p>
    </sec>
    <sec><title>Results</title><p>Fewer than before.</p><script>var x = 1;</script></sec>
  </body>
</article>"#;
        let parsed = AutoParser.parse(&raw_for_test("article.nxml", xml)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.title, "Rivers that run dry");
        let intro = vec!["Introduction"];
        let method = vec!["Introduction", "Method"];
        assert_eq!(
            outline_of(document),
            vec![
                ("Quarry Letters", vec![], ContentType::Text),
                ("article-id: 10.1000/ql.2026.7", vec![], ContentType::Text),
                ("Rivers that run dry", vec![], ContentType::Text),
                ("Dry rivers & their beds.", vec![], ContentType::Text),
                ("Introduction", vec![], ContentType::Text),
                ("Some rivers run dry in summer [1].", intro.clone(), ContentType::Text),
                ("Method", intro.clone(), ContentType::Text),
                ("We counted them.", method.clone(), ContentType::Text),
                (
                    "river | days dry\nEbro | 40\nTagus | 12",
                    method.clone(),
                    ContentType::Table
                ),
                ("Back in the introduction.", intro.clone(), ContentType::Text),
                ("Results", vec![], ContentType::Text),
                ("Fewer than before.", vec!["Results"], ContentType::Text),
            ]
        );
        assert!(document.warnings.is_empty(), "{:?}", document.warnings);
    }

    #[test]
    fn the_encoding_its_declaration_names_reads_its_bytes() {
        // "Да" in Windows-1251: too short for the detector, which reads "Äà" (Windows-1252).
        let cyrillic = b"<?xml version='1.0' encoding='windows-1251'?>\n<answer>\xc4\xe0</answer>";
        let parsed = AutoParser
            .parse(&raw_for_test("answer.xml", cyrillic.to_vec()))
            .unwrap();
        assert_eq!(parsed.documents[0].blocks[0].text, "answer: Да");
        // "Привет, мир" in KOI8-R, declared.
        let koi8 = b"<?xml version='1.0' encoding='KOI8-R'?>\n<p>\xf0\xd2\xc9\xd7\xc5\xd4, \xcd\xc9\xd2</p>";
        let parsed = AutoParser.parse(&raw_for_test("note.xml", koi8.to_vec())).unwrap();
        assert_eq!(parsed.documents[0].blocks[0].text, "Привет, мир");
        let declared = |head: &[u8]| declared_in_xml(head).map(|e| e.name());
        assert_eq!(
            declared(b"\xEF\xBB\xBF <?xml version=\"1.0\" ENCODING = \"iso-8859-1\"?><a/>"),
            Some("windows-1252")
        );
        assert_eq!(
            declared(b"<?xml version=\"1.0\" encoding=\"Shift_JIS\" standalone=\"yes\"?>"),
            Some("Shift_JIS")
        );
        // None named, one read in ASCII that says UTF-16, an unknown one, one never closed.
        assert_eq!(declared(b"<?xml version=\"1.0\"?><a encoding=\"koi8-r\"/>"), None);
        assert_eq!(declared(b"<?xml version=\"1.0\" encoding=\"UTF-16\"?>"), None);
        assert_eq!(declared(b"<?xml version=\"1.0\" encoding=\"klingon\"?>"), None);
        assert_eq!(declared(b"<?xml version=\"1.0\" encoding=\"koi8-r"), None);
        assert_eq!(declared(b"<doc encoding=\"koi8-r\"?>"), None);
    }

    #[test]
    fn values_read_with_their_names_and_damage_keeps_what_came_before() {
        let pom = "<?xml version=\"1.0\"?><project><groupId>org.quarry</groupId><version>1.2.0</version>\
                   <description>Reads documents &amp; answers &nbsp;queries.</description></project>";
        let parsed = AutoParser.parse(&raw_for_test("pom.xml", pom)).unwrap();
        let texts: Vec<&str> = parsed.documents[0].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "groupId: org.quarry",
                "version: 1.2.0",
                "Reads documents & answers queries."
            ]
        );
        assert_eq!(parsed.documents[0].title, "pom");
        // An end tag that names another element ends the one open: nothing is lost.
        let slips = "<?xml version=\"1.0\"?><doc><p>First<br>line.</p><p>More words</q></doc>";
        let parsed = AutoParser.parse(&raw_for_test("slips.xml", slips)).unwrap();
        let texts: Vec<&str> = parsed.documents[0].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Firstline.", "More words"]);
        assert!(parsed.documents[0].warnings.is_empty());
        // Broken after text was read: kept, and told.
        let broken = "<?xml version=\"1.0\"?><doc><p>Kept words.</p><!-- never closed <p>More</p></doc>";
        let parsed = AutoParser.parse(&raw_for_test("broken.xml", broken)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.blocks[0].text, "Kept words.");
        assert_eq!(document.warnings.len(), 1, "{:?}", document.warnings);
        assert!(
            document.warnings[0].starts_with("the XML cannot be read on from byte"),
            "{:?}",
            document.warnings
        );
        // Broken before any text: the file fails with where.
        let error = AutoParser
            .parse(&raw_for_test(
                "bad.xml",
                "<?xml version=\"1.0\"?><doc><!-- never closed <p>text</p></doc>",
            ))
            .unwrap_err();
        assert!(
            error.detail().unwrap_or_default().starts_with("XML at byte"),
            "{error:?}"
        );
    }

    #[test]
    fn hostile_nesting_and_entities_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 200_000;
        // Deeply nested elements, each holding text.
        let deep = format!("<?xml version=\"1.0\"?>{}{}", "<a>x ".repeat(n), "</a>".repeat(n));
        let read = read_xml(&deep).unwrap();
        assert_eq!(read.blocks.len(), 1);
        assert_eq!(read.blocks[0].text.len(), 2 * n - 1);
        // Nested sections each with a heading: the paths stay as deep as the sections.
        let sections = format!("<doc>{}{}</doc>", "<sec><title>t</title>".repeat(n), "</sec>".repeat(n));
        assert_eq!(read_xml(&sections).unwrap().blocks.len(), n);
        // Never closed: the text is kept and the damage told.
        let open = format!("<?xml version=\"1.0\"?>{}", "<p>words ".repeat(n));
        let read = read_xml(&open).unwrap();
        assert!(read.damage.is_some() && !read.blocks.is_empty());
        // Entities are not expanded (no billion laughs): an undeclared one stays as written.
        let laughs = format!(
            "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY l0 \"lol\">{}]><l>&l{n};</l>",
            (1..50)
                .map(|i| format!("<!ENTITY l{i} \"&l{0};&l{0};\">", i - 1))
                .collect::<String>()
        );
        assert_eq!(read_xml(&laughs).unwrap().blocks[0].text, format!("l: &l{n};"));
        // Rows without end and cells in cells.
        let rows = format!("<t>{}</t>", "<tr><td><td>c".repeat(20_000));
        let read = read_xml(&rows).unwrap();
        assert_eq!(read.blocks.len(), 1, "{:?}", read.blocks.len());
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
