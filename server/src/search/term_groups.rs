//! A query's prefixes (`hydro*`) and misspelt words (`hydorgen~`,
//! [`crate::search::query_syntax`]) made into what the keyword lane looks up: each one's
//! index terms (a prefix's completions, the terms a few typing errors from a word) in every
//! segment of every searched part, their row counts summed, the [`MAX_GROUP_TERMS`] most
//! frequent kept, as one group of a [`KeywordQuery`]: a row holding any of them scores by the
//! best, as one word of the query (the word itself, as typed, is a word of the ranking text
//! too). The same terms go to every part and segment, so scores compare across them. Under
//! typo tolerance each word no live row holds adds its correction's term as a group of one
//! ([`crate::search::spelling::corrections`]). A character standing alone in a script read
//! as pairs (`寺`, `猫`: the index holds it inside its runs only as pairs, `東大寺` as `東大`
//! and `大寺`) is looked up by the pairs holding it, a group as well (the first
//! [`MAX_LONE_CHARACTERS`] such characters of a query, all of them from one walk of each
//! segment's term dictionary; later ones as themselves). A word typed without marks, where an
//! index keeps a language's marks (Vietnamese: `viet` for `việt`), is looked up by the marked
//! terms it is written as, a group too. The lane counts each group's terms as held by
//! as many rows as its most frequent ([`quarry_indexer::index::KeywordStats::blended`]), and
//! weighs a misspelt word's near term by its likeness to the word ([`similarity`]: one error
//! in `diabetis` counts more than two), as Lucene's fuzzy queries do.

use std::collections::HashMap;

use quarry_indexer::index::analysis::{lone_pair_characters, pieces, Piece};
use quarry_indexer::index::{
    most_frequent, similarity, GroupTerm, KeywordIndex, KeywordQuery, NearTerm, TantivyKeywordIndex, MAX_GROUP_TERMS,
};

use crate::error::ServerError;
use crate::search::placed::PlacedPart;
use crate::search::query_syntax::ParsedQuery;
use crate::search::spelling::{self, Corrected};

/// The most characters standing alone of one query looked up by the pairs holding them (as
/// many as typo tolerance checks words: each adds a group of terms to the query); later ones
/// are looked up as themselves, the rows where they stand alone.
pub const MAX_LONE_CHARACTERS: usize = spelling::MAX_WORDS;

/// What the keyword lane looks up for `query` over `parts`: its ranking text, a group for
/// each prefix and misspelt word that has terms in them, and the term of each `corrected`
/// word (typo tolerance: a word no live row holds read as the index's nearest word).
pub fn keyword_query(
    parts: &[PlacedPart<'_>],
    query: &ParsedQuery,
    corrected: &[Corrected],
) -> Result<KeywordQuery, ServerError> {
    let mut keyword = KeywordQuery::text(&query.ranking_text);
    keyword
        .any_of
        .extend(corrected.iter().map(|c| vec![GroupTerm::whole(c.term.clone())]));
    for prefix in &query.prefixes {
        let completions = |index: &TantivyKeywordIndex| as_good(index.prefix_completions(prefix, MAX_GROUP_TERMS));
        keyword.any_of.extend(group(parts, completions, prefix)?);
    }
    for near in &query.near {
        let near_terms = |index: &TantivyKeywordIndex| index.near_terms(&near.word, near.edits, MAX_GROUP_TERMS);
        keyword.any_of.extend(group(parts, near_terms, &near.word)?);
    }
    // A word typed without marks where an index keeps a language's marks (Vietnamese): the
    // marked terms it is written as (`viet` as `việt`, `viết`), the word itself being a term
    // of the ranking text already.
    for word in plain_words(&query.ranking_text) {
        let marked = |index: &TantivyKeywordIndex| {
            let forms = index.marked_forms(&word, MAX_GROUP_TERMS + 1)?;
            Ok(forms.map(|forms| as_near(forms.into_iter().filter(|(term, _)| *term != word).collect())))
        };
        keyword.any_of.extend(group(parts, marked, &word)?);
    }
    // A character alone where the index reads its script in pairs: the pairs holding it, all
    // of the query's such characters from one walk of each segment's term dictionary.
    let lone: Vec<String> = lone_pair_characters(&query.ranking_text)
        .into_iter()
        .take(MAX_LONE_CHARACTERS)
        .collect();
    if !lone.is_empty() {
        let characters: Vec<&str> = lone.iter().map(String::as_str).collect();
        let mut found: Vec<Vec<NearTerm>> = vec![Vec::new(); lone.len()];
        each_keyword_index(parts, |index| {
            let each = index.pair_terms_holding_each(&characters, MAX_GROUP_TERMS)?;
            for (terms, held) in found.iter_mut().zip(each) {
                terms.extend(held.map(as_near).unwrap_or_default());
            }
            Ok(())
        })?;
        for (character, terms) in lone.iter().zip(found) {
            keyword.any_of.extend(group_of(terms, character));
        }
    }
    Ok(keyword)
}

/// The distinct words of ASCII letters (and maybe digits) of `text`, lower-cased, the first
/// [`spelling::MAX_WORDS`]: those a language that keeps its marks may have been typed
/// without them.
fn plain_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for piece in pieces(text) {
        let Piece::Word(range) = piece else { continue };
        let word = text[range].to_ascii_lowercase();
        if word.is_ascii() && word.bytes().any(|b| b.is_ascii_alphabetic()) && !words.contains(&word) {
            words.push(word);
        }
        if words.len() == spelling::MAX_WORDS {
            break;
        }
    }
    words
}

