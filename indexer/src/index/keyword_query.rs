//! What the keyword lane looks up ([`KeywordQuery`]): a query's words, read by each index's
//! analyzer, and groups of index terms of which a row's best counts as one word: a prefix's
//! completions (`hydro*` finds `hydrogen` and `hydraulic`, [`prefix_completions`]) and the
//! terms a few typing errors from a word (`hydorgen~` finds `hydrogen`, [`near_terms`]), each
//! found in the index's term dictionary.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::OnceLock;

use levenshtein_automata::{Distance, LevenshteinAutomatonBuilder, DFA};
use tantivy::termdict::TermStreamer;
use tantivy::{Index, IndexReader, InvertedIndexReader};

use super::analysis::{class, CharClass, KeywordAnalyzer};
use super::keyword::err;
use super::keyword_marks::marked_completions;
use crate::error::Result;

/// The most index terms one prefix's completions or one `word~`'s near terms are looked up
/// by: the most frequent, so a prefix of one or two letters costs a bounded number of lookups.
pub const MAX_GROUP_TERMS: usize = 64;

/// The most typing errors a `word~` allows: inserted, left out, changed or swapped characters.
pub const MAX_EDITS: u8 = 2;

/// A query for the keyword lane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeywordQuery {
    /// Free text, read by the index's analyzer (nothing in it is syntax).
    pub text: String,
    /// Groups of index terms (as the index holds them: normalized and stemmed): a row scores
    /// by the best of a group's terms it holds (each term's score times its boost), as one
    /// more word of the query.
    pub any_of: Vec<Vec<GroupTerm>>,
}

/// One index term of a group, and how much a row holding it counts: 1 for a prefix's
/// completion or a typed word's correction, a near term's [`similarity`] to the word.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTerm {
    pub term: String,
    pub boost: f32,
}

impl GroupTerm {
    /// `term` at full weight.
    pub fn whole(term: impl Into<String>) -> Self {
        Self {
            term: term.into(),
            boost: 1.0,
        }
    }
}

/// How like `word` a term `edits` typing errors from it is: 1 less the errors' share of the
/// shorter one's characters (Lucene's FuzzyQuery boosts each term it expands to so), 1 for
/// the word itself, 0 or less where the errors are as many as the characters.
pub fn similarity(edits: u8, term: &str, word: &str) -> f32 {
    let shorter = term.chars().count().min(word.chars().count()).max(1);
    1.0 - f32::from(edits) / shorter as f32
}

impl KeywordQuery {
    /// A query of free text alone.
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_string(),
            any_of: Vec::new(),
        }
    }
}

impl From<&str> for KeywordQuery {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

/// The terms of the index that begin with `word`'s prefix form
/// ([`KeywordAnalyzer::prefix_form`]), each with how many rows hold it: the `limit` most
/// frequent (ties by term), most frequent first. None where the analyzer reads no word in
/// `word`.
pub(super) fn prefix_completions(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    word: &str,
    limit: usize,
) -> Result<Option<Vec<(String, u64)>>> {
    let Some(prefix) = analyzer.prefix_form(word) else {
        return Ok(None);
    };
    // A prefix typed with letters a stemmer takes off the front (Hebrew's particles,
    // Indonesian's prefixes) also begins the terms its stem begins (`העוגי*`: `עוגי`), and one
    // longer than a language cuts words to, its cut (`україн*`: `украї`); a term two
    // beginnings reach counts once.
    let beginnings: Vec<String> = std::iter::once(prefix.clone())
        .chain(analyzer.prefix_stems(word))
        .collect();
    let field = index.schema().get_field("text").map_err(err("schema"))?;
    let mut counts: HashMap<String, u64> = HashMap::new();
    for segment in reader.searcher().segment_readers() {
        let inverted = segment.inverted_index(field).map_err(err("prefix"))?;
        let mut in_segment: HashMap<String, u64> = HashMap::new();
        for beginning in &beginnings {
            let terms = terms_beginning(&inverted, beginning, "prefix")?;
            for_each_term(terms, |term, rows| {
                in_segment.insert(term.to_string(), rows);
            });
        }
        for (term, rows) in in_segment {
            *counts.entry(term).or_default() += rows;
        }
    }
    // An index that keeps a language's marks (Vietnamese) holds `việt` for `vie*` too.
    if let Some(marked) = marked_completions(index, reader, analyzer, &prefix)? {
        counts.extend(marked);
    }
    Ok(Some(most_frequent(counts, limit)))
}

/// The terms of `inverted` that begin with `prefix`, in order (`stage` names the lookup in
/// an error).
pub(super) fn terms_beginning<'a>(
    inverted: &'a InvertedIndexReader,
    prefix: &str,
    stage: &'static str,
) -> Result<TermStreamer<'a>> {
    let range = inverted.terms().range().ge(prefix.as_bytes());
    let range = match upper_bound(prefix.as_bytes()) {
        Some(upper) => range.lt(upper),
        None => range,
    };
    range.into_stream().map_err(io_err(stage))
}

