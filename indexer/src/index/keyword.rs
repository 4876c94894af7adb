//! [`KeywordIndex`] on tantivy: BM25 over the chunk texts, read by the index's analyzer
//! ([`super::analysis`]: multilingual for new indexes, English for those written before).
//! It parses no query syntax: a query's words are read by the same analyzer and searched as
//! plain terms, a quoted phrase of the server's query syntax comes as a phrase to find
//! ([`KeywordIndex::phrase_rows`], on the terms' positions), a prefix as the terms that
//! complete it ([`KeywordIndex::prefix_completions`], a group of [`KeywordQuery::any_of`])
//! and a `word~` as the terms a few typing errors from it ([`KeywordIndex::near_terms`]).
//! Segments are separate indexes; [`KeywordStats`] summed over them make their scores
//! comparable.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::{Index, IndexReader, Searcher, Term};

use super::analysis::{
    english_analyzer, KeywordAnalyzer, LanguageProfile, Revision, ENGLISH_V1, MULTILINGUAL_V1, MULTILINGUAL_V10,
    MULTILINGUAL_V2, MULTILINGUAL_V3, MULTILINGUAL_V4, MULTILINGUAL_V5, MULTILINGUAL_V6, MULTILINGUAL_V7,
    MULTILINGUAL_V8, MULTILINGUAL_V9,
};
use super::keyword_marks::marked_forms;
use super::keyword_pairs::{pair_terms_holding, pair_terms_holding_each};
use super::keyword_query::{
    most_frequent, most_frequent_near, near_terms, nearest_first, prefix_completions, GroupTerm, KeywordQuery, NearTerm,
};
use super::keyword_rows::RowsCollector;
use super::term_list::TermListTokenizer;
use super::{Hit, RowSet};
use crate::error::{IndexerError, Result};

/// Terms with how many rows hold each.
pub type TermRows = Vec<(String, u64)>;

/// Name (and version) of the analyzer of new indexes; recorded in the manifest.
pub const KEYWORD_ANALYZER: &str = MULTILINGUAL_V10;

pub(super) fn err(stage: &'static str) -> impl Fn(tantivy::TantivyError) -> IndexerError {
    move |e| IndexerError::KeywordIndex {
        stage,
        reason: e.to_string(),
    }
}

/// The schema of a keyword index read by the analyzer named `analyzer`.
pub(super) fn schema(analyzer: &str) -> Schema {
    let mut builder = Schema::builder();
    // Each document's row, read from its column (a hit's row, a filter's test): never
    // searched for as a term nor read from the document store, so neither is written (both
    // are in indexes built earlier, which still open and search alike).
    builder.add_u64_field("row", FAST);
    // Term frequencies and positions, for a query's quoted phrases ([`KeywordIndex::phrase_rows`]).
    // Indexes written without positions still open and search alike, their phrases read as
    // all of their words.
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(analyzer)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
    builder.build()
}

/// The corpus statistics BM25 scores one query with: documents, tokens, and how many
/// documents hold each query term. Summed over every segment of a snapshot they score each
/// segment as if one index held every row, so a small segment's rare terms are not
/// under-weighted (its own IDF would be far lower) and scores compare across segments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeywordStats {
    pub docs: u64,
    pub tokens: u64,
    /// Documents holding each analyzed query term.
    pub doc_freq: HashMap<String, u64>,
}

impl KeywordStats {
    /// Adds another segment's statistics.
    pub fn add(&mut self, other: &KeywordStats) {
        self.docs += other.docs;
        self.tokens += other.tokens;
        for (term, count) in &other.doc_freq {
            *self.doc_freq.entry(term.clone()).or_default() += count;
        }
    }

    /// These statistics with each group's terms counted as held by as many documents as its
    /// most frequent term (Lucene's blended frequencies for a fuzzy or prefix query's terms):
    /// a group scores a row by the best term it holds, and a rare term's larger IDF would put
    /// its rows above those of the group's common term — the word's own, most often (a rare
    /// near term of `diabetis~` above `diabetes`). A term in several groups takes the largest
    /// (a term of the query's text that a group holds scores in the group).
    pub fn blended(&self, groups: &[Vec<GroupTerm>]) -> Self {
        let mut blended = self.clone();
        for group in groups {
            let Some(most) = group.iter().filter_map(|g| self.doc_freq.get(&g.term)).max().copied() else {
                continue;
            };
            for g in group {
                if let Some(count) = blended.doc_freq.get_mut(&g.term) {
                    *count = (*count).max(most);
                }
            }
        }
        blended
    }

    /// The statistics rows holding `texts` add to an index read by `analyzer`, for every term
    /// they hold, counted as the index counts them (a document is one row). Rows hidden by
    /// tombstones stay in their segment's index until compaction: subtracting these keeps
    /// their words from weighing on the live rows' scores.
    pub fn of_texts<'a>(
        analyzer: &KeywordAnalyzer,
        texts: impl rayon::iter::IntoParallelIterator<Item = &'a str>,
    ) -> Self {
        use rayon::iter::ParallelIterator;
        texts
            .into_par_iter()
            .fold(
                || (analyzer.text_reader(), KeywordStats::default()),
                |(mut reader, mut stats), text| {
                    let mut terms: Vec<String> = Vec::new();
                    reader.for_each_term(text, |term, _| terms.push(term.to_string()));
                    stats.docs += 1;
                    stats.tokens += terms.len() as u64;
                    terms.sort_unstable();
                    terms.dedup();
                    for term in terms {
                        *stats.doc_freq.entry(term).or_default() += 1;
                    }
                    (reader, stats)
                },
            )
            .map(|(_, stats)| stats)
            .reduce(KeywordStats::default, |mut all, part| {
                all.add(&part);
                all
            })
    }

    /// Takes away the rows `hidden` counts: their documents, their tokens, and their document
    /// frequency of each term this one holds.
    pub fn remove(&mut self, hidden: &KeywordStats) {
        self.docs = self.docs.saturating_sub(hidden.docs);
        self.tokens = self.tokens.saturating_sub(hidden.tokens);
        for (term, count) in &mut self.doc_freq {
            *count = count.saturating_sub(hidden.doc_freq.get(term).copied().unwrap_or(0));
        }
    }
}

impl Bm25StatisticsProvider for KeywordStats {
    fn total_num_tokens(&self, _field: tantivy::schema::Field) -> tantivy::Result<u64> {
        Ok(self.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Ok(term
            .value()
            .as_str()
            .and_then(|text| self.doc_freq.get(text))
            .copied()
            .unwrap_or(0))
    }
}

/// Keyword search over chunk rows.
pub trait KeywordIndex: Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Top-`k` rows by BM25 for free text (any characters; nothing is query syntax).
    fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>>;
    /// The same among the `allowed` rows only (filtered inside the collector, before the cut).
    fn search_in(&self, query: &str, k: usize, allowed: &RowSet) -> Result<Vec<Hit>>;
    /// This index's statistics for the terms of `query` (to sum over segments).
    fn stats(&self, query: &KeywordQuery) -> Result<KeywordStats>;
    /// Top-`k` rows (among `allowed` when given) scored with `stats` instead of this index's own.
    fn search_with_stats(
        &self,
        query: &KeywordQuery,
        k: usize,
        allowed: Option<&RowSet>,
        stats: &KeywordStats,
    ) -> Result<Vec<Hit>>;
    /// Every row holding at least one word of `query` as the analyzer reads it, or a term of
    /// one of its groups (a set of [`KeywordIndex::len`] rows), unscored and uncut.
    fn matching_rows(&self, query: &KeywordQuery) -> Result<RowSet>;
    /// The terms of this index that complete `word` as a prefix, with how many rows hold
    /// each: the `limit` most frequent, most frequent first. None where the analyzer reads no
    /// word in `word` (a run of CJK characters, read as pairs).
    fn prefix_completions(&self, word: &str, limit: usize) -> Result<Option<Vec<(String, u64)>>>;
    /// The terms of this index that hold `character`, one character of a script read as
    /// pairs (CJK, Thai, ...): itself and the pairs it begins or ends, with how many rows
    /// hold each; the `limit` most frequent, most frequent first. None where the index reads
    /// no pairs or `character` is no such character.
    fn pair_terms_holding(&self, character: &str, limit: usize) -> Result<Option<Vec<(String, u64)>>> {
        Ok(self.pair_terms_holding_each(&[character], limit)?.pop().flatten())
    }
    /// [`Self::pair_terms_holding`] of each of `characters`, in order, from one walk of each
    /// segment's term dictionary for the pairs they end (the first 64; later ones None).
    fn pair_terms_holding_each(&self, characters: &[&str], limit: usize) -> Result<Vec<Option<TermRows>>>;
    /// The terms of this index that are `word`, typed without marks, with marks on its
    /// letters (itself among them: `viet` finds `việt` and `viết`), with how many rows hold
    /// each: the `limit` most frequent, most frequent first. None where the index keeps no
    /// language's marks (Vietnamese's) or `word` is not one word of ASCII letters.
    fn marked_forms(&self, word: &str, limit: usize) -> Result<Option<TermRows>>;
    /// The terms of this index within `edits` typing errors of `word` (at most
    /// [`super::keyword_query::MAX_EDITS`]), with how many rows hold each and its fewest
    /// errors from a reading of `word`: the `limit` most frequent, most frequent first. None
    /// where the analyzer reads no word in `word`.
    fn near_terms(&self, word: &str, edits: u8, limit: usize) -> Result<Option<Vec<NearTerm>>>;
    /// Those of the same terms that begin with `word`'s first letter (as the analyzer folds
    /// it), nearest first: the fewest typing errors from a reading of `word`, then the most
    /// rows, then term order; the `limit` first (a spelling suggestion's candidates, a typing
    /// error at the first letter being rare; only that part of the dictionary is walked).
    fn nearest_terms(&self, word: &str, edits: u8, limit: usize) -> Result<Option<Vec<NearTerm>>>;
    /// Every row holding the words of `phrase` one after another, as the analyzer reads
    /// them (stop words skipped) in any of the languages the index's rows were read as; an
    /// index written without positions answers the rows holding all of them. None when the
    /// analyzer keeps no word of `phrase`.
    fn phrase_rows(&self, phrase: &str) -> Result<Option<RowSet>>;
}

