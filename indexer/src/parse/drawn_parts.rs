//! What a slide or document draws from parts of their own (PPTX, DOCX): a SmartArt diagram's
//! text lives in its data part, a chart's in its chart part; the slide or document names the
//! part by relationship from the element where it is drawn (`dgm:relIds r:dm`, `c:chart
//! r:id`). Their text is read there, each part once however often it is drawn.

use std::collections::HashSet;

use quick_xml::events::BytesStart;

use super::chart::chart_text;
use super::diagram::diagram_text;
use super::ooxml::{local_name, Package, Relationship};
use super::ParseError;

const DIAGRAM_DATA: &str = "/relationships/diagramData";
const CHART: &str = "/relationships/chart";

/// The drawn parts one part names (its diagram-data and chart relationships).
#[derive(Default)]
pub(super) struct DrawnParts {
    relationships: Vec<Relationship>,
    read: HashSet<String>,
}

impl DrawnParts {
    /// The drawn parts among a part's `relationships`.
    pub fn among(relationships: &[Relationship]) -> Self {
        Self {
            relationships: relationships
                .iter()
                .filter(|r| r.kind.ends_with(DIAGRAM_DATA) || r.kind.ends_with(CHART))
                .cloned()
                .collect(),
            read: HashSet::new(),
        }
    }

    /// The text of the diagram or chart `element` draws (a `relIds`' `r:dm`, a `chart`'s
    /// `r:id`), the first time it is drawn; none for another element, a part drawn before,
    /// or one the package lacks.
    pub fn text_of(&mut self, element: &BytesStart, package: &mut Package) -> Result<Option<String>, ParseError> {
        let (key, is_chart) = match local_name(element.name().as_ref()) {
            b"relIds" => (b"dm".as_slice(), false),
            b"chart" => (b"id".as_slice(), true),
            _ => return Ok(None),
        };
        let id = element
            .attributes()
            .flatten()
            .find(|a| a.key.as_ref() != key && local_name(a.key.as_ref()) == key)
            .map(|a| String::from_utf8_lossy(&a.value).into_owned());
        let Some(drawn) = id.and_then(|id| self.relationships.iter().find(|r| r.id == id)) else {
            return Ok(None);
        };
        if !self.read.insert(drawn.part.clone()) {
            return Ok(None);
        }
        let part = drawn.part.clone();
        let Some(xml) = package.part(&part)? else {
            return Ok(None);
        };
        let text = match is_chart {
            true => chart_text(&xml, package.format(), &part)?,
            false => diagram_text(&xml, package.format(), &part)?,
        };
        Ok((!text.is_empty()).then_some(text))
    }
}
