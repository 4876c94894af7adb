//! "Did you mean": a query's words that no live row of the searched collections holds, each
//! with the index's nearest word a typing error or two away, and the query as it would read
//! with them (`"suggest": true`). A word is checked as the keyword lane reads it (in every
//! language the index reads, stemmed): a word some row holds is never corrected, however rare.
//!
//! The candidates are the index's terms within the typing errors the word's length allows
//! (one, two from 6 characters) of a reading of it, and the terms a typing error from its
//! first characters with up to [`MAX_SUFFIX`] taken off (the index holds stems, and an error
//! in the part a stemmer takes off hides the stem: `ventilaton` → `ventil`); only terms that
//! begin with the first letter of the reading they are near (as Elasticsearch's term
//! suggester and Lucene's spell checker assume by default, a typing error there being rare;
//! Hebrew's `העוגית` is read `עוגית`). Each candidate is taken as its live rows write it
//! (`tnaks` → `tanks`, where the index holds the stem `tank`; a Hebrew word typed with
//! particles with the particles typed, `העוגיות` where rows write `עוגיות`); the
//! correction is the written form with the fewest typing errors from the word as typed,
//! within those allowed, then the term the most live rows hold (summed over every segment
//! of every collection searched), in the case the word was typed in. Nothing is learnt from
//! searches or labels: the index's own words and counts decide. The same [`corrections`]
//! serve typo tolerance (on by default): the keyword lane also looks up each corrected word's
//! term ([`crate::search::term_groups`]), and the vector lane also embeds the query with its
//! corrected words ([`corrected_text`], [`crate::search::readings`]).
//!
//! Left alone: words the query marks (`prefix*`, `misspelt~`, `exact~0`, `-excluded`), words
//! of fewer than [`MIN_CHARS`] characters, words with a digit (`rtx4090` is no typing error
//! from `rtx4080`), stop words of any language the index reads (no row holds them), words the
//! embedding model reads whole (a word of its vocabulary, not a typing error: `anyone` is no
//! misspelt `alone`), text read as character pairs (CJK), and words after the first
//! [`MAX_WORDS`] distinct ones. Words that are right but in no row and that the model reads
//! in pieces (another language's) get a correction too.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;

use quarry_indexer::index::analysis::{pieces, pieces_in, KeywordAnalyzer, Piece, Revision};
use quarry_indexer::index::{GroupTerm, KeywordIndex, KeywordQuery, NearTerm, TypingErrors};
use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::placed::SearchPart;
use crate::search::query_syntax::{ParsedQuery, QuerySyntax};

/// The fewest characters a word has to have to be corrected (shorter words are a typing error
/// from too many others).
pub const MIN_CHARS: usize = 4;

/// The most distinct words of one query checked (each is a term lookup in every segment, and
/// a word no row holds a walk of the term dictionary).
pub const MAX_WORDS: usize = 32;

/// Candidates each segment offers for one word, nearest first.
const CANDIDATES_PER_SEGMENT: usize = 16;

/// Rows a correction's written forms are read from.
const ROWS_READ: usize = 16;

/// Candidates (likeliest first) whose written forms are read.
const CANDIDATES_TRIED: usize = 12;

/// The most characters of a word taken off to find the stem its typing error hides.
const MAX_SUFFIX: usize = 4;

/// The fewest characters left of a word to find its stem by.
const SHORTEST_STEM: usize = 4;

/// The query with its unknown words corrected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Suggestion {
    /// The request's query with each corrected word replaced (its syntax kept).
    pub query: String,
    pub corrections: Vec<Correction>,
}

/// One word no row holds and the index's word nearest to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Correction {
    /// The word as typed.
    pub word: String,
    /// The index's word, as a row writes it, in the case `word` was typed in.
    pub suggestion: String,
    /// Typing errors between the two, folded (1 or 2: one for a word of 4 or 5 characters).
    pub edits: u8,
    /// Live rows holding it in the collections searched.
    pub rows: u64,
}

/// A correction and the index term it stands for (what the keyword lane looks up for the
/// word under typo tolerance, [`crate::search::term_groups`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Corrected {
    pub correction: Correction,
    pub term: String,
}

