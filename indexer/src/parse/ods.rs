//! ODS (zip + OpenDocument spreadsheet): each sheet's rows as table blocks under the sheet's
//! name, as XLSX's ([`super::spreadsheet`]). A cell shows the text its paragraphs hold, the
//! value as the application formatted it (`25 %`, `1.234,50 €`), but a date as XLSX's dates
//! are shown, `2026-11-01` or `2026-11-01 14:30:00` (its shown form, `01/11/26`, depends on a
//! locale a search does not know); a cell that holds no text shows its stored value. Rows and
//! cells repeated (`number-rows-repeated`, `number-columns-repeated`, how OpenDocument writes
//! runs of equal rows and cells) are repeated, within a budget; comments are left out.

use quick_xml::events::{BytesStart, Event};

use super::ooxml::local_attribute;
use super::ooxml::{local_name, PartReader};
use super::opendocument::{count_attribute, is_left_out, open_content, push_inline};
use super::spreadsheet::{sheet_blocks, workbook_documents, MergedCells, SheetRows, MAX_PADDED_COLUMNS};
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Bytes of row text (each row counted 64 bytes more, for its block) repeated rows and cells
/// may make: a row of text repeated a million times, or a wide cell repeated over every
/// column, must not make gigabytes from a small file.
const MAX_SHEET_TEXT_BYTES: usize = 128 << 20;

/// A cell's stored value, for a cell whose paragraphs show none (files written by programs
/// that leave the display to the reader).
fn stored_value(element: &BytesStart) -> Option<String> {
    [
        b"string-value".as_slice(),
        b"date-value",
        b"time-value",
        b"value",
        b"boolean-value",
    ]
    .iter()
    .find_map(|name| local_attribute(element, name))
}

/// A date cell's date (`office:date-value`) as XLSX's dates are shown: `2026-11-01`, or with
/// its time, `2026-11-01 14:30:00` (fractions of a second left out).
fn date_value(element: &BytesStart) -> Option<String> {
    if local_attribute(element, b"value-type").as_deref() != Some("date") {
        return None;
    }
    let value = local_attribute(element, b"date-value")?;
    let (date, time) = value.trim().split_once('T').unwrap_or((value.trim(), ""));
    let time = time.split(['.', 'Z', '+']).next().unwrap_or_default();
    Some(match time.is_empty() || time == "00:00:00" {
        true => date.to_string(),
        false => format!("{date} {time}"),
    })
}

/// A cell or row's repeat count (at least 1).
fn repeated(element: &BytesStart, name: &[u8]) -> usize {
    count_attribute(element, name).unwrap_or(1).max(1)
}

/// One sheet as it is read.
#[derive(Default)]
struct Sheet {
    name: String,
    rows: SheetRows,
    /// The current row's cells (column, text), its next column and its repeat count.
    cells: Vec<(usize, String)>,
    column: usize,
    row_repeats: usize,
    /// The current cell's paragraphs and paragraph, its date, its stored value and its
    /// repeat count.
    paragraphs: Vec<String>,
    paragraph: String,
    date: Option<String>,
    stored: Option<String>,
    cell_repeats: usize,
    /// The current row (1-based; a repeated row counts its repeats) and the rows the current
    /// cell spans; values merged down a column, given in each row they span.
    row_number: u32,
    row_span: u32,
    column_span: usize,
    merged: MergedCells,
}

impl Sheet {
    /// An element of the sheet starts.
    fn start(&mut self, element: &BytesStart) {
        match local_name(element.name().as_ref()) {
            b"table-row" => self.start_row(element),
            b"table-cell" | b"covered-table-cell" => self.start_cell(element),
            _ => push_inline(element, &mut self.paragraph),
        }
    }

    /// An element of the sheet (by local name) ends.
    fn end(&mut self, name: &[u8], budget: &mut usize, part: &str) -> Result<(), ParseError> {
        match name {
            b"p" | b"h" => self.end_paragraph(),
            b"table-cell" | b"covered-table-cell" => self.end_cell(budget, part)?,
            b"table-row" => self.end_row(budget, part)?,
            _ => {}
        }
        Ok(())
    }

