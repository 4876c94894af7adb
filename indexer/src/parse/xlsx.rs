//! XLSX (zip + SpreadsheetML): each sheet's rows as table blocks under the sheet's name, the
//! sheet's first row carried with every other row as its header (as CSV's), cells joined by
//! `, ` in their columns' places. Shared and inline strings are read without their phonetic guides
//! (Japanese furigana); numbers as their cell's style shows them (`25%`, `1,234.50 €`, dates
//! and times as `2026-11-01 14:30:00`: [`CellFormats`]); a formula's cached value, not the
//! formula; then the text of the sheet's drawings (charts, text boxes).

use quick_xml::events::Event;

use super::drawn_parts::DrawnParts;
use super::ooxml::{local_name, Package, PartReader, Relationship};
use super::spreadsheet::{sheet_blocks, workbook_documents, MergedCells, SheetRows};
use super::xlsx_formats::CellFormats;
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

const DRAWING: &str = "/relationships/drawing";

/// The workbook's sheets in its order (name, part name; each part once), and whether its dates
/// count from 1904.
fn sheets(package: &mut Package, relationships: &[Relationship]) -> Result<(Vec<(String, String)>, bool), ParseError> {
    let workbook = package
        .part("xl/workbook.xml")?
        .ok_or_else(|| ParseError::Corrupt("XLSX has no xl/workbook.xml".into()))?;
    let mut reader = PartReader::new(&workbook, "XLSX", "xl/workbook.xml");
    let mut found = Vec::new();
    let mut from_1904 = false;
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"workbookPr" => {
                from_1904 = e
                    .attributes()
                    .flatten()
                    .any(|a| a.key.as_ref() == b"date1904" && matches!(a.value.as_ref(), b"1" | b"true"));
            }
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"sheet" => {
                let mut name = None;
                let mut id = None;
                for attribute in e.attributes().flatten() {
                    match attribute.key.as_ref() {
                        b"name" => name = attribute.unescape_value().ok().map(|v| v.into_owned()),
                        // `r:id` (the relationship), not `sheetId`.
                        key if key != b"sheetId" && local_name(key) == b"id" => {
                            id = Some(String::from_utf8_lossy(&attribute.value).into_owned())
                        }
                        _ => {}
                    }
                }
                let part = id.and_then(|id| relationships.iter().find(|r| r.id == id));
                if let (Some(name), Some(part)) = (name, part) {
                    found.push((name, part.part.clone()));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|(_, part)| seen.insert(part.clone()));
    Ok((found, from_1904))
}

/// The workbook's part of relationship type `kind` (`sharedStrings`, `styles`), or `fallback`.
fn workbook_part(relationships: &[Relationship], kind: &str, fallback: &str) -> String {
    relationships
        .iter()
        .find(|r| r.kind.rsplit('/').next() == Some(kind))
        .map_or_else(|| fallback.to_string(), |r| r.part.clone())
}

/// The workbook's shared strings, in order (none when it has no such part).
fn shared_strings(package: &mut Package, relationships: &[Relationship]) -> Result<Vec<String>, ParseError> {
    let part = workbook_part(relationships, "sharedStrings", "xl/sharedStrings.xml");
    let Some(xml) = package.part(&part)? else {
        return Ok(Vec::new());
    };
    let mut reader = PartReader::new(&xml, "XLSX", &part);
    let (mut strings, mut current, mut phonetic_depth, mut in_text) = (Vec::new(), String::new(), 0usize, false);
    loop {
        match reader.next()? {
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"rPh" => phonetic_depth += 1,
                b"t" => in_text = phonetic_depth == 0,
                _ => {}
            },
            Event::Empty(e) if local_name(e.name().as_ref()) == b"si" => strings.push(String::new()),
            Event::Text(t) if in_text => current.push_str(&reader.text(&t)?),
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"rPh" => phonetic_depth = phonetic_depth.saturating_sub(1),
                b"t" => in_text = false,
                b"si" => strings.push(std::mem::take(&mut current)),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(strings)
}

/// A column's 0-based index from a cell reference (`B7` is 1).
fn column_of(reference: &[u8]) -> Option<usize> {
    let letters = reference.iter().take_while(|b| b.is_ascii_alphabetic());
    let mut column = 0usize;
    let mut any = false;
    for letter in letters {
        column = column
            .checked_mul(26)?
            .checked_add((letter.to_ascii_uppercase() - b'A') as usize + 1)?;
        any = true;
    }
    any.then(|| column - 1)
}

/// A cell reference's 0-based column and 1-based row (`B7` is (1, 7)).
fn cell_of(reference: &[u8]) -> Option<(usize, u32)> {
    let letters = reference.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let row = std::str::from_utf8(&reference[letters..]).ok()?.parse().ok()?;
    Some((column_of(reference)?, row))
}

/// A sheet's merged ranges (`<mergeCell ref="A2:B4"/>`, after its rows): (first row, last row,
/// first column, last column) each.
fn merged_ranges(xml: &str, part: &str) -> Result<Vec<(u32, u32, usize, usize)>, ParseError> {
    let mut ranges = Vec::new();
    if !xml.contains("mergeCell") {
        return Ok(ranges);
    }
    let mut reader = PartReader::new(xml, "XLSX", part);
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"mergeCell" => {
                let reference = e.attributes().flatten().find(|a| a.key.as_ref() == b"ref");
                let corners = reference.as_ref().and_then(|r| {
                    let (from, to) = r.value.split_at(r.value.iter().position(|b| *b == b':')?);
                    Some((cell_of(from)?, cell_of(&to[1..])?))
                });
                if let Some(((column, first), (last_column, last))) = corners {
                    ranges.push((first, last, column, last_column));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(ranges)
}

/// Each non-empty row of one sheet, in order; a value merged down a column given in each row
/// of its range, a title merged across the top of the sheet told apart ([`MergedCells`]).
fn sheet_rows(xml: &str, part: &str, shared: &[String], formats: &CellFormats) -> Result<SheetRows, ParseError> {
    let mut merged = MergedCells::new(merged_ranges(xml, part)?);
    let mut reader = PartReader::new(xml, "XLSX", part);
    let mut rows = SheetRows::default();
    // The row being read (1-based: its `r`, else the one after the last).
    let mut row_number = 0u32;
    let mut cells: Vec<(usize, String)> = Vec::new();
    // The cell being read: its column, its type, its style, its value so far.
    let (mut column, mut kind, mut style, mut value) = (0usize, Vec::new(), None, String::new());
    let mut next_column = 0usize;
    // Inside a value, and how deep inside an inline string's phonetic guides (left out, as
    // shared strings' are).
    let (mut in_value, mut phonetic_depth) = (false, 0usize);
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"row" => {
                next_column = 0;
                let stated = e.attributes().flatten().find(|a| a.key.as_ref() == b"r");
                let stated = stated.and_then(|a| std::str::from_utf8(&a.value).ok()?.trim().parse().ok());
                row_number = stated.unwrap_or(row_number.saturating_add(1));
            }
            Event::Start(e) if local_name(e.name().as_ref()) == b"c" => {
                kind.clear();
                style = None;
                column = next_column;
                for attribute in e.attributes().flatten() {
                    match attribute.key.as_ref() {
                        b"r" => column = column_of(&attribute.value).unwrap_or(next_column),
                        b"t" => kind = attribute.value.into_owned(),
                        b"s" => style = std::str::from_utf8(&attribute.value).ok().and_then(|s| s.parse().ok()),
                        _ => {}
                    }
                }
                next_column = column + 1;
            }
            Event::Empty(e) if local_name(e.name().as_ref()) == b"c" => next_column += 1,
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"rPh" => phonetic_depth += 1,
                name => in_value = phonetic_depth == 0 && matches!(name, b"v" | b"t"),
            },
            Event::Text(t) if in_value => value.push_str(&reader.text(&t)?),
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"v" | b"t" => in_value = false,
                b"rPh" => phonetic_depth = phonetic_depth.saturating_sub(1),
                b"c" => {
                    let text = std::mem::take(&mut value);
                    let text = match kind.as_slice() {
                        b"s" => {
                            let index = text.trim().parse::<usize>().ok();
                            match index.and_then(|i| shared.get(i)) {
                                Some(shared) => shared.clone(),
                                None => {
                                    return Err(ParseError::Corrupt(format!(
                                        "XLSX part {part}: a cell names shared string {text:?}, of {}",
                                        shared.len()
                                    )))
                                }
                            }
                        }
                        b"b" => match text.trim() {
                            "1" => "TRUE".into(),
                            _ => "FALSE".into(),
                        },
                        b"" | b"n" => formats.show(style, &text).unwrap_or(text),
                        _ => text,
                    };
                    let text = text.trim();
                    if !text.is_empty() {
                        cells.push((column, text.to_string()));
                    }
                }
                b"row" => {
                    let (text, title) = merged.read_row(row_number, &mut cells);
                    rows.push(text, title);
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(rows)
}

/// The text of a sheet's drawings, in their order: each chart's ([`DrawnParts`]) and each
/// shape's (a text box's paragraphs, one a line).
fn drawing_texts(package: &mut Package, sheet: &str) -> Result<Vec<String>, ParseError> {
    let mut texts = Vec::new();
    let drawings = package
        .relationships(sheet)?
        .into_iter()
        .filter(|r| r.kind.ends_with(DRAWING));
    for drawing in drawings.collect::<Vec<_>>() {
        let Some(xml) = package.part(&drawing.part)? else {
            continue;
        };
        let mut drawn = DrawnParts::among(&package.relationships(&drawing.part)?);
        let mut reader = PartReader::new(&xml, "XLSX", &drawing.part);
        let (mut shape, mut paragraph, mut in_text) = (Vec::<String>::new(), String::new(), false);
        loop {
            match reader.next()? {
                Event::Start(e) if local_name(e.name().as_ref()) == b"t" => in_text = true,
                Event::Start(e) | Event::Empty(e) => texts.extend(drawn.text_of(&e, package)?),
                Event::Text(t) if in_text => paragraph.push_str(&reader.text(&t)?),
                Event::End(e) => match local_name(e.name().as_ref()) {
                    b"t" => in_text = false,
                    b"p" => {
                        let text = std::mem::take(&mut paragraph).trim().to_string();
                        if !text.is_empty() {
                            shape.push(text);
                        }
                    }
                    b"sp" if !shape.is_empty() => texts.push(std::mem::take(&mut shape).join("\n")),
                    _ => {}
                },
                Event::Eof => break,
                _ => {}
            }
        }
    }
    Ok(texts)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut package = Package::open(&raw.bytes, "XLSX")?;
    // The workbook's relationships, read once: they name its sheets, shared strings and styles.
    let relationships = package.relationships("xl/workbook.xml")?;
    let (sheets, from_1904) = sheets(&mut package, &relationships)?;
    let shared = shared_strings(&mut package, &relationships)?;
    let styles_part = workbook_part(&relationships, "styles", "xl/styles.xml");
    let mut warnings = Vec::new();
    let (formats, damage) = CellFormats::read(package.part(&styles_part)?.as_deref(), from_1904);
    if let Some(damage) = damage {
        warnings.push(format!(
            "XLSX part {styles_part}: {damage}; cells of the styles after it show their numbers as stored"
        ));
    }
    let mut blocks = Vec::new();
    for (name, part) in sheets {
        let Some(xml) = package.part(&part)? else {
            warnings.push(format!("sheet \"{name}\" ({part}) is not in the file; it was left out"));
            continue;
        };
        let path = [name.clone()];
        sheet_blocks(name, sheet_rows(&xml, &part, &shared, &formats)?, &mut blocks);
        for text in drawing_texts(&mut package, &part)? {
            blocks.push(Block::text(text, &path));
        }
    }
    let title = package.core_title()?.unwrap_or_else(|| Document::stem_of(raw));
    Ok(workbook_documents(raw, title, blocks, warnings))
}

/// Test fixtures: minimal XLSX files.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::parse::ooxml::fixtures::{package, relationships};

    const MAIN: &str = r#"xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

    /// A workbook of `sheets` (name, `<sheetData>` rows XML) with `shared` strings (`<si>` XML each).
    pub fn xlsx(sheets: &[(&str, String)], shared: &[&str]) -> Vec<u8> {
        xlsx_with(sheets, shared, &[])
    }

    /// [`xlsx`] with `more` parts (name, text) besides.
    pub fn xlsx_with(sheets: &[(&str, String)], shared: &[&str], more: &[(String, String)]) -> Vec<u8> {
        let mut parts = xlsx_parts(sheets, shared);
        parts.extend_from_slice(more);
        package(&parts)
    }

    /// The parts (name, text) of [`xlsx`]'s file.
    pub fn xlsx_parts(sheets: &[(&str, String)], shared: &[&str]) -> Vec<(String, String)> {
        let listed: String = sheets
            .iter()
            .enumerate()
            .map(|(i, (name, _))| format!(r#"<sheet name="{name}" sheetId="{}" r:id="rId{}"/>"#, i + 1, i + 1))
            .collect();
        let mut rels: Vec<(String, &str, String)> = (0..sheets.len())
            .map(|i| {
                (
                    format!("rId{}", i + 1),
                    "worksheet",
                    format!("worksheets/sheet{}.xml", i + 1),
                )
            })
            .collect();
        rels.push(("rId99".into(), "sharedStrings", "/xl/sharedStrings.xml".into()));
        let mut parts = vec![
            (
                "xl/workbook.xml".to_string(),
                format!(r#"<?xml version="1.0"?><workbook {MAIN}><sheets>{listed}</sheets></workbook>"#),
            ),
            ("xl/_rels/workbook.xml.rels".to_string(), relationships(&rels)),
            // Style 1 shows a date (built-in format 14); found where it is by default, with no relationship.
            (
                "xl/styles.xml".to_string(),
                format!(
                    r#"<?xml version="1.0"?><styleSheet {MAIN}><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>"#
                ),
            ),
            (
                "xl/sharedStrings.xml".to_string(),
                format!(r#"<?xml version="1.0"?><sst {MAIN}>{}</sst>"#, shared.concat()),
            ),
        ];
        for (i, (_, rows)) in sheets.iter().enumerate() {
            parts.push((
                format!("xl/worksheets/sheet{}.xml", i + 1),
                format!(r#"<?xml version="1.0"?><worksheet {MAIN}><sheetData>{rows}</sheetData></worksheet>"#),
            ));
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use crate::parse::spreadsheet::MAX_PADDED_COLUMNS;
    use crate::parse::{block_texts_of, raw_for_test, AutoParser, ContentType, Parser};
    use crate::parse::{document_of, ooxml::fixtures::package};

    #[test]
    fn a_workbook_of_more_rows_than_a_document_holds_is_split_by_sheet_into_parts() {
        let cell = |r: usize, column: &str, text: &str| {
            format!(r#"<c r="{column}{r}" t="inlineStr"><is><t>{text}</t></is></c>"#)
        };
        let row = |r: usize, a: &str, b: &str| format!(r#"<row r="{r}">{}{}</row>"#, cell(r, "A", a), cell(r, "B", b));
        let parts: String = std::iter::once(row(1, "part", "fits"))
            .chain((2..=2101).map(|r| row(r, &format!("valve {r}"), &format!("pier {}", r % 9))))
            .collect();
        let notes: String = (1..=3).map(|r| row(r, "note", &format!("line {r}"))).collect();
        let parsed = AutoParser
            .parse(&raw_for_test(
                "stock.xlsx",
                xlsx(&[("Parts", parts), ("Notes", notes)], &[]),
            ))
            .unwrap();
        let seen: Vec<(&str, &str, usize)> = parsed
            .documents
            .iter()
            .map(|d| (d.uri.as_str(), d.title.as_str(), d.blocks.len()))
            .collect();
        assert_eq!(
            seen,
            [
                ("memory://test/stock.xlsx#part=1", "stock, Parts (part 1)", 1000),
                ("memory://test/stock.xlsx#part=2", "stock, Parts (part 2)", 1000),
                ("memory://test/stock.xlsx#part=3", "stock, Parts (part 3)", 100),
                ("memory://test/stock.xlsx#part=4", "stock, Notes (part 4)", 2),
            ]
        );
        let last_part = &parsed.documents[2].blocks[99];
        assert_eq!(last_part.text, "valve 2101, pier 4");
        assert_eq!(last_part.header.as_deref(), Some("part, fits"));
        assert_eq!(parsed.documents[3].blocks[0].header.as_deref(), Some("note, line 1"));
        let hashes: std::collections::HashSet<&str> =
            parsed.documents.iter().map(|d| d.content_hash.as_str()).collect();
        assert_eq!(hashes.len(), 4, "each part's content hash is its own");
    }

    #[test]
    fn sheets_rows_under_their_header_with_cells_in_their_columns() {
        let shared = [
            "<si><t>city</t></si>",
            "<si><t>population</t></si>",
            // Rich text runs, and a phonetic guide left out.
            "<si><r><t>東京</t></r><r><t>都</t></r><rPh sb=\"0\" eb=\"2\"><t>トウキョウ</t></rPh></si>",
            "<si><t>Köln &amp; Bonn</t></si>",
            "<si/>",
        ];
        let cities = [
            r#"<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>capital</t></is></c><c r="D1" t="inlineStr"><is><t>founded</t></is></c></row>"#,
            r#"<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><f>1400*10000</f><v>14000000</v></c><c r="C2" t="b"><v>1</v></c><c r="D2" s="1"><v>46327</v></c></row>"#,
            r#"<row r="3"><c r="A3" t="s"><v>4</v></c></row>"#,
            r#"<row r="4"><c r="A4" t="s"><v>3</v></c><c r="C4" t="b"><v>0</v></c></row>"#,
        ]
        .concat();
        // An inline string's phonetic guide is left out too.
        let notes = r#"<row r="2"><c r="B2" t="inlineStr"><is><r><t>one line only</t></r><rPh sb="0" eb="3"><t>ワンライン</t></rPh></is></c></row>"#.to_string();
        let doc = document_of("cities.xlsx", xlsx(&[("Cities", cities), ("Notes", notes)], &shared));
        assert_eq!(doc.title, "cities");
        let blocks: Vec<(&str, Option<&str>, &[String])> = doc
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.header.as_deref(), b.heading_path.as_slice()))
            .collect();
        let (cities, notes) = (["Cities".to_string()], ["Notes".to_string()]);
        assert_eq!(
            blocks,
            [
                (
                    "東京都, 14000000, TRUE, 2026-11-01",
                    Some("city, population, capital, founded"),
                    &cities[..]
                ),
                (
                    "Köln & Bonn, , FALSE",
                    Some("city, population, capital, founded"),
                    &cities[..]
                ),
                (", one line only", None, &notes[..]),
            ]
        );
        assert!(doc.blocks.iter().all(|b| b.kind == ContentType::Table));
    }

    #[test]
    fn a_value_merged_down_a_column_reads_with_each_row_it_spans() {
        let cell = |r: &str, text: &str| format!(r#"<c r="{r}" t="inlineStr"><is><t>{text}</t></is></c>"#);
        let row = |n: u32, cells: &[(&str, &str)]| {
            let cells: String = cells.iter().map(|(r, t)| cell(r, t)).collect();
            format!(r#"<row r="{n}">{cells}</row>"#)
        };
        let sheet = [
            row(1, &[("A1", "Quarterly sales by region")]),
            row(2, &[("A2", "region"), ("B2", "city"), ("C2", "units")]),
            row(3, &[("A3", "Nord"), ("B3", "Hamburg"), ("C3", "12")]),
            row(4, &[("B4", "Bremen"), ("C4", "9")]),
            row(6, &[("B6", "Kiel"), ("C6", "4")]),
            row(7, &[("A7", "Süd"), ("B7", "München"), ("C7", "20")]),
            row(8, &[("B8", "Augsburg"), ("C8", "7")]),
            row(9, &[("A9", "own value"), ("B9", "Ulm"), ("C9", "3")]),
            row(10, &[("B10", "Passau"), ("C10", "2")]),
            // Where the reader finds them, after the rows (the fixture's sheetData holds them).
            r#"<mergeCells count="4"><mergeCell ref="A1:C1"/><mergeCell ref="A3:A6"/><mergeCell ref="A7:B10"/><mergeCell ref="D1:D10"/></mergeCells>"#.to_string(),
        ]
        .concat();
        let bytes = xlsx(&[("S", sheet)], &[]);
        assert_eq!(
            block_texts_of("sales.xlsx", bytes.clone()),
            [
                "Nord, Hamburg, 12",
                "Nord, Bremen, 9",
                "Nord, Kiel, 4",
                "Süd, München, 20",
                "Süd, Augsburg, 7",
                "own value, Ulm, 3",
                "Süd, Passau, 2"
            ]
        );
        let doc = AutoParser.parse(&raw_for_test("sales.xlsx", bytes)).unwrap();
        let first = &doc.documents[0].blocks[0];
        assert_eq!(
            (first.header.as_deref(), first.heading_path.clone()),
            (
                Some("region, city, units"),
                vec!["S".to_string(), "Quarterly sales by region".to_string()]
            ),
            "a title merged across the top of the sheet is its title, not its header, and not repeated along its row"
        );
        assert_eq!(cell_of(b"AB12"), Some((27, 12)));
        assert_eq!(cell_of(b"B"), None);
    }

    #[test]
    fn a_missing_sheet_and_damaged_styles_are_told() {
        let dated =
            r#"<row r="1"><c r="A1" t="inlineStr"><is><t>due</t></is></c><c r="B1" s="1"><v>46327</v></c></row>"#;
        let sheets = [("Dues", dated.to_string()), ("Gone", String::new())];
        let parts = xlsx_parts(&sheets, &[]);
        let doc = document_of("dues.xlsx", package(&parts));
        assert!(doc.blocks[0].text.contains("2026-11-01"), "{:?}", doc.blocks);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        // The styles part cut off before its cell styles, the second sheet's part not there.
        let damaged: Vec<(String, String)> = parts
            .into_iter()
            .filter(|(name, _)| name != "xl/worksheets/sheet2.xml")
            .map(|(name, text)| match name == "xl/styles.xml" {
                true => (name, text[..text.find("<cellXfs").unwrap() + 4].to_string()),
                false => (name, text),
            })
            .collect();
        let doc = document_of("dues.xlsx", package(&damaged));
        let text = &doc.blocks[0].text;
        assert!(text.contains("46327") && !text.contains("2026"), "{text}");
        assert_eq!(doc.warnings.len(), 2, "{:?}", doc.warnings);
        assert!(
            doc.warnings[0].starts_with("XLSX part xl/styles.xml: XML at byte ")
                && doc.warnings[0].ends_with("; cells of the styles after it show their numbers as stored"),
            "{:?}",
            doc.warnings
        );
        assert_eq!(
            doc.warnings[1],
            "sheet \"Gone\" (xl/worksheets/sheet2.xml) is not in the file; it was left out"
        );
    }

    #[test]
    fn a_far_column_is_not_padded_and_a_bad_shared_string_is_corrupt() {
        let far = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>left</t></is></c><c r="XFD1" t="inlineStr"><is><t>far right</t></is></c></row>"#;
        let doc = document_of("wide.xlsx", xlsx(&[("S", far.to_string())], &[]));
        assert_eq!(doc.blocks[0].text.matches(", ").count(), MAX_PADDED_COLUMNS);
        assert!(doc.blocks[0].text.ends_with("far right"));
        let bad = r#"<row r="1"><c r="A1" t="s"><v>7</v></c></row>"#;
        let err = AutoParser
            .parse(&raw_for_test("bad.xlsx", xlsx(&[("S", bad.to_string())], &[])))
            .unwrap_err();
        assert!(
            matches!(&err, ParseError::Corrupt(why) if why.contains("shared string \"7\", of 0")),
            "{err:?}"
        );
        assert_eq!(column_of(b"B7"), Some(1));
        assert_eq!(column_of(b"AA1"), Some(26));
        assert_eq!(column_of(b"7"), None);
    }

    #[test]
    fn a_sheets_charts_and_text_boxes_follow_its_rows() {
        use crate::parse::chart::fixtures::chart_xml;
        use crate::parse::ooxml::fixtures::relationships;
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>quarter</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Q1</t></is></c></row>"#;
        let drawing = r#"<?xml version="1.0"?><xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><xdr:twoCellAnchor><xdr:graphicFrame><a:graphic><a:graphicData><c:chart r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame></xdr:twoCellAnchor><xdr:twoCellAnchor><xdr:sp><xdr:txBody><a:p><a:r><a:t>Figures before audit</a:t></a:r></a:p></xdr:txBody></xdr:sp></xdr:twoCellAnchor></xdr:wsDr>"#;
        let more = [
            (
                "xl/worksheets/_rels/sheet1.xml.rels".to_string(),
                relationships(&[("rId1".into(), "drawing", "../drawings/drawing1.xml".into())]),
            ),
            ("xl/drawings/drawing1.xml".to_string(), drawing.to_string()),
            (
                "xl/drawings/_rels/drawing1.xml.rels".to_string(),
                relationships(&[("rId1".into(), "chart", "../charts/chart1.xml".into())]),
            ),
            ("xl/charts/chart1.xml".to_string(), chart_xml(&["Q1"])),
        ];
        let book = xlsx_with(&[("Spend", rows.to_string())], &[], &more);
        let doc = document_of("spend.xlsx", book);
        let blocks: Vec<(&str, ContentType)> = doc.blocks.iter().map(|b| (b.text.as_str(), b.kind)).collect();
        assert_eq!(
            blocks,
            [
                ("Q1", ContentType::Table),
                (
                    "Spend by quarter\nMillion euros\nGPU hours, Storage\nQ1",
                    ContentType::Text
                ),
                ("Figures before audit", ContentType::Text),
            ]
        );
        assert!(doc.blocks.iter().all(|b| b.heading_path == ["Spend"]));
    }
}
