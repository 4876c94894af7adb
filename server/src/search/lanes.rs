//! The lanes a search ranks with, over the rows of every part of its scope: the vector lane
//! (each part's FAISS index, cosines merged; a row scores by its best reading of the query,
//! [`QueryReadings`]), the keyword lane (each part's tantivy index,
//! scored with the BM25 statistics of all parts together, so a score means the same in each)
//! and the two fusions of both: hybrid (weighted reciprocal rank fusion, [`fusion`]) and
//! auto, the default ([`auto_fusion`]). Each ranks [`ScoredRow`]s at a given depth;
//! [`crate::search::result_window::fill_window`] asks for deeper passes while a window that
//! keeps few chunks per document stays short.
//!
//! [`fusion`]: crate::search::fusion
//! [`auto_fusion`]: crate::search::auto_fusion

use std::collections::HashMap;

use quarry_indexer::index::{KeywordQuery, KeywordStats};
use quarry_indexer::pipeline::whole_share;
use serde_json::{Map, Value};

use crate::error::ServerError;
use crate::search::auto_fusion::{fuse, LaneWeights};
use crate::search::fusion::{reciprocal_rank_fusion, RankedRows};
use crate::search::hit::{best_first, Hit};
use crate::search::placed::PlacedPart;
use crate::search::readings::{stored_vector, QueryReadings};
use crate::search::result_window::MAX_CANDIDATES;
use crate::search::searcher::{Mode, SearchRequest};

/// One ranked row: its number among all searched rows, its final score (in [0, 1]) and what
/// each lane said of it (`vector_rank`, `keyword_score`, ...: a result's metadata).
#[derive(Debug, Clone)]
pub struct ScoredRow {
    pub row: usize,
    pub score: f32,
    pub lanes: Map<String, Value>,
}

/// A lane pass at some depth: up to `depth` rows best first, and whether the lanes had no
/// more rows to give than they returned.
pub struct Ranked {
    pub rows: Vec<ScoredRow>,
    pub exhausted: bool,
}

/// A way to rank the rows of a search's scope.
pub trait Lane {
    /// Up to `depth` rows of `parts`, best first.
    fn rank(&self, parts: &[PlacedPart<'_>], depth: usize) -> Result<Ranked, ServerError>;
}

/// The lane of `mode` (the request's, as [`SearchRequest::ranking_mode`] reads it) with
/// `request`'s weights, ranking by `query` (its ranking text, with its prefixes' and
/// misspelt words' terms); every mode but keyword needs the query's embedding (or an
/// example's): its `readings`.
pub fn lane_for<'q>(
    request: &'q SearchRequest,
    mode: Mode,
    query: &'q KeywordQuery,
    readings: &'q QueryReadings,
) -> Result<Box<dyn Lane + 'q>, ServerError> {
    let vector = || match readings.vectors.is_empty() {
        true => Err(ServerError::InvalidRequest(
            "this mode needs the query embedding".into(),
        )),
        false => Ok(readings),
    };
    Ok(match mode {
        Mode::Vector => Box::new(VectorLane { readings: vector()? }),
        Mode::Keyword => Box::new(KeywordLane { query }),
        Mode::Hybrid => Box::new(HybridLane {
            readings: vector()?,
            query,
            vector_weight: request.vector_weight,
            keyword_weight: request.keyword_weight,
            rrf_k: request.rrf_k,
        }),
        Mode::Auto => Box::new(AutoLane {
            readings: vector()?,
            query,
        }),
    })
}

/// Cosine similarity (a row's best over the query's readings); scores clamped to [0, 1].
pub struct VectorLane<'q> {
    pub readings: &'q QueryReadings,
}

impl Lane for VectorLane<'_> {
    fn rank(&self, parts: &[PlacedPart<'_>], depth: usize) -> Result<Ranked, ServerError> {
        let hits = vector_hits(parts, self.readings, depth)?;
        let exhausted = hits.len() < depth;
        let rows = hits
            .into_iter()
            .enumerate()
            .map(|(i, hit)| ScoredRow {
                row: hit.row,
                score: hit.score.clamp(0.0, 1.0),
                lanes: lane_detail("vector", i + 1, hit.score),
            })
            .collect();
        Ok(Ranked { rows, exhausted })
    }
}

/// BM25; scores divided by the best row's.
pub struct KeywordLane<'q> {
    pub query: &'q KeywordQuery,
}

impl Lane for KeywordLane<'_> {
    fn rank(&self, parts: &[PlacedPart<'_>], depth: usize) -> Result<Ranked, ServerError> {
        let hits = keyword_hits(parts, self.query, depth)?;
        let exhausted = hits.len() < depth;
        let top = hits.first().map(|h| h.score).unwrap_or(1.0).max(f32::MIN_POSITIVE);
        let rows = hits
            .into_iter()
            .enumerate()
            .map(|(i, hit)| ScoredRow {
                row: hit.row,
                score: hit.score / top,
                lanes: lane_detail("keyword", i + 1, hit.score),
            })
            .collect();
        Ok(Ranked { rows, exhausted })
    }
}

/// Both lanes fetched deeper than the window and fused by weighted RRF.
pub struct HybridLane<'q> {
    pub readings: &'q QueryReadings,
    pub query: &'q KeywordQuery,
    pub vector_weight: f32,
    pub keyword_weight: f32,
    pub rrf_k: f32,
}

