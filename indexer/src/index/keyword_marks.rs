//! The marked terms of a word typed without its marks, in an index that keeps a language's
//! marks (Vietnamese from [`super::analysis::Revision::V6`] on: `việt`, `viết` and `vét` are
//! three terms). Most Vietnamese is typed with its marks, but not all of it (a phone's
//! keyboard without the input method, a search box, an old system): `viet nam` is looked up
//! by every term whose letters, their marks taken off, are `viet`, then `nam` (an automaton:
//! one walk of the term dictionary for the word).

use std::collections::HashMap;

use tantivy::{Index, IndexReader};

use super::analysis::{is_one_word, KeywordAnalyzer};
use super::keyword::err;
use super::keyword_query::{for_each_term, io_err};
use crate::error::Result;

/// The terms of the index that are `word` with marks on its letters (itself among them),
/// each with how many rows hold it. None where the index keeps no language's marks, or
/// `word` is not one word of ASCII letters (`viet`: yes; `việt`, `viet nam`, `2024`: no).
pub(super) fn marked_forms(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    word: &str,
) -> Result<Option<HashMap<String, u64>>> {
    marked_terms(index, reader, analyzer, word, false)
}

/// The terms of the index that begin with `prefix` (a prefix search's form of a word,
/// [`KeywordAnalyzer::prefix_form`]: marks folded) with marks on its letters: `vie*` finds
/// `việt`. None as for [`marked_forms`].
pub(super) fn marked_completions(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    prefix: &str,
) -> Result<Option<HashMap<String, u64>>> {
    marked_terms(index, reader, analyzer, prefix, true)
}

fn marked_terms(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    word: &str,
    prefix: bool,
) -> Result<Option<HashMap<String, u64>>> {
    let KeywordAnalyzer::Multilingual(profile) = analyzer else {
        return Ok(None);
    };
    // Typed without marks, a Vietnamese word is ASCII letters (and maybe digits).
    if !word.is_ascii() || !word.bytes().any(|b| b.is_ascii_alphabetic()) {
        return Ok(None);
    }
    if !profile.reads_a_language_keeping_marks() || !is_one_word(word, profile.revision) {
        return Ok(None);
    }
    let plain = word.to_ascii_lowercase();
    let field = index.schema().get_field("text").map_err(err("schema"))?;
    let mut counts: HashMap<String, u64> = HashMap::new();
    for segment in reader.searcher().segment_readers() {
        let inverted = segment.inverted_index(field).map_err(err("marks"))?;
        let terms = inverted.terms().search(MarksOn { word: &plain, prefix });
        for_each_term(terms.into_stream().map_err(io_err("marks"))?, |term, rows| {
            *counts.entry(term.to_string()).or_default() += rows;
        });
    }
    Ok(Some(counts))
}

/// The terms that are `word` (ASCII letters, lower case) with marks on any of its letters,
/// or, a `prefix`, that begin so: each character's base letter (its first in canonical
/// decomposition; `đ` is `d`) the word's.
struct MarksOn<'a> {
    word: &'a str,
    prefix: bool,
}

/// Where a [`MarksOn`] walk is: `at` bytes into the word, and the character being read so far
/// (its bits, and how many bytes it still needs); past a prefix (anything may follow); or
/// past any match.
#[derive(Clone, Copy, PartialEq)]
enum Walk {
    At { at: usize, partial: u32, needs: u8 },
    PastPrefix,
    Dead,
}

impl MarksOn<'_> {
    /// Where the walk goes once a whole character `c` is read at `at`.
    fn past(&self, at: usize, c: u32) -> Walk {
        let Some(wanted) = self.word[at..].chars().next() else {
            return Walk::Dead;
        };
        match char::from_u32(c).is_some_and(|c| base_letter(c) == wanted) {
            true => Walk::At {
                at: at + wanted.len_utf8(),
                partial: 0,
                needs: 0,
            },
            false => Walk::Dead,
        }
    }
}

/// `c` without its marks: the first character of its canonical decomposition (`ệ` is `e`),
/// `d` for Vietnamese's `đ` (a letter of its own in Unicode).
fn base_letter(c: char) -> char {
    if c == 'đ' {
        return 'd';
    }
    let mut first = None;
    unicode_normalization::char::decompose_canonical(c, |part| {
        first.get_or_insert(part);
    });
    first.unwrap_or(c)
}

