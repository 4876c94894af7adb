//! Hangul Word Processor files (`.hwp`, HWP 5.0: what Hancom Office has saved since 2002, the
//! documents of Korea's government, schools and companies): a compound file
//! ([`super::compound_file`]) whose `FileHeader` stream says whether the rest is compressed or
//! encrypted, and whose `BodyText` storage holds the sections (`Section0`, `Section1`, ...), each
//! a stream of records (raw deflate where the header says so). A record's header packs its tag
//! (10 bits), its level of nesting (10 bits) and its size (12 bits; `0xFFF` and a size of 32 bits
//! after). A paragraph's text (`PARA_TEXT`) is UTF-16 with control characters in it: a line
//! break, a tab, a space that does not break are read as such; a field's, a table's, a note's or
//! a drawing's control is 8 code units long and read as nothing (what it holds comes in records
//! of its own after the paragraph).
//!
//! One document per file: its title the summary information's (`\u{5}HwpSummaryInformation`),
//! else the file's name; each paragraph a block; a table (`tbl ` control) a table block, a row
//! per line and its cells, in their columns, joined by ` | ` (a cell's paragraphs joined by
//! spaces, a table inside a cell read into that cell); a caption, a header's or footer's, a
//! footnote's and a text box's paragraphs as blocks where they come. Read by quarry's own code,
//! in process, each section inflated within [`MAX_SECTION_BYTES`]; a distribution document's
//! sections decrypted first ([`super::hwp_distribution`]); a file saved with a password or under
//! DRM fails as encrypted; a section whose records break partway keeps the text before and says
//! so in the document's warnings.

use super::compound_file::{u32_at, CompoundFile, Storage, ROOT_STORAGE};
use super::compressed::read_reserved;
use super::hwp_distribution::decrypt_section;
use super::markup_body::table_text;
use super::property_set::title_in;
use super::text::collapse_whitespace;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// A section's records once inflated, at most.
pub const MAX_SECTION_BYTES: u64 = 128 << 20;
const SIGNATURE: &[u8] = b"HWP Document File";
const COMPRESSED: u32 = 1;
const PASSWORD: u32 = 1 << 1;
const DISTRIBUTION: u32 = 1 << 2;
const DRM: u32 = 1 << 4;

const PARA_TEXT: u16 = 67;
const CTRL_HEADER: u16 = 71;
const LIST_HEADER: u16 = 72;
const TABLE: u16 = 77;
/// A table control's id (`tbl `), stored as a little-endian number of its four letters.
const TABLE_CONTROL: &[u8; 4] = b" lbt";

/// Whether a compound file is an HWP document: it holds a `FileHeader` and a `BodyText` (or a
/// distribution document's `ViewText`) storage.
pub(super) fn is_hwp(file: &CompoundFile) -> bool {
    let has_header = file.stream_names().iter().any(|n| n.eq_ignore_ascii_case("FileHeader"));
    has_header
        && ["BodyText", "ViewText"]
            .iter()
            .any(|name| storage_named(file, name).is_some())
}

