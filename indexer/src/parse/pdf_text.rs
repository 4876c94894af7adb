//! A PDF page's text as lines, each with the font size most of its characters are drawn at, so
//! that headings can be told by size ([`super::pdf_headings`]). The layout is pdf-extract's
//! plain-text one (the same rules for spaces and line breaks as its `PlainTextOutput`: a break
//! where the baseline moves down by more than half a character, a blank line where it moves by
//! more than one and a half), with the size of each character kept beside the text.

use lopdf::Document as PdfDocument;
use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// One line of a page (empty for a blank line) and the size most of its characters are drawn
/// at, in points on the page (0 for a blank line).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    pub size: f32,
}

impl Line {
    /// The size as a key that equal sizes share (tenths of a point).
    pub fn size_key(&self) -> u32 {
        (self.size * 10.0).round() as u32
    }
}

/// The lines of page `page_number` (1-based) of `pdf`.
pub fn page_lines(pdf: &PdfDocument, page_number: u32) -> Result<Vec<Line>, OutputError> {
    let mut page = SizedText::default();
    pdf_extract::output_doc_page(pdf, &mut page, page_number)?;
    Ok(page.lines())
}

/// Collects a page's text and the size each character is drawn at.
#[derive(Default)]
struct SizedText {
    text: String,
    /// Where each character starts in `text`, and its size.
    sizes: Vec<(usize, f64)>,
    page_height: f64,
    last_end: f64,
    last_y: f64,
    first_char: bool,
}

impl SizedText {
    fn lines(self) -> Vec<Line> {
        let mut lines = Vec::new();
        let mut sizes = self.sizes.iter().peekable();
        let mut start = 0;
        for text in self.text.split('\n') {
            let end = start + text.len();
            // Characters by size (tenths of a point): the line's size is the one most have.
            let mut tally: Vec<(u32, usize)> = Vec::new();
            while let Some(&&(at, size)) = sizes.peek() {
                if at >= end {
                    break;
                }
                sizes.next();
                let key = (size * 10.0).round().clamp(0.0, u32::MAX as f64) as u32;
                match tally.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, count)) => *count += 1,
                    None => tally.push((key, 1)),
                }
            }
            let size = tally
                .iter()
                .max_by_key(|(key, count)| (*count, *key))
                .map_or(0.0, |(key, _)| *key as f32 / 10.0);
            lines.push(Line {
                text: text.trim_end().to_string(),
                size,
            });
            start = end + 1;
        }
        lines
    }
}

impl OutputDev for SizedText {
    fn begin_page(
        &mut self,
        _page: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.page_height = media_box.ury - media_box.lly;
        self.last_end = 100_000.0;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        // The character's origin on a page with y growing downwards, and its size: the side of
        // the square with the area of the transformed (size, size) vector's rectangle.
        let (x, y) = (trm.m31, self.page_height - trm.m32);
        let (wide, high) = (font_size * (trm.m11 + trm.m21), font_size * (trm.m12 + trm.m22));
        let size = (wide * high).abs().sqrt();
        // (The page's first character starts it: no break before it.)
        if self.first_char && !self.text.is_empty() {
            if (y - self.last_y).abs() > size * 1.5 {
                self.text.push('\n');
            }
            if x < self.last_end && (y - self.last_y).abs() > size * 0.5 {
                self.text.push('\n');
            }
            if x > self.last_end + size * 0.1 {
                self.text.push(' ');
            }
        }
        self.sizes.push((self.text.len(), size));
        self.text.push_str(char);
        self.first_char = false;
        self.last_y = y;
        self.last_end = x + width * size;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.first_char = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::pdf::fixtures::{pdf_with_lines, PdfLine};

    #[test]
    fn lines_keep_their_sizes_and_blank_lines() {
        let pdf = pdf_with_lines(&[&[
            PdfLine::new(20.0, "Annual Report"),
            PdfLine::new(11.0, "Sales grew in every region."),
            PdfLine::new(11.0, "Costs fell."),
        ]]);
        let lines = page_lines(&pdf, 1).unwrap();
        let shown: Vec<(&str, f32)> = lines.iter().map(|l| (l.text.as_str(), l.size)).collect();
        assert_eq!(
            shown,
            [
                ("Annual Report", 20.0),
                ("", 0.0),
                ("Sales grew in every region.", 11.0),
                ("Costs fell.", 11.0)
            ]
        );
    }
}
