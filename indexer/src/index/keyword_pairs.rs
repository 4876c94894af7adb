//! The terms of a keyword index that hold one character of a script read as pairs (Chinese,
//! Japanese, Korean, Thai, ...). The multilingual analyzer reads a run of such characters as
//! its overlapping pairs, so a character inside a run is no term of its own (`東大寺` is `東大`
//! and `大寺`), and a query of one character alone (`寺`, `猫`) would find only the rows where
//! it stands alone. Its terms are itself, the pairs it begins (a range of the term
//! dictionary) and the pairs it ends (an automaton: any one character, then it).

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
    let mut chars = character.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Ok(None);
    };
    // A character the index's own revision reads in pairs (a Thai digit was, until the fourth).
    let KeywordAnalyzer::Multilingual(profile) = analyzer else {
        return Ok(None);
    };
    if !matches!(class_in(c, profile.revision), CharClass::Pair(_)) {
        return Ok(None);
    }
    let field = index.schema().get_field("text").map_err(err("schema"))?;
    let mut counts: HashMap<String, u64> = HashMap::new();
    for segment in reader.searcher().segment_readers() {
        let inverted = segment.inverted_index(field).map_err(err("pairs"))?;
        // A segment's terms by name: one the range and the automaton both hold (`寺寺`) once.
        let mut holding: HashMap<String, u64> = HashMap::new();
        let mut hold = |term: &str, rows: u64| {
            holding.insert(term.to_string(), rows);
        };
        for_each_term(terms_beginning(&inverted, character, "pairs")?, &mut hold);
        let ended = inverted.terms().search(EndsWith(character.as_bytes()));
        for_each_term(ended.into_stream().map_err(io_err("pairs"))?, &mut hold);
        for (term, rows) in holding {
            *counts.entry(term).or_default() += rows;
        }
    }
    Ok(Some(counts))
}

/// The terms of exactly one character and then `.0` (UTF-8 bytes).
struct EndsWith<'a>(&'a [u8]);

/// Where an [`EndsWith`] walk is: inside the first character (its bytes still to come), at
/// `n` bytes of the last character matched, or past any match.
#[derive(Clone, Copy, PartialEq)]
enum Walk {
    First(u8),
    Last(usize),
    Dead,
}

impl tantivy_fst::Automaton for EndsWith<'_> {
    type State = Walk;

    fn start(&self) -> Walk {
        Walk::First(0)
    }

    fn is_match(&self, state: &Walk) -> bool {
        *state == Walk::Last(self.0.len())
    }

    fn can_match(&self, state: &Walk) -> bool {
        *state != Walk::Dead
    }

    fn accept(&self, state: &Walk, byte: u8) -> Walk {
        match *state {
            // The first byte of the first character: how many more it needs.
            Walk::First(0) => match byte {
                0x00..=0x7F => Walk::Last(0),
                0xC0..=0xDF => Walk::First(1),
                0xE0..=0xEF => Walk::First(2),
                0xF0..=0xF7 => Walk::First(3),
                _ => Walk::Dead,
            },
            Walk::First(left) if (0x80..=0xBF).contains(&byte) => match left {
                1 => Walk::Last(0),
                _ => Walk::First(left - 1),
            },
            Walk::Last(n) if n < self.0.len() && self.0[n] == byte => Walk::Last(n + 1),
            _ => Walk::Dead,
        }
    }
}
