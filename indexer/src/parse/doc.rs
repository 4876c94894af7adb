//! Word 97-2003 documents (`.doc`, `.dot`; MS-DOC), the binary format Word saved before DOCX:
//! a compound file whose `WordDocument` stream holds the text and whose table stream
//! (`0Table` or `1Table`) says where: the piece table maps the document's characters to runs
//! of bytes (8-bit Windows-1252, or UTF-16), and the paragraphs' properties name each
//! paragraph's style (Heading 1-9 and Title make the heading path) and whether it is a table's.
//!
//! Read: the main text, then footnotes, endnotes and text boxes; a field's result, not its
//! instruction (`PAGE`, `HYPERLINK "..."`); tables as table blocks. Left out: headers and
//! footers, comments, pictures and drawn objects' anchors. An encrypted file fails as
//! encrypted; a Word 6/95 file (an older FIB) as not supported.
//!
//! Quarry's own code, in process: every offset is checked against its stream, pieces are
//! read in order, and the text they may decode to is bounded (pieces are free to name the
//! same bytes many times).

use super::compound_file::{u16_at, u32_at, CompoundFile};
use super::outline_body::OutlineBody;
use super::property_set::summary_title;
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Characters a file's pieces may decode to (64 Mi: about four times a long book's text).
const MAX_CHARACTERS: usize = 64 << 20;
/// Word 97's FIB version; earlier files (Word 6, Word 95) are laid out otherwise.
const WORD_97_FIB: u16 = 101;
const FKP_BYTES: usize = 512;

fn corrupt(what: impl Into<String>) -> ParseError {
    ParseError::Corrupt(format!("DOC: {}", what.into()))
}

/// What the file information block (the FIB, at the start of `WordDocument`) says.
struct Fib {
    encrypted: bool,
    table_stream: &'static str,
    /// Characters in the main text, footnotes, headers, macros, comments, endnotes, text
    /// boxes, header text boxes: the document's character positions, in that order.
    counts: [u32; 8],
    /// (offset, length) in the table stream of the piece table (CLX), the style sheet and
    /// the paragraphs' property pages' table.
    clx: (u32, u32),
    styles: (u32, u32),
    paragraph_pages: (u32, u32),
}

impl Fib {
    fn read(word: &[u8]) -> Result<Self, ParseError> {
        if u16_at(word, 0) != Some(0xA5EC) {
            return Err(corrupt("the WordDocument stream does not begin with Word's identifier"));
        }
        if u16_at(word, 2).unwrap_or(0) < WORD_97_FIB {
            return Err(ParseError::Binary("Word 6.0/95 document, older than Word 97".into()));
        }
        let flags = u16_at(word, 10).unwrap_or(0);
        let short_count = usize::from(u16_at(word, 32).unwrap_or(0));
        let long_counts_at = 34 + 2 * short_count;
        let long_count = usize::from(u16_at(word, long_counts_at).ok_or_else(|| corrupt("the FIB is cut short"))?);
        let long = |i: usize| match i < long_count {
            true => u32_at(word, long_counts_at + 2 + 4 * i).unwrap_or(0),
            false => 0,
        };
        let pairs_at = long_counts_at + 2 + 4 * long_count;
        let pair_count = usize::from(u16_at(word, pairs_at).unwrap_or(0));
        let pair = |i: usize| match i < pair_count {
            true => (
                u32_at(word, pairs_at + 2 + 8 * i).unwrap_or(0),
                u32_at(word, pairs_at + 6 + 8 * i).unwrap_or(0),
            ),
            false => (0, 0),
        };
        Ok(Self {
            encrypted: flags & 0x0100 != 0,
            table_stream: match flags & 0x0200 != 0 {
                true => "1Table",
                false => "0Table",
            },
            counts: [3, 4, 5, 6, 7, 8, 9, 10].map(long),
            clx: pair(33),
            styles: pair(1),
            paragraph_pages: pair(13),
        })
    }

    /// The character ranges read, in order: main text, footnotes, endnotes, text boxes.
    fn ranges_read(&self) -> Vec<(u64, u64)> {
        let mut start = 0u64;
        let mut ranges = Vec::new();
        for (i, count) in self.counts.iter().enumerate() {
            let end = start + u64::from(*count);
            if matches!(i, 0 | 1 | 5 | 6) {
                ranges.push((start, end));
            }
            start = end;
        }
        ranges
    }
}