fn storage_named(file: &CompoundFile, name: &str) -> Option<Storage> {
    let storages = file.storages_in(ROOT_STORAGE);
    storages
        .into_iter()
        .find(|(found, _)| found.eq_ignore_ascii_case(name))
        .map(|(_, s)| s)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let file = CompoundFile::open(&raw.bytes).map_err(|e| ParseError::Corrupt(format!("HWP: {e}")))?;
    let header = match file.stream("FileHeader") {
        Some(Ok(header)) if header.starts_with(SIGNATURE) => header,
        Some(Err(e)) => return Err(ParseError::Corrupt(format!("HWP: {e}"))),
        _ => {
            return Err(ParseError::Corrupt(
                "HWP: no `FileHeader` stream saying `HWP Document File`".into(),
            ))
        }
    };
    let flags = u32_at(&header, 36).unwrap_or_default();
    if flags & (PASSWORD | DRM) != 0 {
        return Err(ParseError::Encrypted("HWP".into()));
    }
    // A distribution document's text is in `ViewText`, encrypted (`BodyText` holds none).
    let distributed = flags & DISTRIBUTION != 0;
    let storage = match distributed {
        true => "ViewText",
        false => "BodyText",
    };
    let body =
        storage_named(&file, storage).ok_or_else(|| ParseError::Corrupt(format!("HWP: no `{storage}` storage")))?;
    let mut reading = Reading::default();
    for number in 0.. {
        let name = format!("Section{number}");
        let Some(stream) = file.stream_in(body, &name) else {
            break;
        };
        let stream = stream.map_err(|e| ParseError::Corrupt(format!("HWP {name}: {e}")))?;
        let stream = match distributed {
            true => decrypt_section(&stream)
                .map_err(|e| ParseError::Corrupt(format!("HWP distribution document {storage}/{name}: {e}")))?,
            false => stream,
        };
        let records = match flags & COMPRESSED != 0 {
            true => inflate(&stream, &name)?,
            false => stream,
        };
        if let Err(damage) = reading.read_section(&records) {
            reading
                .warnings
                .push(format!("HWP {name}: {damage}; the text before it is kept"));
        }
    }
    reading.end_table();
    let title = title_in(&file, "\u{5}HwpSummaryInformation").unwrap_or_else(|| Document::stem_of(raw));
    let document = Document::from_raw(raw, title, reading.blocks).with_warnings(reading.warnings);
    Ok(Parsed::one(document))
}

/// A section's raw deflate stream inflated, within [`MAX_SECTION_BYTES`], into room reserved
/// at once as a compressed file's is (a section states no size).
fn inflate(stream: &[u8], name: &str) -> Result<Vec<u8>, ParseError> {
    let decoder = flate2::read::DeflateDecoder::new(stream);
    let records = read_reserved(decoder, MAX_SECTION_BYTES + 1, MAX_SECTION_BYTES)
        .map_err(|e| ParseError::Corrupt(format!("HWP {name}: its compressed records do not inflate ({e})")))?;
    if records.len() as u64 > MAX_SECTION_BYTES {
        return Err(ParseError::Inflates {
            part: format!("HWP section {name}"),
            mib: MAX_SECTION_BYTES >> 20,
        });
    }
    Ok(records)
}

/// One record: its tag, its level of nesting, its data.
struct Record<'a> {
    tag: u16,
    level: u16,
    data: &'a [u8],
}

/// The records of a section, in order; an error names the byte where they break.
fn records(bytes: &[u8]) -> impl Iterator<Item = Result<Record<'_>, String>> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        // Fewer than a header's bytes, all zero: a decrypted section's padding.
        if bytes
            .get(at..)
            .is_none_or(|rest| rest.len() < 4 && rest.iter().all(|b| *b == 0))
        {
            return None;
        }
        let record_at = std::mem::replace(&mut at, bytes.len());
        let broken = move || Some(Err(format!("a record at byte {record_at} runs past the section's end")));
        let Some(header) = u32_at(bytes, record_at) else {
            return broken();
        };
        let (tag, level) = ((header & 0x3FF) as u16, ((header >> 10) & 0x3FF) as u16);
        let (mut size, mut start) = ((header >> 20) as usize, record_at + 4);
        if size == 0xFFF {
            let Some(long) = u32_at(bytes, start) else {
                return broken();
            };
            (size, start) = (long as usize, start + 4);
        }
        let Some(data) = start.checked_add(size).and_then(|end| bytes.get(start..end)) else {
            return broken();
        };
        at = start + size;
        Some(Ok(Record { tag, level, data }))
    })
}

