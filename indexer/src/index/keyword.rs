//! [`KeywordIndex`] on tantivy: BM25 over the chunk texts, English analyzer
//! (lowercase, ASCII folding, stop words, Snowball stemming). User text is never parsed as
//! query syntax: it is tokenized by the same analyzer and searched as plain terms.

use std::path::Path;

use std::sync::Arc;

use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, INDEXED, STORED};
use tantivy::tokenizer::{AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer};
use tantivy::{doc, Index, IndexReader, TantivyDocument, Term};

use super::{Hit, RowSet};
use crate::error::{IndexerError, Result};

/// Name (and version) of the analyzer; recorded in the manifest.
pub const KEYWORD_ANALYZER: &str = "quarry_en_v1";

fn err(stage: &'static str) -> impl Fn(tantivy::TantivyError) -> IndexerError {
    move |e| IndexerError::KeywordIndex { stage, reason: e.to_string() }
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(StopWordFilter::new(Language::English).expect("tantivy ships English stop words"))
        .filter(Stemmer::new(Language::English))
        .build()
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_u64_field("row", INDEXED | STORED | FAST);
    let indexing = TextFieldIndexing::default().set_tokenizer(KEYWORD_ANALYZER).set_index_option(IndexRecordOption::WithFreqsAndPositions);
    builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
    builder.build()
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
}

/// Builds a tantivy index in `dir` over `texts` (row `i` = `texts[i]`).
pub fn build_keyword_index<'a>(dir: &Path, texts: impl Iterator<Item = &'a str>) -> Result<()> {
    let index = Index::create_in_dir(dir, schema()).map_err(err("create"))?;
    index.tokenizers().register(KEYWORD_ANALYZER, analyzer());
    let schema = index.schema();
    let row_field = schema.get_field("row").map_err(err("schema"))?;
    let text_field = schema.get_field("text").map_err(err("schema"))?;
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 200_000_000).map_err(err("writer"))?;
    for (row, text) in texts.enumerate() {
        writer.add_document(doc!(row_field => row as u64, text_field => text)).map_err(err("add"))?;
    }
    writer.commit().map_err(err("commit"))?;
    writer.wait_merging_threads().map_err(err("merge"))?;
    Ok(())
}

/// A tantivy index opened from a folder.
pub struct TantivyKeywordIndex {
    index: Index,
    reader: IndexReader,
}

impl TantivyKeywordIndex {
    pub fn open(dir: &Path) -> Result<Self> {
        let index = Index::open_in_dir(dir).map_err(err("open"))?;
        index.tokenizers().register(KEYWORD_ANALYZER, analyzer());
        let reader = index.reader().map_err(err("reader"))?;
        Ok(Self { index, reader })
    }

    fn terms(&self, query: &str) -> Result<Vec<Term>> {
        let field = self.index.schema().get_field("text").map_err(err("schema"))?;
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(query);
        let mut terms = Vec::new();
        while let Some(token) = stream.next() {
            let term = Term::from_field_text(field, &token.text);
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        Ok(terms)
    }
}

impl KeywordIndex for TantivyKeywordIndex {
    fn len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        self.run(query, k, None)
    }

    fn search_in(&self, query: &str, k: usize, allowed: &RowSet) -> Result<Vec<Hit>> {
        self.run(query, k, Some(allowed))
    }
}

impl TantivyKeywordIndex {
    fn run(&self, query: &str, k: usize, allowed: Option<&RowSet>) -> Result<Vec<Hit>> {
        let terms = self.terms(query)?;
        if terms.is_empty() || k == 0 || allowed.is_some_and(RowSet::is_empty) {
            return Ok(Vec::new());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .map(|t| (Occur::Should, Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)) as Box<dyn Query>))
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let row_field = self.index.schema().get_field("row").map_err(err("schema"))?;
        let top = match allowed {
            None => searcher.search(&query, &TopDocs::with_limit(k)),
            Some(allowed) => {
                let allowed = Arc::new(allowed.clone());
                let filter = FilterCollector::new("row".to_string(), move |row: u64| allowed.contains(row as usize), TopDocs::with_limit(k));
                searcher.search(&query, &filter)
            }
        }
        .map_err(err("search"))?;
        top.into_iter()
            .map(|(score, address)| {
                let doc: TantivyDocument = searcher.doc(address).map_err(err("fetch"))?;
                let row = doc.get_first(row_field).and_then(|v| v.as_u64()).unwrap_or(u64::MAX);
                Ok(Hit { row, score })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_ranks_matching_rows_and_ignores_query_syntax() {
        let dir = tempfile::tempdir().unwrap();
        let texts = ["GPUs accelerate vector search", "The cat sat on the mat", "Searching vectors quickly on graphics processors"];
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
}