/// The bytes `(offset, length)` name in `stream`, none where they lie outside it.
fn slice(stream: &[u8], (offset, length): (u32, u32)) -> Option<&[u8]> {
    stream.get(offset as usize..(offset as usize).checked_add(length as usize)?)
}

/// One piece: characters `[start, end)` stored from byte `offset` of `WordDocument`.
struct Piece {
    start: u64,
    end: u64,
    offset: usize,
    eight_bit: bool,
}

/// The piece table: the CLX's property runs (skipped), then its piece descriptors.
fn pieces(clx: &[u8]) -> Result<Vec<Piece>, ParseError> {
    let mut at = 0;
    while clx.get(at) == Some(&0x01) {
        at += 3 + usize::from(u16_at(clx, at + 1).unwrap_or(0));
    }
    if clx.get(at) != Some(&0x02) {
        return Err(corrupt("the piece table is missing"));
    }
    let length = u32_at(clx, at + 1).unwrap_or(0) as usize;
    let table = clx
        .get(at + 5..(at + 5).saturating_add(length))
        .ok_or_else(|| corrupt("the piece table runs past its stream"))?;
    let count = table.len().saturating_sub(4) / 12;
    let mut pieces = Vec::with_capacity(count);
    for i in 0..count {
        let (start, end) = (u32_at(table, 4 * i), u32_at(table, 4 * i + 4));
        let descriptor = u32_at(table, 4 * (count + 1) + 8 * i + 2);
        let (Some(start), Some(end), Some(descriptor)) = (start, end, descriptor) else {
            return Err(corrupt("the piece table is cut short"));
        };
        if end < start || pieces.last().is_some_and(|p: &Piece| u64::from(start) < p.end) {
            return Err(corrupt("the piece table's character positions are out of order"));
        }
        let eight_bit = descriptor & 0x4000_0000 != 0;
        let offset = (descriptor & 0x3FFF_FFFF) as usize;
        pieces.push(Piece {
            start: start.into(),
            end: end.into(),
            offset: if eight_bit { offset / 2 } else { offset },
            eight_bit,
        });
    }
    Ok(pieces)
}

/// What a paragraph's properties say that the text needs.
#[derive(Debug, Clone, Copy, Default)]
struct ParagraphKind {
    style: u16,
    in_table: bool,
    row_end: bool,
    /// An outline level the paragraph sets itself (0-8), over its style's.
    outline_level: Option<u8>,
}

impl ParagraphKind {
    /// Read from a paragraph's style index and property modifiers (sprms).
    fn read(grpprl_and_style: &[u8]) -> Self {
        let mut kind = Self {
            style: u16_at(grpprl_and_style, 0).unwrap_or(0),
            ..Self::default()
        };
        let mut at = 2;
        while let Some(sprm) = u16_at(grpprl_and_style, at) {
            let operand = grpprl_and_style.get(at + 2).copied().unwrap_or(0);
            let size = match sprm >> 13 {
                0 | 1 => 1,
                2 | 4 | 5 => 2,
                3 => 4,
                7 => 3,
                // sprmTDefTable's operand counts its size in two bytes (plus one).
                _ if sprm == 0xD608 => 1 + usize::from(u16_at(grpprl_and_style, at + 2).unwrap_or(1)),
                _ => 1 + usize::from(operand),
            };
            match sprm {
                0x2416 | 0x244B => kind.in_table |= operand != 0,
                0x2417 | 0x244C => kind.row_end |= operand != 0,
                0x6649 => kind.in_table |= u32_at(grpprl_and_style, at + 2).unwrap_or(0) > 0,
                0x2640 if operand < 9 => kind.outline_level = Some(operand),
                _ => {}
            }
            at += 2 + size;
        }
        kind.in_table |= kind.row_end;
        kind
    }
}

