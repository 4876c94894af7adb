//! PPTX (zip + PresentationML): the slides in the presentation's order, each slide's page
//! number its place, its title the heading path of its text; tables as table blocks (cells
//! joined by ` | `); SmartArt diagrams' and charts' text where they are drawn; the speaker notes under the
//! slide's title and "Notes". Slide numbers, dates and footers (the placeholders repeated on
//! every slide) are left out.

use quick_xml::events::{BytesStart, Event};

use super::drawn_parts::DrawnParts;
use super::ooxml::{local_name, Package, PartReader};
use super::slides::{push_slide, ShapeRole, SlideReader, SlideText};
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

const SLIDE: &str = "/relationships/slide";
const NOTES: &str = "/relationships/notesSlide";

/// The role a placeholder (`p:ph`) gives its shape, if its type names one.
fn placeholder_role(element: &BytesStart) -> Option<ShapeRole> {
    let kind = element
        .attributes()
        .flatten()
        .find(|a| local_name(a.key.as_ref()) == b"type")
        .map(|a| a.value.into_owned());
    match kind.as_deref() {
        Some(b"title" | b"ctrTitle") => Some(ShapeRole::Title),
        Some(b"sldNum" | b"dt" | b"ftr" | b"sldImg" | b"hdr") => Some(ShapeRole::Furniture),
        _ => None,
    }
}

