//! An HTML list item's number as a browser draws it (`3.`, `b.`, `iv.`): the page holds
//! `<ol start="3" type="a" reversed>` and `<li value="7">`, not the numbers.

use scraper::ElementRef;

use super::list_number::Format;

/// A list open while its content is walked: `<ol>` counts its items; `<ul>` and `<menu>`
/// are lists too, so an item inside them is theirs and has no number.
pub(super) struct OpenList {
    ordered: bool,
    next: i64,
    step: i64,
    format: Format,
}

impl OpenList {
    /// The list `element` opens, if it is one.
    pub fn open(element: ElementRef<'_>) -> Option<Self> {
        let list = element.value();
        let unnumbered = Self {
            ordered: false,
            next: 1,
            step: 1,
            format: Format::Decimal,
        };
        match list.name() {
            "ul" | "menu" => Some(unnumbered),
            "ol" if hides_markers(list.attr("style")) => Some(unnumbered),
            "ol" => {
                let reversed = list.attr("reversed").is_some();
                let step = if reversed { -1 } else { 1 };
                let next = match list.attr("start").and_then(html_integer) {
                    Some(start) => start,
                    None if reversed => owned_items(element),
                    None => 1,
                };
                let format = match list.attr("type") {
                    Some("a") => Format::LowerAlphabetic,
                    Some("A") => Format::UpperAlphabetic,
                    Some("i") => Format::LowerRoman,
                    Some("I") => Format::UpperRoman,
                    _ => Format::Decimal,
                };
                Some(Self {
                    ordered: true,
                    next,
                    step,
                    format,
                })
            }
            _ => None,
        }
    }

    /// The marker of the list's next item (`item`, whose `value` sets its number and the
    /// count after it), with the space after it; none in an unordered list.
    pub fn marker(&mut self, item: ElementRef<'_>) -> Option<String> {
        if !self.ordered {
            return None;
        }
        let number = item.value().attr("value").and_then(html_integer).unwrap_or(self.next);
        self.next = number.saturating_add(self.step);
        // Counters a format cannot write (0, negatives, past its range) are written in
        // decimal, as CSS falls back.
        let written = match u32::try_from(number) {
            Ok(n) if n > 0 => self.format.write(n),
            _ => number.to_string(),
        };
        Some(format!("{written}. "))
    }
}

/// Whether an inline style takes the markers away (`list-style: none`,
/// `list-style-type: none`); a style sheet's rules are not read.
fn hides_markers(style: Option<&str>) -> bool {
    style.is_some_and(|style| {
        style.split(';').any(|declaration| {
            declaration.split_once(':').is_some_and(|(property, value)| {
                matches!(
                    property.trim().to_ascii_lowercase().as_str(),
                    "list-style" | "list-style-type"
                ) && value.split_whitespace().any(|v| v.eq_ignore_ascii_case("none"))
            })
        })
    })
}

/// HTML's rules for parsing integers: leading white space, a sign, the digits up to the
/// first other character (`"3rd"` is 3); saturating at i64's range.
fn html_integer(text: &str) -> Option<i64> {
    let text = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits: Vec<i64> = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .map(|d| i64::from(d - b'0'))
        .collect();
    if digits.is_empty() {
        return None;
    }
    let magnitude = digits.iter().fold(0i64, |n, d| n.saturating_mul(10).saturating_add(*d));
    Some(if negative { -magnitude } else { magnitude })
}

/// How many items a list owns (a reversed list without `start` counts down from it): the
/// `<li>`s under it that no list inside it owns.
fn owned_items(list: ElementRef<'_>) -> i64 {
    let mut count = 0i64;
    let mut pending: Vec<ElementRef<'_>> = list.child_elements().collect();
    while let Some(element) = pending.pop() {
        match element.value().name() {
            "li" => {
                count += 1;
                pending.extend(element.child_elements());
            }
            "ol" | "ul" | "menu" => {}
            _ => pending.extend(element.child_elements()),
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_html_reads_them() {
        let cases = [
            ("3", Some(3)),
            (" 3rd", Some(3)),
            ("-2", Some(-2)),
            ("+4", Some(4)),
            ("x", None),
            ("", None),
            ("99999999999999999999999", Some(i64::MAX)),
        ];
        for (text, number) in cases {
            assert_eq!(html_integer(text), number, "{text:?}");
        }
        assert!(hides_markers(Some("margin: 0; LIST-STYLE: none inside")));
        assert!(!hides_markers(Some("list-style-type: lower-roman")));
    }
}
