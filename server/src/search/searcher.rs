//! The Searcher: the vector and keyword lanes over a loaded snapshot (fused by hybrid's RRF
//! or by auto, [`crate::search::auto_fusion`]), with
//! filters applied inside each lane (FAISS ID selectors, an exact scan when a filter is
//! selective, tantivy's filter collector); the modes, fusion and seed-000 golden records are
//! [`crate::search::scoped_search`]'s, which a Searcher's search runs over its one snapshot.

use std::sync::Arc;

use quarry_indexer::embed::{read_words, Embedder};
use quarry_indexer::index::{KeywordIndex, KeywordQuery, KeywordStats, RowSet, VectorIndex};
use quarry_indexer::pipeline::{version_readings, whole_share};
use quarry_indexer::snapshot::LanguageReading;
use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::auto_fusion::LaneWeights;
use crate::search::context_chunks::MAX_CONTEXT_CHUNKS;
use crate::search::facets::{self, DEFAULT_FACET_SIZE};
use crate::search::filter::Filters;
use crate::search::hit::{best_first, Hit};
use crate::search::layer::Layer;
use crate::search::loaded::{LoadedSegment, LoadedSnapshot};
use crate::search::query_syntax::{ParsedQuery, QuerySyntax};
use crate::search::result::RetrievalResult;
use crate::search::scope::SearchScope;
use crate::search::similar_to::SimilarTo;

/// By default, filters that leave at most this many rows in a segment are served by an exact scan.
pub const EXACT_SCAN_MAX_ROWS: usize = 20_000;
/// The largest top_k a request may ask for.
pub const MAX_TOP_K: usize = 1000;
/// The deepest result a request may page to: `offset + top_k` at most this.
pub const MAX_RESULT_WINDOW: usize = 10_000;
/// The longest query, in characters: the vector lane reads its first 256 tokens, but the
/// keyword lane looks up every word, so a huge body would hold a search worker for long.
pub const MAX_QUERY_CHARS: usize = 10_000;

/// Which lanes answer.
///
/// The default is `auto` ([`crate::search::auto_fusion`]): both lanes fused with weights read off the
/// query and the collection, no relevance labels involved, so a corpus the model reads
/// poorly falls back on the keyword lane by itself. `vector`, `keyword` and `hybrid` (RRF,
/// with optional lane weights) answer as named. Seed 003's names are accepted: `semantic`
/// (and `dense`) for vector, `bm25` for keyword, an empty mode for the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[serde(alias = "semantic", alias = "dense")]
    Vector,
    #[serde(alias = "bm25")]
    Keyword,
    Hybrid,
    #[default]
    #[serde(alias = "")]
    Auto,
}

impl Mode {
    /// Every mode, the default last.
    pub const ALL: [Mode; 4] = [Mode::Vector, Mode::Keyword, Mode::Hybrid, Mode::Auto];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vector => "vector",
            Self::Keyword => "keyword",
            Self::Hybrid => "hybrid",
            Self::Auto => "auto",
        }
    }

    /// Whether the mode needs the query's embedding.
    pub fn uses_vectors(self) -> bool {
        self != Self::Keyword
    }
}

impl std::str::FromStr for Mode {
    type Err = ServerError;
    fn from_str(s: &str) -> Result<Self, ServerError> {
        match s {
            "vector" | "dense" | "semantic" => Ok(Self::Vector),
            "keyword" | "bm25" => Ok(Self::Keyword),
            "hybrid" => Ok(Self::Hybrid),
            "auto" | "" => Ok(Self::Auto),
            other => Err(ServerError::InvalidRequest(format!(
                "unknown mode `{other}` (auto, vector, keyword, hybrid; also semantic, bm25)"
            ))),
        }
    }
}