/// The paragraphs' properties by the byte range of `WordDocument` their text ends in, from the
/// formatted disk pages (FKPs) the bin table names (each page read once, however often named).
fn paragraph_kinds(word: &[u8], bin_table: &[u8]) -> Vec<(u32, u32, ParagraphKind)> {
    let count = bin_table.len().saturating_sub(4) / 8;
    let mut pages: Vec<usize> = (0..count)
        .filter_map(|i| u32_at(bin_table, 4 * (count + 1) + 4 * i))
        .map(|pn| (pn & 0x003F_FFFF) as usize)
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let mut runs = Vec::new();
    for page in pages
        .into_iter()
        .filter_map(|pn| word.get(pn * FKP_BYTES..(pn + 1) * FKP_BYTES))
    {
        let run_count = usize::from(page[FKP_BYTES - 1]);
        for i in 0..run_count {
            let (Some(start), Some(end)) = (u32_at(page, 4 * i), u32_at(page, 4 * i + 4)) else {
                break;
            };
            let properties_at = 2 * usize::from(page.get(4 * (run_count + 1) + 13 * i).copied().unwrap_or(0));
            let kind = match properties_at {
                0 => ParagraphKind::default(),
                _ => {
                    let size = page.get(properties_at).copied().unwrap_or(0);
                    let (from, length) = match size {
                        0 => (
                            properties_at + 2,
                            2 * usize::from(page.get(properties_at + 1).copied().unwrap_or(0)),
                        ),
                        _ => (properties_at + 1, 2 * usize::from(size) - 1),
                    };
                    ParagraphKind::read(page.get(from..(from + length).min(FKP_BYTES)).unwrap_or(&[]))
                }
            };
            runs.push((start, end, kind));
        }
    }
    runs.sort_unstable_by_key(|(start, _, _)| *start);
    runs
}

/// What a style makes of its paragraphs: a heading (of a level: Heading 1-9 by their built-in
/// identifiers, Title level 0), an entry of an index Word generates (index 1-9, toc 1-9: a
/// heading's or term's words again with a page number, not read), or text.
#[derive(Clone, Copy, Debug, PartialEq)]
enum StyleRole {
    Heading(usize),
    GeneratedEntry,
    Text,
}

/// Each style's role (by style index).
fn style_roles(style_sheet: &[u8]) -> Vec<StyleRole> {
    let header_bytes = usize::from(u16_at(style_sheet, 0).unwrap_or(0));
    let count = usize::from(u16_at(style_sheet, 2).unwrap_or(0));
    let mut at = 2 + header_bytes;
    let mut levels = Vec::new();
    for _ in 0..count {
        let Some(size) = u16_at(style_sheet, at) else { break };
        let built_in = match size {
            0 => None,
            _ => u16_at(style_sheet, at + 2).map(|base| base & 0x0FFF),
        };
        levels.push(match built_in {
            Some(id @ 1..=9) => StyleRole::Heading(usize::from(id)),
            Some(62) => StyleRole::Heading(0),
            Some(10..=27) => StyleRole::GeneratedEntry,
            _ => StyleRole::Text,
        });
        at += 2 + usize::from(size);
    }
    levels
}

/// The document as it is read: characters in, blocks out.
struct Reader {
    body: OutlineBody,
    kinds: Vec<(u32, u32, ParagraphKind)>,
    roles: Vec<StyleRole>,
    /// Open fields, innermost last: whether each is still in its instruction.
    fields: Vec<bool>,
    in_instructions: usize,
}

impl Reader {
    fn new(kinds: Vec<(u32, u32, ParagraphKind)>, roles: Vec<StyleRole>) -> Self {
        Self {
            body: OutlineBody::default(),
            kinds,
            roles,
            fields: Vec::new(),
            in_instructions: 0,
        }
    }

    fn kind_at(&self, offset: u32) -> ParagraphKind {
        let after = self.kinds.partition_point(|(start, _, _)| *start <= offset);
        match after.checked_sub(1).map(|i| self.kinds[i]) {
            Some((_, end, kind)) if offset < end => kind,
            _ => ParagraphKind::default(),
        }
    }

