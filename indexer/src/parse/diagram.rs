//! SmartArt (DrawingML diagrams, in PPTX and DOCX): a diagram's text lives in a part of its
//! own, its data part, which the slide or document names by relationship from a `relIds`
//! element where the diagram is drawn. Its points' paragraphs are read in the order the part
//! lists them.

use std::collections::HashSet;

use quick_xml::events::{BytesStart, Event};

use super::ooxml::{local_name, Package, PartReader, Relationship};
use super::ParseError;

const DIAGRAM_DATA: &str = "/relationships/diagramData";

/// The diagrams one part names (its diagram-data relationships), each read once however
/// often the part names it.
#[derive(Default)]
pub(super) struct Diagrams {
    data: Vec<Relationship>,
    read: HashSet<String>,
}

impl Diagrams {
    /// The diagrams among a part's `relationships`.
    pub fn among(relationships: &[Relationship]) -> Self {
        Self {
            data: relationships
                .iter()
                .filter(|r| r.kind.ends_with(DIAGRAM_DATA))
                .cloned()
                .collect(),
            read: HashSet::new(),
        }
    }

    /// The text of the diagram a `relIds` element names (its `r:dm`), the first time it is
    /// named; none for another element, a diagram named before, or one the package lacks.
    pub fn text_of(&mut self, element: &BytesStart, package: &mut Package) -> Result<Option<String>, ParseError> {
        if local_name(element.name().as_ref()) != b"relIds" {
            return Ok(None);
        }
        let id = element
            .attributes()
            .flatten()
            .find(|a| local_name(a.key.as_ref()) == b"dm")
            .map(|a| String::from_utf8_lossy(&a.value).into_owned());
        let Some(data) = id.and_then(|id| self.data.iter().find(|r| r.id == id)) else {
            return Ok(None);
        };
        if !self.read.insert(data.part.clone()) {
            return Ok(None);
        }
        let part = data.part.clone();
        let Some(xml) = package.part(&part)? else {
            return Ok(None);
        };
        let text = diagram_text(&xml, package.format(), &part)?;
        Ok((!text.is_empty()).then_some(text))
    }
}

/// A diagram data part's text: each paragraph of its points, one a line.
fn diagram_text(xml: &str, format: &'static str, part: &str) -> Result<String, ParseError> {
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