/// A paragraph's text: its UTF-16 code units, control characters read as what they show.
fn paragraph_text(data: &[u8]) -> String {
    let units: Vec<u16> = data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    let mut text = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        let unit = units[i];
        i += 1;
        match unit {
            32.. => text.push(unit),
            // A line break; a hyphen; spaces that do not break or are of fixed width.
            10 => text.push(u16::from(b'\n')),
            24 => text.push(u16::from(b'-')),
            30 | 31 => text.push(u16::from(b' ')),
            // The paragraph's end, and characters that show nothing.
            0 | 13 | 25..=29 => {}
            // A tab, then the control's other seven units.
            9 => {
                text.push(u16::from(b'\t'));
                i += 7;
            }
            // A field, a table, a note, a drawing...: eight units, read as nothing here.
            _ => i += 7,
        }
    }
    String::from_utf16_lossy(&text)
}

/// The table being read: its control's level, its cells' text by row and column, the cell open.
struct Table {
    level: u16,
    seen_body: bool,
    cells: Vec<(u16, u16, String)>,
    cell: Option<usize>,
}

/// What the sections have given so far.
#[derive(Default)]
struct Reading {
    blocks: Vec<Block>,
    warnings: Vec<String>,
    table: Option<Table>,
}

impl Reading {
    fn read_section(&mut self, bytes: &[u8]) -> Result<(), String> {
        for record in records(bytes) {
            let record = record?;
            if self.table.as_ref().is_some_and(|t| record.level <= t.level) {
                self.end_table();
            }
            match record.tag {
                CTRL_HEADER if self.table.is_none() && record.data.starts_with(TABLE_CONTROL) => {
                    self.table = Some(Table {
                        level: record.level,
                        seen_body: false,
                        cells: Vec::new(),
                        cell: None,
                    });
                }
                TABLE => {
                    if let Some(table) = self.table.as_mut().filter(|t| record.level == t.level + 1) {
                        table.seen_body = true;
                    }
                }
                LIST_HEADER => self.open_cell(&record),
                PARA_TEXT => self.add_paragraph(paragraph_text(record.data)),
                _ => {}
            }
        }
        Ok(())
    }

    /// A cell of the open table starts (its column and row after the list's 8 bytes); a list
    /// before the table's body is its caption, read as paragraphs.
    fn open_cell(&mut self, record: &Record) {
        let Some(table) = self.table.as_mut().filter(|t| record.level == t.level + 1) else {
            return;
        };
        let address = |at: usize| Some(u16::from_le_bytes(record.data.get(at..at + 2)?.try_into().ok()?));
        table.cell = match (table.seen_body, address(8), address(10)) {
            (true, Some(column), Some(row)) => {
                table.cells.push((row, column, String::new()));
                Some(table.cells.len() - 1)
            }
            _ => None,
        };
    }