    /// One character of the text, stored at byte `offset` of `WordDocument`.
    fn character(&mut self, c: char, offset: u32) {
        match c {
            '\u{13}' => {
                self.fields.push(true);
                self.in_instructions += 1;
            }
            '\u{14}' | '\u{15}' => {
                let open = match c {
                    '\u{14}' => self.fields.last_mut().map(|f| std::mem::replace(f, false)),
                    _ => self.fields.pop(),
                };
                if open == Some(true) {
                    self.in_instructions -= 1;
                }
            }
            _ if self.in_instructions > 0 => {}
            '\r' | '\u{7}' | '\u{c}' | '\u{e}' => self.paragraph_end(c, self.kind_at(offset)),
            '\u{b}' => self.body.paragraph.push('\n'),
            '\u{1e}' => self.body.paragraph.push('-'),
            '\t' => self.body.paragraph.push('\t'),
            c if c < ' ' => {}
            c => self.body.paragraph.push(c),
        }
    }

    fn paragraph_end(&mut self, mark: char, kind: ParagraphKind) {
        let in_table = kind.in_table || mark == '\u{7}';
        if in_table && !self.body.table.inside() {
            self.body.table.start();
        }
        if !in_table && self.body.table.inside() {
            self.body.end_table_part(b"tbl");
        }
        match (mark, kind.row_end) {
            ('\u{7}', true) => self.body.end_table_part(b"tr"),
            ('\u{7}', false) => {
                self.body.end_paragraph(None);
                self.body.end_table_part(b"tc");
            }
            _ => {
                let role = self.roles.get(usize::from(kind.style)).copied();
                let level = match (kind.outline_level, role) {
                    (Some(level), _) => Some(usize::from(level) + 1),
                    (None, Some(StyleRole::GeneratedEntry)) => return self.body.paragraph.clear(),
                    (None, Some(StyleRole::Heading(level))) => Some(level),
                    (None, _) => None,
                };
                self.body.end_paragraph(level.filter(|_| !in_table));
            }
        }
    }

    /// A story ends (the main text, the footnotes, ...): what is open is closed.
    fn end_story(&mut self) {
        self.paragraph_end('\r', ParagraphKind::default());
        self.fields.clear();
        self.in_instructions = 0;
    }
}

/// Feeds the characters `[start, end)` to `reader`, in order, within `budget` characters.
fn read_range(
    word: &[u8],
    pieces: &[Piece],
    (start, end): (u64, u64),
    reader: &mut Reader,
    budget: &mut usize,
) -> Result<(), ParseError> {
    let first = pieces.partition_point(|p| p.end <= start);
    for piece in pieces[first..].iter().take_while(|p| p.start < end) {
        let (from, to) = (start.max(piece.start), end.min(piece.end));
        let count = (to - from) as usize;
        *budget = budget.checked_sub(count).ok_or(ParseError::Inflates {
            part: "DOC's text pieces".into(),
            mib: (MAX_CHARACTERS >> 20) as u64,
        })?;
        let skip = (from - piece.start) as usize;
        let width = if piece.eight_bit { 1 } else { 2 };
        let at = piece.offset.saturating_add(skip * width);
        let bytes = word.get(at..at.saturating_add(count * width)).ok_or_else(|| {
            corrupt(format!(
                "a text piece (characters {from}-{to}) runs past the WordDocument stream"
            ))
        })?;
        let offset_of = |i: usize| (at + i * width) as u32;
        match piece.eight_bit {
            true => {
                let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes);
                for (i, c) in text.chars().enumerate() {
                    reader.character(c, offset_of(i));
                }
            }
            false => {
                let units = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
                let mut i = 0;
                for c in char::decode_utf16(units) {
                    let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                    reader.character(c, offset_of(i));
                    i += c.len_utf16();
                }
            }
        }
    }
    Ok(())
}

