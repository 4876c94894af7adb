//! RTF (Word's and WordPad's rich text): its paragraphs as blocks, its tables as table blocks
//! (a row a line, `\cell`s parted by " | ", as DOC's and DOCX's), its `\info` title as the
//! title. Control words are read, not shown: the font, colour and style tables, pictures,
//! objects, headers, footers, field instructions and every `\*` destination are left out;
//! `\'hh` bytes are read in the document's code page (`\ansicpg`), `\uN` as Unicode (their
//! fallback characters skipped). In the RTF of an Outlook message that carries HTML
//! (`\fromhtml1`), the HTML's tags are `\*` destinations and the text it shows is read; the
//! RTF-only runs between `\htmlrtf` and `\htmlrtf0` are left out, and a tag that is a character
//! reference (`&amp;`, `&#8364;`) gives its character. The binary data after a `\binN` (a
//! picture's, an object's) is stepped over, its N bytes never read as RTF. A footnote or endnote
//! (`\footnote`, starred or not) is written where its mark is, inside the paragraph: its
//! paragraphs are blocks after the paragraph (or table) citing it, that paragraph read whole.
//! A paragraph's outline level (`\outlinelevelN`, which Word writes with its heading styles'
//! paragraphs, and pandoc with its headings) makes it a heading: the blocks after it are under
//! it, and the first names a file without an `\info` title.
//! Groups are walked with a counter, not recursion, so no nesting depth can overflow a stack.

use encoding_rs::Encoding;

use super::character_references::character_reference;
use super::legacy_encoding::windows_code_page;
use super::text::collapse_whitespace;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Group states kept; deeper groups share the deepest kept one's.
const MAX_KEPT_GROUPS: usize = 1024;

/// Destinations whose text is not the document's.
const LEFT_OUT: &[&[u8]] = &[
    b"fonttbl",
    b"colortbl",
    b"stylesheet",
    b"pict",
    b"object",
    b"header",
    b"headerl",
    b"headerr",
    b"headerf",
    b"footer",
    b"footerl",
    b"footerr",
    b"footerf",
    b"fldinst",
    b"themedata",
    b"datastore",
    b"xmlnstbl",
    b"listtable",
    b"listoverridetable",
    b"rsidtbl",
    b"generator",
    b"latentstyles",
    b"filetbl",
    b"revtbl",
    b"pgdsctbl",
    b"operator",
    b"author",
    b"company",
    b"subject",
    b"keywords",
    b"comment",
    b"doccomm",
    b"category",
    b"manager",
    b"hlinkbase",
    b"creatim",
    b"revtim",
    b"printim",
    b"buptim",
];

/// One group's state.
#[derive(Clone, Copy)]
struct Group {
    /// Its text is left out.
    skipped: bool,
    /// Its text is the title (`\info`'s `\title`).
    title: bool,
    /// Its text was written for RTF readers only, beside the HTML an Outlook message's RTF
    /// carries (`\htmlrtf`): left out but for its whitespace (a `<br>`'s `\line`, an
    /// `&nbsp;`'s no-break space), which keeps the words apart.
    rtf_only: bool,
    /// It holds an encapsulated HTML tag (`\*\htmltag`): its text is kept apart, read only
    /// when it is a character reference (`&amp;`, whose `&` Outlook writes in an RTF-only run).
    html_tag: bool,
    /// Characters a `\uN` stands for in place of its fallback (`\ucN`).
    fallback: usize,
}

impl Default for Group {
    /// The document's own group: text read, one fallback character to a `\uN` (RTF's default
    /// `\uc1`).
    fn default() -> Self {
        Self {
            skipped: false,
            title: false,
            rtf_only: false,
            html_tag: false,
            fallback: 1,
        }
    }
}

