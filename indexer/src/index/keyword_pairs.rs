//! The terms of a keyword index that hold one character of a script read as pairs (Chinese,
//! Japanese, Korean, Thai, ...). The multilingual analyzer reads a run of such characters as
//! its overlapping pairs, so a character inside a run is no term of its own (`東大寺` is `東大`
//! and `大寺`), and a query of one character alone (`寺`, `猫`) would find only the rows where
//! it stands alone. Its terms are itself, the pairs it begins (a range of the term
//! dictionary) and the pairs it ends (an automaton: any one character, then it; one walk of
//! the dictionary for all of a query's characters).

use std::collections::HashMap;

use tantivy::{Index, IndexReader};

use super::analysis::{class_in, CharClass, KeywordAnalyzer};
use super::keyword::err;
use super::keyword_query::{for_each_term, io_err, terms_beginning};
use crate::error::Result;

/// Every term of the index holding `character` as a pair does (itself, or a pair it begins
/// or ends), with how many rows hold each. None where the index reads no pairs (the English
/// analyzer) or `character` is not one character of a script read as pairs.
pub(super) fn pair_terms_holding(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    character: &str,
) -> Result<Option<HashMap<String, u64>>> {
    let mut each = pair_terms_holding_each(index, reader, analyzer, &[character])?;
    Ok(each.pop().flatten())
}

/// [`pair_terms_holding`] of each of `characters` (at most [`MAX_CHARACTERS`]; later ones
/// are None), in order, from one walk of each segment's term dictionary for the pairs they
/// end, whatever their number.
pub(super) fn pair_terms_holding_each(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    characters: &[&str],
) -> Result<Vec<Option<HashMap<String, u64>>>> {
    // A character the index's own revision reads in pairs (a Thai digit was, until the fourth).
    let paired = |character: &str| {
        let mut chars = character.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return false;
        };
        matches!(analyzer, KeywordAnalyzer::Multilingual(profile) if matches!(class_in(c, profile.revision), CharClass::Pair(_)))
    };
    let mut holding: Vec<Option<HashMap<String, u64>>> = characters
        .iter()
        .enumerate()
        .map(|(i, character)| (i < MAX_CHARACTERS && paired(character)).then(HashMap::new))
        .collect();
    // The characters looked up, and where each answers.
    let (wanted, at): (Vec<&str>, Vec<usize>) = characters
        .iter()
        .enumerate()
        .filter(|(i, _)| holding[*i].is_some())
        .map(|(i, &character)| (character, i))
        .unzip();
    if wanted.is_empty() {
        return Ok(holding);
    }
    let wanted_bytes: Vec<&[u8]> = wanted.iter().map(|character| character.as_bytes()).collect();
    let field = index.schema().get_field("text").map_err(err("schema"))?;
    for segment in reader.searcher().segment_readers() {
        let inverted = segment.inverted_index(field).map_err(err("pairs"))?;
        // A segment's terms by name: one the range and the automaton both hold (`寺寺`) once.
        let mut found: Vec<HashMap<String, u64>> = vec![HashMap::new(); wanted.len()];
        for (k, character) in wanted.iter().enumerate() {
            let range = terms_beginning(&inverted, character, "pairs")?;
            for_each_term(range, |term, rows| {
                found[k].insert(term.to_string(), rows);
            });
        }
        let ended = inverted.terms().search(EndsWithAny(&wanted_bytes));
        for_each_term(ended.into_stream().map_err(io_err("pairs"))?, |term, rows| {
            let last = term.char_indices().next_back().map_or("", |(i, _)| &term[i..]);
            if let Some(k) = wanted.iter().position(|&character| character == last) {
                found[k].insert(term.to_string(), rows);
            }
        });
        for (k, terms) in found.into_iter().enumerate() {
            let counts = holding[at[k]].as_mut().expect("a character looked up has its counts");
            for (term, rows) in terms {
                *counts.entry(term).or_default() += rows;
            }
        }
    }
    Ok(holding)
}

/// The most characters one walk looks up (the bits of its automaton's state).
pub const MAX_CHARACTERS: usize = 64;

/// The terms of exactly one character and then one of `.0` (each one character's UTF-8
/// bytes; at most [`MAX_CHARACTERS`]).
struct EndsWithAny<'a>(&'a [&'a [u8]]);

/// Where an [`EndsWithAny`] walk is: inside the first character (its bytes still to come), at
/// `n` bytes into the last character with `.1` the characters still matching (a bit each), or
/// past any match.
#[derive(Clone, Copy, PartialEq)]
enum Walk {
    First(u8),
    Last(usize, u64),
    Dead,
}

impl tantivy_fst::Automaton for EndsWithAny<'_> {
    type State = Walk;

    fn start(&self) -> Walk {
        Walk::First(0)
    }

    fn is_match(&self, state: &Walk) -> bool {
        match *state {
            Walk::Last(n, matching) => (0..self.0.len()).any(|k| matching & (1 << k) != 0 && self.0[k].len() == n),
            _ => false,
        }
    }

    fn can_match(&self, state: &Walk) -> bool {
        *state != Walk::Dead
    }

    fn accept(&self, state: &Walk, byte: u8) -> Walk {
        let every = |n: usize| {
            let all = u64::MAX >> (64 - self.0.len().clamp(1, MAX_CHARACTERS));
            Walk::Last(n, all)
        };
        match *state {
            // The first byte of the first character: how many more it needs.
            Walk::First(0) => match byte {
                0x00..=0x7F => every(0),
                0xC0..=0xDF => Walk::First(1),
                0xE0..=0xEF => Walk::First(2),
                0xF0..=0xF7 => Walk::First(3),
                _ => Walk::Dead,
            },
            Walk::First(left) if (0x80..=0xBF).contains(&byte) => match left {
                1 => every(0),
                _ => Walk::First(left - 1),
            },
            Walk::Last(n, matching) => {
                let still = (0..self.0.len())
                    .filter(|&k| matching & (1 << k) != 0 && self.0[k].get(n) == Some(&byte))
                    .fold(0u64, |bits, k| bits | (1 << k));
                match still {
                    0 => Walk::Dead,
                    _ => Walk::Last(n + 1, still),
                }
            }
            _ => Walk::Dead,
        }
    }
}
