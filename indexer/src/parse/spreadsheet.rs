//! A spreadsheet's sheets as blocks (XLSX, ODS, XLS): each non-empty row a table block under
//! the sheet's name, cells joined by `, ` in their columns' places, the sheet's first row
//! carried with every other row as its header (as CSV's); a workbook of more rows than one
//! document holds made documents of a sheet's consecutive rows ([`workbook_documents`]).

use std::collections::HashSet;

use super::csv::{PART_BYTES, PART_ROWS};
use super::{Block, ContentType, Document, Parsed};
use crate::source::RawDocument;

/// A workbook's document; or, where its blocks are more than a document of a table holds
/// ([`PART_ROWS`] rows or [`PART_BYTES`] of text, as a CSV table's), its documents of up to
/// that many consecutive blocks of one sheet each, named `<file>#part=<n>` from 1 and titled
/// `<title>, <sheet> (part <n>)`, so a workbook of any size is indexed rather than failing as
/// past the document token limit. The workbook's warnings go with its first document.
pub(super) fn workbook_documents(
    raw: &RawDocument,
    title: String,
    blocks: Vec<Block>,
    warnings: Vec<String>,
) -> Parsed {
    let bytes: usize = blocks.iter().map(|b| b.text.len()).sum();
    if blocks.len() <= PART_ROWS && bytes <= PART_BYTES {
        return Parsed::one(Document::from_raw(raw, title, blocks).with_warnings(warnings));
    }
    let mut parts: Vec<Vec<Block>> = Vec::new();
    let mut part_bytes = 0;
    for block in blocks {
        let sheet = block.heading_path.first();
        match parts.last_mut() {
            Some(part)
                if part.len() < PART_ROWS && part_bytes < PART_BYTES && part[0].heading_path.first() == sheet =>
            {
                part_bytes += block.text.len();
                part.push(block);
            }
            _ => {
                part_bytes = block.text.len();
                parts.push(vec![block]);
            }
        }
    }
    let mut warnings = Some(warnings);
    let documents = parts
        .into_iter()
        .enumerate()
        .map(|(index, blocks)| {
            let number = index + 1;
            let sheet = blocks[0].heading_path.first().map_or("", String::as_str);
            let title = format!("{title}, {sheet} (part {number})");
            // Its content: each block's sheet and titles, header and text.
            let content: Vec<String> = blocks
                .iter()
                .map(|b| {
                    format!(
                        "{}\t{}\t{}",
                        b.heading_path.join("\t"),
                        b.header.as_deref().unwrap_or(""),
                        b.text
                    )
                })
                .collect();
            let uri = format!("{}#part={number}", raw.uri);
            Document::from_part(raw, uri, content.join("\n").as_bytes(), title, blocks)
                .with_warnings(warnings.take().unwrap_or_default())
        })
        .collect();
    Parsed {
        documents,
        failures: Vec::new(),
    }
}

/// Columns a row is laid out over with its empty cells in place; cells further right follow
/// without padding (a hostile cell at column XFD does not make 16,384 empty cells a row).
pub(super) const MAX_PADDED_COLUMNS: usize = 1024;

/// One row's cells (column, text) laid out in their columns, joined by `, ` (empty when every
/// cell is); `cells` is left empty for the next row.
fn row_text(cells: &mut Vec<(usize, String)>) -> String {
    cells.sort_by_key(|(column, _)| *column);
    let mut out: Vec<&str> = Vec::new();
    for (column, text) in cells.iter() {
        while out.len() < (*column).min(MAX_PADDED_COLUMNS) {
            out.push("");
        }
        out.push(text);
    }
    let text = out.join(", ");
    cells.clear();
    match text.replace(", ", "").trim().is_empty() {
        true => String::new(),
        false => text,
    }
}

/// A sheet's non-empty rows as they are read: those of one cell merged across columns above its
/// first other row are its titles (`Quarterly sales by region` over the header `region, city,
/// units`), the rest its rows.
#[derive(Debug, Default)]
pub(super) struct SheetRows {
    pub titles: Vec<String>,
    pub rows: Vec<String>,
}

impl SheetRows {
    /// A row's text (none where it is empty); `title`: it is one cell merged across columns.
    pub fn push(&mut self, text: String, title: bool) {
        match (text.is_empty(), title && self.rows.is_empty()) {
            (true, _) => {}
            (false, true) => self.titles.push(text),
            (false, false) => self.rows.push(text),
        }
    }
}

/// A sheet's rows, in order, as table blocks under its name and its titles: the first row is
/// the header of the others (a sheet of one row is that row alone).
pub(super) fn sheet_blocks(name: String, sheet: SheetRows, blocks: &mut Vec<Block>) {
    let path: Vec<String> = std::iter::once(name).chain(sheet.titles).collect();
    let mut rows = sheet.rows.into_iter();
    let first = rows.next();
    let mut data = rows.peekable();
    match (first, data.peek().is_some()) {
        (Some(header), true) => blocks.extend(data.map(|row| Block {
            text: row,
            heading_path: path.clone(),
            kind: ContentType::Table,
            header: Some(header.clone()),
            ..Default::default()
        })),
        (Some(only), false) => blocks.push(Block {
            text: only,
            heading_path: path.clone(),
            kind: ContentType::Table,
            ..Default::default()
        }),
        (None, _) => {}
    }
}