/// The document as it is read.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    groups: Vec<Group>,
    depth: usize,
    encoding: &'static Encoding,
    blocks: Vec<Block>,
    paragraph: String,
    /// The paragraph being read is in a table (`\intbl`, until `\pard`).
    in_table: bool,
    /// The paragraph being read is a heading of this level (`\outlinelevelN` is level N + 1,
    /// until `\pard`), and the headings above it: (level, text), outermost first.
    level: Option<usize>,
    headings: Vec<(usize, String)>,
    /// The cells of the table row being read, and the rows of the table being read, each its
    /// cells joined by " | ".
    cells: Vec<String>,
    rows: Vec<String>,
    title: String,
    /// `\'hh` bytes not yet decoded (and bytes past ASCII written as they are, in the code
    /// page, or in UTF-8 where the whole file is UTF-8), a high surrogate waiting for its low
    /// one, fallback characters still to skip.
    pending: Vec<u8>,
    raw: Vec<u8>,
    raw_is_utf8: bool,
    high_surrogate: Option<u16>,
    to_skip: usize,
    /// The text of the encapsulated HTML tag being read.
    tag_text: String,
    /// The note being read, and the paragraphs of the notes read and not yet given (whether
    /// the note was cited in a table, its text).
    note: Option<NoteAside>,
    notes: Vec<(bool, String)>,
}

/// What a note's group set aside: the group depth it opened at, the paragraph it is in as read
/// up to it, and whether that paragraph was in a table.
struct NoteAside {
    depth: usize,
    outer: String,
    in_table: bool,
    level: Option<usize>,
}