/// The corrections of `parsed`'s words over `parts`: one for each checked word no live row
/// holds that has a word near it some live row holds.
pub fn corrections(parts: &[SearchPart<'_>], parsed: &ParsedQuery) -> Result<Vec<Corrected>, ServerError> {
    let mut corrected = Vec::new();
    for word in checked_words(parsed) {
        corrected.extend(correct(parts, &word)?);
    }
    Ok(corrected)
}

/// The suggestion for `query` from its `corrected` words: None when there are none.
pub fn suggestion(query: &str, corrected: &[Corrected], syntax: QuerySyntax) -> Option<Suggestion> {
    if corrected.is_empty() {
        return None;
    }
    let corrections: Vec<Correction> = corrected.iter().map(|c| c.correction.clone()).collect();
    Some(Suggestion {
        query: rewritten(query, &corrections, syntax),
        corrections,
    })
}

/// `ranking_text` (words without syntax, [`ParsedQuery::ranking_text`]) with its `corrected`
/// words replaced: what typo tolerance embeds as the query's corrected reading
/// ([`crate::search::readings`]). None when no word was corrected.
pub fn corrected_text(ranking_text: &str, corrected: &[Corrected]) -> Option<String> {
    if corrected.is_empty() {
        return None;
    }
    let corrections: Vec<Correction> = corrected.iter().map(|c| c.correction.clone()).collect();
    Some(rewritten(ranking_text, &corrections, QuerySyntax::Plain))
}

/// The words of the ranking text a suggestion may correct, distinct (by lower case), in order.
fn checked_words(parsed: &ParsedQuery) -> Vec<String> {
    let text = &parsed.ranking_text;
    let marked = |word: &str| {
        parsed.prefixes.iter().any(|p| p.eq_ignore_ascii_case(word))
            || parsed.near.iter().any(|n| n.word.eq_ignore_ascii_case(word))
            || parsed.exact.iter().any(|e| e.eq_ignore_ascii_case(word))
    };
    let mut words: Vec<String> = Vec::new();
    for piece in pieces(text) {
        let Piece::Word(range) = piece else { continue };
        let word = &text[range];
        let lower = word.to_lowercase();
        if word.chars().count() < MIN_CHARS
            || word.chars().any(|c| c.is_numeric())
            || marked(word)
            || words.iter().any(|w| w.to_lowercase() == lower)
        {
            continue;
        }
        words.push(word.to_string());
        if words.len() == MAX_WORDS {
            break;
        }
    }
    words
}

/// `word`'s correction, when no live row holds it and a live row holds a term near it.
fn correct(parts: &[SearchPart<'_>], word: &str) -> Result<Option<Corrected>, ServerError> {
    let mut held = false;
    let mut read = false;
    for part in parts {
        let stats = part.searcher.keyword_stats(&KeywordQuery::text(word))?;
        read |= !stats.doc_freq.is_empty();
        held |= stats.doc_freq.values().any(|&rows| rows > 0);
    }
    if held
        || !read
        || is_a_stop_word(parts, word)
        || in_the_models_vocabulary(parts, word)
        || held_marked(parts, word)?
    {
        return Ok(None);
    }
    let edits = if word.chars().count() < 6 { 1 } else { 2 };
    let Some(folded) = first_analyzer(parts).and_then(|analyzer| analyzer.prefix_form(word)) else {
        return Ok(None);
    };
    let Some(first) = folded.chars().next() else {
        return Ok(None);
    };
    let typed = TypingErrors::from(&folded);
    // A word typed with Hebrew's particles (`העוגית`) is offered with them, whichever a row
    // writes the word with (`עוגיות`: `העוגיות`).
    let front = first_analyzer(parts)
        .and_then(|analyzer| analyzer.front_particles(&folded))
        .map_or("", |taken| &folded[..taken]);
    // A word of a language read by its first letters is offered with the ending typed after a
    // row word's first letters (`Укрвїною`, "with Ukraine" misspelt, where rows write
    // `Україна` and `України`: `Україною`), whichever forms the rows write.
    let lower = word.to_lowercase();
    let back = first_analyzer(parts)
        .and_then(|analyzer| analyzer.cut_end(&lower))
        .map_or("", |end| &lower[end..]);
    // The index's terms are stems: a stem near a stem of the word may be written far from it
    // (`brocoli`'s stem `brocol` is two errors from `chocol`, chocolate's): each candidate is
    // taken by how its rows write it, within the errors allowed of the word as typed.
    let mut best: Option<Corrected> = None;
    for candidate in live_candidates(parts, word, edits)?.into_iter().take(CANDIDATES_TRIED) {
        let Some((written, errors)) = written_form(parts, &candidate.term, &typed, first, (front, back))? else {
            continue;
        };
        let nearer =
            |b: &Corrected| (errors, Reverse(candidate.rows)) < (b.correction.edits, Reverse(b.correction.rows));
        if errors <= edits && best.as_ref().is_none_or(nearer) {
            best = Some(Corrected {
                correction: Correction {
                    word: word.to_string(),
                    suggestion: in_case_of(word, &written),
                    edits: errors,
                    rows: candidate.rows,
                },
                term: candidate.term.clone(),
            });
        }
    }
    Ok(best)
}

/// Whether some searched index holds `word` with marks on its letters (an index that keeps
/// Vietnamese's marks holds `việt` for `viet`): a word typed without them, not misspelt.
fn held_marked(parts: &[SearchPart<'_>], word: &str) -> Result<bool, ServerError> {
    for part in parts {
        for segment in &part.searcher.snapshot().segments {
            if segment
                .data
                .keyword
                .marked_forms(word, 1)?
                .is_some_and(|forms| !forms.is_empty())
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Whether a language some searched index reads drops `word` as a stop word (such a word is
/// in no row read in that language, and is never corrected): its readings' weights then sum
/// to less than 1 ([`KeywordAnalyzer::weighted_query_terms`]).
fn is_a_stop_word(parts: &[SearchPart<'_>], word: &str) -> bool {
    parts.iter().any(|part| {
        part.searcher.snapshot().segments.iter().any(|segment| {
            let readings = segment.data.keyword.analyzer().weighted_query_terms(word);
            readings.iter().map(|(_, weight)| weight).sum::<f32>() < 0.999
        })
    })
}

/// Whether the embedding model reads `word` whole, as one token of its vocabulary: a word of
/// the language, not a typing error, though no row holds it (`anyone` in a collection
/// without it is no misspelt `alone`). The vocabulary is the second word list a search has
/// besides the index's own; a typing error rarely lands on a word of it.
fn in_the_models_vocabulary(parts: &[SearchPart<'_>], word: &str) -> bool {
    parts
        .first()
        .is_some_and(|part| part.searcher.query_whole_share(word) >= 1.0)
}

/// The analyzer of the first segment searched (the words' folding is the same in every index).
fn first_analyzer<'a>(parts: &'a [SearchPart<'_>]) -> Option<&'a KeywordAnalyzer> {
    parts
        .iter()
        .flat_map(|part| part.searcher.snapshot().segments.first())
        .map(|segment| segment.data.keyword.analyzer())
        .next()
}

/// The terms a correction of `word` may be written from, each with the live rows holding it
/// over every part (terms no live row holds left out), the likeliest first: those within
/// `edits` typing errors of a reading of `word`, and those a typing error from one of its
/// first [`SHORTEST_STEM`] or more characters, up to [`MAX_SUFFIX`] left off — the index
/// holds stems, and an error in the part of a word its stemmer would take off hides its stem
/// (`ventilaton` is not read as `ventil`, the stem of ventilation). Ordered by errors, then
/// by characters left off, then by rows.
fn live_candidates(parts: &[SearchPart<'_>], word: &str, edits: u8) -> Result<Vec<NearTerm>, ServerError> {
    let chars: Vec<char> = word.chars().collect();
    let prefixes = (1..=MAX_SUFFIX)
        .filter(|&cut| chars.len() >= SHORTEST_STEM + cut)
        .map(|cut| (chars[..chars.len() - cut].iter().collect::<String>(), 1, cut));
    let sources: Vec<(String, u8, usize)> = std::iter::once((word.to_string(), edits, 0)).chain(prefixes).collect();
    // Each term's likeliest source: (errors, characters left off).
    let mut likeliest: HashMap<String, (u8, usize)> = HashMap::new();
    for part in parts {
        for segment in &part.searcher.snapshot().segments {
            for (source, edits, cut) in &sources {
                let near = segment
                    .data
                    .keyword
                    .nearest_terms(source, *edits, CANDIDATES_PER_SEGMENT)?;
                for near in near.unwrap_or_default() {
                    let key = likeliest.entry(near.term).or_insert((near.edits, *cut));
                    *key = (*key).min((near.edits, *cut));
                }
            }
        }
    }
    if likeliest.is_empty() {
        return Ok(Vec::new());
    }
    let group = KeywordQuery {
        text: String::new(),
        any_of: vec![likeliest.keys().map(|term| GroupTerm::whole(term.clone())).collect()],
    };
    let mut live: HashMap<String, u64> = HashMap::new();
    for part in parts {
        for (term, rows) in part.searcher.keyword_stats(&group)?.doc_freq {
            *live.entry(term).or_default() += rows;
        }
    }
    let mut candidates: Vec<((u8, usize), NearTerm)> = likeliest
        .into_iter()
        .map(|(term, (edits, cut))| {
            let rows = live.get(&term).copied().unwrap_or(0);
            ((edits, cut), NearTerm { term, rows, edits })
        })
        .filter(|(_, candidate)| candidate.rows > 0)
        .collect();
    candidates.sort_unstable_by(|(a_key, a), (b_key, b)| {
        (a_key, Reverse(a.rows), &a.term).cmp(&(b_key, Reverse(b.rows), &b.term))
    });
    Ok(candidates.into_iter().map(|(_, candidate)| candidate).collect())
}

/// How the live rows holding `term` write it: of the words of the first [`ROWS_READ`] of
/// them that the analyzer reads as `term`, that begin with `first` and that are at most
/// [`quarry_indexer::index::MAX_EDITS`] typing errors from the word as typed (`typed`), the
/// one with the fewest, then the most often written, in lower case, with its errors (None: no
/// such word). `chunkng` finds the stem `chunk`, written `chunks`, `chunk` and `chunking`:
/// `chunking`, one error. A row's words are compared with the typed word first, and only the
/// near ones read by the analyzer. `(front, back)`: with `front`, the Hebrew particles the
/// word was typed with, a row's word is taken with them in place of its own
/// ([`KeywordAnalyzer::front_particles`]); with `back`, the ending typed after the first
/// letters of a language read by them, a row's word whose term is its first letters is taken
/// with that ending in place of its own ([`KeywordAnalyzer::cut_end`]).
fn written_form(
    parts: &[SearchPart<'_>],
    term: &str,
    typed: &TypingErrors,
    first: char,
    (front, back): (&str, &str),
) -> Result<Option<(String, u8)>, ServerError> {
    let group = KeywordQuery {
        text: String::new(),
        any_of: vec![vec![GroupTerm::whole(term)]],
    };
    let mut written: HashMap<String, (u8, usize)> = HashMap::new();
    let mut rows_read = 0;
    'parts: for part in parts {
        for segment in &part.searcher.snapshot().segments {
            let analyzer = segment.data.keyword.analyzer();
            // The segment's rows cut into words as its analyzer cut them.
            let revision = analyzer
                .profile()
                .map_or_else(Revision::default, |profile| profile.revision);
            let live = segment
                .data
                .keyword
                .matching_rows(&group)?
                .rows()
                .into_iter()
                .filter(|&row| segment.hidden.rows.binary_search(&(row as u32)).is_err());
            for row in live {
                let text = &segment.data.chunks[row as usize].text;
                for piece in pieces_in(text, revision) {
                    let Piece::Word(range) = piece else { continue };
                    let word = &text[range];
                    let taken = (!front.is_empty()).then(|| analyzer.front_particles(word)).flatten();
                    // Only a word whose first letters are the term it was found by (a row of
                    // another language in the collection holds its words as its own stems).
                    let cut = (!back.is_empty())
                        .then(|| analyzer.cut_end(word))
                        .flatten()
                        .filter(|&end| analyzer.prefix_form(&word[..end]).as_deref() == Some(term));
                    let offered = match (taken, cut) {
                        (Some(taken), _) => Cow::Owned(format!("{front}{}", &word[taken..])),
                        (None, Some(end)) => Cow::Owned(format!("{}{back}", &word[..end])),
                        (None, None) => Cow::Borrowed(word),
                    };
                    let errors = match offered.is_ascii() {
                        true => typed.to_ascii_lowercase(&offered),
                        false => analyzer.prefix_form(&offered).and_then(|folded| typed.to(&folded)),
                    };
                    let Some(errors) = errors else { continue };
                    let folded = analyzer.prefix_form(&offered).unwrap_or_default();
                    if !folded.starts_with(first) {
                        continue;
                    }
                    if analyzer.query_terms(word).iter().any(|t| t == term) {
                        written.entry(offered.to_lowercase()).or_insert((errors, 0)).1 += 1;
                    }
                }
                rows_read += 1;
                if rows_read == ROWS_READ {
                    break 'parts;
                }
            }
        }
    }
    Ok(written
        .into_iter()
        .min_by(|(a, (a_errors, a_times)), (b, (b_errors, b_times))| {
            (a_errors, Reverse(a_times), a).cmp(&(b_errors, Reverse(b_times), b))
        })
        .map(|(form, (errors, _))| (form, errors)))
}

/// `written` in the case `typed` was typed in: all capitals, a capital first, or lower case.
fn in_case_of(typed: &str, written: &str) -> String {
    let letters: Vec<char> = typed.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.len() > 1 && letters.iter().all(|c| c.is_uppercase()) {
        return written.to_uppercase();
    }
    let lower = written.to_lowercase();
    match typed.chars().next().is_some_and(char::is_uppercase) {
        true => {
            let mut chars = lower.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        false => lower,
    }
}

/// `query` with each corrected word replaced where the query's syntax reads it as a word to
/// rank by: not where a `-` before it excludes it, nor where a `*` or `~` after it marks it
/// (in the simple syntax).
fn rewritten(query: &str, corrections: &[Correction], syntax: QuerySyntax) -> String {
    let mut out = String::with_capacity(query.len());
    let mut copied = 0;
    for piece in pieces(query) {
        let Piece::Word(range) = piece else { continue };
        let word = &query[range.clone()];
        let Some(correction) = corrections
            .iter()
            .find(|c| c.word.to_lowercase() == word.to_lowercase())
        else {
            continue;
        };
        if syntax == QuerySyntax::Simple && is_marked(query, &range) {
            continue;
        }
        out.push_str(&query[copied..range.start]);
        out.push_str(&in_case_of(word, &correction.suggestion));
        copied = range.end;
    }
    out.push_str(&query[copied..]);
    out
}

/// Whether the simple syntax marks the word at `range` of `query`: a `-` right before it at
/// the start of a word (an exclusion), or a `*` or `~` right after it.
fn is_marked(query: &str, range: &Range<usize>) -> bool {
    let before = &query[..range.start];
    let excluded = before
        .strip_suffix('-')
        .is_some_and(|rest| rest.chars().next_back().is_none_or(char::is_whitespace));
    excluded || query[range.end..].starts_with(['*', '~'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn correction(word: &str, suggestion: &str) -> Correction {
        Correction {
            word: word.into(),
            suggestion: suggestion.into(),
            edits: 1,
            rows: 1,
        }
    }

    #[test]
    fn a_correction_takes_the_case_the_word_was_typed_in() {
        assert_eq!(in_case_of("hydorgen", "Hydrogen"), "hydrogen");
        assert_eq!(in_case_of("Hydorgen", "hydrogen"), "Hydrogen");
        assert_eq!(in_case_of("HYDORGEN", "Hydrogen"), "HYDROGEN");
        assert_eq!(in_case_of("Émile", "emile"), "Emile");
        assert_eq!(in_case_of("straße", "STRASSE"), "strasse");
    }

    #[test]
    fn the_rewritten_query_keeps_its_syntax_and_leaves_marked_words() {
        let corrections = [correction("hydorgen", "hydrogen"), correction("refeul", "refuel")];
        let simple = |q: &str| rewritten(q, &corrections, QuerySyntax::Simple);
        assert_eq!(simple("hydorgen refeul"), "hydrogen refuel");
        assert_eq!(
            simple("Hydorgen buses, \"REFEUL stops\""),
            "Hydrogen buses, \"REFUEL stops\""
        );
        assert_eq!(simple("hydorgen -refeul"), "hydrogen -refeul", "excluded");
        assert_eq!(simple("hydorgen~ refeul*"), "hydorgen~ refeul*", "marked");
        assert_eq!(
            simple("re-refeul hydorgen"),
            "re-refuel hydrogen",
            "a dash inside a word"
        );
        assert_eq!(
            rewritten("hydorgen -refeul", &corrections, QuerySyntax::Plain),
            "hydrogen -refuel",
            "plain: every word is text"
        );
        assert_eq!(simple("東京 hydorgen"), "東京 hydrogen");
    }

    #[test]
    fn the_words_checked_are_the_ranking_texts_long_unmarked_words_once() {
        let parsed = ParsedQuery::read(
            "Hydorgen hydorgen bus 2024 x1y2 -refeul hydr* tnaks~ zepelin~0 \"fuel cells\" 東京タワー",
            QuerySyntax::Simple,
        )
        .unwrap();
        assert_eq!(checked_words(&parsed), ["Hydorgen", "fuel", "cells"]);
        let many: String = (b'a'..=b'z')
            .flat_map(|a| [b'x', b'y'].map(|b| format!("word{}{} ", a as char, b as char)))
            .collect();
        let parsed = ParsedQuery::read(&many, QuerySyntax::Plain).unwrap();
        assert_eq!(checked_words(&parsed).len(), MAX_WORDS);
    }
}