fn stream(file: &CompoundFile, name: &str) -> Result<Vec<u8>, ParseError> {
    file.stream(name)
        .ok_or_else(|| corrupt(format!("the {name} stream is missing")))?
        .map_err(corrupt)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let file = CompoundFile::open_document(&raw.bytes, "DOC")?;
    let word = stream(&file, "WordDocument")?;
    let fib = Fib::read(&word)?;
    if fib.encrypted {
        return Err(ParseError::Encrypted("DOC".into()));
    }
    let table = stream(&file, fib.table_stream)?;
    let clx = slice(&table, fib.clx).ok_or_else(|| corrupt("the piece table lies outside the table stream"))?;
    let pieces = pieces(clx)?;
    let mut reader = Reader::new(
        slice(&table, fib.paragraph_pages).map_or_else(Vec::new, |bins| paragraph_kinds(&word, bins)),
        slice(&table, fib.styles).map_or_else(Vec::new, style_roles),
    );
    let mut budget = MAX_CHARACTERS;
    for range in fib.ranges_read() {
        read_range(&word, &pieces, range, &mut reader, &mut budget)?;
        reader.end_story();
    }
    let title = summary_title(&file)
        .or(reader.body.first_heading.take())
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, reader.body.blocks)))
}

#[cfg(test)]
mod tests {
    use super::super::compound_file::fixtures::{with_text, REPORT_DOC};
    use super::*;
    use crate::parse::{outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    fn parse(bytes: Vec<u8>) -> Result<crate::parse::Document, ParseError> {
        AutoParser
            .parse(&raw_for_test("report.doc", bytes))
            .map(|mut parsed| parsed.documents.remove(0))
    }

    #[test]
    fn pieces_naming_the_same_bytes_past_the_budget_fail_and_a_password_is_encrypted() {
        // 10,000 pieces of 10,000 characters, each read from the same 10,000 bytes.
        let word = vec![b'a'; 10_000];
        let pieces: Vec<Piece> = (0..10_000u64)
            .map(|i| Piece {
                start: i * 10_000,
                end: (i + 1) * 10_000,
                offset: 0,
                eight_bit: true,
            })
            .collect();
        let mut reader = Reader::new(Vec::new(), Vec::new());
        let error = read_range(
            &word,
            &pieces,
            (0, 100_000_000),
            &mut reader,
            &mut MAX_CHARACTERS.clone(),
        );
        assert_eq!(
            error.unwrap_err().to_string(),
            "DOC's text pieces: more than 64 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
        );
        // LibreOffice's document with the FIB's fEncrypted bit set.
        let mut locked = REPORT_DOC.to_vec();
        let fib = locked.windows(2).position(|w| w == [0xEC, 0xA5]).unwrap();
        locked[fib + 11] |= 0x01;
        assert_eq!(parse(locked).unwrap_err(), ParseError::Encrypted("DOC".into()));
        // A field's instruction is left out, its result read; a Word 95 file is named.
        let mut fields = Reader::new(Vec::new(), Vec::new());
        for c in "see \u{13}PAGE\u{14}7\u{15} and \u{13}REF x\u{15}done\r".chars() {
            fields.character(c, 0);
        }
        assert_eq!(fields.body.blocks[0].text, "see 7 and done");
        let mut old = REPORT_DOC.to_vec();
        old[fib + 2..fib + 4].copy_from_slice(&100u16.to_le_bytes());
        assert_eq!(
            parse(old).unwrap_err(),
            ParseError::Binary("Word 6.0/95 document, older than Word 97".into())
        );
    }

    /// Word writes text without characters past Windows-1252 as 8-bit pieces: LibreOffice's
    /// document with its one UTF-16 piece rewritten as one (the Japanese as `?`).
    #[test]
    fn eight_bit_pieces_are_read_in_windows_1252() {
        let mut eight_bit = REPORT_DOC.to_vec();
        let find = |bytes: &[u8], needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle).unwrap();
        // The piece descriptor: its flags, the text at byte 0x800, no properties.
        let descriptor = find(&eight_bit, &[0x50, 0, 0, 8, 0, 0, 0, 0]);
        eight_bit[descriptor + 2..descriptor + 6].copy_from_slice(&(0x4000_0000u32 | (0x800 * 2)).to_le_bytes());
        let start = find(
            &eight_bit,
            &"Pump station"
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect::<Vec<u8>>(),
        );
        let units: Vec<u16> = eight_bit[start..start + 2 * 452]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        for (i, c) in char::decode_utf16(units).map(|c| c.unwrap()).enumerate() {
            let mut utf8 = [0; 4];
            let (encoded, _, unmappable) = encoding_rs::WINDOWS_1252.encode(c.encode_utf8(&mut utf8));
            eight_bit[start + i] = if unmappable { b'?' } else { encoded[0] };
        }
        let doc = parse(eight_bit).unwrap();
        let text: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        let text = text.join("\n");
        assert!(text.starts_with("Pump station overview\nThe centrifugal pumps at the Rheinhafen station were inspected in March. Bearing temperatures stayed below 70 °C."), "{text}");
        assert!(
            text.contains("Übermäßiger Verschleiß an der Dichtung von Pumpe 3 – Austausch empfohlen."),
            "{text}"
        );
        assert!(text.contains("??????????????"), "{text}");
    }