/// One search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchRequest {
    pub query: String,
    pub top_k: usize,
    /// Results to skip before the top_k returned (pagination: page n of size k is offset n·k).
    pub offset: usize,
    pub mode: Mode,
    pub filters: Filters,
    pub min_score: Option<f32>,
    /// Hybrid lane weights.
    pub vector_weight: f32,
    pub keyword_weight: f32,
    /// The RRF constant.
    pub rrf_k: f32,
    /// At most this many chunks of any one document (its best ones); the lanes look deeper
    /// so that top_k results still come back when enough documents match.
    pub max_chunks_per_document: Option<usize>,
    /// Each result's `metadata.highlights`: the character ranges of its words that match a
    /// query word as the keyword lane matches them (any mode).
    pub highlight: bool,
    /// Each result's `metadata.context_before` / `context_after`: up to this many live
    /// chunks of its document on each side, in chunk order.
    pub context_chunks: usize,
    /// Fields to count the documents of by value (`source`, `file_name`, `tags`,
    /// `metadata.<key>`), over the documents the search could return: [`crate::search::facets`].
    pub facets: Vec<String>,
    /// Values each facet lists, most documents first.
    pub facet_size: usize,
    /// Which layer of each document to return: L2 its chunks, L1 its overview, L0 its
    /// abstract (once per document): [`crate::search::layer`].
    pub layer: Layer,
    /// How the query is read: quoted phrases and `-` exclusions (`simple`, the default) or as
    /// plain text ([`crate::search::query_syntax`]).
    pub query_syntax: QuerySyntax,
    /// Rank by a chunk's or a document's embedding instead of the query's: "more like this"
    /// ([`crate::search::similar_to`]); the query may then be left out.
    pub similar_to: Option<SimilarTo>,
    /// A "did you mean" for the query's words no live row holds: the result's `suggestion`
    /// ([`crate::search::spelling`]).
    pub suggest: bool,
    /// Each of the query's words no live row holds is also read as the index's nearest word
    /// (the correction "did you mean" would give): the keyword lane looks it up
    /// ([`crate::search::term_groups`]) and the vector lane also embeds the query with the
    /// corrections ([`crate::search::readings`]). On by default.
    pub typo_tolerance: bool,
}

impl Default for SearchRequest {
    fn default() -> Self {
        Self {
            query: String::new(),
            top_k: 10,
            offset: 0,
            mode: Mode::default(),
            filters: Filters::default(),
            min_score: None,
            vector_weight: 1.0,
            keyword_weight: 1.0,
            rrf_k: 60.0,
            max_chunks_per_document: None,
            highlight: false,
            context_chunks: 0,
            facets: Vec::new(),
            facet_size: DEFAULT_FACET_SIZE,
            layer: Layer::L2,
            query_syntax: QuerySyntax::default(),
            similar_to: None,
            suggest: false,
            typo_tolerance: true,
        }
    }
}

impl SearchRequest {
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            ..Default::default()
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ServerError> {
        self.validated_query().map(|_| ())
    }