/// A tantivy index opened from a folder.
pub struct TantivyKeywordIndex {
    index: Index,
    reader: IndexReader,
    analyzer: KeywordAnalyzer,
    /// Whether the text field holds each term's positions (indexes written before phrases
    /// were searched do not): a phrase is then found by all of its words.
    positions: bool,
}

impl TantivyKeywordIndex {
    /// Opens the index in `dir` with the analyzer its schema names (and, for the
    /// multilingual one, the language profile stored beside it).
    pub fn open(dir: &Path) -> Result<Self> {
        let index = Index::open_in_dir(dir).map_err(err("open"))?;
        let indexing = text_indexing(&index)?;
        let analyzer = match indexing.as_ref().map_or("", |o| o.tokenizer()) {
            ENGLISH_V1 => {
                index.tokenizers().register(ENGLISH_V1, english_analyzer());
                KeywordAnalyzer::English
            }
            name @ (MULTILINGUAL_V1 | MULTILINGUAL_V2 | MULTILINGUAL_V3 | MULTILINGUAL_V4 | MULTILINGUAL_V5 | MULTILINGUAL_V6 | MULTILINGUAL_V7 | MULTILINGUAL_V8 | MULTILINGUAL_V9 | MULTILINGUAL_V10) => {
                // Rows are indexed as term lists (pre-read terms in indexes written before them);
                // the tokenizer is never asked to read a query.
                index.tokenizers().register(name, TermListTokenizer::default());
                let mut profile = LanguageProfile::load(dir)?;
                profile.revision = Revision::of_analyzer(name).expect("a multilingual analyzer's name");
                KeywordAnalyzer::Multilingual(Arc::new(profile))
            }
            other => {
                return Err(IndexerError::KeywordIndex {
                    stage: "open",
                    reason: format!("{}: written with the keyword analyzer `{other}`, which this version of quarry does not know ({ENGLISH_V1}, {MULTILINGUAL_V1}, {MULTILINGUAL_V2}, {MULTILINGUAL_V3}, {MULTILINGUAL_V4}, {MULTILINGUAL_V5}, {MULTILINGUAL_V6}, {MULTILINGUAL_V7}, {MULTILINGUAL_V8}, {MULTILINGUAL_V9}, {MULTILINGUAL_V10})", dir.display()),
                })
            }
        };
        let reader = index.reader().map_err(err("reader"))?;
        Ok(Self {
            index,
            reader,
            analyzer,
            positions: indexing.is_some_and(|o| o.index_option().has_positions()),
        })
    }

    /// How this index reads texts and queries.
    pub fn analyzer(&self) -> &KeywordAnalyzer {
        &self.analyzer
    }

    /// Tantivy segments in the index (one for an index built by [`super::build_keyword_index`]).
    pub fn segment_count(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    /// The terms of `query` with their weights ([`KeywordAnalyzer::weighted_query_terms`]).
    fn terms(&self, query: &str) -> Result<Vec<(Term, f32)>> {
        let field = self.index.schema().get_field("text").map_err(err("schema"))?;
        Ok(self
            .analyzer
            .weighted_query_terms(query)
            .into_iter()
            .map(|(term, weight)| (Term::from_field_text(field, &term), weight))
            .collect())
    }
}

/// How the index's text field was written: its tokenizer (the analyzer's name) and what its
/// postings hold (None: not indexed).
/// A term's query, its score times `weight` (a reading's share, a near term's similarity).
fn weighted(term: Term, weight: f32) -> Box<dyn Query> {
    let query: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
    match weight == 1.0 {
        true => query,
        false => Box::new(BoostQuery::new(query, weight)),
    }
}

fn text_indexing(index: &Index) -> Result<Option<TextFieldIndexing>> {
    let schema = index.schema();
    let field = schema.get_field("text").map_err(err("schema"))?;
    match schema.get_field_entry(field).field_type() {
        tantivy::schema::FieldType::Str(options) => Ok(options.get_indexing_options().cloned()),
        other => Err(IndexerError::KeywordIndex {
            stage: "open",
            reason: format!("the text field is {other:?}, not text"),
        }),
    }
}

impl KeywordIndex for TantivyKeywordIndex {
    fn len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        self.run(&KeywordQuery::text(query), k, None, None)
    }

    fn search_in(&self, query: &str, k: usize, allowed: &RowSet) -> Result<Vec<Hit>> {
        self.run(&KeywordQuery::text(query), k, Some(allowed), None)
    }

    fn stats(&self, query: &KeywordQuery) -> Result<KeywordStats> {
        let searcher = self.reader.searcher();
        let field = self.index.schema().get_field("text").map_err(err("schema"))?;
        let own: &dyn Bm25StatisticsProvider = &searcher;
        let mut stats = KeywordStats {
            docs: own.total_num_docs().map_err(err("stats"))?,
            tokens: own.total_num_tokens(field).map_err(err("stats"))?,
            doc_freq: HashMap::new(),
        };
        let grouped = query
            .any_of
            .iter()
            .flatten()
            .map(|group_term| Term::from_field_text(field, &group_term.term));
        for term in self
            .terms(&query.text)?
            .into_iter()
            .map(|(term, _)| term)
            .chain(grouped)
        {
            let count = Searcher::doc_freq(&searcher, &term).map_err(err("stats"))?;
            stats
                .doc_freq
                .insert(term.value().as_str().unwrap_or_default().to_string(), count);
        }
        Ok(stats)
    }

    fn search_with_stats(
        &self,
        query: &KeywordQuery,
        k: usize,
        allowed: Option<&RowSet>,
        stats: &KeywordStats,
    ) -> Result<Vec<Hit>> {
        self.run(query, k, allowed, Some(stats))
    }

    fn prefix_completions(&self, word: &str, limit: usize) -> Result<Option<Vec<(String, u64)>>> {
        prefix_completions(&self.index, &self.reader, &self.analyzer, word, limit)
    }

    fn pair_terms_holding_each(&self, characters: &[&str], limit: usize) -> Result<Vec<Option<TermRows>>> {
        let holding = pair_terms_holding_each(&self.index, &self.reader, &self.analyzer, characters)?;
        Ok(holding
            .into_iter()
            .map(|counts| counts.map(|counts| most_frequent(counts, limit)))
            .collect())
    }

    fn marked_forms(&self, word: &str, limit: usize) -> Result<Option<TermRows>> {
        let forms = marked_forms(&self.index, &self.reader, &self.analyzer, word)?;
        Ok(forms.map(|counts| most_frequent(counts, limit)))
    }

    fn near_terms(&self, word: &str, edits: u8, limit: usize) -> Result<Option<Vec<NearTerm>>> {
        let near = near_terms(&self.index, &self.reader, &self.analyzer, word, edits, false)?;
        Ok(near.map(|terms| most_frequent_near(terms, limit)))
    }

    fn nearest_terms(&self, word: &str, edits: u8, limit: usize) -> Result<Option<Vec<NearTerm>>> {
        let near = near_terms(&self.index, &self.reader, &self.analyzer, word, edits, true)?;
        Ok(near.map(|terms| nearest_first(terms, limit)))
    }

    fn matching_rows(&self, query: &KeywordQuery) -> Result<RowSet> {
        match self.any_term_query(query)? {
            Some(query) => self.rows_matching(&query, "match"),
            None => Ok(RowSet::empty(self.len())),
        }
    }

