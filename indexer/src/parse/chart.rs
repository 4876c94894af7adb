//! A chart's text (DrawingML charts, in PPTX and DOCX; [`super::drawn_parts`] finds the part):
//! its titles (the chart's and its axes'), its series' names and its categories, one line
//! each, the names and categories joined by `, ` (each category once: every series repeats
//! them). The values are numbers a reader sees as bars and lines, not text: left out.

use quick_xml::events::Event;

use super::ooxml::{local_name, PartReader};
use super::ParseError;

/// A chart's text by where it is.
#[derive(Default)]
struct ChartText {
    titles: Vec<String>,
    series: Vec<String>,
    categories: Vec<String>,
}

impl ChartText {
    fn lines(self) -> String {
        let mut categories = self.categories;
        let mut seen = std::collections::HashSet::new();
        categories.retain(|c| seen.insert(c.clone()));
        let mut lines = self.titles;
        for list in [self.series, categories] {
            if !list.is_empty() {
                lines.push(list.join(", "));
            }
        }
        lines.join("\n")
    }
}

pub(super) fn chart_text(xml: &str, format: &'static str, part: &str) -> Result<String, ParseError> {
    let mut reader = PartReader::new(xml, format, part);
    let mut chart = ChartText::default();
    // The open elements' local names (a chart is a few levels deep; a hostile one is walked
    // with its depth counted, not held: past 64 levels the names are not kept).
    let mut open: Vec<Vec<u8>> = Vec::new();
    let mut depth = 0usize;
    let mut text = String::new();
    loop {
        match reader.next()? {
            Event::Start(e) => {
                depth += 1;
                if open.len() < 64 {
                    open.push(local_name(e.name().as_ref()).to_vec());
                }
            }
            Event::Text(t) => {
                let inside = |name: &[u8]| open.iter().any(|o| o == name);
                let read = match open.last().map(Vec::as_slice) {
                    Some(b"t") => inside(b"title"),
                    Some(b"v") => inside(b"cat") || (inside(b"ser") && inside(b"tx")),
                    _ => false,
                };
                if read {
                    text.push_str(&reader.text(&t)?);
                }
            }
            Event::End(_) => {
                let name = match depth <= open.len() {
                    true => open.pop(),
                    false => None,
                };
                depth = depth.saturating_sub(1);
                let inside = |name: &[u8]| open.iter().any(|o| o == name);
                let list = match name.as_deref() {
                    // A title's paragraph (of one run or many), a category, a series' name.
                    Some(b"p") if inside(b"title") => &mut chart.titles,
                    Some(b"v") if inside(b"cat") => &mut chart.categories,
                    Some(b"v") if inside(b"ser") && inside(b"tx") => &mut chart.series,
                    _ => continue,
                };
                let finished = std::mem::take(&mut text).trim().to_string();
                if !finished.is_empty() {
                    list.push(finished);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(chart.lines())
}

/// Test fixtures: a chart part as Office writes one.
#[cfg(test)]
pub(crate) mod fixtures {
    /// A column chart titled in two runs, with a value axis title, two series over `categories`.
    pub fn chart_xml(categories: &[&str]) -> String {
        let category_cache: String = categories
            .iter()
            .enumerate()
            .map(|(i, c)| format!(r#"<c:pt idx="{i}"><c:v>{c}</c:v></c:pt>"#))
            .collect();
        let series = |name: &str, column: &str| {
            format!(
                r#"<c:ser><c:idx val="0"/><c:tx><c:strRef><c:f>Sheet1!${column}$1</c:f><c:strCache><c:pt idx="0"><c:v>{name}</c:v></c:pt></c:strCache></c:strRef></c:tx><c:cat><c:strRef><c:f>Sheet1!$A$2:$A$4</c:f><c:strCache>{category_cache}</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:f>Sheet1!${column}$2:${column}$4</c:f><c:numCache><c:formatCode>General</c:formatCode><c:pt idx="0"><c:v>1.5</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>"#
            )
        };
        format!(
            r#"<?xml version="1.0"?><c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart><c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>Spend by </a:t></a:r><a:r><a:t>quarter</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:barChart>{}{}</c:barChart><c:valAx><c:title><c:tx><c:rich><a:p><a:r><a:t>Million euros</a:t></a:r></a:p></c:rich></c:tx></c:title></c:valAx></c:plotArea></c:chart></c:chartSpace>"#,
            series("GPU hours", "B"),
            series("Storage", "C")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_series_and_categories_without_values_or_formulas() {
        let xml = fixtures::chart_xml(&["Q1 2026", "Q2 2026", "Q3 2026"]);
        assert_eq!(
            chart_text(&xml, "PPTX", "ppt/charts/chart1.xml").unwrap(),
            "Spend by quarter\nMillion euros\nGPU hours, Storage\nQ1 2026, Q2 2026, Q3 2026"
        );
        // Deeper than the names kept: walked, nothing read past them, no error.
        let deep = format!(
            "<c:chartSpace>{}{}</c:chartSpace>",
            "<c:x>".repeat(10_000),
            "</c:x>".repeat(10_000)
        );
        assert_eq!(chart_text(&deep, "PPTX", "c.xml").unwrap(), "");
    }
}
