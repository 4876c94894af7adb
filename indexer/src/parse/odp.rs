//! ODP (zip + OpenDocument presentation): the slides (`draw:page`) in their order, as PPTX's
//! ([`super::slides`]): each slide's number its page, its title shape's text the heading path
//! of its text, tables as table blocks, the speaker notes under the title and "Notes"; page
//! numbers, dates, footers and headers, shapes' alternative text and comments left out.

use quick_xml::events::{BytesStart, Event};

use super::ooxml::local_attribute;
use super::ooxml::{local_name, PartReader};
use super::opendocument::{is_left_out, open_content, push_inline, table_part};
use super::slides::{push_slide, ShapeRole, SlideReader};
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Whether an element (by local name) is a shape that may hold text.
fn is_shape(name: &[u8]) -> bool {
    matches!(
        name,
        b"frame"
            | b"custom-shape"
            | b"rect"
            | b"ellipse"
            | b"circle"
            | b"polygon"
            | b"polyline"
            | b"path"
            | b"line"
            | b"connector"
            | b"caption"
            | b"measure"
            | b"regular-polygon"
    )
}

/// The role a shape's `presentation:class` gives it, if it names one.
fn class_role(element: &BytesStart) -> Option<ShapeRole> {
    match local_attribute(element, b"class").as_deref() {
        Some("title") => Some(ShapeRole::Title),
        Some("page-number" | "footer" | "date-time" | "header" | "page") => Some(ShapeRole::Furniture),
        _ => None,
    }
}

/// One slide as it is read: its own shapes', and its notes page's.
#[derive(Default)]
struct Page {
    slide: SlideReader,
    notes: SlideReader,
    in_notes: bool,
    /// How deep inside shapes the reader is (a frame may hold a text box holding an image's
    /// frame): a shape's text ends with its outermost shape.
    shape_depth: usize,
}

impl Page {
    fn reader(&mut self) -> &mut SlideReader {
        match self.in_notes {
            true => &mut self.notes,
            false => &mut self.slide,
        }
    }

    fn start(&mut self, element: &BytesStart) {
        let name = element.name();
        match local_name(name.as_ref()) {
            b"notes" => self.in_notes = true,
            b"table" => self.reader().table.start(),
            shape if is_shape(shape) => {
                self.shape_depth += 1;
                if let (1, Some(role)) = (self.shape_depth, class_role(element)) {
                    self.reader().set_role(role);
                }
            }
            _ => push_inline(element, &mut self.reader().paragraph),
        }
    }

    fn end(&mut self, name: &[u8]) {
        match name {
            b"notes" => self.in_notes = false,
            b"p" | b"h" => self.reader().end_paragraph(),
            shape if is_shape(shape) => {
                self.shape_depth = self.shape_depth.saturating_sub(1);
                if self.shape_depth == 0 {
                    self.reader().end_shape();
                }
            }
            name => self.reader().end_table_part(table_part(name)),
        }
    }
}