/// The text of one slide or notes page, its SmartArt diagrams' and charts' (those `drawn`
/// names) where they are drawn.
fn read_slide(xml: &str, part: &str, drawn: &mut DrawnParts, package: &mut Package) -> Result<SlideText, ParseError> {
    let mut reader = PartReader::new(xml, "PPTX", part);
    let mut slide = SlideReader::default();
    // Inside a text run's `<a:t>`: the only text read (a table's style id is text too).
    let mut in_text = false;
    loop {
        match reader.next()? {
            Event::Start(e) if local_name(e.name().as_ref()) == b"t" => in_text = true,
            Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                b"ph" => {
                    if let Some(role) = placeholder_role(&e) {
                        slide.set_role(role);
                    }
                }
                b"br" => slide.paragraph.push('\n'),
                b"tab" => slide.paragraph.push('\t'),
                b"tbl" => slide.table.start(),
                _ => {
                    if let Some(text) = drawn.text_of(&e, package)? {
                        slide.slide.blocks.push((text, ContentType::Text));
                    }
                }
            },
            Event::Text(t) if in_text => slide.paragraph.push_str(&reader.text(&t)?),
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"t" => in_text = false,
                b"p" => slide.end_paragraph(),
                b"sp" => slide.end_shape(),
                name => slide.end_table_part(name),
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(slide.slide)
}

/// The slides' part names in the presentation's order (its slide list; else its slide
/// relationships in their order), each once (a list naming one slide many times would have
/// it read again and again).
fn slide_parts(package: &mut Package) -> Result<Vec<String>, ParseError> {
    let presentation = package
        .part("ppt/presentation.xml")?
        .ok_or_else(|| ParseError::Corrupt("PPTX has no ppt/presentation.xml".into()))?;
    let relationships = package.relationships("ppt/presentation.xml")?;
    let mut reader = PartReader::new(&presentation, "PPTX", "ppt/presentation.xml");
    let mut listed = Vec::new();
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"sldId" => {
                let id = e
                    .attributes()
                    .flatten()
                    // `r:id` (the relationship), not the slide's numeric `id`.
                    .find(|a| a.key.as_ref() != b"id" && local_name(a.key.as_ref()) == b"id")
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned());
                if let Some(found) = id.and_then(|id| relationships.iter().find(|r| r.id == id)) {
                    listed.push(found.part.clone());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if listed.is_empty() {
        listed = relationships
            .into_iter()
            .filter(|r| r.kind.ends_with(SLIDE))
            .map(|r| r.part)
            .collect();
    }
    let mut seen = std::collections::HashSet::new();
    listed.retain(|part| seen.insert(part.clone()));
    Ok(listed)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut package = Package::open(&raw.bytes, "PPTX")?;
    let mut blocks = Vec::new();
    let mut first_title = None;
    let mut missing = Vec::new();
    for (index, part) in slide_parts(&mut package)?.into_iter().enumerate() {
        let Some(xml) = package.part(&part)? else {
            missing.push(format!(
                "slide {} ({part}) is not in the file; it was left out",
                index + 1
            ));
            continue;
        };
        let relationships = package.relationships(&part)?;
        let slide = read_slide(&xml, &part, &mut DrawnParts::among(&relationships), &mut package)?;
        let notes = match package.related_part(&relationships, NOTES)? {
            Some((notes, xml)) => read_slide(&xml, &notes, &mut DrawnParts::default(), &mut package)?.blocks,
            None => Vec::new(),
        };
        if let Some(title) = push_slide(index, slide, notes, &mut blocks) {
            first_title.get_or_insert(title);
        }
    }
    let title = package
        .core_title()?
        .or(first_title)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(
        Document::from_raw(raw, title, blocks).with_warnings(missing),
    ))
}

/// Test fixtures: minimal PPTX files.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::parse::ooxml::fixtures::{package, relationships};

    const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

    /// A shape holding `paragraphs`, a placeholder of `placeholder` type if given.
    pub fn shape(placeholder: Option<&str>, paragraphs: &[&str]) -> String {
        let ph = placeholder
            .map(|kind| format!(r#"<p:ph type="{kind}"/>"#))
            .unwrap_or_default();
        let body: String = paragraphs
            .iter()
            .map(|p| format!("<a:p><a:r><a:t>{p}</a:t></a:r></a:p>"))
            .collect();
        format!(
            r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:txBody>{body}</p:txBody></p:sp>"#
        )
    }

    fn slide_xml(shapes: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><p:sld {NS}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"#
        )
    }

    /// A presentation of `slides` (each its shapes, and its notes' shapes if any), listed in
    /// `order` (indexes into `slides`; part names follow `slides`).
    pub fn pptx(slides: &[(String, Option<String>)], order: &[usize]) -> Vec<u8> {
        pptx_with(slides, order, &[])
    }

    /// [`pptx`] with `more` parts (name, text) besides.
    pub fn pptx_with(slides: &[(String, Option<String>)], order: &[usize], more: &[(String, String)]) -> Vec<u8> {
        let listed: String = order
            .iter()
            .enumerate()
            .map(|(at, slide)| format!(r#"<p:sldId id="{}" r:id="rId{}"/>"#, 256 + at, slide + 10))
            .collect();
        let mut parts = vec![
            (
                "ppt/presentation.xml".to_string(),
                format!(
                    r#"<?xml version="1.0"?><p:presentation {NS}><p:sldIdLst>{listed}</p:sldIdLst></p:presentation>"#
                ),
            ),
            (
                "ppt/_rels/presentation.xml.rels".to_string(),
                relationships(
                    &(0..slides.len())
                        .map(|i| (format!("rId{}", i + 10), "slide", format!("slides/slide{}.xml", i + 1)))
                        .collect::<Vec<_>>(),
                ),
            ),
        ];
        for (i, (shapes, notes)) in slides.iter().enumerate() {
            parts.push((format!("ppt/slides/slide{}.xml", i + 1), slide_xml(shapes)));
            if let Some(notes) = notes {
                parts.push((
                    format!("ppt/slides/_rels/slide{}.xml.rels", i + 1),
                    relationships(&[(
                        "rId1".into(),
                        "notesSlide",
                        format!("../notesSlides/notesSlide{}.xml", i + 1),
                    )]),
                ));
                parts.push((
                    format!("ppt/notesSlides/notesSlide{}.xml", i + 1),
                    format!(
                        r#"<?xml version="1.0"?><p:notes {NS}><p:cSld><p:spTree>{notes}</p:spTree></p:cSld></p:notes>"#
                    ),
                ));
            }
        }
        parts.extend_from_slice(more);
        package(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use crate::parse::{document_of, paged_outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    #[test]
    fn slides_in_the_presentations_order_with_titles_tables_and_notes() {
        let table = r#"<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tblPr><a:tableStyleId>{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}</a:tableStyleId></a:tblPr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>quarter</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>GPUs</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q3</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>64</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>"#;
        let slides = [
            (
                [
                    shape(Some("title"), &["Costs"]),
                    table.to_string(),
                    shape(Some("sldNum"), &["7"]),
                ]
                .concat(),
                Some(
                    [
                        shape(Some("sldImg"), &[]),
                        shape(Some("body"), &["Say why H100s &amp; not A100s."]),
                        shape(Some("sldNum"), &["2"]),
                    ]
                    .concat(),
                ),
            ),
            (
                [
                    shape(Some("ctrTitle"), &["Roadmap 2025"]),
                    shape(None, &["Search in every language", "GPU index builds"]),
                    shape(Some("ftr"), &["Confidential"]),
                ]
                .concat(),
                None,
            ),
        ];
        // The second slide part is shown first.
        let doc = document_of("deck.pptx", pptx(&slides, &[1, 0]));
        assert_eq!(doc.title, "Roadmap 2025");
        assert_eq!(
            paged_outline_of(&doc),
            [
                ("Roadmap 2025", Some(1), vec!["Roadmap 2025"], ContentType::Text),
                (
                    "Search in every language\nGPU index builds",
                    Some(1),
                    vec!["Roadmap 2025"],
                    ContentType::Text
                ),
                ("Costs", Some(2), vec!["Costs"], ContentType::Text),
                ("quarter | GPUs\nQ3 | 64", Some(2), vec!["Costs"], ContentType::Table),
                (
                    "Say why H100s & not A100s.",
                    Some(2),
                    vec!["Costs", "Notes"],
                    ContentType::Text
                ),
            ]
        );
    }

    #[test]
    fn a_slide_listed_many_times_is_read_once() {
        let deck = pptx(&[(shape(None, &["once"]), None)], &[0, 0, 0]);
        let doc = document_of("d.pptx", deck);
        assert_eq!(doc.blocks.len(), 1);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    #[test]
    fn a_slide_missing_from_the_file_is_told() {
        use crate::parse::ooxml::fixtures::without_part;
        let slides = [
            (shape(None, &["first"]), None),
            (shape(None, &["lost"]), None),
            (shape(None, &["third"]), None),
        ];
        let deck = without_part(&pptx(&slides, &[0, 1, 2]), "ppt/slides/slide2.xml");
        let doc = document_of("d.pptx", deck);
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert!(
            texts.iter().any(|t| t.contains("third")) && !texts.iter().any(|t| t.contains("lost")),
            "{texts:?}"
        );
        assert_eq!(
            doc.warnings,
            ["slide 2 (ppt/slides/slide2.xml) is not in the file; it was left out"]
        );
    }

    #[test]
    fn a_pptx_without_its_presentation_part_is_corrupt() {
        let mut bytes = pptx(&[(shape(None, &["x"]), None)], &[0]);
        bytes.truncate(bytes.len() / 2);
        let err = AutoParser.parse(&raw_for_test("half.pptx", bytes)).unwrap_err();
        assert!(matches!(err, ParseError::Corrupt(_)), "{err:?}");
        let docx_named_pptx = crate::parse::docx::fixtures::docx("<w:p><w:r><w:t>x</w:t></w:r></w:p>");
        let err = AutoParser
            .parse(&raw_for_test("wrong.pptx", docx_named_pptx))
            .unwrap_err();
        assert_eq!(err, ParseError::Corrupt("PPTX has no ppt/presentation.xml".into()));
    }

    #[test]
    fn smartart_and_chart_text_are_read_where_they_are_drawn() {
        use crate::parse::chart::fixtures::chart_xml;
        use crate::parse::diagram::fixtures::{diagram_data, diagram_frame};
        use crate::parse::ooxml::fixtures::relationships;
        let shapes = [
            shape(Some("title"), &["Rollout"]),
            // Drawn twice: read once.
            diagram_frame("rId7"),
            diagram_frame("rId7"),
            shape(None, &["After the diagram"]),
            r#"<p:graphicFrame><a:graphic><a:graphicData><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId8"/></a:graphicData></a:graphic></p:graphicFrame>"#.to_string(),
        ]
        .concat();
        let more = [
            (
                "ppt/slides/_rels/slide1.xml.rels".to_string(),
                relationships(&[
                    ("rId7".into(), "diagramData", "../diagrams/data1.xml".into()),
                    ("rId8".into(), "chart", "../charts/chart1.xml".into()),
                ]),
            ),
            (
                "ppt/diagrams/data1.xml".to_string(),
                diagram_data(&["Plan", "Build &amp; test", "Ship"]),
            ),
            ("ppt/charts/chart1.xml".to_string(), chart_xml(&["Q1", "Q2"])),
        ];
        let deck = pptx_with(&[(shapes, None)], &[0], &more);
        let doc = document_of("d.pptx", deck);
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Rollout",
                "Plan\nBuild & test\nShip",
                "After the diagram",
                "Spend by quarter\nMillion euros\nGPU hours, Storage\nQ1, Q2"
            ]
        );
        assert!(doc.blocks.iter().all(|b| b.heading_path == ["Rollout"]));
    }
}
