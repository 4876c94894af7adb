//! Which number formats show a date or a time, and a date's serial number as the text a
//! reader searches for (`2026-11-01`, `2026-11-01 14:30:00`, `14:30:00`): a spreadsheet stores
//! dates as days since 1900 (or 1904), its cell's format alone says which numbers are dates.

use chrono::{Duration, NaiveDate};

/// A date's serial number (a number cell's stored text) as a date, a date and time, or a time
/// (below 1: a time of day alone); none where it is not a serial a date can have.
pub(super) fn date_text(value: &str, from_1904: bool) -> Option<String> {
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
    let date = match from_1904 {
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

/// The built-in number formats that show dates or times: 14-22 (d/m/y, h:mm, ...), 27-36 and
/// 50-58 (the East Asian locales' dates), 45-47 (mm:ss, [h]:mm:ss, mmss.0).
pub(super) fn built_in_is_date(id: u32) -> bool {
    matches!(id, 14..=22 | 27..=36 | 45..=47 | 50..=58)
}

/// Whether a format code shows a date or time: a day, month, year, hour or second outside
/// its quoted text, escaped characters and bracketed parts (colours, conditions, locales).
pub(super) fn code_shows_date(code: &str) -> bool {
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

    #[test]
    fn serials_as_dates_and_times() {
        assert_eq!(date_text("46327", false).as_deref(), Some("2026-11-01"));
        assert_eq!(date_text("1", false).as_deref(), Some("1900-01-01"));
        assert_eq!(date_text("61", false).as_deref(), Some("1900-03-01"));
        assert_eq!(
            date_text("46327.604166666664", false).as_deref(),
            Some("2026-11-01 14:30:00")
        );
        assert_eq!(date_text("0.75", false).as_deref(), Some("18:00:00"));
        assert_eq!(date_text("44865", true).as_deref(), Some("2026-11-01"));
        assert_eq!(date_text("not a number", false), None);
        assert_eq!(date_text("-1", false), None);
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