/// A term of the index near a word: how many rows hold it and how many typing errors it is
/// from the nearest reading of the word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearTerm {
    pub term: String,
    pub rows: u64,
    pub edits: u8,
}

/// The terms of the index within `edits` typing errors (Levenshtein distance, a swap of two
/// neighbouring characters counting one) of `word` as the analyzer reads it: its folded form
/// and its term in each language the index reads (stemmed), each with how many rows hold it
/// and its fewest errors from any of them, in no order (with `same_first_letter`, only those
/// that begin with the first letter of the reading they are near). None where the analyzer
/// reads no word in `word`.
pub(super) fn near_terms(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    word: &str,
    edits: u8,
    same_first_letter: bool,
) -> Result<Option<Vec<NearTerm>>> {
    Ok(
        near_term_walk(index, reader, analyzer, word, edits, same_first_letter)?.map(|near| {
            near.into_iter()
                .map(|(term, (rows, edits))| NearTerm { term, rows, edits })
                .collect()
        }),
    )
}

/// The `limit` most frequent of `terms`, most frequent first (ties in term order).
pub(super) fn most_frequent_near(mut terms: Vec<NearTerm>, limit: usize) -> Vec<NearTerm> {
    terms.sort_unstable_by(|a, b| (Reverse(a.rows), &a.term).cmp(&(Reverse(b.rows), &b.term)));
    terms.truncate(limit);
    terms
}

/// The `limit` nearest of `terms`: the fewest typing errors, then the most rows, then term order.
pub(super) fn nearest_first(mut terms: Vec<NearTerm>, limit: usize) -> Vec<NearTerm> {
    terms.sort_unstable_by(|a, b| (a.edits, Reverse(a.rows), &a.term).cmp(&(b.edits, Reverse(b.rows), &b.term)));
    terms.truncate(limit);
    terms
}

/// Every term of the index within `edits` typing errors of a reading of `word`, with how
/// many rows hold it and the fewest errors from any reading (None: the analyzer reads no
/// word in `word`); with `same_first_letter`, only the terms that begin with the first letter
/// of the reading they are near, found by walking only that part of the dictionary (a walk that
/// allows an error at the first letter visits every term the errors left can reach: in an
/// index of CJK character pairs, with two errors, every pair).
fn near_term_walk(
    index: &Index,
    reader: &IndexReader,
    analyzer: &KeywordAnalyzer,
    word: &str,
    edits: u8,
    same_first_letter: bool,
) -> Result<Option<HashMap<String, (u64, u8)>>> {
    let Some(folded) = analyzer.prefix_form(word) else {
        return Ok(None);
    };
    let mut sources = analyzer.query_terms(word);
    if !sources.contains(&folded) {
        sources.push(folded);
    }
    // Terms that begin with a reading's first letter: the range of the dictionary its walk
    // takes. The readings' first letters differ where a stemmer takes letters off the front
    // (Hebrew's `העוגית` is read `עוגית`, whose near terms begin with `ע`).
    let first_letter = |source: &str| -> Option<TermRange> {
        let first = source
            .chars()
            .next()
            .filter(|_| same_first_letter)?
            .to_string()
            .into_bytes();
        let upper = upper_bound(&first);
        Some((first, upper))
    };
    let builder = automaton_builder(edits.min(MAX_EDITS));
    // Each source's automaton and range, made once for every segment.
    let automata: Vec<(Levenshtein, Option<TermRange>)> = sources
        .iter()
        .map(|source| (Levenshtein(builder.build_dfa(source)), first_letter(source)))
        .collect();
    let field = index.schema().get_field("text").map_err(err("schema"))?;
    let mut near: HashMap<String, (u64, u8)> = HashMap::new();
    for segment in reader.searcher().segment_readers() {
        let inverted = segment.inverted_index(field).map_err(err("near terms"))?;
        // A term two sources reach counts once, by the nearer.
        let mut in_segment: HashMap<String, (u64, u8)> = HashMap::new();
        for (automaton, first_letter) in &automata {
            let mut walk = inverted.terms().search(automaton);
            if let Some((first, upper)) = first_letter {
                walk = walk.ge(first);
                if let Some(upper) = upper {
                    walk = walk.lt(upper);
                }
            }
            let terms = walk.into_stream().map_err(io_err("near terms"))?;
            for_each_term(terms, |term, rows| {
                let errors = automaton.errors(term);
                in_segment
                    .entry(term.to_string())
                    .and_modify(|(_, e)| *e = (*e).min(errors))
                    .or_insert((rows, errors));
            });
        }
        for (term, (rows, errors)) in in_segment {
            let entry = near.entry(term).or_insert((0, errors));
            entry.0 += rows;
            entry.1 = entry.1.min(errors);
        }
    }
    Ok(Some(near))
}

