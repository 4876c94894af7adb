//! A number cell as its format code shows it (`0.25` as `25%`, `1234.5` as `1,234.50 €`):
//! the first section of the code (the positive numbers'), its digits, decimals, thousands
//! separators, percent sign, exponent and literal text; a minus sign before a negative
//! number. Fractions and codes quarry cannot show leave the number as stored.

/// Decimals shown at most (a code of ten thousand zeros must not make ten thousand digits).
const MAX_DECIMALS: usize = 30;

/// How a number format shows a number.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct NumberFormat {
    /// Decimals always shown (`0`s after the point) and at most (`0`, `#`, `?`).
    min_decimals: usize,
    max_decimals: usize,
    /// Thousands separators (a `,` between digit placeholders).
    grouped: bool,
    percent: bool,
    /// `0.00E+00`: the exponent's sign always shown, its digits.
    scientific: Option<usize>,
    /// Literal text before and after the number (`$`, `"EUR "`, `[$€-407]`, `%`).
    prefix: String,
    suffix: String,
}

/// The built-in number formats' codes (ids 1-4, 9-11, 37-40, 48); the others show numbers as
/// stored (General) or dates (`super::xlsx_dates`).
pub(super) fn built_in_code(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        37 | 38 => "#,##0",
        39 | 40 => "#,##0.00",
        48 => "##0.0E+0",
        _ => return None,
    })
}

impl NumberFormat {
    /// The format of `code`'s first section, or none where it shows numbers as stored
    /// (General, text `@`, fractions, no digit placeholder).
    pub fn parse(code: &str) -> Option<Self> {
        if code.trim().eq_ignore_ascii_case("general") {
            return None;
        }
        let mut format = Self::default();
        let (mut digits, mut after_point, mut exponent_digits) = (false, false, None::<usize>);
        let mut chars = code.chars().peekable();
        let literal = |format: &mut Self, text: &str, digits: bool| match digits {
            false => format.prefix.push_str(text),
            true => format.suffix.push_str(text),
        };
        while let Some(c) = chars.next() {
            match c {
                ';' => break,
                '"' => {
                    let text: String = chars.by_ref().take_while(|c| *c != '"').collect();
                    literal(&mut format, &text, digits);
                }
                '[' => {
                    let inside: String = chars.by_ref().take_while(|c| *c != ']').collect();
                    // `[$€-407]`: a currency symbol (and its locale); other brackets are
                    // colours and conditions.
                    if let Some(currency) = inside.strip_prefix('$') {
                        literal(&mut format, currency.split('-').next().unwrap_or_default(), digits);
                    }
                }
                '\\' => {
                    if let Some(next) = chars.next() {
                        literal(&mut format, &next.to_string(), digits);
                    }
                }
                // Padding as wide as the next character, and a fill: layout, not text.
                '_' | '*' => {
                    chars.next();
                }
                '0' | '#' | '?' => match exponent_digits.as_mut() {
                    Some(count) => *count += 1,
                    None if after_point => {
                        format.max_decimals += 1;
                        if c == '0' {
                            format.min_decimals = format.max_decimals;
                        }
                    }
                    None => digits = true,
                },
                '.' if !after_point && exponent_digits.is_none() => after_point = true,
                ',' if digits && matches!(chars.peek(), Some('0' | '#' | '?')) => format.grouped = true,
                ',' => {}
                '%' => {
                    format.percent = true;
                    literal(&mut format, "%", digits);
                }
                'E' | 'e' if digits && matches!(chars.peek(), Some('+' | '-')) => {
                    chars.next();
                    exponent_digits = Some(0);
                }
                // Text (`@`) and fractions show the number as stored.
                '@' | '/' => return None,
                c => literal(&mut format, &c.to_string(), digits),
            }
        }
        if !digits {
            return None;
        }
        format.scientific = exponent_digits.map(|d| d.max(1));
        format.min_decimals = format.min_decimals.min(MAX_DECIMALS);
        format.max_decimals = format.max_decimals.min(MAX_DECIMALS);
        format.prefix = format.prefix.trim_start().to_string();
        format.suffix = format.suffix.trim_end().to_string();
        Some(format)
    }