    /// Checks every field, and reads the query by its syntax once: what the lanes rank by,
    /// what results must hold.
    pub(crate) fn validated_query(&self) -> Result<ParsedQuery, ServerError> {
        let bad = |m: String| Err(ServerError::InvalidRequest(m));
        if self.query.trim().is_empty() && self.similar_to.is_none() {
            return bad("query must not be empty (or search by example with similar_to)".into());
        }
        let chars = self.query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return bad(format!("query is {chars} characters long; at most {MAX_QUERY_CHARS}"));
        }
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return bad(format!("top_k must be between 1 and {MAX_TOP_K}, got {}", self.top_k));
        }
        if self.offset.saturating_add(self.top_k) > MAX_RESULT_WINDOW {
            return bad(format!(
                "offset + top_k must be at most {MAX_RESULT_WINDOW}, got {} + {}",
                self.offset, self.top_k
            ));
        }
        if self.context_chunks > MAX_CONTEXT_CHUNKS {
            return bad(format!(
                "context_chunks must be between 0 and {MAX_CONTEXT_CHUNKS}, got {}",
                self.context_chunks
            ));
        }
        if self.max_chunks_per_document == Some(0) {
            return bad("max_chunks_per_document must be at least 1 (leave it out for no limit)".into());
        }
        if let Some(min) = self.min_score {
            if !(0.0..=1.0).contains(&min) {
                return bad(format!("min_score must be between 0 and 1, got {min}"));
            }
        }
        if self.vector_weight < 0.0 || self.keyword_weight < 0.0 || self.vector_weight + self.keyword_weight <= 0.0 {
            return bad("lane weights must be >= 0 and not both 0".into());
        }
        if self.rrf_k < 0.0 {
            return bad(format!("rrf_k must be >= 0, got {}", self.rrf_k));
        }
        facets::validate(&self.facets, self.facet_size)?;
        self.filters.validate()?;
        let Some(similar_to) = &self.similar_to else {
            return ParsedQuery::read(&self.query, self.query_syntax);
        };
        similar_to.validate()?;
        let query = ParsedQuery::read_beside_example(&self.query, self.query_syntax)?;
        match self.mode {
            Mode::Keyword => bad(
                "similar_to ranks by the vector lane; mode keyword ranks by words alone (use vector, hybrid or auto)"
                    .into(),
            ),
            Mode::Hybrid if query.ranking_text.trim().is_empty() => bad(
                "mode hybrid fuses the example with the query's words, and the query has none to rank by (use vector or auto, or give words)"
                    .into(),
            ),
            _ => Ok(query),
        }
    }

    /// The mode that ranks `query` (this request's, read): a search by example without words
    /// to rank by is the vector lane's alone, whatever mode `auto` would have fused.
    pub(crate) fn ranking_mode(&self, query: &ParsedQuery) -> Mode {
        match query.ranking_text.trim().is_empty() {
            true => Mode::Vector,
            false => self.mode,
        }
    }
}

/// Where the time of one search went.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SearchTimings {
    pub embed_secs: f64,
    pub search_secs: f64,
}

/// A search's result and timings.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub result: RetrievalResult,
    pub timings: SearchTimings,
}

/// Searches one loaded snapshot with the model it was built with.
pub struct Searcher {
    snapshot: Arc<LoadedSnapshot>,
    embedder: Arc<dyn Embedder>,
    exact_scan_max_rows: usize,
    /// The collection's languages and how the model reads them, summed over its segments.
    languages: Vec<LanguageReading>,
}

/// The segment-local rows of a global row set.
fn segment_rows(allowed: &RowSet, segment: &LoadedSegment) -> RowSet {
    allowed.range(segment.offset, segment.rows)
}

impl Searcher {
    /// Refuses a model whose weights differ from the ones the snapshot was embedded with.
    pub fn new(snapshot: Arc<LoadedSnapshot>, embedder: Arc<dyn Embedder>) -> Result<Self, ServerError> {
        let (wanted, loaded) = (&snapshot.manifest.model, embedder.info());
        if wanted.sha256 != loaded.sha256 || wanted.dim != loaded.dim {
            return Err(ServerError::ModelMismatch {
                snapshot_model: wanted.name.clone(),
                snapshot_sha: wanted.sha256.clone(),
                loaded_model: loaded.name.clone(),
                loaded_sha: loaded.sha256.clone(),
            });
        }
        let languages = version_readings(&snapshot.manifest);
        Ok(Self {
            snapshot,
            embedder,
            exact_scan_max_rows: EXACT_SCAN_MAX_ROWS,
            languages,
        })
    }

    /// Filters leaving at most `rows` rows in a segment are answered by an exact scan;
    /// larger ones go through the ANN index with an ID selector.
    pub fn with_exact_scan_max_rows(mut self, rows: usize) -> Self {
        self.exact_scan_max_rows = rows;
        self
    }

    pub fn snapshot(&self) -> &Arc<LoadedSnapshot> {
        &self.snapshot
    }

    /// The collection's detected languages and how the model reads their words (empty for
    /// a snapshot written before they were measured).
    pub fn language_readings(&self) -> &[LanguageReading] {
        &self.languages
    }