/// A range of a term dictionary: its first term, and the term after its last (None: to the end).
type TermRange = (Vec<u8>, Option<Vec<u8>>);

/// Typing errors from one word, counted as [`near_terms`] counts them (inserted, left out,
/// changed, or two neighbours swapped), up to [`MAX_EDITS`]: an automaton made once for the
/// word, run over each word it is compared with.
pub struct TypingErrors(DFA);

impl TypingErrors {
    pub fn from(word: &str) -> Self {
        Self(automaton_builder(MAX_EDITS).build_dfa(word))
    }

    /// How many typing errors turn the word into `other` (None: more than [`MAX_EDITS`]).
    pub fn to(&self, other: &str) -> Option<u8> {
        self.to_bytes(other.bytes())
    }

    /// [`Self::to`] for an ASCII word, read in lower case: no folded copy made, and the
    /// comparison over as soon as the word is more than [`MAX_EDITS`] errors away (most
    /// words of a text are, within their first letters).
    pub fn to_ascii_lowercase(&self, other: &str) -> Option<u8> {
        self.to_bytes(other.bytes().map(|b| b.to_ascii_lowercase()))
    }

    fn to_bytes(&self, bytes: impl Iterator<Item = u8>) -> Option<u8> {
        let mut state = self.0.initial_state();
        for byte in bytes {
            state = self.0.transition(state, byte);
            if state == levenshtein_automata::SINK_STATE {
                return None;
            }
        }
        match self.0.distance(state) {
            Distance::Exact(errors) => Some(errors),
            Distance::AtLeast(_) => None,
        }
    }
}

/// Each term `terms` streams (those that are UTF-8: every term of the text field) with how
/// many rows hold it.
pub(super) fn for_each_term<A: tantivy_fst::Automaton>(
    mut terms: TermStreamer<'_, A>,
    mut each: impl FnMut(&str, u64),
) {
    while terms.advance() {
        if let Ok(term) = std::str::from_utf8(terms.key()) {
            each(term, u64::from(terms.value().doc_freq));
        }
    }
}

/// A term dictionary's read error as the keyword index's error at `stage`.
pub(super) fn io_err(stage: &'static str) -> impl Fn(std::io::Error) -> crate::error::IndexerError {
    move |e| err(stage)(tantivy::TantivyError::from(e))
}

/// The automaton builder for `edits` errors, swaps counting one (built once: a builder for two
/// errors takes a while to make).
fn automaton_builder(edits: u8) -> &'static LevenshteinAutomatonBuilder {
    static BUILDERS: [OnceLock<LevenshteinAutomatonBuilder>; MAX_EDITS as usize + 1] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    BUILDERS[usize::from(edits)].get_or_init(|| LevenshteinAutomatonBuilder::new(edits, true))
}

/// A Levenshtein DFA as the term dictionary's automaton, refusing the terms that begin with
/// a character read in pairs (CJK, Thai, ...): the words it is made from are no such terms,
/// and a pair is two typing errors from any word of two letters, so without this a walk for
/// a word visits every pair of a CJK index (2,700 Japanese passages: 5 ms a `word~`).
struct Levenshtein(DFA);

