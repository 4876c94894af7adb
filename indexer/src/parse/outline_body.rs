//! A word processor's body as it is read (DOCX, ODT): paragraphs become blocks under the
//! headings above them, headings (by level) make the heading path, tables become table blocks;
//! text written inside a paragraph that is not part of it (an ODT note, a DOCX text box) is set
//! aside and given after that paragraph.

use super::ooxml::TableText;
use super::{Block, ContentType};

#[derive(Default)]
pub(super) struct OutlineBody {
    pub blocks: Vec<Block>,
    /// The headings above the current paragraph: (level, text), outermost first.
    headings: Vec<(usize, String)>,
    /// The paragraph being read.
    pub paragraph: String,
    pub table: TableText,
    /// The first heading's text (a title where the file names none).
    pub first_heading: Option<String>,
}

impl OutlineBody {
    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    /// The paragraph ends: a heading of `level` (0 for a title), or text where `level` is none.
    pub fn end_paragraph(&mut self, level: Option<usize>) {
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if text.is_empty() {
            return;
        }
        if self.table.inside() {
            self.table.paragraph(text);
            return;
        }
        if let Some(level) = level {
            self.first_heading.get_or_insert_with(|| text.clone());
            self.headings.retain(|(l, _)| *l < level);
            self.headings.push((level, text.clone()));
        }
        self.blocks.push(Block::text(text, &self.path()));
    }

    /// The paragraph being read has the list number `number`, which the file does not write
    /// into its text: the number and a space go before the text, unless the paragraph is blank.
    pub fn number_paragraph(&mut self, number: Option<String>) {
        let Some(number) = number else { return };
        if !self.paragraph.trim().is_empty() {
            self.paragraph = format!("{number} {}", self.paragraph.trim_start());
        }
    }

    /// A block of text of its own (a diagram's) under the current headings.
    pub fn push_text(&mut self, text: String) {
        self.blocks.push(Block::text(text, &self.path()));
    }

    /// An element ends (by local name, as [`TableText::end`] reads it): a table's block once
    /// the outermost table ends.
    pub fn end_table_part(&mut self, name: &[u8]) {
        if let Some(text) = self.table.end(name) {
            self.blocks.push(Block {
                text,
                heading_path: self.path(),
                kind: ContentType::Table,
                ..Default::default()
            });
        }
    }
}

/// Paragraphs written inside the paragraph being read but not part of it (an ODT note's body,
/// a DOCX text box's content), kept aside until that paragraph (or the table it is in) ends,
/// so it is read whole and they follow it under the same headings.
#[derive(Default)]
pub(super) struct Aside {
    /// How deep inside what is set aside the reader is.
    pub depth: usize,
    /// The text of the paragraph the outermost aside is in, up to it.
    outer: String,
    /// The paragraphs set aside and not yet given.
    paragraphs: Vec<String>,
}

impl Aside {
    /// Something to set aside starts inside `paragraph`: what it holds is not that paragraph's.
    pub fn open(&mut self, paragraph: &mut String) {
        if self.depth == 0 {
            self.outer = std::mem::take(paragraph);
        }
        self.depth += 1;
    }

    /// A paragraph of what is set aside ends.
    pub fn end_paragraph(&mut self, paragraph: &mut String) {
        let text = std::mem::take(paragraph).trim().to_string();
        if !text.is_empty() {
            self.paragraphs.push(text);
        }
    }

    /// What was set aside ends: the paragraph it is in goes on.
    pub fn close(&mut self, paragraph: &mut String) {
        self.end_paragraph(paragraph);
        self.depth -= 1;
        if self.depth == 0 {
            *paragraph = std::mem::take(&mut self.outer);
        }
    }

    /// A paragraph or table part ends outside what is set aside: once outside every table,
    /// the paragraphs set aside are blocks.
    pub fn give(&mut self, body: &mut OutlineBody) {
        if !body.table.inside() {
            self.paragraphs.drain(..).for_each(|text| body.push_text(text));
        }
    }
}