    fn start_row(&mut self, element: &BytesStart) {
        self.cells.clear();
        self.column = 0;
        let repeats = u32::try_from(self.row_repeats.max(1)).unwrap_or(u32::MAX);
        self.row_number = self.row_number.saturating_add(repeats);
        self.row_repeats = repeated(element, b"number-rows-repeated");
    }

    fn start_cell(&mut self, element: &BytesStart) {
        self.paragraphs.clear();
        self.paragraph.clear();
        self.date = date_value(element);
        self.stored = stored_value(element);
        self.cell_repeats = repeated(element, b"number-columns-repeated");
        let span = count_attribute(element, b"number-rows-spanned").unwrap_or(1);
        self.row_span = u32::try_from(span).unwrap_or(u32::MAX);
        self.column_span = count_attribute(element, b"number-columns-spanned").unwrap_or(1);
    }

    fn end_paragraph(&mut self) {
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if !text.is_empty() {
            self.paragraphs.push(text);
        }
    }

    /// The cell ends: its text in each column it is repeated over (those up to
    /// [`MAX_PADDED_COLUMNS`]; once past it, once).
    fn end_cell(&mut self, budget: &mut usize, part: &str) -> Result<(), ParseError> {
        let shown = std::mem::take(&mut self.paragraphs).join(" ");
        let text = match (self.date.take(), shown.is_empty()) {
            (Some(date), _) => date,
            (None, true) => self.stored.take().unwrap_or_default().trim().to_string(),
            (None, false) => shown,
        };
        let start = self.column;
        self.column = self.column.saturating_add(self.cell_repeats);
        if text.is_empty() {
            return Ok(());
        }
        if self.row_span > 1 {
            let last = self.row_number.saturating_add(self.row_span - 1);
            self.merged.starting(last, start, &text);
        }
        if self.column_span > 1 {
            self.merged.across(self.row_number, start);
        }
        let end = self.column.min(MAX_PADDED_COLUMNS.max(start + 1));
        for column in start..end {
            spend(budget, text.len() + 2, part)?;
            self.cells.push((column, text.clone()));
        }
        Ok(())
    }

    /// The row ends: its text, as many times as it is repeated (an empty row, none).
    fn end_row(&mut self, budget: &mut usize, part: &str) -> Result<(), ParseError> {
        let (text, title) = self.merged.read_row(self.row_number, &mut self.cells);
        if text.is_empty() {
            return Ok(());
        }
        for _ in 1..self.row_repeats {
            spend(budget, text.len() + 64, part)?;
            self.rows.push(text.clone(), title);
        }
        self.rows.push(text, title);
        Ok(())
    }
}

/// Takes `bytes` from what repeats may still make, or fails the file.
fn spend(budget: &mut usize, bytes: usize, part: &str) -> Result<(), ParseError> {
    *budget = budget.checked_sub(bytes).ok_or_else(|| ParseError::Inflates {
        part: format!("ODS part {part}'s repeated rows and cells"),
        mib: (MAX_SHEET_TEXT_BYTES >> 20) as u64,
    })?;
    Ok(())
}