/// The first character of a term as its bytes come: the bytes read so far, and whether it is
/// complete.
#[derive(Clone, Copy)]
struct FirstLetter {
    bytes: [u8; 4],
    read: u8,
    complete: bool,
}

impl FirstLetter {
    /// With `byte` read: complete once its UTF-8 sequence is, and then whether it is a
    /// character read in pairs.
    fn with(mut self, byte: u8) -> (Self, bool) {
        self.bytes[usize::from(self.read)] = byte;
        self.read += 1;
        let needed = match self.bytes[0] {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        if usize::from(self.read) < needed {
            return (self, false);
        }
        self.complete = true;
        let first = std::str::from_utf8(&self.bytes[..needed])
            .ok()
            .and_then(|text| text.chars().next());
        (self, first.is_some_and(|c| matches!(class(c), CharClass::Pair(_))))
    }
}

impl Levenshtein {
    /// The typing errors between the automaton's word and `term`, one it matches.
    fn errors(&self, term: &str) -> u8 {
        match self.0.eval(term) {
            Distance::Exact(errors) => errors,
            Distance::AtLeast(errors) => errors,
        }
    }
}

impl tantivy_fst::Automaton for Levenshtein {
    type State = (u32, FirstLetter);

    fn start(&self) -> Self::State {
        let first = FirstLetter {
            bytes: [0; 4],
            read: 0,
            complete: false,
        };
        (self.0.initial_state(), first)
    }

    fn is_match(&self, (state, _): &Self::State) -> bool {
        matches!(self.0.distance(*state), Distance::Exact(_))
    }

    fn can_match(&self, (state, _): &Self::State) -> bool {
        *state != levenshtein_automata::SINK_STATE
    }