impl Reader<'_> {
    fn group(&self) -> Group {
        self.groups.last().copied().unwrap_or_default()
    }

    fn group_mut(&mut self) -> Option<&mut Group> {
        match self.depth == self.groups.len() {
            true => self.groups.last_mut(),
            false => None,
        }
    }

    fn push_text(&mut self, text: &str) {
        let group = self.group();
        if group.html_tag {
            self.tag_text.push_str(text);
            return;
        }
        if group.skipped || (group.rtf_only && !text.chars().all(char::is_whitespace)) {
            return;
        }
        self.write(text, group.title);
    }

    /// Adds text read to the title or to the paragraph being read.
    fn write(&mut self, text: &str, title: bool) {
        match title {
            true => self.title.push_str(text),
            false => self.paragraph.push_str(text),
        }
    }

    /// Decodes the `\'hh` bytes read so far.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let bytes = std::mem::take(&mut self.pending);
            let (text, _) = self.encoding.decode_without_bom_handling(&bytes);
            self.push_text(&text);
        }
        if !self.raw.is_empty() {
            let bytes = std::mem::take(&mut self.raw);
            let encoding = match self.raw_is_utf8 {
                true => encoding_rs::UTF_8,
                false => self.encoding,
            };
            let (text, _) = encoding.decode_without_bom_handling(&bytes);
            self.push_text(&text);
        }
    }

    fn end_paragraph(&mut self) {
        self.flush();
        if self.group().skipped {
            return;
        }
        if let Some(note) = &self.note {
            let text = std::mem::take(&mut self.paragraph).trim().to_string();
            if !text.is_empty() {
                self.notes.push((note.in_table, text));
            }
            return;
        }
        if self.in_table {
            // A cell's paragraphs are its text, on one line.
            self.paragraph.push(' ');
            return;
        }
        self.end_table();
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if !text.is_empty() {
            if let Some(level) = self.level {
                self.headings.retain(|(l, _)| *l < level);
                self.headings.push((level, text.clone()));
            }
            self.blocks.push(Block::text(text, &self.path()));
        }
        self.give_notes(false);
    }

    /// The headings above the paragraph being read.
    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    /// The paragraphs of the notes read (those cited in a table, or the others) as blocks.
    fn give_notes(&mut self, cited_in_table: bool) {
        let (given, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.notes)
            .into_iter()
            .partition(|(in_table, _)| *in_table == cited_in_table);
        self.notes = kept;
        let path = self.path();
        self.blocks
            .extend(given.into_iter().map(|(_, text)| Block::text(text, &path)));
    }

    /// A note's group opens (`\footnote`): the paragraph it is in is set aside.
    fn open_note(&mut self) {
        if self.note.is_none() && !self.group().skipped {
            self.note = Some(NoteAside {
                depth: self.depth,
                outer: std::mem::take(&mut self.paragraph),
                in_table: self.in_table,
                level: self.level,
            });
        }
    }

    /// A group closed: where it was the note's, its last paragraph ends and the paragraph it
    /// is in goes on.
    fn close_note(&mut self) {
        if self.note.as_ref().is_some_and(|note| self.depth < note.depth) {
            self.end_paragraph();
            let note = self.note.take().expect("a note is open");
            self.paragraph = note.outer;
            self.in_table = note.in_table;
            self.level = note.level;
        }
    }

    /// `\cell`: the text read since the last cell is the row's next cell.
    fn end_cell(&mut self) {
        self.flush();
        if self.note.is_some() {
            return self.end_paragraph();
        }
        if self.group().skipped {
            return;
        }
        let text = std::mem::take(&mut self.paragraph);
        self.cells.push(collapse_whitespace(&text));
    }

    /// `\row`: the cells read are a row of the table (text after the last cell its last).
    fn end_row(&mut self) {
        self.flush();
        if self.note.is_some() {
            return self.end_paragraph();
        }
        if self.group().skipped {
            return;
        }
        if !self.paragraph.trim().is_empty() {
            self.end_cell();
        }
        self.paragraph.clear();
        let cells = std::mem::take(&mut self.cells);
        if cells.iter().any(|cell| !cell.is_empty()) {
            self.rows.push(cells.join(" | "));
        }
    }

    /// The table read so far, a block of its rows, one a line (before the text after it).
    fn end_table(&mut self) {
        if !self.cells.is_empty() {
            let text = std::mem::take(&mut self.paragraph);
            self.end_row();
            self.paragraph = text;
        }
        if !self.rows.is_empty() {
            self.blocks.push(Block {
                text: std::mem::take(&mut self.rows).join("\n"),
                heading_path: self.path(),
                kind: ContentType::Table,
                ..Default::default()
            });
        }
        self.give_notes(true);
    }

    fn unicode(&mut self, value: i32) {
        self.flush();
        let unit = (value.rem_euclid(65_536)) as u16;
        let text = match (self.high_surrogate.take(), unit) {
            (_, 0xD800..=0xDBFF) => {
                self.high_surrogate = Some(unit);
                None
            }
            (Some(high), 0xDC00..=0xDFFF) => char::decode_utf16([high, unit]).next().and_then(Result::ok),
            (_, unit) => char::from_u32(unit as u32),
        };
        if let Some(c) = text {
            self.push_text(c.encode_utf8(&mut [0; 4]));
        }
        self.to_skip = self.group().fallback;
    }

    /// An encapsulated HTML tag's group ended: a character reference in it is text the HTML
    /// shows (but for whitespace, which its RTF-only run already gave).
    fn html_tag_closed(&mut self) {
        let tag = std::mem::take(&mut self.tag_text);
        let group = self.group();
        let Some(shown) = character_reference(tag.trim()) else {
            return;
        };
        if !group.skipped && !shown.chars().all(char::is_whitespace) {
            self.write(&shown, group.title);
        }
    }

    /// A control word (`name`, its number if any) read.
    fn control(&mut self, name: &[u8], number: Option<i32>, ignorable: bool) {
        if name != b"u" {
            self.high_surrogate = None;
        }
        match name {
            b"u" => return self.unicode(number.unwrap_or(0)),
            b"uc" => {
                if let Some(group) = self.group_mut() {
                    group.fallback = number.unwrap_or(1).clamp(0, 8) as usize;
                }
            }
            b"ansicpg" => {
                self.flush();
                if let Some(encoding) = number.and_then(windows_code_page) {
                    self.encoding = encoding;
                }
            }
            b"par" | b"sect" | b"page" => self.end_paragraph(),
            b"cell" | b"nestcell" => self.end_cell(),
            b"row" | b"nestrow" => self.end_row(),
            b"intbl" => self.in_table = true,
            b"pard" => (self.in_table, self.level) = (false, None),
            // Levels 0-8 are headings' (9 is body text); not a style table's definitions.
            b"outlinelevel" if !self.group().skipped => {
                self.level = number.filter(|n| (0..=8).contains(n)).map(|n| n as usize + 1)
            }
            b"footnote" => self.open_note(),
            _ => {}
        }
        self.flush();
        let text = match name {
            b"line" => "\n",
            b"tab" => "\t",
            b"emdash" => "\u{2014}",
            b"endash" => "\u{2013}",
            b"bullet" => "\u{2022}",
            b"lquote" => "\u{2018}",
            b"rquote" => "\u{2019}",
            b"ldblquote" => "\u{201C}",
            b"rdblquote" => "\u{201D}",
            _ => "",
        };
        self.push_text(text);
        // A note is read even where starred (`{\*\footnote`, as pandoc writes it).
        let skip = (ignorable && name != b"footnote") || LEFT_OUT.contains(&name);
        if let Some(group) = self.group_mut() {
            match name {
                b"title" => group.title = true,
                b"htmlrtf" => group.rtf_only = number != Some(0),
                b"htmltag" => {
                    group.html_tag = true;
                    group.skipped = true;
                }
                _ if skip => group.skipped = true,
                _ => {}
            }
        }
    }

    fn run(&mut self) {
        // The `\*` that marks the next control word's group as one a reader may leave out.
        let mut ignorable = false;
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            self.at += 1;
            match byte {
                b'{' => {
                    self.flush();
                    self.depth += 1;
                    if self.groups.len() < MAX_KEPT_GROUPS && self.groups.len() + 1 == self.depth {
                        self.groups.push(self.group());
                    }
                }
                b'}' => {
                    self.flush();
                    if self.depth == self.groups.len() {
                        let closed = self.groups.pop();
                        if closed.is_some_and(|g| g.html_tag) && !self.group().html_tag {
                            self.html_tag_closed();
                        }
                    }
                    self.depth = self.depth.saturating_sub(1);
                    self.close_note();
                }
                b'\\' => {
                    let start = self.at;
                    let letters = self.bytes[start..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphabetic())
                        .count()
                        .min(32);
                    if letters == 0 {
                        let symbol = self.bytes.get(start).copied();
                        self.at += 1;
                        match symbol {
                            Some(b'\'') => {
                                let hex = self.bytes.get(self.at..self.at + 2);
                                self.at += 2;
                                let byte = hex.and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
                                match (self.to_skip, byte) {
                                    (1.., _) => self.to_skip -= 1,
                                    (0, Some(byte)) => {
                                        if !self.raw.is_empty() {
                                            self.flush();
                                        }
                                        self.pending.push(byte)
                                    }
                                    (0, None) => {}
                                }
                            }
                            Some(b'*') => ignorable = true,
                            Some(b'\n' | b'\r') => self.end_paragraph(),
                            Some(b'~') => self.push_text(" "),
                            Some(b'_') => self.push_text("-"),
                            Some(c @ (b'\\' | b'{' | b'}')) => {
                                self.flush();
                                self.push_text(&(c as char).to_string())
                            }
                            _ => {}
                        }
                        continue;
                    }
                    let name = &self.bytes[start..start + letters];
                    self.at += letters;
                    let digits = self.bytes[self.at..]
                        .iter()
                        .enumerate()
                        .take_while(|(i, b)| b.is_ascii_digit() || (*i == 0 && **b == b'-'))
                        .count()
                        .min(11);
                    let number = std::str::from_utf8(&self.bytes[self.at..self.at + digits])
                        .ok()
                        .and_then(|n| n.parse::<i32>().ok());
                    self.at += digits;
                    if self.bytes.get(self.at) == Some(&b' ') {
                        self.at += 1;
                    }
                    if name == b"bin" {
                        // `\binN`: N bytes of binary data (a picture's, an object's), braces
                        // and backslashes among them, never read as RTF.
                        let length = number.unwrap_or(0).max(0) as usize;
                        self.at = self.at.saturating_add(length).min(self.bytes.len());
                        ignorable = false;
                        continue;
                    }
                    self.control(name, number, std::mem::take(&mut ignorable));
                }
                b'\r' | b'\n' => {}
                byte => {
                    if self.to_skip > 0 {
                        self.to_skip -= 1;
                        continue;
                    }
                    match byte.is_ascii() {
                        true => {
                            self.flush();
                            self.push_text(&(byte as char).to_string());
                        }
                        false => {
                            if !self.pending.is_empty() {
                                self.flush();
                            }
                            self.raw.push(byte)
                        }
                    }
                }
            }
        }
        // A note still open at the end (its group never closed) ends there.
        self.depth = 0;
        self.close_note();
        self.in_table = false;
        self.end_paragraph();
        self.end_table();
    }
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let (title, blocks) = read(&raw.bytes)?;
    let title = match title.is_empty() {
        true => Document::stem_of(raw),
        false => title,
    };
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