/// Merged ranges a sheet holds at most; more are left out.
const MAX_MERGED_RANGES: usize = 4096;
/// Steps (a range looked at for a row) and bytes of filled-in text a sheet's merged ranges may
/// take; past either, the rows below are read as they are.
const MERGED_STEPS: usize = 50_000_000;
const MERGED_FILL_BYTES: usize = 16 << 20;

/// A sheet's merged cells. Those merged down a column (a category written once beside the
/// rows it spans, as spreadsheets lay out groups): the value of a range's first cell is given
/// again in its column in each row below it that the range spans and that has no value there,
/// so each row reads with it (`Nord, Hamburg, 12` and `Nord, Bremen, 9`, not `, Bremen, 9`); a
/// range over several columns gives it in its first column only, not along its row. Those
/// merged across columns: where such a cell is alone in its row at the top of a sheet, it is
/// the sheet's title ([`SheetRows`]).
#[derive(Default)]
pub(super) struct MergedCells {
    /// (first row, last row, column), by first row; those of one row are left out.
    ranges: Vec<(u32, u32, usize)>,
    /// The first cells (row, column) of ranges over more than one column.
    across: HashSet<(u32, usize)>,
    next: usize,
    /// The ranges the rows being read are in: (last row, column, the value given).
    active: Vec<(u32, usize, String)>,
    /// Ranges taken as their first rows were read ([`Self::starting`]).
    started: usize,
    steps: usize,
    filled_bytes: usize,
}

impl MergedCells {
    /// `ranges`: (first row, last row, first column, last column) of each merged range, in
    /// any order.
    pub fn new(ranges: impl IntoIterator<Item = (u32, u32, usize, usize)>) -> Self {
        let mut merged = Self::default();
        for (first, last, column, last_column) in ranges.into_iter().take(MAX_MERGED_RANGES) {
            if last > first {
                merged.ranges.push((first, last, column));
            }
            if last_column > column {
                merged.across.insert((first, column));
            }
        }
        merged.ranges.sort_unstable();
        merged
    }

    /// A range over several columns met at its first cell (an OpenDocument cell's
    /// `number-columns-spanned`).
    pub fn across(&mut self, row: u32, column: usize) {
        if self.across.len() < MAX_MERGED_RANGES {
            self.across.insert((row, column));
        }
    }

    /// Row `row`'s text ([`row_text`]; `cells` is left empty) with the values of the ranges
    /// above it filled in, and whether it is one cell merged across columns (a title where it
    /// comes first); rows must come in order.
    pub fn read_row(&mut self, row: u32, cells: &mut Vec<(usize, String)>) -> (String, bool) {
        let title = self.is_one_cell_across(row, cells);
        self.fill(row, cells);
        (row_text(cells), title)
    }

    /// Whether a row's cells are one cell merged across columns (before [`Self::fill`]).
    fn is_one_cell_across(&self, row: u32, cells: &[(usize, String)]) -> bool {
        matches!(cells, [(column, _)] if self.across.contains(&(row, *column)))
    }

    /// A range met at its first cell, whose `value` goes down `column` to row `last` (an
    /// OpenDocument cell's `number-rows-spanned`).
    pub fn starting(&mut self, last: u32, column: usize, value: &str) {
        if self.started < MAX_MERGED_RANGES {
            self.started += 1;
            self.active.push((last, column, value.to_string()));
        }
    }

    /// Row `row`'s cells (column, text), with the values of the ranges above it added where it
    /// has none; rows must come in order.
    fn fill(&mut self, row: u32, cells: &mut Vec<(usize, String)>) {
        if self.steps > MERGED_STEPS || self.filled_bytes > MERGED_FILL_BYTES {
            return;
        }
        self.active.retain(|(last, _, _)| *last >= row);
        while let Some(&(first, last, column)) = self.ranges.get(self.next) {
            if first > row {
                break;
            }
            self.next += 1;
            // A range whose first row had no value there (or was not read) gives nothing.
            let value = (first == row)
                .then(|| cells.iter().find(|(c, _)| *c == column))
                .flatten();
            if let Some((_, value)) = value {
                self.active.push((last, column, value.clone()));
            }
        }
        if self.active.is_empty() {
            return;
        }
        self.steps += cells.len() + self.active.len();
        let mut present: HashSet<usize> = cells.iter().map(|(column, _)| *column).collect();
        for (_, column, value) in &self.active {
            if present.insert(*column) {
                self.filled_bytes += value.len();
                cells.push((*column, value.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_ranges_are_bounded_in_count_and_in_the_text_they_add() {
        // 5,000 ranges down to the last row, each with a 1,000-byte value: the first 4,096 are
        // kept, and rows stop being filled once 16 MiB were added (four rows of them).
        let mut merged = MergedCells::new((0..5000).map(|column| (1, u32::MAX, column, column)));
        let mut first: Vec<(usize, String)> = (0..5000).map(|column| (column, "x".repeat(1000))).collect();
        merged.fill(1, &mut first);
        assert_eq!(first.len(), 5000, "the first row keeps its own cells");
        let filled: Vec<usize> = (2..10)
            .map(|row| {
                let mut cells = Vec::new();
                merged.fill(row, &mut cells);
                cells.len()
            })
            .collect();
        assert_eq!(filled, [4096, 4096, 4096, 4096, 4096, 0, 0, 0]);
    }
}
