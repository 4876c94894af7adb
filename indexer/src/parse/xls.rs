//! Excel 97-2003 workbooks (`.xls`, `.xlt`; BIFF8, MS-XLS): a compound file whose `Workbook`
//! stream is a sequence of records. The workbook's globals come first (its sheets' names and
//! where each begins, the shared strings, the number formats and cell styles, whether dates
//! count from 1904), then each sheet's cells. Each worksheet becomes table blocks under its
//! name (as XLSX's: [`super::spreadsheet`]), numbers shown as their cell's style shows them
//! (`25%`, `1,234.50 €`, dates as ISO dates: [`super::xlsx_formats`]), a formula by its cached
//! result. Chart sheets and macro sheets are left out; an encrypted workbook (FILEPASS) fails
//! as encrypted, an Excel 5/95 one (BIFF5) as not supported.
//!
//! Quarry's own code, in process: every record is checked against the stream, and the text
//! the cells may make is bounded (a million cells may each name the same long shared string).

use super::compound_file::{u16_at, u32_at, CompoundFile};
use super::property_set::summary_title;
use super::spreadsheet::{sheet_blocks, workbook_documents, MergedCells, SheetRows};
use super::xlsx_formats::CellFormats;
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Text a workbook's cells may make (as ODS's repeated rows: 128 MiB).
const MAX_CELL_TEXT_BYTES: usize = 128 << 20;

const BOF: u16 = 0x0809;
const EOF: u16 = 0x000A;
const CONTINUE: u16 = 0x003C;
const FILEPASS: u16 = 0x002F;
const DATEMODE: u16 = 0x0022;
const FORMAT: u16 = 0x041E;
const XF: u16 = 0x00E0;
const BOUNDSHEET: u16 = 0x0085;
const SST: u16 = 0x00FC;
const LABELSST: u16 = 0x00FD;
const LABEL: u16 = 0x0204;
const RSTRING: u16 = 0x00D6;
const NUMBER: u16 = 0x0203;
const RK: u16 = 0x027E;
const MULRK: u16 = 0x00BD;
const BOOLERR: u16 = 0x0205;
const FORMULA: u16 = 0x0006;
const STRING: u16 = 0x0207;
const MERGEDCELLS: u16 = 0x00E5;
const BIFF8: u16 = 0x0600;

fn corrupt(what: impl Into<String>) -> ParseError {
    ParseError::Corrupt(format!("XLS: {}", what.into()))
}

/// One record: its type, its data and where it begins in the stream.
#[derive(Clone, Copy)]
struct Record<'a> {
    kind: u16,
    data: &'a [u8],
}

/// The records from byte `at` of `stream` on, up to `end` or the first that runs past it.
fn records(stream: &[u8], mut at: usize, end: usize) -> impl Iterator<Item = Record<'_>> {
    let stream = &stream[..end.min(stream.len())];
    std::iter::from_fn(move || {
        let kind = u16_at(stream, at)?;
        let length = usize::from(u16_at(stream, at + 2)?);
        let data = stream.get(at + 4..at + 4 + length)?;
        at += 4 + length;
        Some(Record { kind, data })
    })
}

/// A record's data and the CONTINUE records' after it, read as one: a string's characters
/// may go on in the next part, which then begins with the characters' width again.
struct Continued<'a> {
    parts: Vec<&'a [u8]>,
    part: usize,
    at: usize,
}

impl<'a> Continued<'a> {
    fn new(parts: Vec<&'a [u8]>) -> Self {
        Self { parts, part: 0, at: 0 }
    }

