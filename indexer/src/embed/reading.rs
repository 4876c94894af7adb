//! How well a model's tokenizer reads a text: of the text's words (as the keyword analyzer
//! splits them; a run of a script written without spaces counts as one word), how many reach
//! the model as something other than its unknown token or a string of single characters.
//! A model trained on other languages reads their words that way, and its vectors for such
//! text say little: the share is the warning sign that vector search will be weak, and the
//! evidence `auto` search weighs its lanes by.

use serde::{Deserialize, Serialize};

use super::ModelTokenizer;
use crate::error::Result;
use crate::index::analysis::{pieces, Piece};

/// Words counted, those the model reads well, and those it reads whole (as one token of its
/// vocabulary: the stricter sign that it knows the language, since a model splits the words
/// of a language it was not trained on into many pieces).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordReading {
    pub words: u64,
    pub read_well: u64,
    pub read_whole: u64,
}

impl WordReading {
    /// The share of words read well (1 for a text of no words: nothing is misread).
    pub fn well_share(&self) -> f64 {
        self.share_of(self.read_well)
    }

    /// The share of words read whole (1 for a text of no words).
    pub fn whole_share(&self) -> f64 {
        self.share_of(self.read_whole)
    }

    fn share_of(&self, count: u64) -> f64 {
        if self.words == 0 {
            1.0
        } else {
            count as f64 / self.words as f64
        }
    }

    /// Every count times `factor`, rounded.
    pub fn scaled(&self, factor: f64) -> Self {
        let scale = |n: u64| (n as f64 * factor).round() as u64;
        Self {
            words: scale(self.words),
            read_well: scale(self.read_well),
            read_whole: scale(self.read_whole),
        }
    }

    pub fn add(&mut self, other: &WordReading) {
        self.words += other.words;
        self.read_well += other.read_well;
        self.read_whole += other.read_whole;
    }
}

/// How `tokenizer` reads the words of `text`.
pub fn read_words(tokenizer: &ModelTokenizer, text: &str) -> Result<WordReading> {
    let (spans, ids) = tokenizer.tokens_of(text)?;
    Ok(reading_of(text, &spans, &ids, tokenizer.unknown_id()))
}

/// The reading of `text` from its tokens' byte spans and ids.
fn reading_of(text: &str, spans: &[(usize, usize)], ids: &[u32], unknown: Option<u32>) -> WordReading {
    let mut reading = WordReading::default();
    let mut first = 0;
    for piece in pieces(text) {
        let word = match piece {
            Piece::Word(range) | Piece::Pairs(range) => range,
        };
        // Tokens are in text order: skip those ending before the word.
        while first < spans.len() && spans[first].1 <= word.start {
            first += 1;
        }
        let mut tokens = 0;
        let (mut unknown_seen, mut all_single) = (false, true);
        let mut at = first;
        while at < spans.len() && spans[at].0 < word.end {
            let (start, end) = spans[at];
            if end > start {
                tokens += 1;
                unknown_seen |= Some(ids[at]) == unknown;
                all_single &= text.get(start..end).is_some_and(|t| t.chars().count() == 1);
            }
            at += 1;
        }
        reading.words += 1;
        if tokens > 0 && !unknown_seen && !(tokens > 1 && all_single) {
            reading.read_well += 1;
            if tokens == 1 {
                reading.read_whole += 1;
            }
        }
    }
    reading
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_whole_or_in_pieces_are_read_well() {
        // "gpus" as "gp" + "##us"; "abc" as one token.
        let text = "gpus abc";
        let reading = reading_of(text, &[(0, 2), (2, 4), (5, 8)], &[1, 2, 3], Some(100));
        assert_eq!(
            reading,
            WordReading {
                words: 2,
                read_well: 2,
                read_whole: 1
            }
        );
        assert_eq!(reading.well_share(), 1.0);
    }

    #[test]
    fn unknown_tokens_and_single_characters_are_not() {
        // A CJK run split into its characters, and a word that is the unknown token.
        let text = "東京都 zzz ok";
        let spans = [(0, 3), (3, 6), (6, 9), (10, 13), (14, 16)];
        let reading = reading_of(text, &spans, &[5, 6, 7, 100, 8], Some(100));
        assert_eq!(
            reading,
            WordReading {
                words: 3,
                read_well: 1,
                read_whole: 1
            }
        );
        // A one-character word read as itself is read well.
        assert_eq!(reading_of("a", &[(0, 1)], &[9], Some(100)).read_well, 1);
        assert_eq!(WordReading::default().well_share(), 1.0);
    }
}