/// The blocks of every sheet in `content.xml`, in order.
fn sheets(xml: &str, part: &str) -> Result<Vec<Block>, ParseError> {
    let mut reader = PartReader::new(xml, "ODS", part);
    let mut blocks = Vec::new();
    let mut budget = MAX_SHEET_TEXT_BYTES;
    let (mut sheet, mut sheets_started): (Option<Sheet>, usize) = (None, 0);
    // How deep inside what is read as no sheet's text the reader is: comments, and a table
    // inside a sheet's table (not what spreadsheets write).
    let mut skipped = 0usize;
    loop {
        match reader.next()? {
            Event::Start(e) => {
                let name = e.name();
                let local = local_name(name.as_ref());
                let nested = is_left_out(name.as_ref()) || local == b"table";
                match sheet.as_mut() {
                    _ if skipped > 0 => skipped += 1,
                    Some(_) if nested => skipped += 1,
                    Some(sheet) => sheet.start(&e),
                    None if local == b"table" => {
                        sheets_started += 1;
                        let name = local_attribute(&e, b"name").unwrap_or_else(|| format!("Sheet {sheets_started}"));
                        sheet = Some(Sheet {
                            name,
                            ..Default::default()
                        })
                    }
                    None => {}
                }
            }
            Event::Empty(e) if skipped == 0 => {
                if let Some(sheet) = sheet.as_mut() {
                    sheet.start(&e);
                    sheet.end(local_name(e.name().as_ref()), &mut budget, part)?;
                }
            }
            Event::Text(t) if skipped == 0 => {
                if let Some(sheet) = sheet.as_mut() {
                    sheet.paragraph.push_str(&reader.text(&t)?);
                }
            }
            Event::End(_) if skipped > 0 => skipped -= 1,
            Event::End(e) if local_name(e.name().as_ref()) == b"table" => {
                if let Some(done) = sheet.take() {
                    sheet_blocks(done.name, done.rows, &mut blocks);
                }
            }
            Event::End(e) => {
                if let Some(sheet) = sheet.as_mut() {
                    sheet.end(local_name(e.name().as_ref()), &mut budget, part)?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    // A sheet the file leaves open (cut short) still gives its rows.
    if let Some(done) = sheet {
        sheet_blocks(done.name, done.rows, &mut blocks);
    }
    Ok(blocks)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let (mut package, xml) = open_content(&raw.bytes, "ODS")?;
    let blocks = sheets(&xml, "content.xml")?;
    let title = package.title_in("meta.xml")?.unwrap_or_else(|| Document::stem_of(raw));
    Ok(workbook_documents(raw, title, blocks, Vec::new()))
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, opendocument::fixtures::opendocument};
    use crate::parse::{outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    fn cell(text: &str) -> String {
        format!("<table:table-cell><text:p>{text}</text:p></table:table-cell>")
    }

    fn ods(body: &str, title: Option<&str>) -> Vec<u8> {
        opendocument("spreadsheet", body, title)
    }

    #[test]
    fn a_value_spanning_rows_reads_with_each_row_it_spans() {
        let spanned = |text: &str, rows: u32| {
            format!(
                r#"<table:table-cell table:number-rows-spanned="{rows}"><text:p>{text}</text:p></table:table-cell>"#
            )
        };
        let row = |cells: &[String]| format!("<table:table-row>{}</table:table-row>", cells.concat());
        let covered = "<table:covered-table-cell/>".to_string();
        let body = [
            r#"<table:table table:name="Absatz">"#.to_string(),
            row(&[
                r#"<table:table-cell table:number-columns-spanned="3"><text:p>Absatz 2026</text:p></table:table-cell>"#
                    .to_string(),
                covered.clone(),
                covered.clone(),
            ]),
            row(&[cell("Region"), cell("Stadt"), cell("Stück")]),
            row(&[spanned("Nord", 3), cell("Hamburg"), cell("12")]),
            // A repeated row counts as the rows it stands for.
            format!(
                r#"<table:table-row table:number-rows-repeated="2">{covered}{}{}</table:table-row>"#,
                cell("Bremen"),
                cell("9")
            ),
            row(&[cell(""), cell("Kiel"), cell("4")]),
            "</table:table>".to_string(),
        ]
        .concat();
        let doc = document_of("absatz.ods", ods(&body, None));
        assert_eq!(
            outline_of(&doc)
                .into_iter()
                .map(|(text, path, _)| (text, path))
                .collect::<Vec<_>>(),
            ["Nord, Hamburg, 12", "Nord, Bremen, 9", "Nord, Bremen, 9", ", Kiel, 4"]
                .map(|row| (row, vec!["Absatz", "Absatz 2026"]))
        );
        assert_eq!(doc.blocks[0].header.as_deref(), Some("Region, Stadt, Stück"));
    }

    #[test]
    fn sheets_rows_under_their_header_with_shown_values_and_repeats() {
        let header = ["city", "share", "count", "tags", "since"].map(cell).concat();
        let berlin = [
            cell("Berlin<text:s text:c=\"2\"/>Mitte"),
            // The value as shown, not as stored.
            r#"<table:table-cell office:value-type="percentage" office:value="0.25"><text:p>25 %</text:p></table:table-cell>"#.to_string(),
            // A value with no text shown: the stored value.
            r#"<table:table-cell office:value-type="float" office:value="3"/>"#.to_string(),
            r#"<table:table-cell table:number-columns-repeated="2"><text:p>neu</text:p><office:annotation><text:p>a reviewer's comment</text:p></office:annotation></table:table-cell>"#.to_string(),
            // A date as XLSX's are shown, not in its locale's form.
            r#"<table:table-cell office:value-type="date" office:date-value="2026-11-01T14:30:00"><text:p>01.11.26 14:30</text:p></table:table-cell>"#.to_string(),
            // Trailing empty cells, as LibreOffice writes them.
            r#"<table:table-cell table:number-columns-repeated="16378"/>"#.to_string(),
        ]
        .concat();
        let body = [
            r#"<table:table table:name="Städte"><table:table-column table:number-columns-repeated="4"/>"#.to_string(),
            format!("<table:table-row>{header}</table:table-row>"),
            format!(r#"<table:table-row table:number-rows-repeated="2">{berlin}</table:table-row>"#),
            r#"<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>"#.to_string(),
            format!(
                "<table:table-row>{}<table:covered-table-cell/>{}</table:table-row>",
                cell("Köln &amp; Bonn"),
                cell("2")
            ),
            "</table:table>".to_string(),
            format!("<table:table><table:table-row>{}</table:table-row></table:table>", cell("only row")),
        ]
        .concat();
        let doc = document_of("staedte.ods", ods(&body, Some("Städte 2026")));
        assert_eq!(doc.title, "Städte 2026");
        let blocks: Vec<(&str, Option<&str>, Vec<&str>)> = doc
            .blocks
            .iter()
            .map(|b| {
                (
                    b.text.as_str(),
                    b.header.as_deref(),
                    b.heading_path.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let header = Some("city, share, count, tags, since");
        let berlin = "Berlin  Mitte, 25 %, 3, neu, neu, 2026-11-01 14:30:00";
        assert_eq!(
            blocks,
            [
                (berlin, header, vec!["Städte"]),
                (berlin, header, vec!["Städte"]),
                ("Köln & Bonn, , 2", header, vec!["Städte"]),
                ("only row", None, vec!["Sheet 2"]),
            ]
        );
        assert!(doc.blocks.iter().all(|b| b.kind == ContentType::Table));
    }

    #[test]
    fn repeats_past_the_budget_fail_the_file_and_a_nested_table_is_left_out() {
        let wide = format!(
            r#"<table:table-cell table:number-columns-repeated="16384"><text:p>{}</text:p></table:table-cell>"#,
            "x".repeat(1000)
        );
        let body = format!(
            r#"<table:table table:name="S"><table:table-row table:number-rows-repeated="1048576">{wide}</table:table-row></table:table>"#
        );
        let err = AutoParser
            .parse(&raw_for_test("bomb.ods", ods(&body, None)))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "ODS part content.xml's repeated rows and cells: more than 128 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
        );
        let nested = format!(
            r#"<table:table table:name="S"><table:table-row><table:table-cell><table:table><table:table-row>{}</table:table-row></table:table><text:p>outer</text:p></table:table-cell></table:table-row></table:table>"#,
            cell("inner")
        );
        let doc = document_of("nested.ods", ods(&nested, None));
        assert_eq!(doc.title, "nested");
        assert_eq!(doc.blocks.len(), 1);
        assert_eq!(doc.blocks[0].text, "outer");
    }

    #[test]
    fn an_ods_without_content_is_corrupt() {
        let docx = crate::parse::docx::fixtures::docx("");
        let err = AutoParser.parse(&raw_for_test("wrong.ods", docx)).unwrap_err();
        assert_eq!(err, ParseError::Corrupt("ODS has no content.xml".into()));
    }
}
