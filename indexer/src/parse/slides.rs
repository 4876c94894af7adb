//! A presentation's slides as they are read (PPTX, ODP): each shape's paragraphs, the title
//! shape's text as the slide's title, the placeholders repeated on every slide (numbers,
//! dates, footers) left out, tables as table blocks; then each slide's blocks under its title,
//! numbered by its place, its speaker notes under its title and "Notes".

use super::ooxml::TableText;
use super::{Block, ContentType};

/// What one slide (or notes page) holds.
#[derive(Default)]
pub(super) struct SlideText {
    pub title: Option<String>,
    /// Its text and tables, in the order they are drawn.
    pub blocks: Vec<(String, ContentType)>,
}

/// What a shape is to its slide.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ShapeRole {
    /// Its text is the slide's title (the first such shape's).
    Title,
    /// A placeholder repeated on every slide (number, date, footer, header, a notes page's
    /// slide image): its text is left out.
    Furniture,
    Body,
}

/// The text of one slide's (or notes page's) shapes as it is read.
#[derive(Default)]
pub(super) struct SlideReader {
    pub slide: SlideText,
    /// The current shape's paragraphs and its role.
    shape: Vec<String>,
    role: Option<ShapeRole>,
    /// The paragraph being read.
    pub paragraph: String,
    pub table: TableText,
}

impl SlideReader {
    /// The current shape's role, where its file names one.
    pub fn set_role(&mut self, role: ShapeRole) {
        self.role = Some(role);
    }

    pub fn end_paragraph(&mut self) {
        let text = std::mem::take(&mut self.paragraph).trim().to_string();
        if text.is_empty() {
            return;
        }
        match self.table.inside() {
            true => self.table.paragraph(text),
            false => self.shape.push(text),
        }
    }

    pub fn end_shape(&mut self) {
        let paragraphs = std::mem::take(&mut self.shape);
        let role = self.role.take().unwrap_or(ShapeRole::Body);
        if paragraphs.is_empty() || role == ShapeRole::Furniture {
            return;
        }
        match role == ShapeRole::Title && self.slide.title.is_none() {
            true => self.slide.title = Some(paragraphs.join(" ")),
            false => self.slide.blocks.push((paragraphs.join("\n"), ContentType::Text)),
        }
    }

    /// An element ends (by local name, as [`TableText::end`] reads it): the table's block once
    /// the outermost table ends.
    pub fn end_table_part(&mut self, name: &[u8]) {
        if let Some(table) = self.table.end(name) {
            self.slide.blocks.push((table, ContentType::Table));
        }
    }
}

/// The blocks of the slide at `index` (0-based) and its notes, appended to `blocks`: its title
/// first, then its text and tables under the title, then the notes under the title and
/// "Notes", each numbered as the slide's page. Returns the slide's title.
pub(super) fn push_slide(
    index: usize,
    slide: SlideText,
    notes: Vec<(String, ContentType)>,
    blocks: &mut Vec<Block>,
) -> Option<String> {
    let page = Some(u32::try_from(index + 1).unwrap_or(u32::MAX));
    let path: Vec<String> = slide.title.iter().cloned().collect();
    if let Some(title) = &slide.title {
        blocks.push(Block {
            page,
            ..Block::text(title.clone(), &path)
        });
    }
    let notes_path = [path.clone(), vec!["Notes".to_string()]].concat();
    let slide_blocks = slide.blocks.into_iter().map(|block| (block, &path));
    let notes_blocks = notes.into_iter().map(|block| (block, &notes_path));
    for ((text, kind), heading_path) in slide_blocks.chain(notes_blocks) {
        blocks.push(Block {
            text,
            page,
            heading_path: heading_path.clone(),
            kind,
            ..Default::default()
        });
    }
    slide.title
}