    fn add_paragraph(&mut self, text: String) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        match self.table.as_mut().and_then(|t| Some(&mut t.cells[t.cell?].2)) {
            Some(cell) => {
                if !cell.is_empty() {
                    cell.push(' ');
                }
                cell.push_str(&collapse_whitespace(text));
            }
            None => self.blocks.push(Block::text(text, &[])),
        }
    }

    /// The open table's rows as a table block.
    fn end_table(&mut self) {
        let Some(mut table) = self.table.take() else {
            return;
        };
        table.cells.sort_by_key(|(row, column, _)| (*row, *column));
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut last_row = None;
        for (row, _, text) in table.cells {
            if last_row != Some(row) {
                rows.push(Vec::new());
                last_row = Some(row);
            }
            rows.last_mut().expect("a row was pushed").push(text);
        }
        let text = table_text(&rows);
        if !text.is_empty() {
            self.blocks.push(Block::of_kind(text, ContentType::Table, Vec::new()));
        }
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! HWP files written as Hancom's specification lays them out (cfb writes the compound
    //! file): a `FileHeader`, a `BodyText` storage of sections of records, a summary title.

    use std::io::{Cursor, Write};

    /// A record's bytes: its header (a size of 4,095 or more written after it), then `data`.
    pub fn record(tag: u16, level: u16, data: &[u8]) -> Vec<u8> {
        let size = data.len().min(0xFFF) as u32;
        let mut out = (u32::from(tag) | u32::from(level) << 10 | size << 20)
            .to_le_bytes()
            .to_vec();
        if size == 0xFFF {
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(data);
        out
    }

    /// A paragraph's text record: `text` in UTF-16, `\t` as a tab control, `{table}` as a table
    /// control's eight units, a paragraph end after.
    pub fn paragraph(level: u16, text: &str) -> Vec<u8> {
        let mut units: Vec<u16> = Vec::new();
        for (i, part) in text.split("{table}").enumerate() {
            if i > 0 {
                units.extend([11, 0x6c74, 0x2062, 0, 0, 0, 0, 11]);
            }
            for unit in part.encode_utf16() {
                match unit {
                    9 => units.extend([9, 0, 0, 0, 0, 0, 0, 9]),
                    _ => units.push(unit),
                }
            }
        }
        units.push(13);
        let data: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
        [record(66, level, &[0; 22]), record(super::PARA_TEXT, level + 1, &data)].concat()
    }

    /// A table of `rows` at `level` (the level of the paragraph text holding its control).
    pub fn table(level: u16, rows: &[&[&str]]) -> Vec<u8> {
        let mut out = record(super::CTRL_HEADER, level, b" lbt\0\0\0\0");
        out.extend(record(super::TABLE, level + 1, &[0; 18]));
        for (row, cells) in rows.iter().enumerate() {
            for (column, text) in cells.iter().enumerate() {
                let mut cell = vec![1, 0, 0, 0, 0, 0, 0, 0];
                cell.extend_from_slice(&(column as u16).to_le_bytes());
                cell.extend_from_slice(&(row as u16).to_le_bytes());
                cell.extend_from_slice(&[1, 0, 1, 0]);
                out.extend(record(super::LIST_HEADER, level + 1, &cell));
                out.extend(paragraph(level + 1, text));
            }
        }
        out
    }

    /// An HWP file of `sections` (each its records), compressed or not, with `flags` besides.
    pub fn hwp(sections: &[Vec<u8>], compressed: bool, flags: u32) -> Vec<u8> {
        let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        let mut header = super::SIGNATURE.to_vec();
        header.resize(32, 0);
        header.extend_from_slice(&0x0500_0102u32.to_le_bytes());
        header.extend_from_slice(&(flags | u32::from(compressed)).to_le_bytes());
        header.resize(256, 0);
        file.create_stream("/FileHeader").unwrap().write_all(&header).unwrap();
        let distributed = flags & super::DISTRIBUTION != 0;
        let storage = if distributed { "ViewText" } else { "BodyText" };
        file.create_storage(format!("/{storage}")).unwrap();
        for (number, records) in sections.iter().enumerate() {
            let mut bytes = match compressed {
                true => {
                    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                    encoder.write_all(records).unwrap();
                    encoder.finish().unwrap()
                }
                false => records.clone(),
            };
            if distributed {
                let key = *b"hwp-section-key!";
                bytes =
                    super::super::hwp_distribution::fixtures::encrypted_section(&bytes, key, 0x5EED + number as u32);
            }
            let mut stream = file.create_stream(format!("/{storage}/Section{number}")).unwrap();
            stream.write_all(&bytes).unwrap();
        }
        file.flush().unwrap();
        file.into_inner().into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{hwp, paragraph, record, table};
    use super::*;
    use crate::parse::{detect_format, outline_of, raw_for_test, AutoParser, Format, Parser};

    fn report() -> Vec<Vec<u8>> {
        let first = [
            paragraph(0, "한글 문서: 항만 점검 보고서"),
            paragraph(0, "점검 결과\t요약{table}"),
            table(1, &[&["펌프", "상태"], &["P1", "정상"], &["P3", "씰 마모"]]),
            paragraph(0, "다음 점검은 6월입니다."),
        ]
        .concat();
        vec![first, paragraph(0, "Section two: the quay is closed.")]
    }

    #[test]
    fn paragraphs_and_tables_are_read_from_every_section_compressed_or_not() {
        for compressed in [true, false] {
            let bytes = hwp(&report(), compressed, 0);
            assert_eq!(detect_format("report.hwp", &bytes).unwrap(), Format::Hwp);
            assert_eq!(detect_format("upload", &bytes).unwrap(), Format::Hwp);
            let parsed = AutoParser.parse(&raw_for_test("report.hwp", bytes)).unwrap();
            let document = &parsed.documents[0];
            assert_eq!(document.title, "report");
            assert_eq!(
                outline_of(document),
                [
                    ("한글 문서: 항만 점검 보고서", vec![], ContentType::Text),
                    ("점검 결과\t요약", vec![], ContentType::Text),
                    ("펌프 | 상태\nP1 | 정상\nP3 | 씰 마모", vec![], ContentType::Table),
                    ("다음 점검은 6월입니다.", vec![], ContentType::Text),
                    ("Section two: the quay is closed.", vec![], ContentType::Text),
                ],
                "compressed {compressed}"
            );
        }
    }

    #[test]
    fn a_distribution_documents_sections_are_decrypted() {
        let plain = AutoParser
            .parse(&raw_for_test("report.hwp", hwp(&report(), true, 0)))
            .unwrap();
        for compressed in [true, false] {
            let shared = hwp(&report(), compressed, DISTRIBUTION);
            assert_eq!(detect_format("upload", &shared).unwrap(), Format::Hwp);
            let parsed = AutoParser.parse(&raw_for_test("report.hwp", shared)).unwrap();
            assert_eq!(
                parsed.documents[0].blocks, plain.documents[0].blocks,
                "compressed {compressed}"
            );
        }
    }

    #[test]
    fn long_records_and_control_characters_are_read() {
        let long = "가".repeat(3000);
        let units: Vec<u8> = [
            0x41u16, 10, 0x42, 30, 0x43, 24, 0x44, 3, 0x25, 0x64, 0x74, 0x65, 0, 0, 3, 0x45, 13,
        ]
        .iter()
        .flat_map(|u| u.to_le_bytes())
        .collect();
        let records = [paragraph(0, &long), record(PARA_TEXT, 1, &units)].concat();
        let parsed = AutoParser
            .parse(&raw_for_test("long.hwp", hwp(&[records], true, 0)))
            .unwrap();
        let texts: Vec<&str> = parsed.documents[0].blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, [long.as_str(), "A\nB C-DE"]);
    }

    #[test]
    fn encrypted_damaged_and_bomb_files_fail_or_keep_what_came_before() {
        let encrypted = AutoParser.parse(&raw_for_test("secret.hwp", hwp(&report(), true, PASSWORD)));
        assert_eq!(encrypted.unwrap_err(), ParseError::Encrypted("HWP".into()));
        // Records cut partway: the paragraphs before are kept, with a warning.
        let mut cut = report()[0].clone();
        cut.truncate(cut.len() - 5);
        let parsed = AutoParser
            .parse(&raw_for_test("cut.hwp", hwp(&[cut], false, 0)))
            .unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.blocks[0].text, "한글 문서: 항만 점검 보고서");
        assert!(
            document.warnings[0].contains("HWP Section0: a record at byte"),
            "{:?}",
            document.warnings
        );
        // A section that inflates past the limit fails as a bomb; one that does not inflate
        // as damaged.
        let bomb = [paragraph(0, "x"), vec![0u8; (MAX_SECTION_BYTES + 1) as usize]].concat();
        let error = AutoParser
            .parse(&raw_for_test("bomb.hwp", hwp(&[bomb], true, 0)))
            .unwrap_err();
        assert_eq!(
            error,
            ParseError::Inflates {
                part: "HWP section Section0".into(),
                mib: 128
            }
        );
        // A header saying compressed of a section that is not (0xFF: a block of no type).
        let garbled = hwp(&[vec![0xFF; 64]], false, COMPRESSED);
        let error = AutoParser.parse(&raw_for_test("garbled.hwp", garbled)).unwrap_err();
        assert!(
            matches!(&error, ParseError::Corrupt(detail) if detail.contains("do not inflate")),
            "{error:?}"
        );
    }
}