/// An RTF text's `\info` title (empty where it has none) and its blocks: paragraphs, and
/// tables of a row a line.
pub(super) fn read(bytes: &[u8]) -> Result<(String, Vec<Block>), ParseError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if !bytes.trim_ascii_start().starts_with(b"{\\rtf") {
        return Err(ParseError::Corrupt("RTF does not begin with {\\rtf".into()));
    }
    let mut reader = Reader {
        bytes,
        at: 0,
        groups: Vec::new(),
        depth: 0,
        encoding: encoding_rs::WINDOWS_1252,
        blocks: Vec::new(),
        paragraph: String::new(),
        in_table: false,
        level: None,
        headings: Vec::new(),
        cells: Vec::new(),
        rows: Vec::new(),
        title: String::new(),
        pending: Vec::new(),
        raw: Vec::new(),
        raw_is_utf8: std::str::from_utf8(bytes).is_ok(),
        high_surrogate: None,
        to_skip: 0,
        tag_text: String::new(),
        note: None,
        notes: Vec::new(),
    };
    reader.run();
    let title = match reader.title.trim() {
        // The first heading: the first block under one is under it alone.
        "" => (reader.blocks.iter())
            .find_map(|b| b.heading_path.first().cloned())
            .unwrap_or_default(),
        title => title.to_string(),
    };
    Ok((title, reader.blocks))
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, outline_of, raw_for_test, AutoParser, ContentType, Document, ParseError, Parser};

    /// The one document of an RTF file of these bytes.
    fn document(bytes: impl Into<Vec<u8>>) -> Document {
        document_of("letter.rtf", bytes.into())
    }

    fn texts(rtf: &str) -> (String, Vec<String>) {
        let doc = document(rtf);
        (doc.title, doc.blocks.into_iter().map(|b| b.text).collect())
    }

    #[test]
    fn paragraphs_title_code_page_unicode_and_what_is_left_out() {
        // As WordPad and Word write it: tables of fonts and colours, a generator, a picture,
        // a field whose instruction is left out and whose result is read.
        let rtf = concat!(
            r"{\rtf1\ansi\ansicpg1252\deff0\nouicompat{\fonttbl{\f0\fnil\fcharset0 Calibri;}}",
            r"{\colortbl ;\red255\green0\blue0;}{\*\generator Riched20 10.0.19041}",
            r"{\info{\title Caf\'e9 plans}{\author Ann}}\viewkind4\uc1",
            "\r\n",
            r"\pard\sa200\sl276\slmult1\f0\fs22\lang9 Caf\'e9 au lait costs 3\u8364?.\par",
            "\r\n",
            r"{\pict\wmetafile8\picw100 0123456789abcdef}Second {\b bold} line\line next\tab x\par",
            r#"{\field{\*\fldinst{HYPERLINK "https://example.com"}}{\fldrslt{the link}}}\par "#,
            r"Emoji \u-10179?\u-8704? and \{braces\}\par}",
        );
        let (title, paragraphs) = texts(rtf);
        assert_eq!(title, "Café plans");
        assert_eq!(
            paragraphs,
            [
                "Café au lait costs 3€.",
                "Second bold line\nnext\tx",
                "the link",
                "Emoji \u{1F600} and {braces}"
            ]
        );
    }

    /// Headings by outline level, and notes after the paragraph or table citing them: a note
    /// as Word writes it (a destination of its own, two paragraphs) and as pandoc does
    /// (starred, in a table's cell). A style table's outline level makes no heading.
    #[test]
    fn outline_levels_are_headings_and_notes_follow_what_cites_them() {
        let rtf = concat!(
            r"{\rtf1\ansi{\stylesheet{\s1\outlinelevel0 heading 1;}}",
            r"Before any heading.\par",
            r"\pard\s1\outlinelevel0\b Piers\b0\par",
            r"\pard The north pier opens in spring{\super\chftn}{\footnote\pard\plain{\super\chftn} Subject to the county engineer.\par Twice a year.} after the dredging.\par",
            r"\trowd\cellx4320\cellx8640\pard\intbl A{\super\chftn}{\*\footnote\chftn\~\plain\pard\intbl {\pard\intbl Berth A was deepened.\par}}\cell 12 m\cell\row",
            r"\pard\outlinelevel1 Depths\par",
            r"\pard Dredged yearly.\par",
            r"\pard\outlinelevel0 Costs{\footnote As budgeted.}\par",
            r"\pard\outlinelevel9 Body text.\par}",
        );
        let doc = document(rtf);
        assert_eq!(doc.title, "Piers");
        assert_eq!(
            outline_of(&doc),
            [
                ("Before any heading.", vec![], ContentType::Text),
                ("Piers", vec!["Piers"], ContentType::Text),
                (
                    "The north pier opens in spring after the dredging.",
                    vec!["Piers"],
                    ContentType::Text
                ),
                ("Subject to the county engineer.", vec!["Piers"], ContentType::Text),
                ("Twice a year.", vec!["Piers"], ContentType::Text),
                ("A | 12 m", vec!["Piers"], ContentType::Table),
                ("Berth A was deepened.", vec!["Piers"], ContentType::Text),
                ("Depths", vec!["Piers", "Depths"], ContentType::Text),
                ("Dredged yearly.", vec!["Piers", "Depths"], ContentType::Text),
                ("Costs", vec!["Costs"], ContentType::Text),
                ("As budgeted.", vec!["Costs"], ContentType::Text),
                ("Body text.", vec!["Costs"], ContentType::Text),
            ]
        );
    }

    #[test]
    fn tables_as_word_writes_them() {
        // A header row and two rows (one cell of two paragraphs, one row's properties in a
        // group after its cells, as Word 2003 and later write them), text after the table,
        // then a table that ends the file without a `\row`.
        let rtf = concat!(
            r"{\rtf1\ansi Inspection:\par",
            r"\trowd\cellx1000\cellx2000\cellx3000\pard\intbl Pump\cell Hours\cell Status\cell\row",
            r"\trowd\cellx1000\pard\intbl P1\cell 1200\cell ok\cell\row",
            r"\pard\intbl P3\cell 4410\cell seal\par worn\cell\pard\intbl{\trowd\cellx1000\row}",
            r"\pard Replace the seal.\par",
            r"\trowd\pard\intbl{\header{\trowd\pard\intbl left out\cell\row}}Q\cell 1\cell}",
        );
        let doc = document(rtf);
        let blocks: Vec<(&str, ContentType)> = doc.blocks.iter().map(|b| (b.text.as_str(), b.kind)).collect();
        assert_eq!(
            blocks,
            [
                ("Inspection:", ContentType::Text),
                (
                    "Pump | Hours | Status\nP1 | 1200 | ok\nP3 | 4410 | seal worn",
                    ContentType::Table
                ),
                ("Replace the seal.", ContentType::Text),
                ("Q | 1", ContentType::Table),
            ]
        );
    }

    #[test]
    fn html_that_outlook_encapsulated() {
        // As Outlook writes a message's HTML body into its RTF one: the tags as `\*\htmltag`
        // groups, the RTF-only runs between `\htmlrtf` and `\htmlrtf0` (their `\par` still
        // ending paragraphs, their line breaks and no-break spaces still parting words).
        let rtf = concat!(
            r"{\rtf1\ansi\ansicpg1252\fromhtml1 \deff0{\fonttbl{\f0\fswiss Arial;}}",
            r"{\*\htmltag19 <html>}{\*\htmltag34 <head>}{\*\htmltag241 <style>p {color: red}</style>}",
            r"{\*\htmltag50 <body>}\htmlrtf \lang1033 \htmlrtf0 ",
            r"{\*\htmltag64 <p>}\htmlrtf {\htmlrtf0 Pump 3 {\*\htmltag84 &nbsp;}\htmlrtf \'a0\htmlrtf0 leaks",
            r"{\*\htmltag116 <br>}\htmlrtf \line\htmlrtf0 since Monday\htmlrtf\par}\htmlrtf0",
            r"{\*\htmltag72 </p>}{\*\htmltag64 <p>}\htmlrtf {\htmlrtf0 Order a seal.",
            r"\htmlrtf RTF only\par}\htmlrtf0{\*\htmltag72 </p>}",
            // Character references: their characters are written in RTF-only runs.
            r"{\*\htmltag64 <p>}\htmlrtf {\htmlrtf0 R{\*\htmltag84 &amp;}\htmlrtf &\htmlrtf0 D ",
            r"{\*\htmltag84 &lt;}\htmlrtf <\htmlrtf0 5 {\*\htmltag84 &#8364;}\htmlrtf \'80\htmlrtf0 ",
            r"{\*\htmltag84 &x;}\htmlrtf ?\htmlrtf0 .\htmlrtf\par}\htmlrtf0{\*\htmltag72 </p>}{\*\htmltag58 </body>}}",
        );
        let (_, paragraphs) = texts(rtf);
        assert_eq!(
            paragraphs,
            ["Pump 3 \u{a0}leaks\nsince Monday", "Order a seal.", "R&D <5 €."]
        );
    }

    #[test]
    fn a_code_page_and_hostile_nesting() {
        // Shift_JIS bytes in code page 932.
        let (_, paragraphs) = texts(r"{\rtf1\ansi\ansicpg932 \'93\'8c\'8b\'9e\par}");
        assert_eq!(paragraphs, ["東京"]);
        // Without `\uc`, one fallback character is skipped.
        assert_eq!(
            texts(r"{\rtf1 Die Schleuse \u246?ffnet.\par}").1,
            ["Die Schleuse öffnet."]
        );
        // Bytes past ASCII written as they are: UTF-8 where the file is, else the code page.
        assert_eq!(texts("{\\rtf1\\ansi Köln \\'e9\\par}").1, ["Köln é"]);
        let latin1 = b"{\\rtf1\\ansi K\xF6ln\\par}".to_vec();
        assert_eq!(document(latin1).blocks[0].text, "Köln");
        // A picture's binary data, its braces and backslashes not read as RTF; a length past
        // the end ends the file there.
        let mut pictured = b"{\\rtf1 Before.\\par{\\pict\\pngblip\\bin12 }}}{\\par x}{}After.\\par".to_vec();
        pictured.extend_from_slice(b"{\\*\\objdata\\bin4 \xFF\\}}}Still.\\par{\\pict\\bin2147483647 {text}");
        let doc = document(pictured);
        let paragraphs: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(paragraphs, ["Before.", "After.", "Still."]);
        let deep = format!(r"{{\rtf1 {}deep{}\par}}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(texts(&deep).1, ["deep"]);
        let err = AutoParser
            .parse(&raw_for_test("fake.rtf", b"plain words".to_vec()))
            .unwrap_err();
        assert_eq!(err, ParseError::Corrupt(r"RTF does not begin with {\rtf".into()));
    }
}