    /// Styles by their built-in identifiers; a table of contents' and an index's entries
    /// (toc 1-9, index 1-9) are not read, but a paragraph of theirs that sets its own outline
    /// level is a heading.
    #[test]
    fn generated_index_entries_are_not_read() {
        // A style sheet: its header's size (2), the count, then each style's size and identifier.
        let identifiers = [0u16, 1, 19, 27, 10, 62, 28];
        let mut sheet = [2u16, identifiers.len() as u16].map(u16::to_le_bytes).concat();
        for id in identifiers {
            sheet.extend([2u16, id].map(u16::to_le_bytes).concat());
        }
        let roles = style_roles(&sheet);
        use StyleRole::*;
        assert_eq!(
            roles,
            [
                Text,
                Heading(1),
                GeneratedEntry,
                GeneratedEntry,
                GeneratedEntry,
                Heading(0),
                Text
            ]
        );
        let paragraphs: [(&str, u16, Option<u8>); 6] = [
            ("Contents", 0, None),
            ("Piers\t1", 2, None),
            ("Costs\t2", 3, None),
            ("Piers", 1, None),
            ("The pier opens in spring.", 0, None),
            ("Own level", 2, Some(0)),
        ];
        let mut kinds = Vec::new();
        let mut text = String::new();
        for (paragraph, style, outline_level) in paragraphs {
            let start = text.len() as u32;
            text.push_str(paragraph);
            text.push('\r');
            let kind = ParagraphKind {
                style,
                outline_level,
                ..ParagraphKind::default()
            };
            kinds.push((start, text.len() as u32, kind));
        }
        let mut reader = Reader::new(kinds, roles);
        for (offset, c) in text.char_indices() {
            reader.character(c, offset as u32);
        }
        let blocks: Vec<(&str, &[String])> = reader
            .body
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.as_slice()))
            .collect();
        let piers = ["Piers".to_string()];
        assert_eq!(
            blocks,
            [
                ("Contents", &[][..]),
                ("Piers", &piers[..]),
                ("The pier opens in spring.", &piers[..]),
                ("Own level", &["Own level".to_string()][..]),
            ]
        );
    }

    #[test]
    fn headings_paragraphs_tables_and_the_title() {
        let doc = parse(with_text(REPORT_DOC, "Replace the seal of pump 3 before June.")).unwrap();
        assert_eq!(doc.title, "Quarterly maintenance report");
        let findings = vec!["Pump station overview", "Findings"];
        assert_eq!(
            outline_of(&doc),
            vec![
                ("Pump station overview", vec!["Pump station overview"], ContentType::Text),
                (
                    "The centrifugal pumps at the Rheinhafen station were inspected in March. Bearing temperatures stayed below 70 °C.",
                    vec!["Pump station overview"],
                    ContentType::Text
                ),
                ("Findings", findings.clone(), ContentType::Text),
                (
                    "Übermäßiger Verschleiß an der Dichtung von Pumpe 3 – Austausch empfohlen.",
                    findings.clone(),
                    ContentType::Text
                ),
                ("配管の腐食は見られませんでした。次回点検は六月です。", findings.clone(), ContentType::Text),
                (
                    "Pump | Hours | Status\nP1 | 1200 | ok\nP3 | 4410 | seal worn",
                    findings,
                    ContentType::Table
                ),
                ("Next steps", vec!["Pump station overview", "Next steps"], ContentType::Text),
                (
                    "Replace the seal of pump 3 before June.",
                    vec!["Pump station overview", "Next steps"],
                    ContentType::Text
                ),
            ]
        );
    }
}