    fn accept(&self, (state, first): &Self::State, byte: u8) -> Self::State {
        let state = self.0.transition(*state, byte);
        if first.complete {
            return (state, *first);
        }
        match first.with(byte) {
            (first, true) => (levenshtein_automata::SINK_STATE, first),
            (first, false) => (state, first),
        }
    }
}

/// The `limit` most frequent of the terms `counts` holds, most frequent first, ties in term
/// order.
pub fn most_frequent(counts: HashMap<String, u64>, limit: usize) -> Vec<(String, u64)> {
    let mut terms: Vec<(String, u64)> = counts.into_iter().collect();
    terms.sort_unstable_by(|a, b| (Reverse(a.1), &a.0).cmp(&(Reverse(b.1), &b.0)));
    terms.truncate(limit);
    terms
}

/// The least byte string above every string that begins with `prefix` (None: there is none,
/// `prefix` being all 0xFF bytes).
fn upper_bound(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut upper = prefix.to_vec();
    while let Some(last) = upper.pop() {
        if last < u8::MAX {
            upper.push(last + 1);
            return Some(upper);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::{build_keyword_index, KeywordIndex, TantivyKeywordIndex};
    use super::*;

    const TEXTS: [&str; 9] = [
        "Hydrogen fuel cells power the buses of the city",
        "Hydrogen is stored under pressure in tanks",
        "Hydraulic presses shape the steel sheets",
        "A hydrant stands on every street corner, and hydrogen too",
        "Hydro power comes from the dams upstream",
        "Hybrid cars use less fuel in the city",
        "Der Kühlschrank kühlt die Milch",
        "東京タワーは高い",
        "Power plants burn coal and gas",
    ];

    fn index(dir: &std::path::Path) -> TantivyKeywordIndex {
        build_keyword_index(dir, TEXTS.iter().copied()).unwrap();
        TantivyKeywordIndex::open(dir).unwrap()
    }

    /// The terms the index holds, each with its rows, by a scan of every row as it was read.
    fn scanned_terms(index: &TantivyKeywordIndex) -> HashMap<String, u64> {
        let mut reader = index.analyzer().text_reader();
        let mut scanned: HashMap<String, u64> = HashMap::new();
        for text in TEXTS {
            let mut terms: Vec<String> = Vec::new();
            reader.for_each_term(text, |term, _| terms.push(term.to_string()));
            terms.sort_unstable();
            terms.dedup();
            terms
                .into_iter()
                .for_each(|term| *scanned.entry(term).or_default() += 1);
        }
        scanned
    }

    #[test]
    fn a_prefixs_completions_are_the_index_terms_it_begins_most_frequent_first() {
        let dir = tempfile::tempdir().unwrap();
        let index = index(dir.path());
        let scanned = scanned_terms(&index);
        for (word, form) in [
            ("hydr", "hydr"),
            ("HYDRO", "hydro"),
            ("Kühl", "kuhl"),
            ("po", "po"),
            ("zz", "zz"),
        ] {
            let holding: HashMap<String, u64> = scanned
                .iter()
                .filter(|(term, _)| term.starts_with(form))
                .map(|(t, n)| (t.clone(), *n))
                .collect();
            let expected = most_frequent(holding, MAX_GROUP_TERMS);
            let found = index.prefix_completions(word, MAX_GROUP_TERMS).unwrap().unwrap();
            assert_eq!(found, expected, "{word}");
        }
        let hydr = index.prefix_completions("hydr", MAX_GROUP_TERMS).unwrap().unwrap();
        assert_eq!(hydr[0], ("hydrogen".to_string(), 3), "{hydr:?}");
        assert_eq!(
            hydr.len(),
            4,
            "hydrogen, hydraulic, hydrant and hydro, not hybrid: {hydr:?}"
        );
        assert_eq!(
            index.prefix_completions("kühl", 9).unwrap().unwrap().len(),
            2,
            "Kühlschrank, kühlt"
        );
        // At most `limit`, the most frequent.
        assert_eq!(
            index.prefix_completions("hydr", 1).unwrap().unwrap(),
            [("hydrogen".to_string(), 3)]
        );
        // Characters read as pairs are no word to complete.
        assert_eq!(index.prefix_completions("東京", 9).unwrap(), None);
        assert_eq!(index.prefix_completions("-", 9).unwrap(), None);
    }

    /// The forms a word's near terms are counted from: its term in each language the index
    /// reads, and its folded form.
    fn readings(index: &TantivyKeywordIndex, word: &str) -> Vec<String> {
        let mut sources = index.analyzer().query_terms(word);
        sources.extend(index.analyzer().prefix_form(word));
        sources
    }

    /// Typing errors between two words: characters inserted, left out, changed, or two
    /// neighbours swapped (optimal string alignment).
    fn errors(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in 0..=a.len() {
            for j in 0..=b.len() {
                d[i][j] = match (i, j) {
                    (0, j) => j,
                    (i, 0) => i,
                    _ => {
                        let mut best = (d[i - 1][j] + 1)
                            .min(d[i][j - 1] + 1)
                            .min(d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]));
                        if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                            best = best.min(d[i - 2][j - 2] + 1);
                        }
                        best
                    }
                };
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn a_words_near_terms_are_the_index_terms_within_its_errors() {
        let dir = tempfile::tempdir().unwrap();
        let index = index(dir.path());
        let scanned = scanned_terms(&index);
        for (word, edits) in [
            ("hydorgen", 2),
            ("Hydrgen", 1),
            ("tnaks", 1),
            ("buses", 1),
            ("Kühlschrnak", 2),
            ("powr", 1),
            ("xyzzy", 2),
            ("zq", 2),
        ] {
            let sources = readings(&index, word);
            // A CJK pair (東京, two characters) is two errors from zq, and no word's near term.
            let is_pair = |term: &str| matches!(class(term.chars().next().unwrap()), CharClass::Pair(_));
            let near: HashMap<String, u64> = scanned
                .iter()
                .filter(|(term, _)| !is_pair(term))
                .filter(|(term, _)| sources.iter().any(|source| errors(source, term) <= usize::from(edits)))
                .map(|(t, n)| (t.clone(), *n))
                .collect();
            let expected = most_frequent(near, usize::MAX);
            let found: Vec<(String, u64)> = index
                .near_terms(word, edits, usize::MAX)
                .unwrap()
                .unwrap()
                .into_iter()
                .map(|near| (near.term, near.rows))
                .collect();
            assert_eq!(found, expected, "{word} ~{edits}");
        }
        let near = |word: &str, edits: u8| -> Vec<String> {
            index
                .near_terms(word, edits, 9)
                .unwrap()
                .unwrap()
                .into_iter()
                .map(|near| near.term)
                .collect()
        };
        assert_eq!(near("hydorgen", 1), ["hydrogen"], "a swap is one error");
        assert_eq!(near("tnaks", 1), ["tank"], "by its stem");
        assert!(near("kühlschrnak", 2).contains(&"kuhlschrank".to_string()));
        assert!(near("xyzzy", 2).is_empty());
        assert!(scanned.contains_key("東京"), "the index holds pairs");
        assert!(near("zq", 2).is_empty(), "no pair is a word's near term");
        assert_eq!(index.near_terms("東京", 1, 9).unwrap(), None);
    }

    #[test]
    fn a_words_nearest_terms_begin_with_its_first_letter_ordered_by_errors_then_rows() {
        let dir = tempfile::tempdir().unwrap();
        let index = index(dir.path());
        let scanned = scanned_terms(&index);
        for (word, edits) in [
            ("hydorgen", 2),
            ("tnaks", 2),
            ("powr", 2),
            ("citys", 1),
            ("xyzzy", 2),
            ("cars", 2),
        ] {
            let sources = readings(&index, word);
            let first = index.analyzer().prefix_form(word).unwrap().chars().next().unwrap();
            let mut expected: Vec<NearTerm> = scanned
                .iter()
                .filter(|(term, _)| term.starts_with(first))
                .filter_map(|(term, &rows)| {
                    let fewest = sources.iter().map(|source| errors(source, term)).min()?;
                    (fewest <= usize::from(edits)).then(|| NearTerm {
                        term: term.clone(),
                        rows,
                        edits: fewest as u8,
                    })
                })
                .collect();
            expected.sort_by(|a, b| (a.edits, Reverse(a.rows), &a.term).cmp(&(b.edits, Reverse(b.rows), &b.term)));
            let found = index.nearest_terms(word, edits, usize::MAX).unwrap().unwrap();
            assert_eq!(found, expected, "{word} ~{edits}");
        }
        // tnaks: tank (by the stem tnak, one swap) before the farther terms.
        let tnaks = index.nearest_terms("tnaks", 2, 1).unwrap().unwrap();
        assert_eq!(
            tnaks,
            [NearTerm {
                term: "tank".into(),
                rows: 1,
                edits: 1
            }]
        );
        // gas and dams are two errors from cars, and begin otherwise.
        let cars: Vec<String> = index
            .nearest_terms("cars", 2, 9)
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|near| near.term)
            .collect();
        assert!(cars.contains(&"car".to_string()), "{cars:?}");
        let anywhere = index.near_terms("cars", 2, 99).unwrap().unwrap();
        assert!(anywhere.iter().any(|n| n.term == "gas") && anywhere.iter().any(|n| n.term == "dam"));
        assert!(cars.iter().all(|t| t.starts_with('c')), "{cars:?}");
        assert_eq!(index.nearest_terms("東京", 1, 9).unwrap(), None);
    }

    #[test]
    fn typing_errors_count_as_the_near_terms_do() {
        for (from, to) in [
            ("hydorgen", "hydrogen"),
            ("hydrogen", "hydrogen"),
            ("tnaks", "tanks"),
            ("tnaks", "tank"),
            ("refeul", "refuel"),
            ("kuhlschrnak", "kuhlschrank"),
            ("abc", "xyz"),
            ("café", "cafe"),
            ("", "ab"),
        ] {
            let expected = errors(from, to);
            let found = TypingErrors::from(from).to(to);
            if to.is_ascii() {
                let in_capitals = TypingErrors::from(from).to_ascii_lowercase(&to.to_uppercase());
                assert_eq!(in_capitals, found, "{from} -> {to} in capitals");
            }
            match expected <= usize::from(MAX_EDITS) {
                true => assert_eq!(found, Some(expected as u8), "{from} -> {to}"),
                false => assert_eq!(found, None, "{from} -> {to}"),
            }
        }
    }

    #[test]
    fn a_group_of_terms_scores_a_row_by_the_best_it_holds_as_one_word() {
        let dir = tempfile::tempdir().unwrap();
        let index = index(dir.path());
        let group = |terms: &[&str]| KeywordQuery {
            text: "city".into(),
            any_of: vec![terms.iter().map(|&t| GroupTerm::whole(t)).collect()],
        };
        let both = group(&["hydrogen", "hydrant"]);
        let stats = index.stats(&both).unwrap();
        assert_eq!((stats.doc_freq["hydrogen"], stats.doc_freq["hydrant"]), (3, 1));
        let scores = |query: &KeywordQuery| -> HashMap<u64, f32> {
            let hits = index.search_with_stats(query, 10, None, &stats).unwrap();
            hits.into_iter().map(|h| (h.row, h.score)).collect()
        };
        let together = scores(&both);
        let hydrogen = scores(&group(&["hydrogen"]));
        let hydrant = scores(&group(&["hydrant"]));
        let mut rows: Vec<u64> = together.keys().copied().collect();
        rows.sort_unstable();
        assert_eq!(rows, [0, 1, 3, 5], "rows holding hydrogen, hydrant or city");
        for row in rows {
            let best = hydrogen
                .get(&row)
                .copied()
                .unwrap_or(0.0)
                .max(hydrant.get(&row).copied().unwrap_or(0.0));
            assert!(
                (together[&row] - best).abs() < 1e-5,
                "row {row}: {} vs {best}",
                together[&row]
            );
        }
        // Row 3 holds both: it scores by the better (the rarer hydrant), not their sum.
        assert!(hydrant[&3] > hydrogen[&3]);
        // Each term counts by its boost; a term with none is left out.
        let alone = |terms: Vec<GroupTerm>| KeywordQuery {
            text: String::new(),
            any_of: vec![terms],
        };
        let half = GroupTerm {
            term: "hydrogen".into(),
            boost: 0.5,
        };
        let full = scores(&alone(vec![GroupTerm::whole("hydrogen")]));
        let halved = scores(&alone(vec![half.clone(), GroupTerm::whole("hydrant")]));
        let hydrant_alone = scores(&alone(vec![GroupTerm::whole("hydrant")]));
        assert_eq!(halved.len(), 3, "rows holding hydrogen or hydrant: {halved:?}");
        for (row, score) in &halved {
            let best =
                (0.5 * full.get(row).copied().unwrap_or(0.0)).max(hydrant_alone.get(row).copied().unwrap_or(0.0));
            assert!((score - best).abs() < 1e-5, "row {row}: {score} vs {best}");
        }
        let none = GroupTerm { boost: 0.0, ..half };
        assert_eq!(scores(&alone(vec![none, GroupTerm::whole("hydrant")])), hydrant_alone);
        // A group's term the text also looks up counts once, in the group (at full weight,
        // where the text weighs each reading by its language's share of the rows).
        let repeated = KeywordQuery {
            text: "hydrogen".into(),
            any_of: vec![vec![GroupTerm::whole("hydrogen")]],
        };
        let once = KeywordQuery {
            text: String::new(),
            any_of: repeated.any_of.clone(),
        };
        let once = index.search_with_stats(&once, 10, None, &stats).unwrap();
        assert_eq!(index.search_with_stats(&repeated, 10, None, &stats).unwrap(), once);
        assert_eq!(index.matching_rows(&both).unwrap().rows(), [0, 1, 3, 5]);
        // A group alone, with no text, finds its rows.
        let alone = KeywordQuery {
            text: String::new(),
            any_of: vec![vec![GroupTerm::whole("hydraul"), GroupTerm::whole("hydro")]],
        };
        assert_eq!(index.matching_rows(&alone).unwrap().rows(), [2, 4]);
    }

    #[test]
    fn the_upper_bound_is_above_every_string_with_the_prefix_and_no_other() {
        assert_eq!(upper_bound(b"hydro"), Some(b"hydrp".to_vec()));
        assert_eq!(upper_bound(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(upper_bound(b"\xff\xff"), None);
        let prefix = "caf".as_bytes();
        let upper = upper_bound(prefix).unwrap();
        for word in ["caf", "cafe", "café", "caf\u{10FFFF}"] {
            assert!(
                word.as_bytes() >= prefix && word.as_bytes() < upper.as_slice(),
                "{word}"
            );
        }
        for word in ["cae", "cag", "ca"] {
            assert!(
                !(word.as_bytes() >= prefix && word.as_bytes() < upper.as_slice()),
                "{word}"
            );
        }
    }

    #[test]
    fn the_most_frequent_completions_are_kept_ties_in_term_order() {
        let counts = HashMap::from([
            ("b".to_string(), 3),
            ("a".to_string(), 3),
            ("c".to_string(), 9),
            ("d".to_string(), 1),
        ]);
        assert_eq!(
            most_frequent(counts, 3),
            [("c".to_string(), 9), ("a".to_string(), 3), ("b".to_string(), 3)]
        );
    }
}