impl Lane for HybridLane<'_> {
    fn rank(&self, parts: &[PlacedPart<'_>], depth: usize) -> Result<Ranked, ServerError> {
        let fetch = fusion_fetch(depth);
        let vector = vector_hits(parts, self.readings, fetch)?;
        let keyword = keyword_hits(parts, self.query, fetch)?;
        let vector_rows: Vec<usize> = vector.iter().map(|h| h.row).collect();
        let keyword_rows: Vec<usize> = keyword.iter().map(|h| h.row).collect();
        let fused = reciprocal_rank_fusion(
            &[
                RankedRows {
                    rows: &vector_rows,
                    weight: self.vector_weight,
                },
                RankedRows {
                    rows: &keyword_rows,
                    weight: self.keyword_weight,
                },
            ],
            self.rrf_k,
        );
        Ok(fused_window(fused, &vector, &keyword, fetch, depth, Map::new()))
    }
}

/// Both lanes fetched as for hybrid and mixed by [`crate::search::auto_fusion`] with weights
/// from the model's reading of the query and of the searched collections' words.
pub struct AutoLane<'q> {
    pub readings: &'q QueryReadings,
    pub query: &'q KeywordQuery,
}

impl Lane for AutoLane<'_> {
    fn rank(&self, parts: &[PlacedPart<'_>], depth: usize) -> Result<Ranked, ServerError> {
        let fetch = fusion_fetch(depth);
        let vector = vector_hits(parts, self.readings, fetch)?;
        let keyword = keyword_hits(parts, self.query, fetch)?;
        let collection_share =
            whole_share(parts.iter().flat_map(|at| at.part.searcher.language_readings())).unwrap_or(1.0);
        // The model reads the query at least as well as its best reading (typed or corrected).
        let query_share = parts
            .first()
            .map(|at| {
                let searcher = &at.part.searcher;
                let corrected = self.readings.corrected_text.as_deref();
                let typed = searcher.query_whole_share(&self.query.text);
                corrected.map_or(typed, |text| typed.max(searcher.query_whole_share(text)))
            })
            .unwrap_or(1.0);
        let weights = LaneWeights::from_reading(query_share, collection_share)
            .given_rows(!vector.is_empty(), !keyword.is_empty());
        // The cosine of a row only the keyword lane found, from its stored vector.
        let cosine_of = |row: usize| self.readings.stored_best_cosine(parts, row);
        let fused = fuse(&vector, &keyword, weights, cosine_of);
        let mut detail = Map::new();
        detail.insert("auto_vector_weight".into(), serde_json::json!(weights.vector));
        Ok(fused_window(fused, &vector, &keyword, fetch, depth, detail))
    }
}

/// How deep a fusion fetches each lane for `depth` fused rows: at least 50 rows, four times
/// `depth`, at most [`MAX_CANDIDATES`] unless `depth` is more.
fn fusion_fetch(depth: usize) -> usize {
    (depth * 4).max(50).min(MAX_CANDIDATES.max(depth))
}

/// The first `depth` of `fused` rows, each with its rank and raw score in each lane that
/// returned it (lanes fetched `fetch` deep) and `detail`.
fn fused_window(
    fused: Vec<Hit>,
    vector: &[Hit],
    keyword: &[Hit],
    fetch: usize,
    depth: usize,
    detail: Map<String, Value>,
) -> Ranked {
    let vector_rank: HashMap<usize, usize> = vector.iter().enumerate().map(|(rank, h)| (h.row, rank)).collect();
    let keyword_rank: HashMap<usize, usize> = keyword.iter().enumerate().map(|(rank, h)| (h.row, rank)).collect();
    // Every row either lane can give was fused, and all of them fit in `depth`.
    let exhausted = vector.len() < fetch && keyword.len() < fetch && fused.len() <= depth;
    let rows = fused
        .into_iter()
        .take(depth)
        .map(|hit| {
            let mut lanes = detail.clone();
            if let Some(&rank) = vector_rank.get(&hit.row) {
                lanes.extend(lane_detail("vector", rank + 1, vector[rank].score));
            }
            if let Some(&rank) = keyword_rank.get(&hit.row) {
                lanes.extend(lane_detail("keyword", rank + 1, keyword[rank].score));
            }
            ScoredRow {
                row: hit.row,
                score: hit.score,
                lanes,
            }
        })
        .collect();
    Ranked { rows, exhausted }
}

/// Every part's nearest rows to the query's readings, merged best first (cosines mean the
/// same in every part; a row scores by its best reading, [`QueryReadings::nearest`]).
fn vector_hits(parts: &[PlacedPart<'_>], readings: &QueryReadings, k: usize) -> Result<Vec<Hit>, ServerError> {
    let search = |query: &[f32]| {
        let mut hits = Vec::new();
        for at in parts {
            let found = at.part.searcher.vector_lane(query, k, at.allowed.as_ref())?;
            hits.extend(found.into_iter().map(|h| Hit::new(at.offset + h.row, h.score)));
        }
        best_first(&mut hits, k);
        Ok(hits)
    };
    readings.nearest(k, search, |row| stored_vector(parts, row))
}

/// Every part's BM25 rows scored with the statistics of all parts together, merged best first.
fn keyword_hits(parts: &[PlacedPart<'_>], query: &KeywordQuery, k: usize) -> Result<Vec<Hit>, ServerError> {
    let mut stats = KeywordStats::default();
    for at in parts {
        stats.add(&at.part.searcher.keyword_stats(query)?);
    }
    let mut hits = Vec::new();
    for at in parts {
        let found = at
            .part
            .searcher
            .keyword_lane_with_stats(query, k, at.allowed.as_ref(), &stats)?;
        hits.extend(found.into_iter().map(|h| Hit::new(at.offset + h.row, h.score)));
    }
    best_first(&mut hits, k);
    Ok(hits)
}

fn lane_detail(lane: &str, rank: usize, raw_score: f32) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(format!("{lane}_rank"), rank.into());
    map.insert(format!("{lane}_score"), serde_json::json!(raw_score));
    map
}