impl tantivy_fst::Automaton for MarksOn<'_> {
    type State = Walk;

    fn start(&self) -> Walk {
        Walk::At {
            at: 0,
            partial: 0,
            needs: 0,
        }
    }

    fn is_match(&self, state: &Walk) -> bool {
        match *state {
            Walk::At { at, needs, .. } => needs == 0 && at == self.word.len(),
            Walk::PastPrefix => true,
            Walk::Dead => false,
        }
    }

    fn can_match(&self, state: &Walk) -> bool {
        *state != Walk::Dead
    }

    fn accept(&self, state: &Walk, byte: u8) -> Walk {
        let (at, partial, needs) = match *state {
            Walk::At { at, needs: 0, .. } if self.prefix && at == self.word.len() => return Walk::PastPrefix,
            Walk::At { at, partial, needs } => (at, partial, needs),
            Walk::PastPrefix => return Walk::PastPrefix,
            Walk::Dead => return Walk::Dead,
        };
        match (needs, byte) {
            (0, 0x00..=0x7F) => self.past(at, u32::from(byte)),
            (0, 0xC0..=0xDF) => Walk::At {
                at,
                partial: u32::from(byte & 0x1F),
                needs: 1,
            },
            (0, 0xE0..=0xEF) => Walk::At {
                at,
                partial: u32::from(byte & 0x0F),
                needs: 2,
            },
            (0, 0xF0..=0xF7) => Walk::At {
                at,
                partial: u32::from(byte & 0x07),
                needs: 3,
            },
            (1, 0x80..=0xBF) => self.past(at, partial << 6 | u32::from(byte & 0x3F)),
            (2.., 0x80..=0xBF) => Walk::At {
                at,
                partial: partial << 6 | u32::from(byte & 0x3F),
                needs: needs - 1,
            },
            _ => Walk::Dead,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy_fst::Automaton;
    use unicode_normalization::UnicodeNormalization;

    fn accepts(word: &str, term: &str) -> bool {
        walks(MarksOn { word, prefix: false }, term)
    }

    fn walks(automaton: MarksOn<'_>, term: &str) -> bool {
        let mut state = automaton.start();
        for &byte in term.as_bytes() {
            state = automaton.accept(&state, byte);
            if !automaton.can_match(&state) {
                return false;
            }
        }
        automaton.is_match(&state)
    }

    #[test]
    fn marked_letters_of_a_plain_word() {
        for term in ["viet", "việt", "viết", "vịêt", "viêt"] {
            assert!(accepts("viet", term), "{term}");
        }
        assert!(accepts("nguoi", "người"));
        assert!(accepts("duong", "đường"));
        assert!(accepts("cafe", "café"));
        for term in ["vie", "viets", "việtnam", "vet", "nguoiw", "xviet"] {
            assert!(!accepts("viet", term), "{term}");
        }
        // Characters of every length in UTF-8; a term of other letters is refused early.
        assert!(accepts("a", "ắ"));
        assert!(!accepts("a", "東"));
        assert!(!accepts("ab", "a\u{1F600}"));
        // Every Latin letter with marks (two bytes in UTF-8, or three: Vietnamese's stacked
        // marks) is read whole and taken as its base: each one alone after `x`, for each base.
        let latin = ('\u{00C0}'..='\u{024F}').chain('\u{1E00}'..='\u{1EFF}');
        for c in latin.filter(|c| c.is_lowercase()) {
            let base = c.nfd().next().unwrap();
            for letter in 'a'..='z' {
                let word = format!("x{letter}");
                let term = format!("x{c}");
                let want = letter == base || (c == 'đ' && letter == 'd');
                assert_eq!(accepts(&word, &term), want, "{word} {term}");
            }
        }
        // A prefix: the word's letters first, marked or not, then anything.
        let prefix = |term| {
            walks(
                MarksOn {
                    word: "vie",
                    prefix: true,
                },
                term,
            )
        };
        assert!(prefix("việt") && prefix("viết") && prefix("vie") && prefix("viên"));
        assert!(!prefix("vi") && !prefix("vịnh") && !prefix("xviet"));
    }
}