    /// The share of `query`'s words the model reads whole (1 when it cannot be told).
    pub fn query_whole_share(&self, query: &str) -> f64 {
        read_words(self.embedder.tokenizer(), query)
            .map(|r| r.whole_share())
            .unwrap_or(1.0)
    }

    /// The lane weights `auto` gives `query` on this collection alone.
    pub fn auto_weights(&self, query: &str) -> LaneWeights {
        LaneWeights::from_reading(
            self.query_whole_share(query),
            whole_share(&self.languages).unwrap_or(1.0),
        )
    }

    /// The query's embedding with the snapshot's model.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, ServerError> {
        Ok(self.embedder.embed(&[query])?.data)
    }

    /// The embeddings of a query's texts (the query and another reading of it), in order,
    /// embedded together ([`Embedder::embed_queries`]).
    pub fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ServerError> {
        let embeddings = self.embedder.embed_queries(texts)?;
        Ok(embeddings
            .data
            .chunks(embeddings.dim.max(1))
            .map(<[f32]>::to_vec)
            .collect())
    }

    /// The model's tokens in `text` (special tokens not counted), None when it cannot tell.
    pub fn count_tokens(&self, text: &str) -> Option<usize> {
        self.embedder.tokenizer().count(text).ok()
    }

    /// Approximate (or, for selective filters, exact) nearest rows; scores are inner products.
    pub fn vector_lane(&self, query: &[f32], k: usize, allowed: Option<&RowSet>) -> Result<Vec<Hit>, ServerError> {
        let mut hits = Vec::new();
        for segment in &self.snapshot.segments {
            let index = &segment.data.vectors;
            match allowed.map(|a| segment_rows(a, segment)) {
                None => hits.extend(
                    index
                        .search(query, k)?
                        .remove(0)
                        .into_iter()
                        .map(|h| Hit::new(segment.offset + h.row as usize, h.score)),
                ),
                Some(local) if local.is_empty() => {}
                Some(local) if local.count() <= self.exact_scan_max_rows => {
                    let found = segment.data.exact_top_k_in(query, &local.rows(), k)?;
                    hits.extend(
                        found
                            .into_iter()
                            .map(|h| Hit::new(segment.offset + h.row as usize, h.score)),
                    );
                }
                Some(local) => hits.extend(
                    index
                        .search_in(query, k, &local)?
                        .into_iter()
                        .map(|h| Hit::new(segment.offset + h.row as usize, h.score)),
                ),
            }
        }
        best_first(&mut hits, k);
        Ok(hits)
    }

    /// Exact nearest rows over every live row: the ground truth for ANN recall.
    pub fn exact_vector_lane(&self, query: &[f32], k: usize) -> Result<Vec<Hit>, ServerError> {
        let mut hits = Vec::new();
        for segment in &self.snapshot.segments {
            let rows: Vec<u64> = (0..segment.rows)
                .filter(|r| !self.snapshot.tombstoned.contains(segment.offset + r))
                .map(|r| r as u64)
                .collect();
            let found = segment.data.exact_top_k_in(query, &rows, k)?;
            hits.extend(
                found
                    .into_iter()
                    .map(|h| Hit::new(segment.offset + h.row as usize, h.score)),
            );
        }
        best_first(&mut hits, k);
        Ok(hits)
    }

    /// BM25 rows; scores are raw BM25 with the statistics of every segment together, less the
    /// tombstoned rows', so each row is scored as if one index held the live rows only (as
    /// after compaction).
    pub fn keyword_lane(
        &self,
        query: &KeywordQuery,
        k: usize,
        allowed: Option<&RowSet>,
    ) -> Result<Vec<Hit>, ServerError> {
        self.keyword_lane_with_stats(query, k, allowed, &self.keyword_stats(query)?)
    }

    /// The BM25 statistics of `query`'s terms over the live rows: every segment's, less the
    /// tombstoned rows'.
    pub fn keyword_stats(&self, query: &KeywordQuery) -> Result<KeywordStats, ServerError> {
        let mut stats = KeywordStats::default();
        for segment in &self.snapshot.segments {
            stats.add(&segment.data.keyword.stats(query)?);
        }
        for segment in &self.snapshot.segments {
            stats.remove(&segment.hidden.keyword_stats);
        }
        Ok(stats)
    }

    /// BM25 rows scored with `stats` (this snapshot's, or several snapshots' together), each
    /// group's terms with its most frequent term's count ([`KeywordStats::blended`]).
    pub fn keyword_lane_with_stats(
        &self,
        query: &KeywordQuery,
        k: usize,
        allowed: Option<&RowSet>,
        stats: &KeywordStats,
    ) -> Result<Vec<Hit>, ServerError> {
        let blended;
        let stats = match query.any_of.is_empty() {
            true => stats,
            false => {
                blended = stats.blended(&query.any_of);
                &blended
            }
        };
        let mut hits = Vec::new();
        for segment in &self.snapshot.segments {
            let found = match allowed.map(|a| segment_rows(a, segment)) {
                None => segment.data.keyword.search_with_stats(query, k, None, stats)?,
                Some(local) if local.is_empty() => Vec::new(),
                Some(local) => segment.data.keyword.search_with_stats(query, k, Some(&local), stats)?,
            };
            hits.extend(
                found
                    .into_iter()
                    .map(|h| Hit::new(segment.offset + h.row as usize, h.score)),
            );
        }
        best_first(&mut hits, k);
        Ok(hits)
    }

    /// Each segment's rows (local numbers) holding a word of `query`, in segment order.
    pub fn keyword_matching_rows(&self, query: &KeywordQuery) -> Result<Vec<RowSet>, ServerError> {
        Ok(self
            .snapshot
            .segments
            .iter()
            .map(|segment| segment.data.keyword.matching_rows(query))
            .collect::<Result<_, _>>()?)
    }

    /// Runs a search over this snapshot alone, embedding the query when a lane needs it
    /// ([`SearchScope::search`]).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchOutcome, ServerError> {
        SearchScope::one(self).search(request)
    }

    /// Runs a search over this snapshot alone with an already embedded query (`None` for
    /// keyword mode).
    pub fn search_with_vector(
        &self,
        request: &SearchRequest,
        query_vector: Option<&[f32]>,
    ) -> Result<SearchOutcome, ServerError> {
        SearchScope::one(self).search_with_vector(request, query_vector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_by_name_and_by_seed_003_aliases() {
        let mode = |body: &str| {
            serde_json::from_str::<SearchRequest>(body)
                .map(|r| r.mode)
                .map_err(|e| e.to_string())
        };
        assert_eq!(mode(r#"{"query": "q"}"#), Ok(Mode::Auto), "the default");
        assert_eq!(
            mode(r#"{"query": "q", "mode": ""}"#),
            Ok(Mode::Auto),
            "an empty mode is the default"
        );
        assert_eq!(mode(r#"{"query": "q", "mode": "bm25"}"#), Ok(Mode::Keyword));
        assert_eq!(mode(r#"{"query": "q", "mode": "semantic"}"#), Ok(Mode::Vector));
        assert_eq!(mode(r#"{"query": "q", "mode": "dense"}"#), Ok(Mode::Vector));
        assert_eq!(mode(r#"{"query": "q", "mode": "hybrid"}"#), Ok(Mode::Hybrid));
        assert!(mode(r#"{"query": "q", "mode": "fuzzy"}"#).is_err());
        for (name, want) in [
            ("auto", Mode::Auto),
            ("", Mode::Auto),
            ("bm25", Mode::Keyword),
            ("semantic", Mode::Vector),
            ("vector", Mode::Vector),
        ] {
            assert_eq!(name.parse::<Mode>().unwrap(), want, "{name}");
        }
        assert!("fuzzy"
            .parse::<Mode>()
            .unwrap_err()
            .to_string()
            .contains("auto, vector, keyword, hybrid"));
        // A result names the mode by its own name.
        assert_eq!(serde_json::to_value(Mode::Auto).unwrap(), "auto");
    }
}