type Terms = quarry_indexer::error::Result<Option<Vec<NearTerm>>>;

/// Terms `found` with their rows, each as good as the word (no typing errors from it).
fn as_good(found: quarry_indexer::error::Result<Option<Vec<(String, u64)>>>) -> Terms {
    Ok(found?.map(as_near))
}

/// Terms with their rows as near terms of no typing errors.
fn as_near(terms: Vec<(String, u64)>) -> Vec<NearTerm> {
    terms
        .into_iter()
        .map(|(term, rows)| NearTerm { term, rows, edits: 0 })
        .collect()
}

/// Calls `each` with the keyword index of every segment of every part of `parts`.
fn each_keyword_index(
    parts: &[PlacedPart<'_>],
    mut each: impl FnMut(&TantivyKeywordIndex) -> Result<(), ServerError>,
) -> Result<(), ServerError> {
    for at in parts {
        for segment in &at.part.searcher.snapshot().segments {
            each(&segment.data.keyword)?;
        }
    }
    Ok(())
}

/// The most frequent of the terms `terms_in` finds in every segment of `parts` (None: none),
/// as [`group_of`] weighs them.
fn group(
    parts: &[PlacedPart<'_>],
    terms_in: impl Fn(&TantivyKeywordIndex) -> Terms,
    word: &str,
) -> Result<Option<Vec<GroupTerm>>, ServerError> {
    let mut found = Vec::new();
    each_keyword_index(parts, |index| {
        found.extend(terms_in(index)?.unwrap_or_default());
        Ok(())
    })?;
    Ok(group_of(found, word))
}

/// The most frequent of `found` (each segment's terms; a term found in several, its rows
/// summed), each weighed by its similarity to `word` (its fewest typing errors in any
/// segment; a prefix's completions have none); a term with no likeness left (as many errors
/// as characters) is left out. None: no term.
fn group_of(found: Vec<NearTerm>, word: &str) -> Option<Vec<GroupTerm>> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut errors: HashMap<String, u8> = HashMap::new();
    for near in found {
        *counts.entry(near.term.clone()).or_default() += near.rows;
        let fewest = errors.entry(near.term).or_insert(near.edits);
        *fewest = (*fewest).min(near.edits);
    }
    let terms: Vec<GroupTerm> = most_frequent(counts, MAX_GROUP_TERMS)
        .into_iter()
        .map(|(term, _)| {
            let boost = similarity(errors[&term], &term, word);
            GroupTerm { term, boost }
        })
        .filter(|group_term| group_term.boost > 0.0)
        .collect();
    (!terms.is_empty()).then_some(terms)
}
