//! A Word document's footnotes and endnotes (the parts the document's relationships name,
//! `word/footnotes.xml` and `word/endnotes.xml`): each note's paragraphs, given where the
//! document cites the note (`w:footnoteReference`, `w:endnoteReference`), after the paragraph
//! (or table) citing it, so a note is read under the headings of the text it annotates and
//! never splits that text. Notes no reference cites come after the body, so none is lost.
//! Word's separator notes (the rule above a page's notes) hold no text and are left out.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::ooxml::{local_attribute, local_name, Package, PartReader, Relationship};
use super::outline_body::OutlineBody;
use super::ParseError;

/// A note: whether it is an endnote, and its `w:id`.
pub(super) type NoteKey = (bool, String);

/// The notes of one document, each given once.
#[derive(Default)]
pub(super) struct Notes {
    /// Each note's paragraphs, in the parts' order (footnotes first); emptied once given.
    paragraphs: Vec<Vec<String>>,
    index: HashMap<NoteKey, usize>,
}

impl Notes {
    /// The notes of the parts among `relationships` (the document part's).
    pub fn read(package: &mut Package, relationships: &[Relationship]) -> Result<Self, ParseError> {
        let mut notes = Self::default();
        for (endnote, kind) in [(false, "/footnotes"), (true, "/endnotes")] {
            if let Some((part, xml)) = package.related_part(relationships, kind)? {
                notes.read_part(&xml, &part, endnote, package.format())?;
            }
        }
        Ok(notes)
    }

    fn read_part(&mut self, xml: &str, part: &str, endnote: bool, format: &'static str) -> Result<(), ParseError> {
        let mut reader = PartReader::new(xml, format, part);
        // The note being read (none inside a separator), its paragraph, and whether the
        // reader is inside a run's `<w:t>` (the only text read, as in the body).
        let (mut note, mut paragraph, mut in_text): (Option<(String, Vec<String>)>, String, bool) =
            (None, String::new(), false);
        loop {
            match reader.next()? {
                Event::Start(e) if is_note(&e) => note = readable_note(&e).map(|id| (id, Vec::new())),
                Event::Start(e) if local_name(e.name().as_ref()) == b"t" => in_text = true,
                Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                    b"tab" => paragraph.push('\t'),
                    b"br" | b"cr" => paragraph.push('\n'),
                    _ => {}
                },
                Event::Text(t) if in_text => paragraph.push_str(&reader.text(&t)?),
                Event::End(e) => match local_name(e.name().as_ref()) {
                    b"t" => in_text = false,
                    b"p" => {
                        let text = std::mem::take(&mut paragraph).trim().to_string();
                        if let (Some((_, paragraphs)), false) = (note.as_mut(), text.is_empty()) {
                            paragraphs.push(text);
                        }
                    }
                    b"footnote" | b"endnote" => {
                        if let Some((id, paragraphs)) = note.take() {
                            self.index.insert((endnote, id), self.paragraphs.len());
                            self.paragraphs.push(paragraphs);
                        }
                    }
                    _ => {}
                },
                Event::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    /// The note a body element cites, where it is a note reference.
    pub fn cited_by(element: &BytesStart) -> Option<NoteKey> {
        let endnote = match local_name(element.name().as_ref()) {
            b"footnoteReference" => false,
            b"endnoteReference" => true,
            _ => return None,
        };
        local_attribute(element, b"id").map(|id| (endnote, id))
    }

    /// A paragraph or table part ends: once outside every table, the paragraphs of the notes
    /// `cited` (emptied) are blocks, each note's the first time it is cited (as
    /// [`Aside::give`](super::outline_body::Aside::give) gives what was set aside).
    pub fn give(&mut self, cited: &mut Vec<NoteKey>, body: &mut OutlineBody) {
        if body.table.inside() {
            return;
        }
        for key in cited.drain(..) {
            if let Some(&i) = self.index.get(&key) {
                std::mem::take(&mut self.paragraphs[i])
                    .into_iter()
                    .for_each(|text| body.push_text(text));
            }
        }
    }

    /// The paragraphs of the notes never cited, in the parts' order.
    pub fn uncited(self) -> Vec<String> {
        self.paragraphs.into_iter().flatten().collect()
    }
}

fn is_note(element: &BytesStart) -> bool {
    matches!(local_name(element.name().as_ref()), b"footnote" | b"endnote")
}

/// A note's id, unless it is a separator (`w:type` other than `normal`) or has none.
fn readable_note(element: &BytesStart) -> Option<String> {
    match local_attribute(element, b"type").as_deref() {
        None | Some("normal") => local_attribute(element, b"id"),
        Some(_) => None,
    }
}
