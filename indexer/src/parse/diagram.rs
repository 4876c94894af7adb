//! SmartArt (DrawingML diagrams, in PPTX and DOCX): a diagram's text lives in its data part
//! ([`super::drawn_parts`] finds it); its points' paragraphs are read in the order the part
//! lists them.

use quick_xml::events::Event;

use super::ooxml::{local_name, PartReader};
use super::ParseError;

/// A diagram data part's text: each paragraph of its points, one a line.
pub(super) fn diagram_text(xml: &str, format: &'static str, part: &str) -> Result<String, ParseError> {
    let mut reader = PartReader::new(xml, format, part);
    let (mut paragraphs, mut paragraph) = (Vec::<String>::new(), String::new());
    // How deep inside text runs (`a:r`, `a:fld`) the reader is, and inside a run's `a:t`.
    let (mut runs, mut in_text) = (0usize, false);
    loop {
        match reader.next()? {
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"r" | b"fld" => runs += 1,
                b"t" => in_text = runs > 0,
                _ => {}
            },
            Event::Empty(e) if local_name(e.name().as_ref()) == b"br" => paragraph.push('\n'),
            Event::Text(t) if in_text => paragraph.push_str(&reader.text(&t)?),
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"r" | b"fld" => runs = runs.saturating_sub(1),
                b"t" => in_text = false,
                b"p" => {
                    let text = std::mem::take(&mut paragraph).trim().to_string();
                    if !text.is_empty() {
                        paragraphs.push(text);
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(paragraphs.join("\n"))
}

/// Test fixtures: a diagram's data part and the frame that draws it.
#[cfg(test)]
pub(crate) mod fixtures {
    const NS: &str = r#"xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main""#;

    /// A diagram data part whose nodes hold `texts` (after the document point, which holds
    /// none), with a placeholder's prompt that is not text.
    pub fn diagram_data(texts: &[&str]) -> String {
        let points: String = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                format!(
                    r#"<dgm:pt modelId="{{{i}}}"><dgm:prSet phldrT="[Text]"/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>{text}</a:t></a:r></a:p></dgm:t></dgm:pt>"#
                )
            })
            .collect();
        format!(
            r#"<?xml version="1.0"?><dgm:dataModel {NS}><dgm:ptLst><dgm:pt modelId="{{d}}" type="doc"><dgm:t><a:bodyPr/><a:p><a:endParaRPr lang="en-US"/></a:p></dgm:t></dgm:pt>{points}</dgm:ptLst><dgm:cxnLst/></dgm:dataModel>"#
        )
    }

    /// The graphic of the diagram whose data relationship is `id`.
    pub fn diagram_graphic(id: &str) -> String {
        format!(
            r#"<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds {NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:dm="{id}" r:lo="rId8" r:qs="rId9" r:cs="rId10"/></a:graphicData></a:graphic>"#
        )
    }

    /// A slide's graphic frame drawing the diagram whose data relationship is `id`.
    pub fn diagram_frame(id: &str) -> String {
        format!("<p:graphicFrame>{}</p:graphicFrame>", diagram_graphic(id))
    }
}
