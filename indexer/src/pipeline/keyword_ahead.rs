//! The keyword index's parts a segment's row stream builds while the run embeds: each
//! takes a copy of its rows' texts (so the segment's documents are free for the cut at once)
//! and is built on the row files' pool; the segment's build waits for those still running
//! only when it comes to its keyword index, beside the vector index.

use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::types::EmbeddedDoc;
use crate::error::Result;
use crate::index::analysis::{detect, Detected, LanguageProfile};
use crate::index::KeywordPart;

/// The rows of one part, copied out of their documents.
pub(super) struct KeywordRows {
    first_row: usize,
    texts: Vec<String>,
    /// Each row's language where the parse stage told it.
    told: Vec<Option<Detected>>,
    guess: LanguageProfile,
}

impl KeywordRows {
    /// The rows `rows` of each document in turn, the index rows from `first_row` on, their
    /// unsure rows to be read as `guess` reads them.
    pub fn copied(
        first_row: usize,
        documents: &[(Arc<EmbeddedDoc>, std::ops::Range<usize>)],
        guess: &LanguageProfile,
    ) -> Self {
        let mut texts = Vec::new();
        let mut told = Vec::new();
        for (document, rows) in documents {
            let languages_told = document.languages.len() == document.chunks.len();
            for row in rows.clone() {
                texts.push(document.chunks[row].text.clone());
                told.push(languages_told.then(|| document.languages[row]));
            }
        }
        Self {
            first_row,
            texts,
            told,
            guess: guess.clone(),
        }
    }

    /// The part (each row's language detected here where it was not told).
    pub fn build(self) -> Result<KeywordPart> {
        let detected: Vec<Detected> = self
            .told
            .iter()
            .zip(&self.texts)
            .map(|(told, text)| told.unwrap_or_else(|| detect(text)))
            .collect();
        let texts: Vec<&str> = self.texts.iter().map(String::as_str).collect();
        KeywordPart::build(self.first_row, &texts, &detected, &self.guess)
    }
}

/// The keyword parts of a stopped stream: those built, and those its tasks still build.
pub struct KeywordPartsAhead {
    /// One message from each of the stream's tasks: the part it built, if it built one.
    results: Receiver<Option<KeywordPart>>,
    tasks: usize,
}

impl KeywordPartsAhead {
    pub(super) fn new(results: Receiver<Option<KeywordPart>>, tasks: usize) -> Self {
        Self { results, tasks }
    }

    /// None: a stream that built no part.
    pub fn none() -> Self {
        Self::new(std::sync::mpsc::channel().1, 0)
    }

    /// Waits for the parts still being built; every part built, in row order (a task that
    /// ended unheard built none).
    pub fn wait(self) -> Vec<KeywordPart> {
        let mut parts: Vec<KeywordPart> = (0..self.tasks)
            .map_while(|_| self.results.recv().ok())
            .flatten()
            .collect();
        parts.sort_by_key(|part| part.rows().start);
        parts
    }
}