    fn phrase_rows(&self, phrase: &str) -> Result<Option<RowSet>> {
        let field = self.index.schema().get_field("text").map_err(err("schema"))?;
        let readings: Vec<(Occur, Box<dyn Query>)> = self
            .analyzer
            .phrase_readings(phrase)
            .into_iter()
            .map(|sequence| {
                if let [(_, term)] = sequence.as_slice() {
                    return Ok((Occur::Should, self.one_term_query(field, term)?));
                }
                let terms: Vec<(usize, Term)> = sequence
                    .into_iter()
                    .map(|(at, term)| (at, Term::from_field_text(field, &term)))
                    .collect();
                let query: Box<dyn Query> = match self.positions {
                    true => Box::new(PhraseQuery::new_with_offset(terms)),
                    false => Box::new(BooleanQuery::new(
                        terms
                            .into_iter()
                            .map(|(_, term)| {
                                let query: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                                (Occur::Must, query)
                            })
                            .collect(),
                    )),
                };
                Ok((Occur::Should, query))
            })
            .collect::<Result<_>>()?;
        if readings.is_empty() {
            return Ok(None);
        }
        self.rows_matching(&BooleanQuery::new(readings), "phrase").map(Some)
    }
}

impl TantivyKeywordIndex {
    /// A phrase of one term: the rows holding it, or for one character of a script read as
    /// pairs, the rows holding any term that holds it (inside a run it is only in pairs).
    fn one_term_query(&self, field: tantivy::schema::Field, term: &str) -> Result<Box<dyn Query>> {
        let as_query = |term: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, term),
                IndexRecordOption::Basic,
            ))
        };
        let Some(holding) = pair_terms_holding(&self.index, &self.reader, &self.analyzer, term)? else {
            return Ok(as_query(term));
        };
        let any = holding.keys().map(|held| (Occur::Should, as_query(held))).collect();
        Ok(Box::new(BooleanQuery::new(any)))
    }

    /// Every row `query` matches, unscored (`stage` names the search in an error).
    fn rows_matching(&self, query: &dyn Query, stage: &'static str) -> Result<RowSet> {
        let mut matching = RowSet::empty(self.len());
        for row in self
            .reader
            .searcher()
            .search(query, &RowsCollector)
            .map_err(err(stage))?
        {
            matching.insert(row as usize);
        }
        Ok(matching)
    }

    /// Any of the words of `query`, and any term of each of its groups, a group scoring by
    /// its best term a row holds (None when there is no term to look up).
    fn any_term_query(&self, query: &KeywordQuery) -> Result<Option<BooleanQuery>> {
        let field = self.index.schema().get_field("text").map_err(err("schema"))?;
        let groups: Vec<Vec<(Term, f32)>> = query
            .any_of
            .iter()
            .map(|group| {
                group
                    .iter()
                    .filter(|group_term| group_term.boost > 0.0)
                    .map(|group_term| (Term::from_field_text(field, &group_term.term), group_term.boost))
                    .collect::<Vec<(Term, f32)>>()
            })
            .filter(|group| !group.is_empty())
            .collect();
        // A term the text looks up that a group holds scores in the group, once and at full
        // weight: the text may read it in a language few rows are in (`diabetis` read as
        // French gives `diabet`, at that reading's small weight), where the group found it
        // as the word meant.
        let terms: Vec<(Term, f32)> = self
            .terms(&query.text)?
            .into_iter()
            .filter(|(term, _)| !groups.iter().flatten().any(|(g, _)| g == term))
            .collect();
        if terms.is_empty() && groups.is_empty() {
            return Ok(None);
        }
        let group_clauses = groups.into_iter().map(|group| {
            let alternatives: Vec<Box<dyn Query>> =
                group.into_iter().map(|(term, boost)| weighted(term, boost)).collect();
            (
                Occur::Should,
                Box::new(DisjunctionMaxQuery::new(alternatives)) as Box<dyn Query>,
            )
        });
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .filter(|(_, weight)| *weight > 0.0)
            .map(|(term, weight)| (Occur::Should, weighted(term, weight)))
            .chain(group_clauses)
            .collect();
        Ok(Some(BooleanQuery::new(clauses)))
    }

    fn run(
        &self,
        query: &KeywordQuery,
        k: usize,
        allowed: Option<&RowSet>,
        stats: Option<&KeywordStats>,
    ) -> Result<Vec<Hit>> {
        if k == 0 || allowed.is_some_and(RowSet::is_empty) {
            return Ok(Vec::new());
        }
        let Some(query) = self.any_term_query(query)? else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        let provider: &dyn Bm25StatisticsProvider = match stats {
            Some(stats) => stats,
            None => &searcher,
        };
        let top = match allowed {
            None => searcher.search_with_statistics_provider(&query, &TopDocs::with_limit(k), provider),
            Some(allowed) => {
                let allowed = Arc::new(allowed.clone());
                let filter = FilterCollector::new(
                    "row".to_string(),
                    move |row: u64| allowed.contains(row as usize),
                    TopDocs::with_limit(k),
                );
                searcher.search_with_statistics_provider(&query, &filter, provider)
            }
        }
        .map_err(err("search"))?;
        // Rows from the fast field (a column read), not the stored document (a block to decompress).
        let mut rows: HashMap<u32, tantivy::columnar::Column<u64>> = HashMap::new();
        top.into_iter()
            .map(|(score, address)| {
                let column = match rows.entry(address.segment_ord) {
                    std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                    std::collections::hash_map::Entry::Vacant(entry) => entry.insert(
                        searcher
                            .segment_reader(address.segment_ord)
                            .fast_fields()
                            .u64("row")
                            .map_err(err("fetch"))?,
                    ),
                };
                let row = column.first(address.doc_id).ok_or_else(|| IndexerError::KeywordIndex {
                    stage: "fetch",
                    reason: format!("document {address:?} has no row"),
                })?;
                Ok(Hit { row, score })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::build_keyword_index;
    use super::*;

    #[test]
    fn a_groups_terms_count_as_its_most_frequent() {
        let stats = KeywordStats {
            docs: 20,
            tokens: 200,
            doc_freq: [("diabet", 10), ("diuret", 1), ("dialect", 3), ("diet", 1)]
                .map(|(term, count)| (term.to_string(), count))
                .into(),
        };
        let group = |terms: &[&str]| terms.iter().map(|&t| GroupTerm::whole(t)).collect::<Vec<GroupTerm>>();
        let blended = stats.blended(&[group(&["diabet", "diuret"]), group(&["diuret", "dialect"])]);
        let count = |term: &str| blended.doc_freq[term];
        // diuret takes the largest of its groups, dialect its group's; diet, in none, its own.
        assert_eq!(
            (count("diabet"), count("diuret"), count("dialect"), count("diet")),
            (10, 10, 3, 1)
        );
        assert_eq!((blended.docs, blended.tokens), (20, 200));
        assert_eq!(stats.blended(&[]), stats);
    }

    #[test]
    fn bm25_ranks_matching_rows_and_ignores_query_syntax() {
        let dir = tempfile::tempdir().unwrap();
        let texts = [
            "GPUs accelerate vector search",
            "The cat sat on the mat",
            "Searching vectors quickly on graphics processors",
        ];
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.len(), 3);
        let hits = index.search("vector searches", 10).unwrap();
        let rows: Vec<u64> = hits.iter().map(|h| h.row).collect();
        assert!(rows.contains(&0) && rows.contains(&2) && !rows.contains(&1), "{hits:?}");
        // Query syntax characters are just text.
        assert_eq!(index.search("cat: \"mat (", 10).unwrap()[0].row, 1);
        assert!(index.search("the a of", 10).unwrap().is_empty(), "stop words only");
        // A filter applies before the cut: with k = 1 the allowed row still comes back.
        let mut allowed = RowSet::empty(3);
        allowed.insert(2);
        let hits = index.search_in("vector search", 1, &allowed).unwrap();
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn matching_rows_are_every_row_holding_a_query_word() {
        let dir = tempfile::tempdir().unwrap();
        let texts: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "note {i}: {}",
                    if i % 7 == 3 {
                        "glaciers melt"
                    } else if i % 11 == 0 {
                        "the harbour"
                    } else {
                        "ships wait"
                    }
                )
            })
            .collect();
        build_keyword_index(dir.path(), texts.iter().map(String::as_str)).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        let matching = index.matching_rows(&"Glacier HARBOURS".into()).unwrap();
        let expected: Vec<u64> = (0..300u64).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
        assert_eq!((matching.len(), matching.rows()), (300, expected));
        assert_eq!(
            index.matching_rows(&"the of and".into()).unwrap().count(),
            0,
            "stop words only"
        );
    }

    #[test]
    fn summed_statistics_score_segments_as_one_index() {
        let texts: Vec<String> = (0..40)
            .map(|i| match i {
                38 | 39 => format!("note {i}: the rare glacier drifts while the common harbour waits"),
                _ => format!(
                    "note {i}: the common harbour waits for ships and tides number {}",
                    i % 7
                ),
            })
            .collect();
        let open = |rows: &[String]| {
            let dir = tempfile::tempdir().unwrap();
            build_keyword_index(dir.path(), rows.iter().map(String::as_str)).unwrap();
            (TantivyKeywordIndex::open(dir.path()).unwrap(), dir)
        };
        let (whole, _w) = open(&texts);
        let (big, _b) = open(&texts[..36]);
        let (small, _s) = open(&texts[36..]);
        let query = "rare glacier harbour";
        let expected: HashMap<u64, f32> = whole
            .search(query, 40)
            .unwrap()
            .into_iter()
            .map(|h| (h.row, h.score))
            .collect();

        let keyword_query = KeywordQuery::text(query);
        let mut stats = big.stats(&keyword_query).unwrap();
        stats.add(&small.stats(&keyword_query).unwrap());
        assert_eq!((stats.docs, stats.doc_freq["glacier"]), (40, 2));
        let mut scored: Vec<(u64, f32)> = big
            .search_with_stats(&keyword_query, 40, None, &stats)
            .unwrap()
            .into_iter()
            .map(|h| (h.row, h.score))
            .collect();
        scored.extend(
            small
                .search_with_stats(&keyword_query, 40, None, &stats)
                .unwrap()
                .into_iter()
                .map(|h| (h.row + 36, h.score)),
        );
        assert_eq!(scored.len(), expected.len());
        for (row, score) in scored {
            assert!(
                (score - expected[&row]).abs() < 1e-4,
                "row {row}: {score} vs {} in one index",
                expected[&row]
            );
        }
        // The small segment's own statistics score its rare term far lower than the whole corpus does.
        let alone: Vec<Hit> = small
            .search(query, 4)
            .unwrap()
            .into_iter()
            .filter(|h| h.row >= 2)
            .collect();
        assert_eq!(alone.len(), 2);
        assert!(
            alone.iter().all(|h| h.score < expected[&(h.row + 36)] - 1.0),
            "{alone:?} vs {expected:?}"
        );
    }

    #[test]
    fn hidden_rows_leave_the_statistics_of_an_index_without_them() {
        // Hidden rows repeat the query's rare term, add words and stop words, and one of them
        // holds a term twice (counted once in its document frequency, twice in its tokens).
        let texts: Vec<String> = (0..30)
            .map(|i| match i {
                3 | 11 | 12 => format!("Glaciers, glacier and the rare glacier {i} melting into the harbour"),
                20 => "The cat and a cat; nothing about harbours".to_string(),
                _ => format!("note {i}: the common harbour waits for ships and tides {}", i % 4),
            })
            .collect();
        let hidden = [3usize, 12, 20, 27];
        let live: Vec<usize> = (0..texts.len()).filter(|i| !hidden.contains(i)).collect();
        let open = |rows: Vec<&str>| {
            let dir = tempfile::tempdir().unwrap();
            build_keyword_index(dir.path(), rows.into_iter()).unwrap();
            (TantivyKeywordIndex::open(dir.path()).unwrap(), dir)
        };
        let (all, _a) = open(texts.iter().map(String::as_str).collect());
        let (without, _w) = open(live.iter().map(|&i| texts[i].as_str()).collect());
        let hidden_stats = KeywordStats::of_texts(
            all.analyzer(),
            hidden.iter().map(|&i| texts[i].as_str()).collect::<Vec<_>>(),
        );
        assert_eq!(
            (
                hidden_stats.docs,
                hidden_stats.doc_freq["glacier"],
                hidden_stats.doc_freq["cat"]
            ),
            (4, 2, 1)
        );

        for query in ["rare glacier harbour", "cat tides", "ships"] {
            let keyword_query = KeywordQuery::text(query);
            let mut stats = all.stats(&keyword_query).unwrap();
            stats.remove(&hidden_stats);
            assert_eq!(stats, without.stats(&keyword_query).unwrap(), "{query}");
            let mut allowed = RowSet::empty(texts.len());
            live.iter().for_each(|&row| allowed.insert(row));
            let scored = all
                .search_with_stats(&keyword_query, 30, Some(&allowed), &stats)
                .unwrap();
            let expected = without.search(query, 30).unwrap();
            assert_eq!(scored.len(), expected.len(), "{query}");
            for (got, want) in scored.iter().zip(&expected) {
                assert_eq!(got.row as usize, live[want.row as usize], "{query}");
                assert!(
                    (got.score - want.score).abs() < 1e-5,
                    "{query}, row {}: {} vs {}",
                    got.row,
                    got.score,
                    want.score
                );
            }
        }
    }

    #[test]
    fn a_mixed_language_index_finds_each_language_by_its_own_forms() {
        let texts = [
            "The old lighthouses along the northern coast were restored last year, and their keepers' houses now host visitors who come to watch the winter storms.",
            "Die alten Leuchttürme an der Nordküste wurden im letzten Jahr restauriert, und in den Häusern der Wärter wohnen jetzt Besucher, die die Winterstürme beobachten.",
            "北部海岸的旧灯塔去年得到修复，守塔人的房子现在接待前来观看冬季风暴的游客。",
            "Старые маяки на северном побережье были отреставрированы в прошлом году, и в домах смотрителей теперь живут туристы, которые приезжают смотреть на зимние штормы.",
            "Bread dough rises faster in a warm kitchen; bakers knead it twice before shaping the loaves for the oven.",
        ];
        let dir = tempfile::tempdir().unwrap();
        let profile = build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.analyzer().name(), KEYWORD_ANALYZER);
        for (code, rows) in [("en", 2), ("de", 1), ("ru", 1), ("und", 1)] {
            assert_eq!(profile.analyzed_as.get(code), Some(&rows), "{code}: {profile:?}");
        }
        // Each query is in one language, with other inflections than its row's text.
        for (query, row) in [
            ("lighthouse keeper house", 0),
            ("Leuchtturm Haus", 1),
            ("灯塔", 2),
            ("маяк смотритель", 3),
            ("kneading breads", 4),
        ] {
            let hits = index.search(query, 5).unwrap();
            assert_eq!(hits.first().map(|h| h.row), Some(row), "{query}: {hits:?}");
        }
        // A CJK query matches by character pairs only: 海岸 (coast) is in row 2, 岸海 is not.
        assert_eq!(
            index
                .search("海岸", 5)
                .unwrap()
                .iter()
                .map(|h| h.row)
                .collect::<Vec<_>>(),
            [2]
        );
        assert!(index.search("岸海", 5).unwrap().is_empty());
    }

    #[test]
    fn the_row_is_a_column_alone_and_indexes_that_also_indexed_and_stored_it_still_search() {
        let texts = ["harbour tides rising", "boats in the harbour", "glaciers melt slowly"];
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let built = TantivyKeywordIndex::open(dir.path()).unwrap();
        let schema = built.reader.searcher().schema().clone();
        let row = schema.get_field_entry(schema.get_field("row").unwrap());
        assert!(row.is_fast() && !row.is_indexed() && !row.is_stored());

        // The schema indexes were built with before: the row indexed and stored as well,
        // the text with positions.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V1);
        for index in [&built, &old] {
            let rows: Vec<u64> = index.search("harbour", 5).unwrap().iter().map(|h| h.row).collect();
            assert_eq!(rows.len(), 2);
            assert!(rows.contains(&0) && rows.contains(&1), "{rows:?}");
            let mut allowed = RowSet::empty(3);
            allowed.insert(1);
            let rows: Vec<u64> = index
                .search_in("harbour", 5, &allowed)
                .unwrap()
                .iter()
                .map(|h| h.row)
                .collect();
            assert_eq!(rows, [1]);
            assert_eq!(index.matching_rows(&"glaciers".into()).unwrap().rows(), [2]);
        }
    }

    #[test]
    fn an_index_written_with_the_english_analyzer_keeps_reading_english() {
        let texts = ["Running runners ran quickly", "Die Häuser am See", "東京タワー"];
        let dir = tempfile::tempdir().unwrap();
        super::super::build_english_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.analyzer().name(), "quarry_en_v1");
        assert!(index.analyzer().profile().is_none());
        assert_eq!(index.search("run", 3).unwrap()[0].row, 0, "English stems");
        // The English analyzer folds accents first, then stems as English: Häuser -> hauser.
        assert_eq!(index.search("hauser", 3).unwrap()[0].row, 1);
        assert!(
            index.search("haus", 3).unwrap().is_empty(),
            "no German stemming in an English index"
        );
        // It reads a run of CJK as one word, as it always did.
        assert_eq!(index.search("東京タワー", 3).unwrap()[0].row, 2);
        assert!(index.search("東京", 3).unwrap().is_empty());
    }

    /// An index of `texts` in a schema indexes were written with before (the row indexed and
    /// stored as well as a column, the text indexed with `option`), read by `revision` of the
    /// multilingual analyzer.
    fn written_before(dir: &Path, texts: &[&str], option: IndexRecordOption, revision: Revision) {
        let mut builder = Schema::builder();
        let row_field = builder.add_u64_field("row", tantivy::schema::INDEXED | tantivy::schema::STORED | FAST);
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(revision.analyzer_name())
            .set_index_option(option);
        let text_field = builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
        let old = Index::create_in_dir(dir, builder.build()).unwrap();
        old.tokenizers()
            .register(revision.analyzer_name(), TermListTokenizer::default());
        let detected: Vec<_> = texts
            .iter()
            .map(|text| super::super::analysis::detect_in(text, revision))
            .collect();
        let (profile, languages) = LanguageProfile::of_detected_as(&detected, revision);
        let mut reader = KeywordAnalyzer::Multilingual(Arc::new(profile.clone())).text_reader();
        let mut writer = old
            .writer_with_num_threads::<tantivy::TantivyDocument>(1, 15_000_000)
            .unwrap();
        for (row, text) in texts.iter().enumerate() {
            let mut terms = String::new();
            reader.for_each_term_as(text, languages[row], |term, _| {
                super::super::term_list::push_term(&mut terms, term)
            });
            writer
                .add_document(tantivy::doc!(row_field => row as u64, text_field => terms))
                .unwrap();
        }
        writer.commit().unwrap();
        profile.save(dir).unwrap();
    }

    /// `texts` as `revision` of the analyzer wrote them (with positions), opened.
    fn opened_as_written_by(texts: &[&str], revision: Revision) -> (tempfile::TempDir, TantivyKeywordIndex) {
        let dir = tempfile::tempdir().unwrap();
        written_before(dir.path(), texts, IndexRecordOption::WithFreqsAndPositions, revision);
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        (dir, index)
    }

    /// An index of `texts` written now, opened.
    fn built_now(texts: &[&str]) -> (tempfile::TempDir, TantivyKeywordIndex) {
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        (dir, index)
    }

    /// The rows (at most five) a search of `query` finds, in row order.
    fn rows(index: &TantivyKeywordIndex, query: &str) -> Vec<u64> {
        let mut rows: Vec<u64> = index.search(query, 5).unwrap().iter().map(|hit| hit.row).collect();
        rows.sort();
        rows
    }

    /// Arabic's definite nouns and digits and Turkish's capital İ, in an index written now and in one
    /// written by the analyzer's first revision (which reads its queries as it read its rows).
    #[test]
    fn arabic_definite_nouns_and_turkish_capitals_find_their_other_forms() {
        let texts = [
            "تقع المدينة على ضفاف النهر، وفي المدينة جامعة كبيرة ومكتبة عامة قديمة جدا.",
            "زار الطلاب مدينة الإسكندرية عام ٢٠٢٤ وشاهدوا المكتبات والمتاحف والشواطئ الجميلة هناك.",
            "Ankara Türkiye'nin başkentidir ve İstanbul en kalabalık şehirdir, çok büyüktür.",
        ];
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.analyzer().name(), KEYWORD_ANALYZER);
        // "city" finds "the city" and "the library" finds "a library" and "libraries".
        assert_eq!(rows(&index, "مدينة"), [0, 1]);
        assert_eq!(rows(&index, "المدينة"), [0, 1]);
        assert_eq!(rows(&index, "المكتبة"), [0, 1]);
        assert_eq!(rows(&index, "istanbul"), [2]);
        assert_eq!(rows(&index, "İSTANBUL"), [2]);
        assert_eq!(rows(&index, "kalabalik"), [2]);
        // Arabic-Indic digits read as ASCII ones, Persian letters as Arabic's.
        assert_eq!(rows(&index, "2024"), [1]);
        assert_eq!(rows(&index, "۲۰۲۴"), [1]);
        // The first revision's index, and its queries, as they were.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V1);
        assert_eq!(old.analyzer().name(), MULTILINGUAL_V1);
        assert!(rows(&old, "المكتبة").is_empty());
        assert_eq!(rows(&old, "İstanbul"), [2]);
        assert!(rows(&old, "istanbul").is_empty());
        assert!(rows(&old, "۲۰۲۴").is_empty());
    }

    /// A prefix typed with letters the stemmer takes off the front (Hebrew's particles,
    /// Indonesian's prefixes, Arabic's article) completes as the stems its words have: no
    /// term begins with the letters as typed, since the index holds stems.
    #[test]
    fn a_prefix_with_letters_a_stemmer_takes_off_the_front_completes_as_its_stem() {
        let texts = [
            "Pertumbuhan perekonomian Indonesia pada tahun ini cukup baik menurut para ahli ekonomi dan pemerintah daerah.",
            "זה היה ספר מעניין מאוד שקראתי בספרייה העירונית בשבוע שעבר עם חבריי מהכיתה.",
            "تقع المدينة على ضفاف النهر، وفي المدينة جامعة كبيرة ومكتبة عامة قديمة جدا.",
        ];
        let (_dir, index) = built_now(&texts);
        for (prefix, word) in [
            ("المدين", "المدينة"),
            ("والمكتب", "ومكتبة"),
            ("perekonom", "perekonomian"),
            ("pertumbuh", "pertumbuhan"),
            ("הספרי", "בספרייה"),
            ("העירו", "העירונית"),
        ] {
            let terms = index.analyzer().query_terms(word);
            let completions = index.prefix_completions(prefix, 8).unwrap().unwrap();
            assert!(
                completions.iter().any(|(t, _)| terms.contains(t)),
                "{prefix}: {completions:?}, none of {terms:?}"
            );
            assert!(
                completions.iter().all(|(t, _)| !t.starts_with(prefix)),
                "{completions:?}"
            );
        }
        // A prefix with nothing taken off the front completes as typed only.
        assert_eq!(index.analyzer().prefix_stems("ספרי"), Vec::<String>::new());
        assert_eq!(index.analyzer().prefix_stems("lib"), Vec::<String>::new());
    }

    /// The languages Snowball 3.0 added, and German typed without umlauts, in an index
    /// written now and in one written by the second revision (which stems none of them).
    #[test]
    fn snowball_3_languages_find_their_other_forms() {
        let texts = [
            "Perekonomian daerah itu tumbuh pesat, dan setiap keluarga kini membeli buku untuk anak-anaknya di pasar.",
            "Dia membaca bukunya di perpustakaan kota setiap hari setelah sekolah selesai dan sebelum makan malam.",
            "W miastach nad rzeką mieszkańcy od wieków budowali mosty, a każdy ich rynek wygląda inaczej.",
            "Die Familie Müller wohnt seit vielen Jahren in einem alten Haus am Rand der Stadt, nahe dem Fluss.",
            "पुस्तकालय में नई किताबें आई हैं और बच्चे हर शाम वहाँ पढ़ने के लिए जाते हैं, यह उनकी पसंदीदा जगह है।",
        ];
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.analyzer().name(), KEYWORD_ANALYZER);
        let analyzed_as = &index.analyzer().profile().unwrap().analyzed_as;
        assert_eq!(
            analyzed_as.keys().map(String::as_str).collect::<Vec<_>>(),
            ["de", "hi", "id", "pl"],
            "{analyzed_as:?}"
        );
        // Indonesian's suffixes and prefixes, Polish cases, Hindi plurals; `Mueller` as `Müller`.
        assert_eq!(rows(&index, "buku"), [0, 1]);
        assert_eq!(rows(&index, "ekonomi"), [0]);
        assert_eq!(rows(&index, "miasto"), [2]);
        assert_eq!(rows(&index, "किताब"), [4]);
        assert_eq!(rows(&index, "Mueller"), [3]);
        // The second revision's index reads its rows and queries as it did.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V2);
        assert_eq!(old.analyzer().name(), MULTILINGUAL_V2);
        assert_eq!(rows(&old, "buku"), [0]);
        assert!(rows(&old, "ekonomi").is_empty());
        assert!(rows(&old, "miasto").is_empty());
        assert!(rows(&old, "किताब").is_empty());
        assert!(rows(&old, "Mueller").is_empty());
        assert_eq!(rows(&old, "Müller"), [3]);
    }

    /// Short rows of a script other than Latin, each too short for a sure language, are
    /// stemmed as the language most of them are guessed as: a query finds their words in
    /// another form.
    #[test]
    fn short_rows_are_stemmed_as_most_of_their_script_is_guessed() {
        let texts = [
            "ذَهَبَ الْوَلَدُ إِلَى الْمَدْرَسَةِ فِي الصَّبَاحِ",
            "الطلاب في المكتبة",
            "मैं विश्वविद्यालय में हिंदी पढ़ रहा हूँ और किताबें पढ़ता हूँ",
        ];
        let (_dir, index) = built_now(&texts);
        assert_eq!(rows(&index, "مدرسة"), [0]);
        assert_eq!(rows(&index, "ولد"), [0]);
        assert_eq!(rows(&index, "مكتبة"), [1]);
        assert_eq!(rows(&index, "किताब"), [2]);
    }

    /// Pointed Hebrew (scripture, poetry, children's books) and the Quran's Uthmani spelling
    /// are found as people type, without points or small marks; the fourth revision's index
    /// found neither.
    #[test]
    fn pointed_hebrew_and_quranic_marks_are_found_unpointed() {
        let texts = [
            "הַיֶּלֶד הָלַךְ לְבֵית הַסֵּפֶר בַּבֹּקֶר",
            "בְּרֵאשִׁ֖ית בָּרָ֣א אֱלֹהִ֑ים אֵ֥ת הַשָּׁמַ֖יִם וְאֵ֥ת הָאָֽרֶץ",
            "لَا رَيْبَۛ فِيهِۛ هُدًى لِّلْمُتَّقِينَ",
        ];
        let (_dir, index) = built_now(&texts);
        assert_eq!(rows(&index, "הספר"), [0]);
        assert_eq!(rows(&index, "בראשית"), [1]);
        assert_eq!(rows(&index, "השמים"), [1]);
        assert_eq!(rows(&index, "ريب فيه"), [2]);
        // The pointed query finds them too.
        assert_eq!(rows(&index, "הַסֵּפֶר"), [0]);
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V4);
        assert!(rows(&old, "הספר").is_empty());
        assert!(rows(&old, "ريب").is_empty());
    }

    /// An index of `texts` written now reads every one as the language `code` and finds each
    /// query's row; one written by the revision before `first`, which stemmed the language by
    /// nothing, finds none of them.
    fn stemmed_from(first: Revision, texts: &[&str], code: &str, found: &[(&str, u64)]) {
        let (_dir, index) = built_now(texts);
        let profile = index.analyzer().profile().unwrap();
        assert_eq!(
            profile.analyzed_as.get(code),
            Some(&(texts.len() as u64)),
            "{profile:?}"
        );
        let (_old_dir, old) = opened_as_written_by(texts, Revision::ALL[first.index() - 1]);
        for &(query, row) in found {
            assert_eq!(rows(&index, query), [row], "{query}");
            assert!(rows(&old, query).is_empty(), "{query}");
        }
    }

    /// Persian is stemmed from the sixth revision (a light stemmer: plural, comparative and
    /// `ی` endings), so a word finds its plural written with or without a non-joiner.
    #[test]
    fn persian_words_find_their_other_forms() {
        let texts = [
            "کتابهای تازه در کتابخانه شهر هست و مردم هر روز برای خواندن آنها به آنجا می روند.",
            "این درخت بزرگترین درخت باغ است و پرندگان زیادی روی شاخه هایش لانه دارند.",
            "دانشجویان ایرانی در دانشگاه تهران درس می خوانند و امتحانات سختی دارند.",
        ];
        stemmed_from(
            Revision::V6,
            &texts,
            "fa",
            &[("کتاب", 0), ("بزرگ", 1), ("دانشجو", 2), ("امتحان", 2)],
        );
    }

    /// Telugu is stemmed from the sixth revision (a light stemmer: plural and case endings,
    /// long vowels read short).
    #[test]
    fn telugu_words_find_their_other_forms() {
        let texts = [
            "పిల్లలు ఉదయం బడికి వెళ్ళారు మరియు సాయంత్రం ఆటలు ఆడారు.",
            "రాముని కథ చాలా పాతది మరియు అందరికీ బాగా తెలుసు.",
            "నగరంలో కొత్త రోడ్లు వేశారు మరియు ప్రజలు సంతోషంగా ఉన్నారు.",
        ];
        stemmed_from(Revision::V6, &texts, "te", &[("పిల్ల", 0), ("రాముడు", 1), ("నగరం", 2)]);
    }

    /// Thai is read as its words from the seventh revision, no longer as pairs of code
    /// points: `ตา` ("eye") finds the row about eyes, not those holding `ตาราง` ("table") or
    /// `ตาม` ("follow"), where the sixth found all three.
    #[test]
    fn thai_words_are_found_whole() {
        let texts = [
            "ฉันชอบดูตารางเวลารถไฟที่สถานี",
            "เด็กคนนั้นมีตาสีฟ้าสวยมาก",
            "เขาเดินตามแม่ไปตลาดทุกเช้า",
        ];
        let (_dir, index) = built_now(&texts);
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V6);
        assert_eq!(rows(&index, "ตา"), [1]);
        assert_eq!(rows(&old, "ตา"), [0, 1, 2]);
        // `ตลาด` ("market"): the sixth also found the pair `ลา` of `เวลา` ("time").
        assert_eq!(rows(&index, "ตลาด"), [2]);
        assert_eq!(rows(&old, "ตลาด"), [0, 2]);
        assert_eq!(rows(&index, "รถไฟ"), [0]);
        // A query of one run is read as its words: `ตารางเวลา` ("timetable"), where the sixth
        // read pairs the other rows hold too.
        assert_eq!(index.analyzer().query_terms("ตารางเวลา"), ["ตาราง", "เวลา"]);
        assert_eq!(rows(&index, "ตารางเวลา"), [0]);
        assert_eq!(rows(&old, "ตารางเวลา"), [0, 1, 2]);
        // Letters typed so far are the beginning of one word, however the dictionary cuts them.
        assert_eq!(index.analyzer().prefix_form("ตาร").as_deref(), Some("ตาร"));
        assert_eq!(old.analyzer().prefix_form("ตาร"), None);
    }

    /// Bengali is stemmed from the seventh revision (a light stemmer: verb, plural and case
    /// endings, spellings that sound alike made one).
    #[test]
    fn bengali_words_find_their_other_forms() {
        let texts = [
            "ছেলেরা মাঠে ফুটবল খেলছে এবং মেয়েরা গাছের নিচে বসে গল্প করছে।",
            "বাংলাদেশের রাজধানী ঢাকা একটি বড় শহর এবং এখানে অনেক মানুষ থাকে।",
            "আমি গতকাল লাইব্রেরি থেকে তিনটি বই এনেছিলাম এবং বইগুলো খুব ভালো।",
        ];
        stemmed_from(
            Revision::V7,
            &texts,
            "bn",
            &[("ফুটবলের", 0), ("বাংলাদেশ", 1), ("বইগুলি", 2), ("করেছিলাম", 0)],
        );
    }

    /// Hebrew is stemmed from the eighth revision (its attached particles taken off the front):
    /// a word finds its forms with `ה` ("the"), `ב` ("in"), `ו` ("and") and others, pointed
    /// or not, and a query word carrying them finds the bare word.
    #[test]
    fn hebrew_words_find_their_forms_with_particles() {
        let texts = [
            "הילדים קראו בספר החדש של הסופרת בספרייה העירונית כל אחר הצהריים.",
            "העיר שוכנת על גדת הנהר וידועה בבתים ובגשרים העתיקים שלה ובשווקים הצבעוניים.",
            "הַמֶּמְשָׁלָה הֶחְלִיטָה עַל תַּקְצִיב חָדָשׁ לְבָתֵּי הַחוֹלִים וּלְבָתֵּי הַסֵּפֶר בַּצָּפוֹן.",
        ];
        stemmed_from(
            Revision::V8,
            &texts,
            "he",
            &[("לסופרת", 0), ("גשרים", 1), ("והתקציב", 2)],
        );
        // "Book" finds "in the book" and the pointed "the book"; the seventh found neither.
        let (_dir, index) = built_now(&texts);
        assert_eq!(rows(&index, "ספר"), [0, 2]);
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V7);
        assert!(rows(&old, "ספר").is_empty());
        // A word of two letters is whole, though it begins with a particle's letter.
        assert_eq!(rows(&index, "כל"), [0]);
        assert!(rows(&index, "ל").is_empty());
    }

    /// Ukrainian, Bulgarian, Slovak and nine more languages that inflect by endings are read
    /// from the ninth revision, each word cut to its first five letters: a word finds its
    /// other cases and numbers, a prefix longer than five letters finds them too, and a word
    /// holding a digit is whole.
    #[test]
    fn words_of_languages_without_a_stemmer_find_their_forms_by_their_first_letters() {
        let texts = [
            "Україна розташована у Східній Європі, а її столиця Київ стоїть на березі Дніпра.",
            "Уряд України затвердив новий бюджет для шкіл і лікарень у великих містах країни.",
            "Туристи з усього світу приїжджають до Києва, щоб побачити старі собори та музеї.",
        ];
        stemmed_from(
            Revision::V9,
            &texts,
            "uk",
            &[("столицею", 0), ("Дніпром", 0), ("бюджету", 1), ("туристів", 2)],
        );
        // "Ukraine" in two cases finds both rows, which hold two others; the eighth revision
        // found neither.
        let (_dir, index) = built_now(&texts);
        assert_eq!(rows(&index, "Україною"), [0, 1]);
        assert_eq!(rows(&index, "Україні"), [0, 1]);
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V8);
        assert!(rows(&old, "Україною").is_empty());
        // A prefix longer than five letters is the words it begins, as cut.
        let completions = index.prefix_completions("Україн", 8).unwrap().unwrap();
        assert_eq!(completions, [("украї".to_string(), 2)]);
        assert_eq!(index.analyzer().prefix_stems("укр"), Vec::<String>::new());
        // Where a word's first letters end (did you mean keeps the ending typed after them).
        assert_eq!(index.analyzer().cut_end("України"), Some("Украї".len()));
        assert_eq!(index.analyzer().cut_end("Київ"), None);
        assert_eq!(index.analyzer().cut_end("Ukraine"), None);

        let slovak = [
            "Bratislava je hlavné mesto Slovenska a leží na brehu Dunaja pri hraniciach s Rakúskom.",
            "V Bratislave sa každý rok koná veľa koncertov, výstav a športových podujatí pre ľudí.",
            "Nový model iphone15 sa predáva v obchodoch v meste, starší iphone14 je lacnejší.",
        ];
        let (_slovak_dir, slovak) = built_now(&slovak);
        let profile = slovak.analyzer().profile().unwrap();
        assert_eq!(profile.analyzed_as.get("sk"), Some(&3), "{profile:?}");
        assert_eq!(rows(&slovak, "Bratislavy"), [0, 1]);
        assert_eq!(rows(&slovak, "koncerty"), [1]);
        assert_eq!(rows(&slovak, "výstava"), [1]);
        // Words holding digits stay whole.
        assert_eq!(rows(&slovak, "iphone14"), [2]);
        assert!(rows(&slovak, "iphone13").is_empty());
        assert_eq!(slovak.analyzer().cut_end("Bratislavy"), Some("Brati".len()));

        // One Latin row among English ones: its word is found by its first letters, but a
        // word's first letters end nowhere for did you mean (most rows of its letters are
        // not cut).
        let (_mixed_dir, mixed) = built_now(&[
            "The runners were running along the river bank every morning before the sun came up.",
            "After the race the runners rested in the shade and talked about running the next one.",
            "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, tertiam qui ipsorum lingua Celtae, nostra Galli appellantur.",
        ]);
        assert_eq!(mixed.analyzer().profile().unwrap().analyzed_as.get("la"), Some(&1));
        assert_eq!(rows(&mixed, "divisionem"), [2]);
        assert_eq!(mixed.analyzer().cut_end("running"), None);
        assert_eq!(mixed.analyzer().cut_end("divisionem"), None);
    }

    /// Cyrillic words as Ukrainian writes them and as dictionaries mark them, from the tenth
    /// revision: an apostrophe, typed any of the ways texts type it, is inside its word, and
    /// a stress mark on a letter is left out. The ninth cut `пам'ять` ("memory") into `пам`
    /// and `ять`, so `пам'яті` ("of memory", `пам` and `яті`) found only rows holding a
    /// `пам` anywhere, and `Ки́їв` was no `Київ`.
    #[test]
    fn cyrillic_words_with_apostrophes_and_stress_marks_are_whole() {
        let texts = [
            "Пам'ять про героїв живе у серцях людей, і кожного року в місті відбуваються урочистості.",
            "Після об’єднання громад у місті відкрили нову школу, лікарню та великий ринок для селян.",
            "Украї\u{301}на — держава у Східній Європі, де працюють університети, театри та бібліотеки.",
            "Пам звали старого рибалку, який жив на березі моря і щодня ловив рибу для села.",
        ];
        let (_dir, index) = built_now(&texts);
        let profile = index.analyzer().profile().unwrap();
        assert_eq!(profile.analyzed_as.get("uk"), Some(&4), "{profile:?}");
        // Other cases, other apostrophes; not the row of the name `Пам`.
        assert_eq!(rows(&index, "пам'яті"), [0]);
        assert_eq!(rows(&index, "памʼяттю"), [0]);
        assert_eq!(rows(&index, "об'єднанню"), [1]);
        assert_eq!(rows(&index, "обʼєднання"), [1]);
        // Typed without the apostrophe too, as many do.
        assert_eq!(rows(&index, "обєднання"), [1]);
        // The stressed row is found unstressed, and the other way round.
        assert_eq!(rows(&index, "України"), [2]);
        assert_eq!(rows(&index, "Украї\u{301}ною"), [2]);
        // A prefix with an apostrophe is one word's beginning.
        let completions = index.prefix_completions("пам'я", 8).unwrap().unwrap();
        assert_eq!(completions, [("памят".to_string(), 1)]);
        // Did you mean keeps what is typed after a word's first five letters, the apostrophe
        // counting as no letter.
        assert_eq!(index.analyzer().cut_end("пам'яттю"), Some("пам'ят".len()));
        // The ninth revision cut at the apostrophe and kept the stress mark.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V9);
        assert_eq!(rows(&old, "пам'яті"), [0, 3]);
        assert!(rows(&old, "обʼєднання").is_empty());
        assert!(rows(&old, "України").is_empty());
        // English keeps its apostrophes as they were read: `don't` is `don` and `t`.
        let (_english_dir, english) = built_now(&[
            "We don't know where the river starts, but the maps of the old town show its course.",
            "The don of the college walked along the river every evening before dinner.",
        ]);
        assert_eq!(rows(&english, "don"), [0, 1]);
    }

    /// Vietnamese keeps its tone and vowel marks from the sixth revision: `việt` and `viết`
    /// ("to write") are two words, which the fifth folded into one; a word typed without
    /// marks is looked up by the marked terms it is written as, and a prefix finds them too.
    #[test]
    fn vietnamese_words_keep_their_marks() {
        let texts = [
            "Việt Nam là một quốc gia nằm ở phía đông bán đảo Đông Dương, thuộc khu vực Đông Nam Á.",
            "Tôi thích viết thư cho bạn bè vào mỗi buổi tối sau khi làm việc xong ở văn phòng.",
            "Mẹ tôi đi chợ mua cá và rau để nấu bữa cơm chiều cho cả gia đình cùng ăn.",
        ];
        let (_dir, index) = built_now(&texts);
        let profile = index.analyzer().profile().unwrap();
        assert_eq!(profile.analyzed_as.get("vi"), Some(&3), "{profile:?}");
        assert_eq!(rows(&index, "Việt"), [0]);
        assert_eq!(rows(&index, "viết"), [1]);
        assert_eq!(rows(&index, "đông"), [0]);
        // Typed without marks: the marked terms it is written as, and nothing else.
        let forms = index.marked_forms("Viet", 8).unwrap().unwrap();
        let mut terms: Vec<&str> = forms.iter().map(|(term, _)| term.as_str()).collect();
        terms.sort_unstable();
        assert_eq!(terms, ["viết", "việt"]);
        let forms = index.marked_forms("dong", 8).unwrap().unwrap();
        assert_eq!(forms, [("đông".to_string(), 1)]);
        assert_eq!(index.marked_forms("việt", 8).unwrap(), None);
        assert_eq!(index.marked_forms("viet nam", 8).unwrap(), None);
        let completions = index.prefix_completions("vie", 8).unwrap().unwrap();
        let mut terms: Vec<&str> = completions.iter().map(|(term, _)| term.as_str()).collect();
        terms.sort_unstable();
        assert_eq!(terms, ["viết", "việc", "việt"]);
        // The fifth revision folded the marks: one term of both words.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V5);
        assert_eq!(rows(&old, "việt"), [0, 1]);
        assert_eq!(old.marked_forms("viet", 8).unwrap(), None);
        // An index that keeps no language's marks looks nothing up so.
        let (_english_dir, english) =
            built_now(&["The cafe on the corner serves coffee and cake every morning of the week."]);
        assert_eq!(english.marked_forms("cafe", 8).unwrap(), None);
    }

    /// Soft hyphens, text in decomposed form, half-width kana, full-width digits and
    /// superscripts in an index written now (words bounded as Unicode bounds them) and in one
    /// written by the third revision (which cut words at each of them).
    #[test]
    fn words_with_marks_and_invisible_characters_are_found_as_typed() {
        let texts = [
            "Das Donau\u{AD}dampf\u{AD}schiff\u{AD}fahrts\u{AD}gesellschaft legte gestern am Ufer der Stadt an und viele Leute kamen.",
            "Le re\u{301}sume\u{301} du rapport parle de la fac\u{327}ade de la gare et de ses ponts anciens sur la rivière.",
            "ｶﾞｽ料金は２０２４年に上がりました。",
            "The flat has 60 m² of floor space and a balcony facing the river, close to the old town.",
            "کتاب\u{200C}های تازه در کتابخانه شهر هست و مردم هر روز می\u{200C}آیند.",
            "ในปี๒๕๖๗ เมืองนี้มีนักท่องเที่ยวมาก",
        ];
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.analyzer().name(), MULTILINGUAL_V10);
        assert_eq!(rows(&index, "Donaudampfschifffahrtsgesellschaft"), [0]);
        assert_eq!(rows(&index, "résumé"), [1]);
        assert_eq!(rows(&index, "façade"), [1]);
        assert_eq!(rows(&index, "ガス"), [2]);
        assert_eq!(rows(&index, "2024年"), [2]);
        assert_eq!(rows(&index, "m2"), [3]);
        // A non-joiner after an Arabic-script letter still splits: "book" finds "books".
        assert_eq!(rows(&index, "کتاب"), [4]);
        // Thai digits are a number's: `2567` finds `๒๕๖๗`.
        assert_eq!(rows(&index, "2567"), [5]);
        // The third revision's index, and its queries, as they were: words cut apart.
        let (_old_dir, old) = opened_as_written_by(&texts, Revision::V3);
        assert_eq!(old.analyzer().name(), MULTILINGUAL_V3);
        assert!(rows(&old, "Donaudampfschifffahrtsgesellschaft").is_empty());
        assert!(rows(&old, "façade").is_empty());
        assert!(rows(&old, "ガス").is_empty());
        assert!(rows(&old, "m2").is_empty());
        assert!(rows(&old, "2567").is_empty());
        // A Thai digit alone is looked up by the pairs holding it where the index reads it in
        // pairs (the third revision), and is no pair character where it does not.
        let holding = old.pair_terms_holding("๒", 64).unwrap().unwrap();
        assert!(holding.iter().any(|(term, _)| term == "๒๕"), "{holding:?}");
        assert_eq!(index.pair_terms_holding("๒", 64).unwrap(), None);
        // Each revision reads its own queries as its rows: the old index still finds the
        // pieces it wrote.
        assert_eq!(rows(&old, "dampf"), [0]);
    }

    /// A character read in pairs is held by the pairs it begins and ends, and by itself
    /// where it stands alone; a phrase of it finds every row holding it.
    #[test]
    fn a_lone_pair_character_is_held_by_the_pairs_holding_it() {
        let texts = [
            "東大寺は奈良にある。",
            "とても古い寺",
            "地図の記号（寺）を見る。",
            "猫が窓のそばで寝ている。",
            "The temple is old.",
        ];
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        let mut held = index.pair_terms_holding("寺", 64).unwrap().unwrap();
        held.sort();
        let want: Vec<(String, u64)> = ["い寺", "大寺", "寺", "寺は"]
            .iter()
            .map(|t| (t.to_string(), 1))
            .collect();
        assert_eq!(held, want);
        assert_eq!(index.pair_terms_holding("寺", 2).unwrap().unwrap().len(), 2);
        assert_eq!(index.pair_terms_holding("temple", 64).unwrap(), None);
        assert_eq!(index.pair_terms_holding("東京", 64).unwrap(), None);
        assert_eq!(index.pair_terms_holding("犬", 64).unwrap(), Some(vec![]));
        let rows = |phrase: &str| index.phrase_rows(phrase).unwrap().map(|r| r.rows());
        assert_eq!(rows("寺"), Some(vec![0, 1, 2]));
        assert_eq!(rows("猫"), Some(vec![3]));
        assert_eq!(rows("犬"), Some(vec![]));
        // Two characters are one pair, as before.
        assert_eq!(rows("大寺"), Some(vec![0]));
        // Several characters at once, from one walk: each answers as it does alone, in order
        // (`寺` ends `大寺`, which `大` begins), a character read in no pairs or past the
        // walk's 64 None.
        let characters = ["寺", "temple", "大", "猫", "犬", "奈", "寝"];
        let each = index.pair_terms_holding_each(&characters, 64).unwrap();
        let alone: Vec<_> = characters
            .iter()
            .map(|c| index.pair_terms_holding(c, 64).unwrap())
            .collect();
        let sorted = |mut terms: Vec<(String, u64)>| {
            terms.sort();
            terms
        };
        assert_eq!(each.len(), characters.len());
        for ((character, together), alone) in characters.iter().zip(each).zip(alone) {
            assert_eq!(together.map(sorted), alone.map(sorted), "{character}");
        }
        let terms = |c: &str| sorted(index.pair_terms_holding(c, 64).unwrap().unwrap());
        assert_eq!(
            terms("大").iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(),
            ["大寺", "東大"]
        );
        let many: Vec<String> = (0..70)
            .map(|i| char::from_u32(0x4E00 + i).unwrap().to_string())
            .collect();
        let many: Vec<&str> = std::iter::once("寺").chain(many.iter().map(String::as_str)).collect();
        let each = index.pair_terms_holding_each(&many, 64).unwrap();
        assert_eq!(each[0].as_ref().map(Vec::len), Some(4));
        assert!(each[1..64].iter().all(Option::is_some) && each[64..].iter().all(Option::is_none));
    }

    #[test]
    fn a_phrase_finds_the_rows_holding_its_words_in_order() {
        let texts = [
            "The state of the art in harbour design has moved on since the old breakwaters were built.",
            "Art of the state: how the harbour authority commissioned paintings of its own offices.",
            "State art collections were lent to the harbour museum for the summer exhibition.",
            "北部海岸的旧灯塔去年得到修复，守塔人的房子现在接待前来观看冬季风暴的游客。",
        ];
        let rows = |index: &TantivyKeywordIndex, phrase: &str| index.phrase_rows(phrase).unwrap().map(|r| r.rows());
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().copied()).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert!(index.positions);
        // Words in order, stop words skipped (they leave no gap), stems matched.
        assert_eq!(rows(&index, "state of the art"), Some(vec![0, 2]));
        assert_eq!(rows(&index, "art of the state"), Some(vec![1]));
        assert_eq!(rows(&index, "the harbour authorities"), Some(vec![1]));
        assert_eq!(rows(&index, "Harbour"), Some(vec![0, 1, 2]));
        assert_eq!(rows(&index, "harbour state"), Some(vec![]));
        // A CJK phrase is its character pairs one after another: a substring of the text.
        assert_eq!(rows(&index, "岸的旧灯"), Some(vec![3]));
        assert_eq!(rows(&index, "海岸灯塔"), Some(vec![]));
        assert_eq!(rows(&index, "… !?"), None, "no word");

        // An index written without positions finds a phrase's rows by all of its words.
        let old_dir = tempfile::tempdir().unwrap();
        written_before(old_dir.path(), &texts, IndexRecordOption::WithFreqs, Revision::V1);
        let old = TantivyKeywordIndex::open(old_dir.path()).unwrap();
        assert!(!old.positions);
        assert_eq!(rows(&old, "state of the art"), Some(vec![0, 1, 2]));
        assert_eq!(rows(&old, "harbour state"), Some(vec![0, 1, 2]));
        assert_eq!(rows(&old, "海岸灯塔"), Some(vec![]));
    }

    #[test]
    fn phrase_rows_are_the_rows_whose_terms_hold_a_reading_of_the_phrase_in_a_row() {
        // Rows of a small vocabulary (stop words, inflections and CJK among its words) against
        // a scan of each row's terms as the index read them.
        let vocabulary = [
            "harbour",
            "harbours",
            "tide",
            "the",
            "of",
            "boats",
            "boat",
            "rising",
            "quay",
            "東京都",
            "京都",
            "港",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut words = |count: usize| -> String {
            (0..count)
                .map(|_| vocabulary[below(vocabulary.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let texts: Vec<String> = (0..400).map(|i| words(3 + i % 10)).collect();
        let phrases: Vec<String> = (0..300).map(|i| words(1 + i % 3)).collect();
        let dir = tempfile::tempdir().unwrap();
        build_keyword_index(dir.path(), texts.iter().map(String::as_str)).unwrap();
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        let mut reader = index.analyzer().text_reader();
        let row_terms: Vec<Vec<String>> = texts
            .iter()
            .map(|text| {
                let mut terms = Vec::new();
                reader.for_each_term(text, |term, _| terms.push(term.to_string()));
                terms
            })
            .collect();
        let mut found_some = 0;
        for phrase in &phrases {
            let readings = index.analyzer().phrase_readings(phrase);
            let expected: Vec<u64> = (0..texts.len() as u64)
                .filter(|&row| {
                    readings.iter().any(|reading| {
                        let terms: Vec<&str> = reading.iter().map(|(_, t)| t.as_str()).collect();
                        row_terms[row as usize]
                            .windows(terms.len())
                            .any(|w| w.iter().eq(terms.iter()))
                    })
                })
                .collect();
            let found = index.phrase_rows(phrase).unwrap().map(|r| r.rows());
            match readings.is_empty() {
                true => assert_eq!(found, None, "{phrase:?}"),
                false => assert_eq!(found, Some(expected.clone()), "{phrase:?}: {readings:?}"),
            }
            found_some += usize::from(!expected.is_empty() && expected.len() < texts.len());
        }
        assert!(found_some > 100, "phrases found in some rows, not all: {found_some}");
    }
}
