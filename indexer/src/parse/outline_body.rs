//! A word processor's body as it is read (DOCX, ODT): paragraphs become blocks under the
//! headings above them, headings (by level) make the heading path, tables become table blocks.

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
