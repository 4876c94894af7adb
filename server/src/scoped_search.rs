//! A search over one collection's snapshot or several collections' together, as if one
//! snapshot held them all: each part's rows are numbered after the previous parts', the
//! vector lane merges the parts' cosines, the keyword lane scores every part with the BM25
//! statistics of all of them (so a score means the same in each), and hybrid fuses the two
//! merged lanes. Searching one part is exactly [`Searcher::search_with_vector`].

use std::sync::Arc;
use std::time::Instant;

use quarry_indexer::index::{KeywordStats, RowSet};

use crate::error::ServerError;
use crate::fusion::{reciprocal_rank_fusion, Lane};
use crate::result::{chunk_result, ChunkResult, RetrievalResult};
use crate::searcher::{best_first, Mode, SearchOutcome, SearchRequest, SearchTimings, Searcher};

/// One searched snapshot; `name`, when given, goes into each of its results' metadata as
/// `collection`.
pub struct SearchPart<'a> {
    pub name: Option<&'a str>,
    pub searcher: &'a Searcher,
}

/// A part with where its rows start among all parts' rows and the rows a search may return.
struct Placed<'a> {
    part: &'a SearchPart<'a>,
    offset: usize,
    allowed: Option<RowSet>,
}

/// Searches several collections as one (`parts` named by collection): the query embedded
/// once, with the model every loaded collection shares (a Searcher refuses any other).
/// No parts (every collection empty) answers no chunks.
pub fn search_collections(parts: &[(String, Arc<Searcher>)], request: &SearchRequest) -> Result<SearchOutcome, ServerError> {
    request.validate()?;
    let started = Instant::now();
    let query_vector = match (request.mode, parts.first()) {
        (Mode::Keyword, _) | (_, None) => None,
        (_, Some((_, searcher))) => Some(searcher.embed_query(&request.query)?),
    };
    let embed_secs = started.elapsed().as_secs_f64();
    let parts: Vec<SearchPart<'_>> = parts.iter().map(|(name, searcher)| SearchPart { name: Some(name), searcher }).collect();
    let mut outcome = search_parts(&parts, request, query_vector.as_deref())?;
    outcome.timings.embed_secs = embed_secs;
    Ok(outcome)
}

/// Runs a search over `parts` with an already embedded query (`None` for keyword mode).
pub fn search_parts(parts: &[SearchPart<'_>], request: &SearchRequest, query_vector: Option<&[f32]>) -> Result<SearchOutcome, ServerError> {
    request.validate()?;
    let started = Instant::now();
    let mut placed = Vec::with_capacity(parts.len());
    let mut offset = 0;
    for part in parts {
        let snapshot = part.searcher.snapshot();
        placed.push(Placed { part, offset, allowed: request.filters.allowed_rows(snapshot) });
        offset += snapshot.row_count();
    }
    let need_vector = || query_vector.ok_or_else(|| ServerError::InvalidRequest("this mode needs the query embedding".into()));
    let top_k = request.top_k;
    let scored: Vec<(usize, f32, serde_json::Map<String, serde_json::Value>)> = match request.mode {
        Mode::Vector => vector_lane(&placed, need_vector()?, top_k)?
            .into_iter()
            .enumerate()
            .map(|(i, (row, score))| (row, score.clamp(0.0, 1.0), lane_detail("vector", i + 1, score)))
            .collect(),
        Mode::Keyword => {
            let hits = keyword_lane(&placed, &request.query, top_k)?;
            let top = hits.first().map(|h| h.1).unwrap_or(1.0).max(f32::MIN_POSITIVE);
            hits.into_iter().enumerate().map(|(i, (row, score))| (row, score / top, lane_detail("keyword", i + 1, score))).collect()
        }
        Mode::Hybrid => {
            let fetch = (top_k * 4).max(50);
            let vector = vector_lane(&placed, need_vector()?, fetch)?;
            let keyword = keyword_lane(&placed, &request.query, fetch)?;
            let vector_rows: Vec<usize> = vector.iter().map(|h| h.0).collect();
            let keyword_rows: Vec<usize> = keyword.iter().map(|h| h.0).collect();
            let fused = reciprocal_rank_fusion(
                &[Lane { rows: &vector_rows, weight: request.vector_weight }, Lane { rows: &keyword_rows, weight: request.keyword_weight }],
                request.rrf_k,
            );
            fused
                .into_iter()
                .take(top_k)
                .map(|(row, score)| {
                    let mut lanes = serde_json::Map::new();
                    if let Some(rank) = vector_rows.iter().position(|r| *r == row) {
                        lanes.extend(lane_detail("vector", rank + 1, vector[rank].1));
                    }
                    if let Some(rank) = keyword_rows.iter().position(|r| *r == row) {
                        lanes.extend(lane_detail("keyword", rank + 1, keyword[rank].1));
                    }
                    (row, score, lanes)
                })
                .collect()
        }
    };
    let min_score = request.min_score.unwrap_or(0.0);
    let chunks: Vec<ChunkResult> = scored.into_iter().filter(|(_, score, _)| *score >= min_score).map(|(row, score, lanes)| result_of(&placed, row, score, lanes)).collect();
    let total_tokens = chunks.iter().map(|c| c.metadata["token_count"].as_u64().unwrap_or(0)).sum();
    let underfilled = chunks.len() < top_k;
    Ok(SearchOutcome {
        result: RetrievalResult {
            chunks,
            total_tokens,
            query: request.query.clone(),
            backend: "quarry".into(),
            success: true,
            error_message: None,
            mode: request.mode.as_str().into(),
            underfilled,
        },
        timings: SearchTimings { embed_secs: 0.0, search_secs: started.elapsed().as_secs_f64() },
    })
}

/// Every part's nearest rows, merged best first (cosines mean the same in every part).
fn vector_lane(placed: &[Placed<'_>], query: &[f32], k: usize) -> Result<Vec<(usize, f32)>, ServerError> {
    let mut hits = Vec::new();
    for at in placed {
        hits.extend(at.part.searcher.vector_lane(query, k, at.allowed.as_ref())?.into_iter().map(|(row, score)| (at.offset + row, score)));
    }
    best_first(&mut hits, k);
    Ok(hits)
}

/// Every part's BM25 rows scored with the statistics of all parts together, merged best first.
fn keyword_lane(placed: &[Placed<'_>], query: &str, k: usize) -> Result<Vec<(usize, f32)>, ServerError> {
    let mut stats = KeywordStats::default();
    for at in placed {
        stats.add(&at.part.searcher.keyword_stats(query)?);
    }
    let mut hits = Vec::new();
    for at in placed {
        let found = at.part.searcher.keyword_lane_with_stats(query, k, at.allowed.as_ref(), &stats)?;
        hits.extend(found.into_iter().map(|(row, score)| (at.offset + row, score)));
    }
    best_first(&mut hits, k);
    Ok(hits)
}

/// The golden record of a row numbered among all parts' rows.
fn result_of(placed: &[Placed<'_>], row: usize, score: f32, lanes: serde_json::Map<String, serde_json::Value>) -> ChunkResult {
    let at = &placed[placed.partition_point(|p| p.offset <= row) - 1];
    let mut result = chunk_result(at.part.searcher.snapshot(), row - at.offset, score, lanes);
    if let Some(name) = at.part.name {
        result.metadata.insert("collection".into(), name.into());
    }
    result
}

fn lane_detail(lane: &str, rank: usize, raw_score: f32) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    map.insert(format!("{lane}_rank"), rank.into());
    map.insert(format!("{lane}_score"), serde_json::json!(raw_score));
    map
}
