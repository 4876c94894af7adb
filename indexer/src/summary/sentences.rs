//! A document's sentences: the candidates of its layers.

use unicode_segmentation::UnicodeSegmentation;

use super::ascii_sentences::ascii_sentences;
use crate::parse::{collapse_whitespace, ContentType, Document};

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
        let paragraph = bounded_runs(&paragraph);
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

/// Spaces in a row beyond which they are made one space...
const MAX_SPACE_RUN: usize = 8;
/// ...and marks (neither letter, digit nor space) in a row kept at most.
const MAX_MARK_RUN: usize = 64;

/// `paragraph` with each run of more than [`MAX_SPACE_RUN`] spaces made one space and each
/// run of marks cut at [`MAX_MARK_RUN`]. After a full stop, UAX #29 looks ahead for a
/// lower-case letter from every closing mark and space that follows it (the crate and
/// [`ascii_sentences`] alike), so a full stop followed by a long run of them took time
/// quadratic in its length: 40,000 closing brackets took 10 s, and a file of them would hold
/// its parse thread for hours. Spaces are collapsed in the sentences anyway, so the first
/// change leaves every sentence as it was; the second changes only runs of marks no prose has.
fn bounded_runs(paragraph: &str) -> std::borrow::Cow<'_, str> {
    let is_space = |c: char| c.is_whitespace() && !matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let is_mark = |c: char| !c.is_alphanumeric() && !c.is_whitespace();
    let (mut spaces, mut marks, mut long) = (0, 0, false);
    for c in paragraph.chars() {
        spaces = if is_space(c) { spaces + 1 } else { 0 };
        marks = if is_mark(c) { marks + 1 } else { 0 };
        if spaces > MAX_SPACE_RUN || marks > MAX_MARK_RUN {
            long = true;
            break;
        }
    }
    if !long {
        return std::borrow::Cow::Borrowed(paragraph);
    }
    let mut bounded = String::with_capacity(paragraph.len());
    let (mut run, mut run_start, mut marks) = (0, 0, 0);
    for (at, c) in paragraph.char_indices() {
        if is_space(c) {
            if run == 0 {
                run_start = bounded.len();
            }
            run += 1;
            match run {
                r if r <= MAX_SPACE_RUN => bounded.push(c),
                r if r == MAX_SPACE_RUN + 1 => {
                    bounded.truncate(run_start);
                    bounded.push(' ');
                }
                _ => {}
            }
            marks = 0;
            continue;
        }
        run = 0;
        marks = if is_mark(c) { marks + 1 } else { 0 };
        if marks <= MAX_MARK_RUN {
            bounded.push_str(&paragraph[at..at + c.len_utf8()]);
        }
    }
    std::borrow::Cow::Owned(bounded)
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
            warnings: Vec::new(),
        }
    }

    #[test]
    fn long_runs_of_spaces_and_marks_after_a_full_stop_take_linear_time() {
        // Each took time quadratic in its run's length (minutes at these sizes): UAX #29 looks
        // ahead from every closing mark and space after a full stop.
        for run in [
            ")".repeat(200_000),
            "）".repeat(200_000),
            " ".repeat(200_000),
            "\u{3000}".repeat(200_000),
        ] {
            let doc = document(vec![Block::text(format!("Fine. Then a.{run}end. Last one here."), &[])]);
            let texts: Vec<String> = sentences_of(&doc).into_iter().map(|s| s.text).collect();
            assert_eq!(texts.first().map(String::as_str), Some("Fine."), "{}", &run[..3]);
            assert!(texts.iter().all(|t| t.chars().count() < 100), "{texts:?}");
            assert!(texts.last().unwrap().ends_with("Last one here."), "{texts:?}");
        }
    }

    #[test]
    fn bounded_runs_leave_every_sentence_as_it_was() {
        let texts = [
            "One.          Two!\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}Three?   (Four.)",
            "Er sagte: „Nein.“                     Dann ging er.",
            "A line of dashes ---------------------------------------- then. More text here.",
        ];
        for text in texts {
            let collapsed: Vec<String> = sentences_in(text).into_iter().map(collapse_whitespace).collect();
            let bounded = bounded_runs(text);
            let after: Vec<String> = sentences_in(&bounded).into_iter().map(collapse_whitespace).collect();
            assert_eq!(after, collapsed, "{text}");
        }
        assert_eq!(
            bounded_runs(&format!("a{}b", "#".repeat(100))),
            format!("a{}b", "#".repeat(MAX_MARK_RUN))
        );
        assert_eq!(bounded_runs(&format!("a{}b", " ".repeat(9))), "a b");
        assert!(matches!(bounded_runs("a  b. c"), std::borrow::Cow::Borrowed(_)));
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