    fn byte(&mut self) -> Option<u8> {
        while self.at >= self.parts.get(self.part)?.len() {
            self.part += 1;
            self.at = 0;
        }
        self.at += 1;
        self.parts[self.part].get(self.at - 1).copied()
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes([
            self.byte()?,
            self.byte()?,
            self.byte()?,
            self.byte()?,
        ]))
    }

    fn skip(&mut self, mut count: usize) -> Option<()> {
        while count > 0 {
            let left = self.parts.get(self.part)?.len().saturating_sub(self.at);
            let step = left.min(count);
            self.at += step;
            count -= step;
            if count > 0 {
                self.part += 1;
                self.at = 0;
            }
        }
        Some(())
    }

    /// `count` characters, one byte each (the low bytes of UTF-16) or two where `wide`; a
    /// part that ends among them is followed by the next's width byte.
    fn characters(&mut self, count: usize, mut wide: bool) -> Option<String> {
        let mut units: Vec<u16> = Vec::with_capacity(count.min(1 << 16));
        while units.len() < count {
            let part = self.parts.get(self.part)?;
            let width = if wide { 2 } else { 1 };
            let available = (part.len().saturating_sub(self.at)) / width;
            if available == 0 {
                self.part += 1;
                self.at = 0;
                wide = self.parts.get(self.part)?.first()? & 1 != 0;
                self.at = 1;
                continue;
            }
            let take = available.min(count - units.len());
            let bytes = &part[self.at..self.at + take * width];
            match wide {
                true => units.extend(bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]))),
                false => units.extend(bytes.iter().map(|b| u16::from(*b))),
            }
            self.at += take * width;
        }
        Some(String::from_utf16_lossy(&units))
    }

    /// A string as the shared strings and formulas' results store it: its length, its width
    /// and options, the characters, then rich-text runs and phonetic data (skipped).
    fn string(&mut self, length_bytes: usize) -> Option<String> {
        let count = match length_bytes {
            1 => usize::from(self.byte()?),
            _ => usize::from(self.u16()?),
        };
        let options = self.byte()?;
        let runs = match options & 0x08 != 0 {
            true => usize::from(self.u16()?),
            false => 0,
        };
        let phonetic = match options & 0x04 != 0 {
            true => self.u32()? as usize,
            false => 0,
        };
        let text = self.characters(count, options & 0x01 != 0)?;
        self.skip(4 * runs)?;
        self.skip(phonetic)?;
        Some(text)
    }
}

/// A record's data and the CONTINUE records that follow it.
fn with_continues<'a>(
    record: Record<'a>,
    rest: &mut std::iter::Peekable<impl Iterator<Item = Record<'a>>>,
) -> Continued<'a> {
    let mut parts = vec![record.data];
    while let Some(next) = rest.next_if(|r| r.kind == CONTINUE) {
        parts.push(next.data);
    }
    Continued::new(parts)
}

/// A number as a spreadsheet's General format shows it: at most 15 significant digits, as
/// Excel does (0.1 + 0.2 is `0.3`).
fn general_number(number: f64) -> String {
    match format!("{number:.14e}").parse::<f64>() {
        Ok(rounded) if rounded.is_finite() => format!("{rounded}"),
        _ => format!("{number}"),
    }
}

/// An RK value: a 30-bit integer or the top 30 bits of a double, perhaps divided by 100.
fn rk_number(rk: u32) -> f64 {
    let number = match rk & 0x02 != 0 {
        true => f64::from((rk as i32) >> 2),
        false => f64::from_bits(u64::from(rk & 0xFFFF_FFFC) << 32),
    };
    match rk & 0x01 != 0 {
        true => number / 100.0,
        false => number,
    }
}

fn error_text(code: u8) -> &'static str {
    match code {
        0x00 => "#NULL!",
        0x07 => "#DIV/0!",
        0x0F => "#VALUE!",
        0x17 => "#REF!",
        0x1D => "#NAME?",
        0x24 => "#NUM!",
        _ => "#N/A",
    }
}

/// What the workbook's globals say.
struct Globals {
    sheets: Vec<(String, usize)>,
    strings: Vec<String>,
    formats: CellFormats,
}

