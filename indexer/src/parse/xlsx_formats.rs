//! How each of a workbook's cell styles shows a number (`xl/styles.xml`): as stored (General),
//! as a date or time ([`super::xlsx_dates`]), or by its number format
//! ([`super::xlsx_numbers`]: `25%`, `1,234.50 €`). A spreadsheet stores only the number; its
//! cell's style says what a reader sees.

use std::collections::HashMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use super::ooxml::{attribute, local_name};
use super::xlsx_dates::{built_in_is_date, code_shows_date, date_text};
use super::xlsx_numbers::{built_in_code, NumberFormat};

/// What one number format shows.
#[derive(Debug, Clone, PartialEq)]
enum Shown {
    Stored,
    Date,
    Number(NumberFormat),
}

impl Shown {
    fn of_code(code: &str) -> Self {
        match code_shows_date(code) {
            true => Self::Date,
            false => NumberFormat::parse(code).map_or(Self::Stored, Self::Number),
        }
    }

    fn of_built_in(id: u32) -> Self {
        match built_in_is_date(id) {
            true => Self::Date,
            false => built_in_code(id).map_or(Self::Stored, Self::of_code),
        }
    }
}

/// The workbook's cell styles, by index (a cell's `s`): what each shows.
#[derive(Debug, Default)]
pub(super) struct CellFormats {
    shown: Vec<Shown>,
    /// Dates count from 1904-01-01 (`<workbookPr date1904="1"/>`), not from 1900.
    from_1904: bool,
}

impl CellFormats {
    /// Read from styles.xml (none: every number as stored); `from_1904` from the workbook.
    /// Where the part is damaged, the formats read before the damage are kept (the rest show
    /// numbers as stored) and the damage is the second value.
    pub fn read(styles: Option<&str>, from_1904: bool) -> (Self, Option<String>) {
        let Some(xml) = styles else {
            let stored = Self {
                shown: Vec::new(),
                from_1904,
            };
            return (stored, None);
        };
        let mut damage = None;
        let mut reader = Reader::from_str(xml);
        let mut codes: Vec<(u32, String)> = Vec::new();
        let mut format_ids = Vec::new();
        let mut in_cell_formats = false;
        loop {
            match reader.read_event() {
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    let attribute = |key: &[u8]| attribute(&e, key);
                    match local_name(e.name().as_ref()) {
                        b"numFmt" => {
                            if let (Some(id), Some(code)) = (attribute(b"numFmtId"), attribute(b"formatCode")) {
                                if let Ok(id) = id.parse() {
                                    codes.push((id, code));
                                }
                            }
                        }
                        b"cellXfs" => in_cell_formats = true,
                        b"xf" if in_cell_formats => {
                            format_ids.push(attribute(b"numFmtId").and_then(|id| id.parse().ok()).unwrap_or(0))
                        }
                        _ => {}
                    }
                }
                Ok(Event::End(e)) if local_name(e.name().as_ref()) == b"cellXfs" => in_cell_formats = false,
                Ok(Event::Eof) => break,
                Err(e) => {
                    damage = Some(format!("XML at byte {}: {e}", reader.buffer_position()));
                    break;
                }
                Ok(_) => {}
            }
        }
        (Self::from_records(&codes, &format_ids, from_1904), damage)
    }

    /// From a workbook's number formats (id, code) and its cell styles' format ids, in style
    /// order (styles.xml's `numFmt` and `cellXfs`; an XLS workbook's FORMAT and XF records).
    pub fn from_records(codes: &[(u32, String)], format_ids: &[u32], from_1904: bool) -> Self {
        let mut custom: HashMap<u32, Shown> = HashMap::with_capacity(codes.len());
        for (id, code) in codes {
            custom.entry(*id).or_insert_with(|| Shown::of_code(code));
        }
        let shown = format_ids
            .iter()
            .map(|id| custom.get(id).cloned().unwrap_or_else(|| Shown::of_built_in(*id)))
            .collect();
        Self { shown, from_1904 }
    }

    /// `value` (a number cell's stored text) as style `style` shows it; none where it shows
    /// the number as stored (or `value` is not a number it can show).
    pub fn show(&self, style: Option<usize>, value: &str) -> Option<String> {
        match style.and_then(|s| self.shown.get(s))? {
            Shown::Stored => None,
            Shown::Date => date_text(value, self.from_1904),
            Shown::Number(format) => format.show(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLES: &str = r#"<styleSheet><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy/mm/dd;@"/><numFmt numFmtId="165" formatCode="&quot;Day &quot;0"/></numFmts>
        <cellStyleXfs><xf numFmtId="14"/></cellStyleXfs>
        <cellXfs><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="22"/><xf numFmtId="21"/><xf numFmtId="4"/></cellXfs></styleSheet>"#;

    #[test]
    fn styles_show_numbers_dates_and_times() {
        let (styles, damage) = CellFormats::read(Some(STYLES), false);
        assert_eq!(damage, None);
        assert_eq!(styles.show(Some(0), "46327"), None, "General");
        assert_eq!(styles.show(Some(1), "46327").as_deref(), Some("2026-11-01"));
        assert_eq!(styles.show(Some(2), "1").as_deref(), Some("1900-01-01"));
        assert_eq!(styles.show(Some(2), "61").as_deref(), Some("1900-03-01"));
        assert_eq!(styles.show(Some(3), "46327").as_deref(), Some("Day 46327"), "a number");
        assert_eq!(
            styles.show(Some(4), "46327.604166666664").as_deref(),
            Some("2026-11-01 14:30:00")
        );
        assert_eq!(styles.show(Some(5), "0.75").as_deref(), Some("18:00:00"));
        assert_eq!(styles.show(Some(6), "46327").as_deref(), Some("46,327.00"), "#,##0.00");
        assert_eq!(styles.show(Some(1), "not a number"), None);
        assert_eq!(styles.show(Some(99), "46327"), None);
        assert_eq!(styles.show(None, "46327"), None);
        let (from_1904, _) = CellFormats::read(Some(STYLES), true);
        assert_eq!(from_1904.show(Some(1), "44865").as_deref(), Some("2026-11-01"));
        // Cut off inside the cell styles: those read before the damage still show.
        let cut = &STYLES[..STYLES.find(r#"<xf numFmtId="22"/>"#).unwrap() + 6];
        let (styles, damage) = CellFormats::read(Some(cut), false);
        assert_eq!(styles.show(Some(1), "46327").as_deref(), Some("2026-11-01"));
        assert_eq!(styles.show(Some(4), "46327"), None);
        assert!(damage.is_some_and(|d| d.starts_with("XML at byte ")));
    }
}