/// The blocks of every slide in `content.xml`, in order, and the first slide title.
fn slides(xml: &str, part: &str) -> Result<(Vec<Block>, Option<String>), ParseError> {
    let mut reader = PartReader::new(xml, "ODP", part);
    let (mut blocks, mut first_title, mut index) = (Vec::new(), None, 0usize);
    let mut page: Option<Page> = None;
    // How deep inside what is left out (alternative text, comments) the reader is.
    let mut skipped = 0usize;
    let mut finish = |page: Page, blocks: &mut Vec<Block>| {
        let title = push_slide(index, page.slide.slide, page.notes.slide.blocks, blocks);
        index += 1;
        if let Some(title) = title {
            first_title.get_or_insert(title);
        }
    };
    loop {
        match reader.next()? {
            Event::Start(e) if skipped > 0 || is_left_out(e.name().as_ref()) => skipped += 1,
            Event::End(_) if skipped > 0 => skipped -= 1,
            Event::Start(e) => match (page.as_mut(), local_name(e.name().as_ref())) {
                (None, b"page") => page = Some(Page::default()),
                (Some(page), _) => page.start(&e),
                (None, _) => {}
            },
            Event::Empty(e) if skipped == 0 => {
                if let Some(page) = page.as_mut() {
                    page.start(&e);
                    page.end(local_name(e.name().as_ref()));
                }
            }
            Event::Text(t) if skipped == 0 => {
                if let Some(page) = page.as_mut() {
                    page.reader().paragraph.push_str(&reader.text(&t)?);
                }
            }
            Event::End(e) if local_name(e.name().as_ref()) == b"page" => {
                if let Some(done) = page.take() {
                    finish(done, &mut blocks);
                }
            }
            Event::End(e) => {
                if let Some(page) = page.as_mut() {
                    page.end(local_name(e.name().as_ref()));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    // A slide the file leaves open (cut short) still gives its text.
    if let Some(done) = page {
        finish(done, &mut blocks);
    }
    Ok((blocks, first_title))
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let (mut package, xml) = open_content(&raw.bytes, "ODP")?;
    let (blocks, first_title) = slides(&xml, "content.xml")?;
    let title = package
        .title_in("meta.xml")?
        .or(first_title)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, opendocument::fixtures::opendocument};
    use crate::parse::{paged_outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    /// A frame of presentation class `class` (none if empty) holding `paragraphs` in a text box.
    fn frame(class: &str, paragraphs: &[&str]) -> String {
        let class = match class {
            "" => String::new(),
            class => format!(r#" presentation:class="{class}""#),
        };
        let body: String = paragraphs.iter().map(|p| format!("<text:p>{p}</text:p>")).collect();
        format!(r#"<draw:frame{class}><draw:text-box>{body}</draw:text-box></draw:frame>"#)
    }

    #[test]
    fn slides_in_order_with_titles_tables_and_notes() {
        let first = [
            frame("title", &["Roadmap 2027"]),
            r#"<draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item><text:p>Search in every language</text:p></text:list-item><text:list-item><text:p>GPU<text:tab/>index builds</text:p></text:list-item></text:list></draw:text-box></draw:frame>"#.to_string(),
            frame("page-number", &["7"]),
            frame("footer", &["Confidential"]),
            // An image with its alternative text, and a shape's own text.
            r#"<draw:frame><draw:image/><svg:title>a chart of costs</svg:title><svg:desc>bars</svg:desc></draw:frame>"#.to_string(),
            r#"<draw:custom-shape><text:p>Arrow label</text:p></draw:custom-shape>"#.to_string(),
            r#"<presentation:notes><draw:page-thumbnail presentation:class="page"/>"#.to_string(),
            frame("notes", &["Say why H100s &amp; not A100s."]),
            "</presentation:notes>".to_string(),
        ]
        .concat();
        let table = r#"<draw:frame><table:table><table:table-row><table:table-cell><text:p>quarter</text:p></table:table-cell><table:table-cell><text:p>GPUs</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>Q3</text:p></table:table-cell><table:table-cell><text:p>64</text:p></table:table-cell></table:table-row></table:table></draw:frame>"#;
        let body = format!(
            r#"<draw:page draw:name="page1">{first}</draw:page><draw:page draw:name="page2" presentation:visibility="hidden">{table}{}</draw:page>"#,
            frame("subtitle", &["Kosten je Quartal"])
        );
        let doc = document_of("deck.odp", opendocument("presentation", &body, None));
        assert_eq!(doc.title, "Roadmap 2027");
        assert_eq!(
            paged_outline_of(&doc),
            [
                ("Roadmap 2027", Some(1), vec!["Roadmap 2027"], ContentType::Text),
                (
                    "Search in every language\nGPU\tindex builds",
                    Some(1),
                    vec!["Roadmap 2027"],
                    ContentType::Text
                ),
                ("Arrow label", Some(1), vec!["Roadmap 2027"], ContentType::Text),
                (
                    "Say why H100s & not A100s.",
                    Some(1),
                    vec!["Roadmap 2027", "Notes"],
                    ContentType::Text
                ),
                ("quarter | GPUs\nQ3 | 64", Some(2), vec![], ContentType::Table),
                ("Kosten je Quartal", Some(2), vec![], ContentType::Text),
            ]
        );
    }

    #[test]
    fn an_odp_without_content_is_corrupt() {
        let docx = crate::parse::docx::fixtures::docx("");
        let err = AutoParser.parse(&raw_for_test("wrong.odp", docx)).unwrap_err();
        assert_eq!(err, ParseError::Corrupt("ODP has no content.xml".into()));
    }
}
