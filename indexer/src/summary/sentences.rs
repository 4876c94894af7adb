//! A document's sentences: the candidates of its layers.

use unicode_segmentation::UnicodeSegmentation;

use super::ascii_sentences::ascii_sentences;
use crate::parse::{ContentType, Document};

/// Sentences read from one document at most (a book's first ones).
pub const MAX_SENTENCES: usize = 4_000;

/// One sentence of a document, its white space collapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub text: String,
    /// Its place in the document (0 = the first sentence).
    pub position: usize,
}

/// The sentences of `document`'s prose, in order, by Unicode's sentence boundaries (UAX #29:
/// terminal punctuation of any script) within its paragraphs (a blank line ends one; a lone
/// line break is a wrapped line); table rows are not sentences.
pub fn sentences_of(document: &Document) -> Vec<Sentence> {
    let mut sentences = Vec::new();
    let prose = document.blocks.iter().filter(|b| b.kind != ContentType::Table);
    for paragraph in prose.flat_map(|b| paragraphs(&b.text)) {
        for raw in sentences_in(&paragraph) {
            let text = collapse_whitespace(raw);
            if text.is_empty() {
                continue;
            }
            if sentences.len() == MAX_SENTENCES {
                return sentences;
            }
            let position = sentences.len();
            sentences.push(Sentence { text, position });
        }
    }
    sentences
}

/// UAX #29's sentences of `paragraph` that hold a letter or digit.
fn sentences_in(paragraph: &str) -> Vec<&str> {
    match paragraph.is_ascii() {
        true => ascii_sentences(paragraph),
        false => paragraph.unicode_sentences().collect(),
    }
}

/// The paragraphs of a text, each with its lines joined by spaces.
fn paragraphs(text: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    paragraphs
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::parse::Block;

    /// A document of these blocks (also the summarizer's tests').
    pub(crate) fn document(blocks: Vec<Block>) -> Document {
        Document {
            doc_id: "d".into(),
            uri: "file:///d.txt".into(),
            file_name: "d.txt".into(),
            title: String::new(),
            source: "file".into(),
            tags: Vec::new(),
            metadata: Default::default(),
            content_hash: String::new(),
            size: 0,
            etag: None,
            blocks,
        }
    }

    #[test]
    fn sentences_of_any_script_and_not_of_tables() {
        let mut table = Block::text("name,age\nAda,36", &[]);
        table.kind = ContentType::Table;
        let doc = document(vec![
            Block::text(
                "The Rhine flows north.  It ends in the\nNorth Sea! Does it?\n\nA new paragraph",
                &[],
            ),
            table,
            Block::text("東京は日本の首都です。人口は多い。", &[]),
        ]);
        let texts: Vec<String> = sentences_of(&doc).into_iter().map(|s| s.text).collect();
        assert_eq!(
            texts,
            [
                "The Rhine flows north.",
                "It ends in the North Sea!",
                "Does it?",
                "A new paragraph",
                "東京は日本の首都です。",
                "人口は多い。"
            ]
        );
    }
}
