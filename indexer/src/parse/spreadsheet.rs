//! A spreadsheet's sheets as blocks (XLSX, ODS): each non-empty row a table block under the
//! sheet's name, cells joined by `, ` in their columns' places, the sheet's first row carried
//! with every other row as its header (as CSV's).

use super::{Block, ContentType};

/// Columns a row is laid out over with its empty cells in place; cells further right follow
/// without padding (a hostile cell at column XFD does not make 16,384 empty cells a row).
pub(super) const MAX_PADDED_COLUMNS: usize = 1024;

/// One row's cells (column, text) laid out in their columns, joined by `, ` (empty when every
/// cell is); `cells` is left empty for the next row.
pub(super) fn row_text(cells: &mut Vec<(usize, String)>) -> String {
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

/// A sheet's non-empty rows, in order, as table blocks under its name: the first row is the
/// header of the others (a sheet of one row is that row alone).
pub(super) fn sheet_blocks(name: String, rows: Vec<String>, blocks: &mut Vec<Block>) {
    let path = [name];
    let mut rows = rows.into_iter();
    let first = rows.next();
    let mut data = rows.peekable();
    match (first, data.peek().is_some()) {
        (Some(header), true) => blocks.extend(data.map(|row| Block {
            text: row,
            heading_path: path.to_vec(),
            kind: ContentType::Table,
            header: Some(header.clone()),
            ..Default::default()
        })),
        (Some(only), false) => blocks.push(Block {
            text: only,
            heading_path: path.to_vec(),
            kind: ContentType::Table,
            ..Default::default()
        }),
        (None, _) => {}
    }
}