fn globals(stream: &[u8]) -> Result<Globals, ParseError> {
    let mut records = records(stream, 0, stream.len()).peekable();
    match records.next() {
        Some(Record { kind: BOF, data }) if u16_at(data, 0) == Some(BIFF8) => {}
        Some(Record { kind: BOF, .. }) => {
            return Err(ParseError::Binary("Excel 5.0/95 workbook, older than Excel 97".into()))
        }
        _ => return Err(corrupt("the Workbook stream does not begin with a BOF record")),
    }
    let (mut sheets, mut strings, mut codes, mut format_ids, mut from_1904) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), false);
    while let Some(record) = records.next() {
        let data = record.data;
        match record.kind {
            EOF => break,
            FILEPASS => return Err(ParseError::Encrypted("XLS".into())),
            DATEMODE => from_1904 = u16_at(data, 0) == Some(1),
            XF => format_ids.push(u32::from(u16_at(data, 2).unwrap_or(0))),
            FORMAT => {
                let mut rest = Continued::new(vec![data.get(2..).unwrap_or(&[])]);
                if let (Some(id), Some(code)) = (u16_at(data, 0), rest.string(2)) {
                    codes.push((u32::from(id), code));
                }
            }
            // Worksheets only (type 0): not macro sheets, chart sheets or VBA modules.
            BOUNDSHEET if data.get(5) == Some(&0) => {
                let mut rest = Continued::new(vec![data.get(6..).unwrap_or(&[])]);
                if let (Some(at), Some(name)) = (u32_at(data, 0), rest.string(1)) {
                    sheets.push((name, at as usize));
                }
            }
            SST => {
                let mut sst = with_continues(record, &mut records);
                let count = sst.u32().zip(sst.u32()).map_or(0, |(_, unique)| unique as usize);
                // Each string takes three bytes at least: a count past that is a lie.
                strings.reserve(count.min(stream.len() / 3));
                for _ in 0..count {
                    match sst.string(2) {
                        Some(text) => strings.push(text),
                        None => break,
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Globals {
        sheets,
        strings,
        formats: CellFormats::from_records(&codes, &format_ids, from_1904),
    })
}

/// One sheet's non-empty rows, in order, its cells' text spent from `budget`: its records
/// from `at` to its EOF record, or to `end` (where the next sheet begins). A value merged down
/// a column is given in each row of its range, a title merged across the top of the sheet told
/// apart ([`MergedCells`]).
fn sheet_rows(
    stream: &[u8],
    globals: &Globals,
    name: &str,
    (at, end): (usize, usize),
    budget: &mut usize,
) -> Result<SheetRows, ParseError> {
    let mut cells: Vec<(u16, u16, String)> = Vec::new();
    let mut spend = |text: &str| {
        *budget = budget
            .checked_sub(text.len() + 16)
            .ok_or_else(|| ParseError::Inflates {
                part: format!("XLS sheet {name}'s cells"),
                mib: (MAX_CELL_TEXT_BYTES >> 20) as u64,
            })?;
        Ok::<(), ParseError>(())
    };
    let number = |style: Option<u16>, value: f64| {
        let stored = general_number(value);
        globals.formats.show(style.map(usize::from), &stored).unwrap_or(stored)
    };
    let mut records = records(stream, at, end).peekable();
    if records.next().map(|r| r.kind) != Some(BOF) {
        return Err(corrupt(format!("sheet {name} does not begin with a BOF record")));
    }
    // A formula whose cached result is a string: the STRING record after it holds it.
    let mut string_result_of: Option<(u16, u16)> = None;
    // Merged ranges (first row, last row, first column, last column).
    let mut merged_ranges: Vec<(u32, u32, usize, usize)> = Vec::new();
    while let Some(record) = records.next() {
        let data = record.data;
        let (row, column, style) = (u16_at(data, 0), u16_at(data, 2), u16_at(data, 4));
        let mut found: Vec<(u16, String)> = Vec::new();
        match record.kind {
            EOF => break,
            LABELSST => {
                let index = u32_at(data, 6).unwrap_or(u32::MAX) as usize;
                let text = globals.strings.get(index).ok_or_else(|| {
                    corrupt(format!(
                        "sheet {name}: a cell names shared string {index}, of {}",
                        globals.strings.len()
                    ))
                })?;
                found.push((column.unwrap_or(0), text.clone()));
            }
            LABEL | RSTRING => {
                let mut rest = Continued::new(vec![data.get(6..).unwrap_or(&[])]);
                found.extend(rest.string(2).map(|text| (column.unwrap_or(0), text)));
            }
            NUMBER => {
                let value = data
                    .get(6..14)
                    .map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default()));
                found.extend(value.map(|v| (column.unwrap_or(0), number(style, v))));
            }
            RK => found.extend(u32_at(data, 6).map(|rk| (column.unwrap_or(0), number(style, rk_number(rk))))),
            MULRK => {
                let first = column.unwrap_or(0);
                for (i, cell) in data
                    .get(4..data.len().saturating_sub(2))
                    .unwrap_or(&[])
                    .chunks_exact(6)
                    .enumerate()
                {
                    let value = rk_number(u32_at(cell, 2).unwrap_or(0));
                    found.push((first.saturating_add(i as u16), number(u16_at(cell, 0), value)));
                }
            }
            BOOLERR => {
                let text = match (data.get(6), data.get(7)) {
                    (Some(0), Some(0)) => "FALSE",
                    (Some(_), Some(0)) => "TRUE",
                    (Some(code), Some(_)) => error_text(*code),
                    _ => "",
                };
                found.push((column.unwrap_or(0), text.to_string()));
            }
            FORMULA => match (data.get(6..14), data.get(12..14)) {
                (Some(result), Some([0xFF, 0xFF])) => match result[0] {
                    0 => string_result_of = row.zip(column),
                    1 => found.push((
                        column.unwrap_or(0),
                        ["FALSE", "TRUE"][usize::from(result[2] != 0)].into(),
                    )),
                    2 => found.push((column.unwrap_or(0), error_text(result[2]).into())),
                    _ => {}
                },
                (Some(result), _) => {
                    let value = f64::from_le_bytes(result.try_into().unwrap_or_default());
                    found.push((column.unwrap_or(0), number(style, value)));
                }
                _ => {}
            },
            MERGEDCELLS => {
                // A count, then each range's first and last row and first and last column.
                let listed = data.get(2..).unwrap_or(&[]).chunks_exact(8);
                merged_ranges.extend(listed.filter_map(|range| {
                    Some((
                        u32::from(u16_at(range, 0)?),
                        u32::from(u16_at(range, 2)?),
                        usize::from(u16_at(range, 4)?),
                        usize::from(u16_at(range, 6)?),
                    ))
                }));
                continue;
            }
            STRING => {
                let mut rest = with_continues(record, &mut records);
                if let (Some((row, column)), Some(text)) = (string_result_of.take(), rest.string(2)) {
                    spend(&text)?;
                    cells.push((row, column, text));
                }
                continue;
            }
            _ => continue,
        }
        for (column, text) in found {
            let text = text.trim();
            if !text.is_empty() {
                spend(text)?;
                cells.push((row.unwrap_or(0), column, text.to_string()));
            }
        }
    }
    cells.sort_by_key(|(row, column, _)| (*row, *column));
    let mut merged = MergedCells::new(merged_ranges);
    let mut rows = SheetRows::default();
    let mut row_cells: Vec<(usize, String)> = Vec::new();
    let mut cells = cells.into_iter().peekable();
    while let Some((row, column, text)) = cells.next() {
        row_cells.push((usize::from(column), text));
        if cells.peek().is_none_or(|(next, _, _)| *next != row) {
            let (text, title) = merged.read_row(u32::from(row), &mut row_cells);
            rows.push(text, title);
        }
    }
    Ok(rows)
}

fn stream(file: &CompoundFile) -> Result<Vec<u8>, ParseError> {
    if file.stream("Workbook").is_none() && file.stream("Book").is_some() {
        return Err(ParseError::Binary("Excel 5.0/95 workbook, older than Excel 97".into()));
    }
    file.stream("Workbook")
        .ok_or_else(|| corrupt("the Workbook stream is missing"))?
        .map_err(corrupt)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let file = CompoundFile::open_document(&raw.bytes, "XLS")?;
    let stream = stream(&file)?;
    let globals = globals(&stream)?;
    let mut budget = MAX_CELL_TEXT_BYTES;
    let mut blocks: Vec<Block> = Vec::new();
    // Each sheet is read up to where the next begins, and a sheet listed twice once, so no
    // record is read twice however the sheets' offsets are set.
    let mut starts: Vec<usize> = globals.sheets.iter().map(|(_, at)| *at).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut read = std::collections::HashSet::new();
    for (name, at) in &globals.sheets {
        if !read.insert(*at) {
            continue;
        }
        let end = starts
            .get(starts.partition_point(|s| s <= at))
            .copied()
            .unwrap_or(stream.len());
        let rows = sheet_rows(&stream, &globals, name, (*at, end), &mut budget)?;
        sheet_blocks(name.clone(), rows, &mut blocks);
    }
    let title = summary_title(&file).unwrap_or_else(|| Document::stem_of(raw));
    Ok(workbook_documents(raw, title, blocks, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::super::compound_file::fixtures::{with_text, PARTS_XLS, XLWT_XLS};
    use super::*;
    use crate::parse::{document_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    /// A table block's text, heading path and header.
    type Row = (String, Vec<String>, Option<String>);

    fn read(name: &str, bytes: Vec<u8>) -> (String, Vec<Row>) {
        let doc = document_of(name, bytes);
        assert!(doc.blocks.iter().all(|b| b.kind == ContentType::Table));
        let rows = doc
            .blocks
            .into_iter()
            .map(|b| (b.text, b.heading_path, b.header))
            .collect();
        (doc.title, rows)
    }

    #[test]
    fn sheets_rows_numbers_as_shown_dates_and_formulas() {
        let (title, rows) = read("parts.xls", with_text(PARTS_XLS, "Gasket for valve 7"));
        assert_eq!(title, "Spare parts");
        let header = Some("Part, Count, Share, Price, Received".to_string());
        let inventory = |row: &str| (row.to_string(), vec!["Inventory".to_string()], header.clone());
        assert_eq!(
            rows,
            vec![
                inventory("Dichtung 3, 42, 25%, 1,234.50 €, 2023-07-08"),
                inventory("配管, 7, 13%, 19.99 €, 2026-11-01 14:30:00"),
                inventory("Gasket for valve 7, 1, 100%, 1.00 €"),
                (
                    "Seal of pump 3 worn, 2".into(),
                    vec!["Notes".into()],
                    Some("Note".into())
                ),
            ]
        );
        // xlwt's workbook: no summary information; its formula has no cached result (xlwt computes
        // none), so its cell is empty.
        let (title, rows) = read("messwerte.xls", XLWT_XLS.to_vec());
        assert_eq!(title, "messwerte");
        let texts: Vec<&str> = rows.iter().map(|(text, _, _)| text.as_str()).collect();
        assert_eq!(texts, ["Temperatur Ä, 21.5", "圧力, 1013", "Temperatur Ä"]);
    }

    fn record(kind: u16, data: &[u8]) -> Vec<u8> {
        [&kind.to_le_bytes()[..], &(data.len() as u16).to_le_bytes(), data].concat()
    }

    /// A cell showing shared string `string`.
    fn label(row: u16, column: u16, string: u32) -> Vec<u8> {
        let data = [
            &row.to_le_bytes()[..],
            &column.to_le_bytes(),
            &[0, 0],
            &string.to_le_bytes(),
        ]
        .concat();
        record(LABELSST, &data)
    }

    /// A workbook stream of one sheet, S: BOF, its BOUNDSHEET, `strings` (an SST and its
    /// CONTINUEs), EOF; then the sheet's BOF, `cells`, EOF. With where the sheet begins.
    fn one_sheet(strings: &[Vec<u8>], cells: &[Vec<u8>]) -> (Vec<u8>, usize) {
        let mut head = [
            record(BOF, &[0, 6, 5, 0]),
            record(BOUNDSHEET, &[0, 0, 0, 0, 0, 0, 1, 0, b'S']),
        ]
        .concat();
        head.extend(strings.concat());
        head.extend(record(EOF, &[]));
        let sheet_at = head.len();
        head[8 + 4..8 + 8].copy_from_slice(&(sheet_at as u32).to_le_bytes());
        let stream = [head, record(BOF, &[0, 6, 0x10, 0]), cells.concat(), record(EOF, &[])].concat();
        (stream, sheet_at)
    }

    /// Sheet S's rows, with the whole budget for its cells' text.
    fn rows_of((stream, sheet_at): &(Vec<u8>, usize)) -> Result<SheetRows, ParseError> {
        let read = globals(stream).unwrap();
        sheet_rows(
            stream,
            &read,
            "S",
            (*sheet_at, stream.len()),
            &mut MAX_CELL_TEXT_BYTES.clone(),
        )
    }

    #[test]
    fn cells_naming_one_long_string_past_the_budget_fail_and_a_password_is_encrypted() {
        // A shared string of 8,000 characters (in a record and its CONTINUE), named by 20,000
        // cells: 160 MB of cell text from a 300 KB stream.
        let long = "x".repeat(8000);
        let sst = [&[1u8, 0, 0, 0, 1, 0, 0, 0, 0x40, 0x1F, 0][..], &long.as_bytes()[..4000]].concat();
        let continued = [&[0u8][..], &long.as_bytes()[4000..]].concat();
        let cells: Vec<Vec<u8>> = (0..20_000u16).map(|row| label(row, 0, 0)).collect();
        let workbook = one_sheet(&[record(SST, &sst), record(CONTINUE, &continued)], &cells);
        assert_eq!(globals(&workbook.0).unwrap().strings, [long]);
        assert_eq!(
            rows_of(&workbook).unwrap_err().to_string(),
            "XLS sheet S's cells: more than 128 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
        );
        // LibreOffice's workbook with its first record after BOF made a FILEPASS.
        let mut locked = PARTS_XLS.to_vec();
        let bof = locked
            .windows(6)
            .position(|w| w == [0x09, 0x08, 0x10, 0x00, 0x00, 0x06])
            .unwrap();
        locked[bof + 20..bof + 22].copy_from_slice(&FILEPASS.to_le_bytes());
        let error = AutoParser.parse(&raw_for_test("locked.xls", locked)).unwrap_err();
        assert_eq!(error, ParseError::Encrypted("XLS".into()));
    }

    #[test]
    fn a_value_merged_down_a_column_reads_with_each_row_it_spans() {
        let words = ["Nord", "Hamburg", "Bremen", "Kiel", "Süd", "Ulm", "Absatz 2026"];
        let mut sst = [(words.len() as u32).to_le_bytes(), (words.len() as u32).to_le_bytes()].concat();
        for word in words {
            let (latin, _, _) = encoding_rs::WINDOWS_1252.encode(word);
            sst.extend([&(latin.len() as u16).to_le_bytes()[..], &[0], &latin].concat());
        }
        // A title over columns 0-3 on row 0; rows 1-3 of column 0 merged (Nord), rows 4-5 (Süd).
        let ranges: Vec<u8> = [[0u16, 0, 0, 3], [1, 3, 0, 0], [4, 5, 0, 0]]
            .iter()
            .flat_map(|range| range.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        let cells = [
            label(0, 0, 6),
            label(1, 0, 0),
            label(1, 1, 1),
            label(2, 1, 2),
            label(3, 1, 3),
            label(5, 1, 5),
            label(4, 0, 4),
            record(MERGEDCELLS, &[&3u16.to_le_bytes()[..], &ranges].concat()),
        ];
        let sheet = rows_of(&one_sheet(&[record(SST, &sst)], &cells)).unwrap();
        assert_eq!(sheet.titles, ["Absatz 2026"]);
        assert_eq!(
            sheet.rows,
            ["Nord, Hamburg", "Nord, Bremen", "Nord, Kiel", "Süd", "Süd, Ulm"]
        );
    }

    #[test]
    fn strings_go_on_in_continue_records_with_their_width_again() {
        // "ab" in one part, "cd" wide in the next (its width byte first), then a rich run.
        let first: &[u8] = &[4, 0, 0x08, 1, 0, b'a', b'b'];
        let second: &[u8] = &[1, b'c', 0, b'd', 0, 0, 0, 0, 0];
        let mut parts = Continued::new(vec![first, second]);
        assert_eq!(parts.string(2).as_deref(), Some("abcd"));
        assert_eq!(parts.byte(), None);
        assert_eq!(general_number(0.1 + 0.2), "0.3");
        assert_eq!(general_number(42.0), "42");
        assert_eq!(rk_number((1234 << 2) | 0x03), 12.34);
    }
}
