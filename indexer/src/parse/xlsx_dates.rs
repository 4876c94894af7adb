//! Which of a workbook's cell styles show a date or a time (`xl/styles.xml`), and a date's
//! serial number as the text a reader searches for (`2026-11-01`, `2026-11-01 14:30:00`,
//! `14:30:00`): a spreadsheet stores dates as days since 1900 (or 1904), its style alone says
//! which numbers are dates.

use chrono::{Duration, NaiveDate};
use quick_xml::events::Event;
use quick_xml::Reader;

use super::ooxml::{attribute, local_name};

/// The workbook's styles, by index (a cell's `s`): whether each shows a date or time.
#[derive(Debug, Default)]
pub(super) struct DateStyles {
    is_date: Vec<bool>,
    /// Dates count from 1904-01-01 (`<workbookPr date1904="1"/>`), not from 1900.
    from_1904: bool,
}

impl DateStyles {
    /// Read from styles.xml (none: no style is a date); `from_1904` from the workbook.
    pub fn read(styles: Option<&str>, from_1904: bool) -> Self {
        let Some(xml) = styles else {
            return Self {
                is_date: Vec::new(),
                from_1904,
            };
        };
        let mut reader = Reader::from_str(xml);
        let mut custom: Vec<(u32, bool)> = Vec::new();
        let mut is_date = Vec::new();
        let mut in_cell_formats = false;
        loop {
            match reader.read_event() {
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    let attribute = |key: &[u8]| attribute(&e, key);
                    match local_name(e.name().as_ref()) {
                        b"numFmt" => {
                            if let (Some(id), Some(code)) = (attribute(b"numFmtId"), attribute(b"formatCode")) {
                                if let Ok(id) = id.parse() {
                                    custom.push((id, code_shows_date(&code)));
                                }
                            }
                        }
                        b"cellXfs" => in_cell_formats = true,
                        b"xf" if in_cell_formats => {
                            let id: u32 = attribute(b"numFmtId").and_then(|id| id.parse().ok()).unwrap_or(0);
                            let date = custom
                                .iter()
                                .find(|(custom_id, _)| *custom_id == id)
                                .map_or_else(|| built_in_is_date(id), |(_, date)| *date);
                            is_date.push(date);
                        }
                        _ => {}
                    }
                }
                Ok(Event::End(e)) if local_name(e.name().as_ref()) == b"cellXfs" => in_cell_formats = false,
                Ok(Event::Eof) | Err(_) => break,
                Ok(_) => {}
            }
        }
        Self { is_date, from_1904 }
    }

    /// `value` (a number cell's text) as a date or time where style `style` shows one; none
    /// otherwise (the number stays as stored).
    pub fn as_date(&self, style: Option<usize>, value: &str) -> Option<String> {
        if !style.and_then(|s| self.is_date.get(s)).copied().unwrap_or(false) {
            return None;
        }
        let serial: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s < 2_958_466.0)?;
        let seconds = ((serial.fract() * 86_400.0).round() as i64).min(86_399);
        let time = format!("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
        if serial < 1.0 {
            return Some(time);
        }
        let days = serial.trunc() as i64;
        let date = match self.from_1904 {
            true => NaiveDate::from_ymd_opt(1904, 1, 1)? + Duration::days(days),
            // Serial 60 is 1900-02-29, a day that never was (Lotus 1-2-3's leap year, kept by
            // Excel): serials before it count from 1899-12-31, those after from 1899-12-30.
            false if days < 60 => NaiveDate::from_ymd_opt(1899, 12, 31)? + Duration::days(days),
            false => NaiveDate::from_ymd_opt(1899, 12, 30)? + Duration::days(days),
        };
        Some(match seconds {
            0 => date.to_string(),
            _ => format!("{date} {time}"),
        })
    }
}

/// The built-in number formats that show dates or times: 14-22 (d/m/y, h:mm, ...), 27-36 and
/// 50-58 (the East Asian locales' dates), 45-47 (mm:ss, [h]:mm:ss, mmss.0).
fn built_in_is_date(id: u32) -> bool {
    matches!(id, 14..=22 | 27..=36 | 45..=47 | 50..=58)
}

/// Whether a format code shows a date or time: a day, month, year, hour or second outside
/// its quoted text, escaped characters and bracketed parts (colours, conditions, locales).
fn code_shows_date(code: &str) -> bool {
    // Of a code's sections (positive; negative; zero; text), the first says it.
    let mut chars = code.chars();
    let mut shown = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                chars.by_ref().take_while(|c| *c != '"').for_each(drop);
            }
            '[' => {
                chars.by_ref().take_while(|c| *c != ']').for_each(drop);
            }
            '\\' | '_' | '*' => {
                chars.next();
            }
            ';' => break,
            c => shown.push(c.to_ascii_lowercase()),
        }
    }
    shown.contains(['d', 'm', 'y', 'h', 's'])
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLES: &str = r#"<styleSheet><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy/mm/dd;@"/><numFmt numFmtId="165" formatCode="&quot;Day &quot;0"/></numFmts>
        <cellStyleXfs><xf numFmtId="14"/></cellStyleXfs>
        <cellXfs><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="22"/><xf numFmtId="21"/><xf numFmtId="4"/></cellXfs></styleSheet>"#;

    #[test]
    fn dated_styles_turn_serials_into_dates_and_times() {
        let styles = DateStyles::read(Some(STYLES), false);
        assert_eq!(styles.as_date(Some(0), "46327"), None, "General");
        assert_eq!(styles.as_date(Some(1), "46327").as_deref(), Some("2026-11-01"));
        assert_eq!(styles.as_date(Some(2), "1").as_deref(), Some("1900-01-01"));
        assert_eq!(styles.as_date(Some(2), "61").as_deref(), Some("1900-03-01"));
        assert_eq!(styles.as_date(Some(3), "46327"), None, "\"Day \"0 is a number");
        assert_eq!(
            styles.as_date(Some(4), "46327.604166666664").as_deref(),
            Some("2026-11-01 14:30:00")
        );
        assert_eq!(styles.as_date(Some(5), "0.75").as_deref(), Some("18:00:00"));
        assert_eq!(styles.as_date(Some(6), "46327"), None, "#,##0.00");
        assert_eq!(styles.as_date(Some(1), "not a number"), None);
        assert_eq!(styles.as_date(Some(99), "46327"), None);
        assert_eq!(styles.as_date(None, "46327"), None);
        let from_1904 = DateStyles::read(Some(STYLES), true);
        assert_eq!(from_1904.as_date(Some(1), "44865").as_deref(), Some("2026-11-01"));
    }

    #[test]
    fn format_codes_are_read_outside_their_quoted_parts() {
        assert!(code_shows_date("d-mmm-yy"));
        assert!(code_shows_date("[$-411]ggge\"年\"m\"月\"d\"日\""));
        assert!(code_shows_date("[h]:mm:ss"));
        assert!(!code_shows_date("#,##0.00_);[Red]\\(#,##0.00\\)"));
        assert!(!code_shows_date("\"Days: \"0"));
        assert!(!code_shows_date("0.00E+00"));
        assert!(!code_shows_date("General"));
    }
}
