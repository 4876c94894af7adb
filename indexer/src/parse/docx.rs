//! DOCX (zip + WordprocessingML): paragraphs as blocks, heading styles (`docx_styles.rs`: by
//! outline level or built-in name, in whatever language Word named them) and a paragraph's own
//! outline level giving heading paths, list numbers counted as Word counts them
//! (`docx_numbering.rs`) before their paragraphs, tables as table blocks (cells joined by ` | `), SmartArt diagrams'
//! and charts' text as blocks where they are drawn, footnotes and endnotes after the paragraph
//! or table citing them. A text box is written inside the paragraph it is anchored in (Word
//! 2010 on writes it twice, a DrawingML shape and a VML one for older readers: only the first
//! is read, `ooxml::PartReader` leaving out markup compatibility's fallbacks); its paragraphs
//! follow that paragraph, which is read whole.

use quick_xml::events::{BytesStart, Event};

use super::docx_notes::Notes;
use super::docx_numbering::{Numbering, NumberingProperties};
use super::docx_styles::{outline_heading, Styles};
use super::drawn_parts::DrawnParts;
use super::ooxml::{local_attribute, local_name, Package, PartReader};
use super::outline_body::{Aside, OutlineBody};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut package = Package::open(&raw.bytes, "DOCX")?;
    let xml = package
        .part("word/document.xml")?
        .ok_or_else(|| ParseError::Corrupt("DOCX has no word/document.xml".into()))?;
    let relationships = package.relationships("word/document.xml")?;
    let mut drawn = DrawnParts::among(&relationships);
    let mut notes = Notes::read(&mut package, &relationships)?;
    // Styles and numbers say what a paragraph is (a heading, its label), not what it says: a
    // damaged styles or numbering part leaves headings to the styles' ids and numbers out rather
    // than failing the document, which says so in its warnings.
    let mut warnings = Vec::new();
    let styles = Styles::read(&mut package, &relationships).unwrap_or_else(|e| {
        warnings.push(format!("{}; headings were read by their style ids", e.as_item_reason()));
        Styles::default()
    });
    let mut numbering = Numbering::read(&mut package, &relationships).unwrap_or_else(|e| {
        warnings.push(format!("{}; list numbers were left out", e.as_item_reason()));
        Numbering::default()
    });
    // The notes cited since the last paragraph or table outside a table ended.
    let mut cited = Vec::new();
    let mut reader = PartReader::new(&xml, "DOCX", "word/document.xml");
    let mut body = OutlineBody::default();
    // Inside a run's `<w:t>`: the only text read (not a field's code, `<w:instrText>`, nor
    // deleted text, `<w:delText>`).
    let mut in_text = false;
    let mut paragraph = ParagraphProperties::default();
    // Text boxes' paragraphs, and the properties of the paragraph the outermost one is in.
    let (mut boxes, mut outer_paragraph) = (Aside::default(), ParagraphProperties::default());
    loop {
        match reader.next()? {
            Event::Start(e) if local_name(e.name().as_ref()) == b"txbxContent" => {
                if boxes.depth == 0 {
                    outer_paragraph = std::mem::take(&mut paragraph);
                }
                boxes.open(&mut body.paragraph);
            }
            // Properties a tracked change replaced: not the paragraph's.
            Event::Start(e) if local_name(e.name().as_ref()) == b"pPrChange" => reader.skip(&e)?,
            Event::Start(e) | Event::Empty(e) if paragraph.read(&e) => {}
            Event::Start(e) if local_name(e.name().as_ref()) == b"t" => in_text = true,
            Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                b"tab" => body.paragraph.push('\t'),
                b"br" | b"cr" => body.paragraph.push('\n'),
                // A table in a text box: its cells' paragraphs are the box's.
                b"tbl" if boxes.depth == 0 => body.table.start(),
                b"footnoteReference" | b"endnoteReference" => cited.extend(Notes::cited_by(&e)),
                _ => {
                    if let Some(text) = drawn.text_of(&e, &mut package)? {
                        body.push_text(text);
                    }
                }
            },
            Event::Text(t) if in_text => body.paragraph.push_str(&reader.text(&t)?),
            Event::End(e) if local_name(e.name().as_ref()) == b"t" => in_text = false,
            Event::End(e) if local_name(e.name().as_ref()) == b"p" => {
                let read = std::mem::take(&mut paragraph);
                body.number_paragraph(read.number(&styles, &mut numbering));
                if boxes.depth > 0 {
                    boxes.end_paragraph(&mut body.paragraph);
                } else if read.is_generated_entry(&styles) {
                    body.paragraph.clear();
                } else {
                    body.end_paragraph(read.level(&styles));
                    boxes.give(&mut body);
                    notes.give(&mut cited, &mut body);
                }
            }
            Event::End(e) if boxes.depth > 0 && local_name(e.name().as_ref()) == b"txbxContent" => {
                boxes.close(&mut body.paragraph);
                if boxes.depth == 0 {
                    paragraph = std::mem::take(&mut outer_paragraph);
                }
            }
            // A table's parts in a text box: its cells' paragraphs are the box's.
            Event::End(_) if boxes.depth > 0 => {}
            Event::End(e) => {
                let qualified = e.name();
                let name = local_name(qualified.as_ref());
                body.end_table_part(name);
                if name == b"tbl" {
                    boxes.give(&mut body);
                    notes.give(&mut cited, &mut body);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    notes.uncited().into_iter().for_each(|note| body.push_text(note));
    let title = package
        .core_title()?
        .or(body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(
        Document::from_raw(raw, title, body.blocks).with_warnings(warnings),
    ))
}

/// What a paragraph's properties (`w:pPr`) say: its style, its own outline level and its list
/// numbering.
#[derive(Default)]
struct ParagraphProperties {
    style: Option<String>,
    /// Its own outline level (`w:outlineLvl`): a heading's level, or none for body text.
    own_level: Option<Option<usize>>,
    numbering: NumberingProperties,
}

impl ParagraphProperties {
    /// Reads `element` where it is one of these properties; false for any other element.
    fn read(&mut self, element: &BytesStart) -> bool {
        match local_name(element.name().as_ref()) {
            b"pStyle" => self.style = local_attribute(element, b"val"),
            b"outlineLvl" => {
                self.own_level = local_attribute(element, b"val")
                    .and_then(|v| v.parse().ok())
                    .map(outline_heading)
            }
            _ => return self.numbering.read(element),
        }
        true
    }

    /// Its heading level (its own outline level, else its style's).
    fn level(&self, styles: &Styles) -> Option<usize> {
        self.own_level
            .unwrap_or_else(|| self.style.as_deref().and_then(|id| styles.level(id)))
    }

    /// Whether it is an entry of a table of contents or an index (its text not read).
    fn is_generated_entry(&self, styles: &Styles) -> bool {
        self.style.as_deref().is_some_and(|id| styles.is_generated_entry(id))
    }

    /// Its list number, counted (its own numbering over its style's).
    fn number(&self, styles: &Styles, numbering: &mut Numbering) -> Option<String> {
        let style = self.style.as_deref();
        let of_style = style.map(|id| styles.numbering(id)).unwrap_or_default();
        numbering.number(&self.numbering.over(&of_style), style)
    }
}

/// Test fixtures: minimal DOCX files.
#[cfg(test)]
pub(crate) mod fixtures {
    /// A DOCX whose body is the given WordprocessingML paragraphs/tables.
    pub fn docx(body_xml: &str) -> Vec<u8> {
        docx_with(body_xml, &[])
    }

    /// [`docx`] with `more` parts (name, text) besides.
    pub fn docx_with(body_xml: &str, more: &[(String, String)]) -> Vec<u8> {
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body_xml}</w:body></w:document>"#
        );
        let parts = [vec![("word/document.xml".to_string(), xml)], more.to_vec()].concat();
        crate::parse::ooxml::fixtures::package(&parts)
    }

    /// A WordprocessingML part (`styles`, `numbering`, `footnotes`) holding `inside`.
    pub fn word_part(root: &str, inside: &str) -> String {
        format!(
            r#"<w:{root} xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">{inside}</w:{root}>"#
        )
    }

    pub fn paragraph(style: Option<&str>, text: &str) -> String {
        let style = style
            .map(|s| format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#))
            .unwrap_or_default();
        format!("<w:p>{style}<w:r><w:t>{text}</w:t></w:r></w:p>")
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use crate::parse::{document_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    /// The document of a DOCX of `body` and `more` parts, as (text, heading path joined by
    /// " > ") a block.
    fn texts_and_paths(name: &str, body: &str, more: &[(String, String)]) -> (String, Vec<(String, String)>) {
        let doc = document_of(name, docx_with(body, more));
        let blocks = doc
            .blocks
            .iter()
            .map(|b| (b.text.clone(), b.heading_path.join(" > ")))
            .collect();
        (doc.title, blocks)
    }

    fn text_under(text: &str, path: &str) -> (String, String) {
        (text.to_string(), path.to_string())
    }

    #[test]
    fn headings_paragraphs_and_tables() {
        let table = format!(
            "<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl>",
            paragraph(None, "k"),
            paragraph(None, "v"),
            paragraph(None, "1"),
            paragraph(None, "2")
        );
        let body = [
            paragraph(Some("Heading1"), "Plan"),
            paragraph(None, "Buy GPUs &amp; disks."),
            // A field (its code is not text) and deleted text.
            r#"<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t>3</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>"#.to_string(),
            paragraph(Some("Heading2"), "Costs"),
            table,
        ]
        .concat();
        let doc = document_of("plan.docx", docx(&body));
        assert_eq!(doc.title, "Plan");
        assert_eq!(doc.blocks[1].text, "Buy GPUs & disks.");
        assert_eq!(doc.blocks[1].heading_path, ["Plan"]);
        assert_eq!(doc.blocks[2].text, "3");
        let table = doc.blocks.last().unwrap();
        assert_eq!(table.kind, ContentType::Table);
        assert_eq!(table.text, "k | v\n1 | 2");
        assert_eq!(table.heading_path, ["Plan", "Costs"]);
    }

    #[test]
    fn broken_docx_is_corrupt() {
        let mut bytes = docx(&paragraph(None, "x"));
        bytes.truncate(bytes.len() / 2);
        let err = AutoParser.parse(&raw_for_test("half.docx", bytes)).unwrap_err();
        assert!(matches!(err, ParseError::Corrupt(_)), "{err:?}");
    }

    #[test]
    fn smartart_text_is_a_block_under_its_headings() {
        use crate::parse::diagram::fixtures::{diagram_data, diagram_graphic};
        use crate::parse::ooxml::fixtures::relationships;
        let body = [
            paragraph(Some("Heading1"), "Process"),
            format!(
                "<w:p><w:r><w:drawing><wp:inline>{}</wp:inline></w:drawing></w:r></w:p>",
                diagram_graphic("rId4")
            ),
            paragraph(None, "Then review."),
        ]
        .concat();
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[("rId4".into(), "diagramData", "diagrams/data1.xml".into())]),
            ),
            (
                "word/diagrams/data1.xml".to_string(),
                diagram_data(&["Draft", "Review"]),
            ),
        ];
        let doc = document_of("p.docx", docx_with(&body, &more));
        let blocks: Vec<(&str, &[String])> = doc
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.as_slice()))
            .collect();
        let path = ["Process".to_string()];
        assert_eq!(
            blocks,
            [
                ("Process", &path[..]),
                ("Draft\nReview", &path[..]),
                ("Then review.", &path[..])
            ]
        );
    }

    /// Footnotes and endnotes: each after the paragraph (or whole table) citing it, under its
    /// headings, the citing paragraph whole; separators, deleted text and field codes in a
    /// note are not text; a note no reference cites comes after the body.
    #[test]
    fn notes_follow_the_paragraph_or_table_citing_them() {
        use crate::parse::ooxml::fixtures::relationships;
        let cite = |kind: &str, id: u32| format!(r#"<w:r><w:{kind}Reference w:id="{id}"/></w:r>"#);
        let body = [
            paragraph(Some("Heading1"), "Piers"),
            format!(
                "<w:p><w:r><w:t>The north pier opens in spring</w:t></w:r>{}<w:r><w:t xml:space=\"preserve\"> after the dredging.</w:t></w:r></w:p>",
                cite("footnote", 2)
            ),
            format!(
                "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>A</w:t></w:r>{}</w:p></w:tc><w:tc>{}</w:tc></w:tr></w:tbl>",
                cite("endnote", 1),
                paragraph(None, "12 m")
            ),
            paragraph(Some("Heading1"), "Costs"),
            format!("<w:p><w:r><w:t>Funding comes from the port.</w:t></w:r>{}</w:p>", cite("footnote", 3)),
        ]
        .concat();
        let note = |kind: &str, id: &str, ty: &str, text: &str| {
            format!(
                r#"<w:{kind}{ty} w:id="{id}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:{kind}>"#
            )
        };
        let footnotes = word_part(
            "footnotes",
            &[
                note("footnote", "-1", r#" w:type="separator""#, ""),
                note("footnote", "0", r#" w:type="continuationSeparator""#, "not text"),
                note("footnote", "2", "", "Subject to the county engineer's inspection."),
                r#"<w:footnote w:id="3"><w:p><w:r><w:t>The ferry pays a levy.</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p><w:p><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t>Per crossing.</w:t></w:r></w:p></w:footnote>"#.to_string(),
                note("footnote", "4", r#" w:type="normal""#, "Never cited."),
            ]
            .concat(),
        );
        let endnotes = word_part("endnotes", &note("endnote", "1", "", "Berth A was deepened in 2025."));
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[
                    ("rId7".into(), "footnotes", "footnotes.xml".into()),
                    ("rId8".into(), "endnotes", "endnotes.xml".into()),
                ]),
            ),
            ("word/footnotes.xml".to_string(), footnotes),
            ("word/endnotes.xml".to_string(), endnotes),
        ];
        let (_, blocks) = texts_and_paths("harbour.docx", &body, &more);
        let text = text_under;
        assert_eq!(
            blocks,
            [
                text("Piers", "Piers"),
                text("The north pier opens in spring after the dredging.", "Piers"),
                text("Subject to the county engineer's inspection.", "Piers"),
                text("A | 12 m", "Piers"),
                text("Berth A was deepened in 2025.", "Piers"),
                text("Costs", "Costs"),
                text("Funding comes from the port.", "Costs"),
                text("The ferry pays a levy.", "Costs"),
                text("Per crossing.", "Costs"),
                text("Never cited.", "Costs"),
            ]
        );
    }

    /// A text box as Word 2010 on writes it, anchored inside a paragraph (a DrawingML shape,
    /// and the same box in VML for older readers): its paragraphs once, after the paragraph it
    /// is anchored in, which is read whole; a heading style inside it makes no heading.
    #[test]
    fn a_text_box_is_read_once_after_its_paragraph() {
        let content = |texts: &[&str]| {
            let paragraphs: String = texts
                .iter()
                .map(|t| format!(r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{t}</w:t></w:r></w:p>"#))
                .collect();
            format!("<w:txbxContent>{paragraphs}</w:txbxContent>")
        };
        let text_box = format!(
            r#"<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx>{}</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>{}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"#,
            content(&["Call-out:", "berths close at 22:00"]),
            content(&["Call-out:", "berths close at 22:00"])
        );
        let body = [
            paragraph(Some("Heading1"), "Piers"),
            format!(
                "<w:p><w:pPr><w:pStyle w:val=\"BodyText\"/></w:pPr><w:r><w:t>The north pier</w:t></w:r>{text_box}<w:r><w:t xml:space=\"preserve\"> opens in spring.</w:t></w:r></w:p>"
            ),
            paragraph(None, "Then the ferry."),
        ]
        .concat();
        let doc = document_of("harbour.docx", docx(&body));
        assert_eq!(
            crate::parse::outline_of(&doc),
            [
                ("Piers", vec!["Piers"], ContentType::Text),
                ("The north pier opens in spring.", vec!["Piers"], ContentType::Text),
                ("Call-out:", vec!["Piers"], ContentType::Text),
                ("berths close at 22:00", vec!["Piers"], ContentType::Text),
                ("Then the ferry.", vec!["Piers"], ContentType::Text),
            ]
        );
    }

    /// List numbers as Word counts them: headings numbered through their styles (linked to
    /// their levels), a paragraph's own list and level, a list restarted by a start override,
    /// another list of the same abstract list going on, a level starting again under the one
    /// above it, legal numbering, bullets and numbering taken away (numId 0) giving none, a
    /// blank numbered paragraph counted, a tracked change's old numbering and an unknown list
    /// not read, a text box in a numbered paragraph not taking its number.
    #[test]
    fn list_numbers_are_counted_as_word_counts_them() {
        use crate::parse::ooxml::fixtures::relationships;
        let level = |i: u32, format: &str, text: &str, more: &str| {
            format!(
                r#"<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{format}"/><w:lvlText w:val="{text}"/>{more}</w:lvl>"#
            )
        };
        let numbering = [
            format!(
                r#"<w:abstractNum w:abstractNumId="0">{}{}</w:abstractNum>"#,
                level(0, "decimal", "%1", r#"<w:pStyle w:val="Heading1"/>"#),
                level(1, "decimal", "%1.%2", r#"<w:pStyle w:val="Heading2"/>"#)
            ),
            format!(
                r#"<w:abstractNum w:abstractNumId="1">{}{}</w:abstractNum>"#,
                level(0, "lowerLetter", "(%1)", ""),
                level(1, "lowerRoman", "%2.", "")
            ),
            format!(
                r#"<w:abstractNum w:abstractNumId="2">{}</w:abstractNum>"#,
                level(0, "bullet", "\u{F0B7}", "")
            ),
            format!(
                r#"<w:abstractNum w:abstractNumId="3">{}{}</w:abstractNum>"#,
                level(0, "upperRoman", "%1.", ""),
                level(1, "decimal", "%1.%2", "<w:isLgl/>")
            ),
            r#"<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>"#.to_string(),
            r#"<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>"#.to_string(),
            r#"<w:num w:numId="3"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>"#.to_string(),
            r#"<w:num w:numId="4"><w:abstractNumId w:val="2"/></w:num>"#.to_string(),
            r#"<w:num w:numId="5"><w:abstractNumId w:val="3"/></w:num>"#.to_string(),
            r#"<w:num w:numId="6"><w:abstractNumId w:val="1"/></w:num>"#.to_string(),
        ]
        .concat();
        let styles = [
            r#"<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr><w:outlineLvl w:val="0"/></w:pPr></w:style>"#,
            r#"<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Heading1"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>"#,
        ]
        .concat();
        let listed = |list: u32, level: u32, text: &str| {
            format!(
                r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{list}"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
            )
        };
        let text_box = r#"<w:r><w:drawing><wps:txbx><w:txbxContent><w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="5"/></w:numPr></w:pPr><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></w:r>"#;
        let body = [
            paragraph(Some("Heading1"), "Scope"),
            listed(2, 0, "first duty"),
            listed(2, 1, "sub-duty"),
            listed(2, 0, "second duty"),
            paragraph(Some("Heading2"), "Terms"),
            listed(3, 0, "restarted"),
            listed(6, 0, "goes on"),
            listed(4, 0, "a bullet"),
            paragraph(Some("Heading1"), "Costs"),
            paragraph(Some("Heading2"), "Fees"),
            r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/><w:numPr><w:numId w:val="0"/></w:numPr></w:pPr><w:r><w:t>Annex</w:t></w:r></w:p>"#.to_string(),
            listed(5, 0, "alpha"),
            listed(5, 1, "beta"),
            listed(2, 0, " "),
            format!(
                r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="2"/></w:numPr></w:pPr><w:r><w:t>outer</w:t></w:r>{text_box}</w:p>"#
            ),
            r#"<w:p><w:pPr><w:pPrChange w:id="1"><w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:pPrChange></w:pPr><w:r><w:t>plain</w:t></w:r></w:p>"#.to_string(),
            listed(99, 0, "unknown list"),
        ]
        .concat();
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[
                    ("rId1".into(), "styles", "styles.xml".into()),
                    ("rId2".into(), "numbering", "numbering.xml".into()),
                ]),
            ),
            ("word/styles.xml".to_string(), word_part("styles", &styles)),
            ("word/numbering.xml".to_string(), word_part("numbering", &numbering)),
        ];
        let (title, blocks) = texts_and_paths("contract.docx", &body, &more);
        let text = text_under;
        assert_eq!(title, "1 Scope");
        assert_eq!(
            blocks,
            [
                text("1 Scope", "1 Scope"),
                text("(a) first duty", "1 Scope"),
                text("i. sub-duty", "1 Scope"),
                text("(b) second duty", "1 Scope"),
                text("1.1 Terms", "1 Scope > 1.1 Terms"),
                text("(a) restarted", "1 Scope > 1.1 Terms"),
                text("(b) goes on", "1 Scope > 1.1 Terms"),
                text("a bullet", "1 Scope > 1.1 Terms"),
                text("2 Costs", "2 Costs"),
                text("2.1 Fees", "2 Costs > 2.1 Fees"),
                text("Annex", "Annex"),
                text("I. alpha", "Annex"),
                text("1.1 beta", "Annex"),
                text("(d) outer", "Annex"),
                text("1.2 boxed", "Annex"),
                text("plain", "Annex"),
                text("unknown list", "Annex"),
            ]
        );
        // Damaged styles and numbering parts: the text is read, headings by their ids, no numbers.
        let damaged = [
            more[0].clone(),
            ("word/styles.xml".to_string(), "<w:styles><w:style".to_string()),
            (
                "word/numbering.xml".to_string(),
                "<w:numbering><w:num w:numId=\"1\"".to_string(),
            ),
        ];
        let (_, blocks) = texts_and_paths("contract.docx", &body, &damaged);
        assert_eq!(
            blocks[..3],
            [
                text("Scope", "Scope"),
                text("first duty", "Scope"),
                text("sub-duty", "Scope")
            ]
        );
        // Each damaged part is told in the document's warnings; a whole file has none.
        let warnings = |more: &[(String, String)]| {
            let raw = raw_for_test("contract.docx", docx_with(&body, more));
            AutoParser.parse(&raw).unwrap().documents.remove(0).warnings
        };
        assert_eq!(warnings(&more), Vec::<String>::new());
        let told = warnings(&damaged);
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(
            told[0].starts_with("DOCX part word/styles.xml: XML at byte")
                && told[0].ends_with("; headings were read by their style ids"),
            "{told:?}"
        );
        assert!(
            told[1].starts_with("DOCX part word/numbering.xml: ") && told[1].ends_with("; list numbers were left out"),
            "{told:?}"
        );
    }

    /// A list using a multilevel list style (`w:numStyleLink`, as Word writes one) takes the
    /// levels of the abstract list defining the style (`w:styleLink`) and counts with every
    /// other list of that style; a level that never starts again (`w:lvlRestart` 0) goes on
    /// counting under a new item above it; a list of a style nothing defines has no numbers.
    #[test]
    fn lists_of_a_list_style_count_together() {
        use crate::parse::ooxml::fixtures::relationships;
        let numbering = [
            r#"<w:abstractNum w:abstractNumId="10"><w:styleLink w:val="LegalList"/>
                <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
                <w:lvl w:ilvl="1"><w:start w:val="1"/><w:lvlRestart w:val="0"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
            </w:abstractNum>"#,
            r#"<w:abstractNum w:abstractNumId="11"><w:numStyleLink w:val="LegalList"/></w:abstractNum>"#,
            r#"<w:abstractNum w:abstractNumId="12"><w:numStyleLink w:val="LegalList"/></w:abstractNum>"#,
            r#"<w:abstractNum w:abstractNumId="13"><w:numStyleLink w:val="NoSuchList"/></w:abstractNum>"#,
            r#"<w:num w:numId="20"><w:abstractNumId w:val="10"/></w:num>"#,
            r#"<w:num w:numId="21"><w:abstractNumId w:val="11"/></w:num>"#,
            r#"<w:num w:numId="22"><w:abstractNumId w:val="12"/></w:num>"#,
            r#"<w:num w:numId="23"><w:abstractNumId w:val="13"/></w:num>"#,
        ]
        .concat();
        let listed = |list: u32, level: u32, text: &str| {
            format!(
                r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{list}"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
            )
        };
        let body = [
            listed(21, 0, "Parties"),
            listed(21, 1, "Lessor"),
            listed(22, 0, "Term"),
            listed(22, 1, "Start"),
            listed(23, 0, "Unlinked"),
        ]
        .concat();
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[("rId2".into(), "numbering", "numbering.xml".into())]),
            ),
            ("word/numbering.xml".to_string(), word_part("numbering", &numbering)),
        ];
        let (_, blocks) = texts_and_paths("tenancy.docx", &body, &more);
        let texts: Vec<&str> = blocks.iter().map(|(text, _)| text.as_str()).collect();
        assert_eq!(texts, ["1. Parties", "1.1 Lessor", "2. Term", "2.2 Start", "Unlinked"]);
    }

    /// Headings in the language of the Word that wrote them: the style ids are German
    /// (`berschrift1`), Japanese (`1`) and custom, their levels read from the styles part (the
    /// built-in name, or an outline level, inherited through `basedOn`); Word's own "TOC
    /// Heading" (based on Heading 1, outline level 9) and Subtitle (based on Title) are not
    /// headings; a paragraph's own outline level wins over its style's.
    #[test]
    fn heading_styles_in_any_language() {
        use crate::parse::ooxml::fixtures::relationships;
        let style = |id: &str, name: &str, inside: &str| {
            format!(r#"<w:style w:type="paragraph" w:styleId="{id}"><w:name w:val="{name}"/>{inside}</w:style>"#)
        };
        let styles = [
            style("Standard", "Normal", ""),
            style("Titel", "Title", r#"<w:basedOn w:val="Standard"/>"#),
            style("Untertitel", "Subtitle", r#"<w:basedOn w:val="Titel"/>"#),
            style(
                "berschrift1",
                "heading 1",
                r#"<w:basedOn w:val="Standard"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr>"#,
            ),
            style("1", "heading 2", r#"<w:basedOn w:val="Standard"/>"#),
            style(
                "Kapitel",
                "Kapitel",
                r#"<w:pPr><w:keepNext/><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b w:val="1"/></w:rPr>"#,
            ),
            style("KapitelRot", "Kapitel rot", r#"<w:basedOn w:val="Kapitel"/>"#),
            style(
                "Inhaltsverzeichnisberschrift",
                "TOC Heading",
                r#"<w:basedOn w:val="berschrift1"/><w:pPr><w:outlineLvl w:val="9"/></w:pPr>"#,
            ),
            r#"<w:style w:type="character" w:styleId="Heading3"><w:name w:val="heading 3"/></w:style>"#.to_string(),
        ]
        .concat();
        let body = [
            paragraph(Some("Titel"), "Hafenbericht"),
            paragraph(Some("Untertitel"), "Ausgabe 2026"),
            paragraph(Some("Inhaltsverzeichnisberschrift"), "Inhalt"),
            paragraph(Some("berschrift1"), "Anleger"),
            paragraph(Some("1"), "北桟橋"),
            paragraph(Some("Standard"), "Text."),
            paragraph(Some("KapitelRot"), "Tiefen"),
            r#"<w:p><w:pPr><w:pStyle w:val="Standard"/><w:outlineLvl w:val="0"/></w:pPr><w:r><w:t>Kosten</w:t></w:r></w:p>"#.to_string(),
            r#"<w:p><w:pPr><w:pStyle w:val="berschrift1"/><w:outlineLvl w:val="9"/></w:pPr><w:r><w:t>Nur Text</w:t></w:r></w:p>"#.to_string(),
            paragraph(Some("Heading2"), "Gebühren"),
        ]
        .concat();
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[("rId1".into(), "styles", "styles.xml".into())]),
            ),
            ("word/styles.xml".to_string(), word_part("styles", &styles)),
        ];
        let (title, paths) = texts_and_paths("bericht.docx", &body, &more);
        let path = text_under;
        assert_eq!(title, "Hafenbericht");
        assert_eq!(
            paths,
            [
                path("Hafenbericht", "Hafenbericht"),
                path("Ausgabe 2026", "Hafenbericht"),
                path("Inhalt", "Hafenbericht"),
                path("Anleger", "Hafenbericht > Anleger"),
                path("北桟橋", "Hafenbericht > Anleger > 北桟橋"),
                path("Text.", "Hafenbericht > Anleger > 北桟橋"),
                path("Tiefen", "Hafenbericht > Anleger > Tiefen"),
                path("Kosten", "Hafenbericht > Kosten"),
                path("Nur Text", "Hafenbericht > Kosten"),
                path("Gebühren", "Hafenbericht > Kosten > Gebühren"),
            ]
        );
    }

    /// A table of contents as Word writes it (a content control of TOC-styled paragraphs, a
    /// field whose result is the entries, their page numbers after a tab), and an index's
    /// entry: not read, whether their styles are named in the styles part (German ids) or not
    /// (`TOC2`, `Index1`); the contents' own heading and the document's headings are.
    #[test]
    fn a_table_of_contents_is_not_read() {
        use crate::parse::ooxml::fixtures::relationships;
        let entry = |style: &str, text: &str, page: u32| {
            format!(
                r#"<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:hyperlink w:anchor="_Toc1"><w:r><w:t>{text}</w:t></w:r><w:r><w:tab/></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGEREF _Toc1 \h </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{page}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:hyperlink></w:p>"#
            )
        };
        let body = [
            r#"<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Table of Contents"/></w:docPartObj></w:sdtPr><w:sdtContent>"#.to_string(),
            paragraph(Some("Inhaltsverzeichnisberschrift"), "Inhalt"),
            entry("Verzeichnis1", "Anleger", 1),
            entry("TOC2", "Tiefen", 2),
            r#"</w:sdtContent></w:sdt>"#.to_string(),
            paragraph(Some("berschrift1"), "Anleger"),
            paragraph(None, "Der Nordanleger öffnet im Frühjahr."),
            entry("Index1", "Nordanleger", 1),
        ]
        .concat();
        let styles = word_part(
            "styles",
            concat!(
                r#"<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>"#,
                r#"<w:style w:type="paragraph" w:styleId="Inhaltsverzeichnisberschrift"><w:name w:val="TOC Heading"/><w:basedOn w:val="berschrift1"/><w:pPr><w:outlineLvl w:val="9"/></w:pPr></w:style>"#,
                r#"<w:style w:type="paragraph" w:styleId="Verzeichnis1"><w:name w:val="toc 1"/></w:style>"#,
            ),
        );
        let more = [
            (
                "word/_rels/document.xml.rels".to_string(),
                relationships(&[("rId1".into(), "styles", "styles.xml".into())]),
            ),
            ("word/styles.xml".to_string(), styles),
        ];
        let (_, blocks) = texts_and_paths("bericht.docx", &body, &more);
        assert_eq!(
            blocks,
            [
                text_under("Inhalt", ""),
                text_under("Anleger", "Anleger"),
                text_under("Der Nordanleger öffnet im Frühjahr.", "Anleger"),
            ]
        );
    }
}