    /// `value` (a number cell's stored text) as the format shows it; none where it is not a
    /// number.
    pub fn show(&self, value: &str) -> Option<String> {
        let number: f64 = value.trim().parse().ok().filter(|n: &f64| n.is_finite())?;
        let number = match self.percent {
            true => number * 100.0,
            false => number,
        };
        let magnitude = match self.scientific {
            Some(exponent_digits) => self.scientific_text(number.abs(), exponent_digits),
            None => self.fixed_text(number.abs()),
        };
        let sign = match number < 0.0 && magnitude.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
            true => "-",
            false => "",
        };
        Some(format!("{sign}{}{magnitude}{}", self.prefix, self.suffix))
    }

    /// A non-negative number with the format's decimals and thousands separators.
    fn fixed_text(&self, number: f64) -> String {
        let text = format!("{:.*}", self.max_decimals, rounded(number, self.max_decimals));
        let (whole, decimals) = text.split_once('.').unwrap_or((&text, ""));
        let decimals = trimmed_decimals(decimals, self.min_decimals);
        let whole = match self.grouped {
            true => grouped(whole),
            false => whole.to_string(),
        };
        match decimals.is_empty() {
            true => whole,
            false => format!("{whole}.{decimals}"),
        }
    }

    /// A non-negative number as a mantissa with the format's decimals, then `E+`/`E-` and the
    /// exponent in at least `exponent_digits` digits.
    fn scientific_text(&self, number: f64, exponent_digits: usize) -> String {
        let text = format!("{number:.*e}", self.max_decimals);
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let (whole, decimals) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let decimals = trimmed_decimals(decimals, self.min_decimals);
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        let mantissa = match decimals.is_empty() {
            true => whole.to_string(),
            false => format!("{whole}.{decimals}"),
        };
        format!("{mantissa}E{sign}{:0exponent_digits$}", exponent.unsigned_abs())
    }
}

/// `number` rounded to `decimals` places half away from zero, as a spreadsheet rounds (Rust's
/// formatting rounds a half to even: 1234.5 would show as 1234); past 15 places, as it is.
fn rounded(number: f64, decimals: usize) -> f64 {
    let factor = 10f64.powi(decimals.min(15) as i32);
    match (number * factor).is_finite() && decimals <= 15 {
        true => (number * factor).round() / factor,
        false => number,
    }
}

/// Decimals with their trailing zeros past the first `min` cut (`#`'s optional digits).
fn trimmed_decimals(decimals: &str, min: usize) -> &str {
    let kept = decimals.trim_end_matches('0').len().max(min);
    &decimals[..kept.min(decimals.len())]
}

/// Whole digits with a `,` between each group of three.
fn grouped(whole: &str) -> String {
    let mut out = String::with_capacity(whole.len() + whole.len() / 3);
    for (at, digit) in whole.chars().enumerate() {
        if at > 0 && (whole.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(code: &str, value: &str) -> Option<String> {
        NumberFormat::parse(code)?.show(value)
    }

    #[test]
    fn numbers_as_their_codes_show_them() {
        assert_eq!(show("0%", "0.25").as_deref(), Some("25%"));
        assert_eq!(show("0.00%", "0.1234").as_deref(), Some("12.34%"));
        assert_eq!(show("#,##0.00", "1234567.891").as_deref(), Some("1,234,567.89"));
        assert_eq!(show("#,##0", "-1234.5").as_deref(), Some("-1,235"));
        assert_eq!(show("0.0#", "2.5").as_deref(), Some("2.5"));
        assert_eq!(show("0.0#", "2.456").as_deref(), Some("2.46"));
        assert_eq!(show("#,##0.00\\ \"€\"", "1234.5").as_deref(), Some("1,234.50 €"));
        assert_eq!(show("[$€-407]\\ #,##0.00", "9.5").as_deref(), Some("€ 9.50"));
        assert_eq!(
            show("\"$\"#,##0.00_);[Red]\\(\"$\"#,##0.00\\)", "-3.5").as_deref(),
            Some("-$3.50")
        );
        assert_eq!(show("0.00E+00", "12345").as_deref(), Some("1.23E+04"));
        assert_eq!(show("0.0E+00", "0.00012").as_deref(), Some("1.2E-04"));
        assert_eq!(show("0 \"kg\"", "12").as_deref(), Some("12 kg"));
        assert_eq!(show("0", "-0.2").as_deref(), Some("0"), "no minus before a zero");
        assert_eq!(show("0.00", "not a number"), None);
        for stored in ["General", "@", "# ?/?", "\"text only\""] {
            assert_eq!(NumberFormat::parse(stored), None, "{stored}");
        }
        let many = format!("0.{}", "0".repeat(10_000));
        assert_eq!(show(&many, "1").unwrap().len(), 2 + MAX_DECIMALS);
    }

    #[test]
    fn built_in_formats_have_their_codes() {
        assert_eq!(show(built_in_code(9).unwrap(), "0.5").as_deref(), Some("50%"));
        assert_eq!(show(built_in_code(4).unwrap(), "1000").as_deref(), Some("1,000.00"));
        assert_eq!(built_in_code(0), None);
        assert_eq!(built_in_code(14), None, "a date");
    }
}
