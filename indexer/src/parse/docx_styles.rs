//! A Word document's paragraph styles' heading levels, from its styles part (`word/styles.xml`):
//! a paragraph names its style by id, and the id is the style's name in the language of the
//! Word that wrote it (`berschrift1` in German, `Titre1` in French, `1` in Japanese), while
//! the name a built-in style records is always English (`heading 1`). A style is a heading of
//! level N + 1 where it, or the style it is based on, sets outline level N (0-8; 9 is body
//! text), as Word's own headings do; of level N where its name is `heading N`; the title (level
//! 0) where its name is `Title` (not inherited: Word's Subtitle is based on Title). A paragraph
//! of the style of a table of contents' or an index's entries (`toc N`, `index N`), which Word
//! generates (a heading's or a term's words again with a page number), is not read. A style's
//! list numbering (`w:numPr`, inherited through `w:basedOn`) numbers its paragraphs
//! (`docx_numbering.rs`).

use std::collections::HashMap;

use quick_xml::events::Event;

use super::docx_numbering::NumberingProperties;
use super::ooxml::{local_attribute, local_name, Package, PartReader, Relationship};
use super::ParseError;

/// How far a `basedOn` chain is followed (Word allows no cycle; a file may still hold one).
const MAX_BASED_ON: usize = 16;

/// What one style says of its level.
#[derive(Default)]
struct Style {
    /// The level its name gives (`Title`, `heading N`).
    named: Option<usize>,
    /// Its name is a generated index's entries' (`toc N`, `index N`).
    generated: bool,
    /// Its own outline level, if it sets one (`w:pPr/w:outlineLvl`).
    outline_level: Option<u32>,
    /// Its list numbering (`w:pPr/w:numPr`), if it sets one.
    numbering: Option<NumberingProperties>,
    based_on: Option<String>,
}

/// The paragraph styles of one document.
#[derive(Default)]
pub(super) struct Styles {
    by_id: HashMap<String, Style>,
}

impl Styles {
    /// The styles of the part among `relationships` (the document part's) that holds them.
    pub fn read(package: &mut Package, relationships: &[Relationship]) -> Result<Self, ParseError> {
        let Some((part, xml)) = package.related_part(relationships, "/styles")? else {
            return Ok(Self::default());
        };
        let mut reader = PartReader::new(&xml, package.format(), &part);
        let mut styles = Self::default();
        // The paragraph style being read, and its id.
        let mut style: Option<(String, Style)> = None;
        loop {
            match reader.next()? {
                Event::Start(e) if local_name(e.name().as_ref()) == b"style" => {
                    let paragraph = local_attribute(&e, b"type").is_none_or(|t| t == "paragraph");
                    style = local_attribute(&e, b"styleId")
                        .filter(|_| paragraph)
                        .map(|id| (id, Style::default()));
                }
                Event::Start(e) | Event::Empty(e) => {
                    let Some((_, style)) = style.as_mut() else {
                        continue;
                    };
                    let mut numbering = style.numbering.clone().unwrap_or_default();
                    if numbering.read(&e) {
                        style.numbering = Some(numbering);
                        continue;
                    }
                    let value = local_attribute(&e, b"val");
                    match local_name(e.name().as_ref()) {
                        b"name" => {
                            style.named = value.as_deref().and_then(named_level);
                            style.generated = value.as_deref().is_some_and(is_generated_entry_name);
                        }
                        b"basedOn" => style.based_on = value,
                        b"outlineLvl" => style.outline_level = value.and_then(|v| v.parse().ok()),
                        _ => {}
                    }
                }
                Event::End(e) if local_name(e.name().as_ref()) == b"style" => {
                    if let Some((id, read)) = style.take() {
                        styles.by_id.insert(id, read);
                    }
                }
                Event::Eof => return Ok(styles),
                _ => {}
            }
        }
    }

    /// The heading level of the paragraph style `id` (0 for a title), none for body text. A
    /// style the part does not define is read by its id, as Word's English ids are
    /// (`Heading1`, `Title`).
    pub fn level(&self, id: &str) -> Option<usize> {
        let Some(style) = self.by_id.get(id) else {
            return named_level(id);
        };
        let mut ancestor = Some(style);
        for _ in 0..MAX_BASED_ON {
            let Some(current) = ancestor else { break };
            if let Some(level) = current.outline_level {
                return outline_heading(level);
            }
            ancestor = current.based_on.as_deref().and_then(|b| self.by_id.get(b));
        }
        style.named
    }

    /// The list numbering of the paragraph style `id`: its own or, where it sets none, the
    /// style's it is based on.
    pub fn numbering(&self, id: &str) -> NumberingProperties {
        let mut ancestor = self.by_id.get(id);
        for _ in 0..MAX_BASED_ON {
            let Some(current) = ancestor else { break };
            if let Some(numbering) = &current.numbering {
                return numbering.clone();
            }
            ancestor = current.based_on.as_deref().and_then(|b| self.by_id.get(b));
        }
        NumberingProperties::default()
    }

    /// Whether the paragraph style `id` is a generated index's entries' (by its name, or by
    /// its id where the part does not define it, as Word's English ids are: `TOC1`, `Index1`).
    pub fn is_generated_entry(&self, id: &str) -> bool {
        match self.by_id.get(id) {
            Some(style) => style.generated,
            None => is_generated_entry_name(id),
        }
    }
}

/// `toc 1` ... `toc 9`, `index 1` ... `index 9` (`TOC1`, `Index1` as ids).
fn is_generated_entry_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase().replace(' ', "");
    ["toc", "index"]
        .iter()
        .any(|prefix| (lower.strip_prefix(prefix)).is_some_and(|n| n.parse::<u8>().is_ok_and(|n| (1..=9).contains(&n))))
}

/// The heading an outline level makes: 0-8 are levels 1-9, 9 (and past it) body text.
pub(super) fn outline_heading(level: u32) -> Option<usize> {
    (level < 9).then_some(level as usize + 1)
}

/// The level a style's name (or English id) gives: `Title` 0, `heading N` / `Heading1` N.
fn named_level(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase().replace(' ', "");
    if lower == "title" {
        return Some(0);
    }
    lower.strip_prefix("heading").and_then(|n| n.parse().ok())
}
