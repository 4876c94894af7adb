//! A search over one collection's snapshot or several collections' together, as if one
//! snapshot held them all: each part's rows are numbered after the previous parts', the
//! vector lane merges the parts' cosines, the keyword lane scores every part with the BM25
//! statistics of all of them (so a score means the same in each), and hybrid and auto fuse
//! the two merged lanes. Searching one part is exactly [`Searcher::search_with_vector`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use quarry_indexer::index::{KeywordStats, QueryTerms, RowSet};
use quarry_indexer::pipeline::whole_share;

use crate::error::ServerError;
use crate::search::auto_fusion::{fuse, LaneWeights};
use crate::search::context_chunks::add_context;
use crate::search::facets::{FacetCounter, Facets};
use crate::search::fusion::{reciprocal_rank_fusion, Lane};
use crate::search::result::{add_highlights, chunk_result, ChunkResult, RetrievalResult};
use crate::search::result_window::{fill_window, Ranked, Window, MAX_CANDIDATES};
use crate::search::searcher::{best_first, Mode, SearchOutcome, SearchRequest, SearchTimings, Searcher};

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
pub fn search_collections(
    parts: &[(String, Arc<Searcher>)],
    request: &SearchRequest,
) -> Result<SearchOutcome, ServerError> {
    request.validate()?;
    let started = Instant::now();
    let query_vector = match (request.mode, parts.first()) {
        (Mode::Keyword, _) | (_, None) => None,
        (_, Some((_, searcher))) => Some(searcher.embed_query(&request.query)?),
    };
    let embed_secs = started.elapsed().as_secs_f64();
    let parts: Vec<SearchPart<'_>> = parts
        .iter()
        .map(|(name, searcher)| SearchPart {
            name: Some(name),
            searcher,
        })
        .collect();
    let mut outcome = search_parts(&parts, request, query_vector.as_deref())?;
    outcome.timings.embed_secs = embed_secs;
    Ok(outcome)
}

/// Runs a search over `parts` with an already embedded query (`None` for keyword mode).
pub fn search_parts(
    parts: &[SearchPart<'_>],
    request: &SearchRequest,
    query_vector: Option<&[f32]>,
) -> Result<SearchOutcome, ServerError> {
    request.validate()?;
    let started = Instant::now();
    let mut placed = Vec::with_capacity(parts.len());
    let mut offset = 0;
    for part in parts {
        let snapshot = part.searcher.snapshot();
        placed.push(Placed {
            part,
            offset,
            allowed: request.filters.allowed_rows(snapshot),
        });
        offset += snapshot.row_count();
    }
    let need_vector =
        || query_vector.ok_or_else(|| ServerError::InvalidRequest("this mode needs the query embedding".into()));
    let window = Window {
        len: request.offset + request.top_k,
        min_score: request.min_score.unwrap_or(0.0),
        max_per_document: request.max_chunks_per_document,
    };
    let rank = |depth: usize| -> Result<Ranked, ServerError> {
        match request.mode {
            Mode::Vector => {
                let hits = vector_lane(&placed, need_vector()?, depth)?;
                let exhausted = hits.len() < depth;
                let rows = hits
                    .into_iter()
                    .enumerate()
                    .map(|(i, (row, score))| (row, score.clamp(0.0, 1.0), lane_detail("vector", i + 1, score)))
                    .collect();
                Ok(Ranked { rows, exhausted })
            }
            Mode::Keyword => {
                let hits = keyword_lane(&placed, &request.query, depth)?;
                let exhausted = hits.len() < depth;
                let top = hits.first().map(|h| h.1).unwrap_or(1.0).max(f32::MIN_POSITIVE);
                let rows = hits
                    .into_iter()
                    .enumerate()
                    .map(|(i, (row, score))| (row, score / top, lane_detail("keyword", i + 1, score)))
                    .collect();
                Ok(Ranked { rows, exhausted })
            }
            Mode::Hybrid => hybrid(&placed, request, need_vector()?, depth),
            Mode::Auto => auto(&placed, request, need_vector()?, depth),
        }
    };
    let document_of = |row: usize| {
        let (at, local) = locate(&placed, row);
        (
            at.offset,
            at.part.searcher.snapshot().document_of(local).doc_id.as_str(),
        )
    };
    let kept = fill_window(window, rank, document_of)?;
    // The query's terms as each segment's keyword analyzer reads it (by part and segment start).
    let mut highlight_terms: HashMap<(usize, usize), QueryTerms> = HashMap::new();
    let chunks: Vec<ChunkResult> = kept
        .into_iter()
        .skip(request.offset)
        .map(|(row, score, lanes)| {
            let (at, local) = locate(&placed, row);
            let mut chunk = result_in(at, local, score, lanes);
            if request.context_chunks > 0 {
                add_context(&mut chunk, at.part.searcher.snapshot(), local, request.context_chunks);
            }
            if request.highlight {
                let segment = at.part.searcher.snapshot().segment_of(local);
                let terms = highlight_terms
                    .entry((at.offset, segment.offset))
                    .or_insert_with(|| QueryTerms::of(segment.data.keyword.analyzer(), &request.query));
                add_highlights(&mut chunk, terms);
            }
            chunk
        })
        .collect();
    let facets = if request.facets.is_empty() {
        None
    } else {
        Some(count_facets(&placed, request)?)
    };
    let total_tokens = chunks
        .iter()
        .map(|c| c.metadata["token_count"].as_u64().unwrap_or(0))
        .sum();
    let underfilled = chunks.len() < request.top_k;
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
            facets,
        },
        timings: SearchTimings {
            embed_secs: 0.0,
            search_secs: started.elapsed().as_secs_f64(),
        },
    })
}

/// How deep a fusion fetches each lane for `depth` fused rows: at least 50 rows, four times
/// `depth`, at most [`MAX_CANDIDATES`] unless `depth` is more.
fn fusion_fetch(depth: usize) -> usize {
    (depth * 4).max(50).min(MAX_CANDIDATES.max(depth))
}

/// Both lanes fetched deeper than the window and fused by RRF.
fn hybrid(placed: &[Placed<'_>], request: &SearchRequest, query: &[f32], depth: usize) -> Result<Ranked, ServerError> {
    let fetch = fusion_fetch(depth);
    let vector = vector_lane(placed, query, fetch)?;
    let keyword = keyword_lane(placed, &request.query, fetch)?;
    let vector_rows: Vec<usize> = vector.iter().map(|h| h.0).collect();
    let keyword_rows: Vec<usize> = keyword.iter().map(|h| h.0).collect();
    let fused = reciprocal_rank_fusion(
        &[
            Lane {
                rows: &vector_rows,
                weight: request.vector_weight,
            },
            Lane {
                rows: &keyword_rows,
                weight: request.keyword_weight,
            },
        ],
        request.rrf_k,
    );
    Ok(fused_window(
        fused,
        &vector,
        &keyword,
        fetch,
        depth,
        serde_json::Map::new(),
    ))
}

/// Both lanes fetched as for hybrid and mixed by [`crate::search::auto_fusion`] with weights from
/// the model's reading of the query and of the searched collections' words.
fn auto(placed: &[Placed<'_>], request: &SearchRequest, query: &[f32], depth: usize) -> Result<Ranked, ServerError> {
    let fetch = fusion_fetch(depth);
    let vector = vector_lane(placed, query, fetch)?;
    let keyword = keyword_lane(placed, &request.query, fetch)?;
    let collection_share =
        whole_share(placed.iter().flat_map(|at| at.part.searcher.language_readings())).unwrap_or(1.0);
    let query_share = placed
        .first()
        .map(|at| at.part.searcher.query_whole_share(&request.query))
        .unwrap_or(1.0);
    let weights = LaneWeights::from_reading(query_share, collection_share);
    // The cosine of a row only the keyword lane found, from its stored vector.
    let cosine_of = |row: usize| {
        let (at, local) = locate(placed, row);
        at.part
            .searcher
            .snapshot()
            .embedding(local)
            .ok()
            .map(|v| v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>())
    };
    let fused = fuse(&vector, &keyword, weights, cosine_of);
    let mut detail = serde_json::Map::new();
    detail.insert("auto_vector_weight".into(), serde_json::json!(weights.vector));
    Ok(fused_window(fused, &vector, &keyword, fetch, depth, detail))
}

/// The first `depth` of `fused` rows, each with its rank and raw score in each lane that
/// returned it (lanes fetched `fetch` deep) and `detail`.
fn fused_window(
    fused: Vec<(usize, f32)>,
    vector: &[(usize, f32)],
    keyword: &[(usize, f32)],
    fetch: usize,
    depth: usize,
    detail: serde_json::Map<String, serde_json::Value>,
) -> Ranked {
    let vector_rank: HashMap<usize, usize> = vector.iter().enumerate().map(|(rank, h)| (h.0, rank)).collect();
    let keyword_rank: HashMap<usize, usize> = keyword.iter().enumerate().map(|(rank, h)| (h.0, rank)).collect();
    // Every row either lane can give was fused, and all of them fit in `depth`.
    let exhausted = vector.len() < fetch && keyword.len() < fetch && fused.len() <= depth;
    let rows = fused
        .into_iter()
        .take(depth)
        .map(|(row, score)| {
            let mut lanes = detail.clone();
            if let Some(&rank) = vector_rank.get(&row) {
                lanes.extend(lane_detail("vector", rank + 1, vector[rank].1));
            }
            if let Some(&rank) = keyword_rank.get(&row) {
                lanes.extend(lane_detail("keyword", rank + 1, keyword[rank].1));
            }
            (row, score, lanes)
        })
        .collect();
    Ranked { rows, exhausted }
}

/// The facets of the documents the search could return: those the filters allow, and in
/// keyword mode only those with a row holding a query word.
fn count_facets(placed: &[Placed<'_>], request: &SearchRequest) -> Result<Facets, ServerError> {
    let mut counter = FacetCounter::new(&request.facets, request.facet_size)?;
    for at in placed {
        let matching = match request.mode {
            Mode::Keyword => Some(at.part.searcher.keyword_matching_rows(&request.query)?),
            Mode::Vector | Mode::Hybrid | Mode::Auto => None,
        };
        counter.count(at.part.searcher.snapshot(), at.allowed.as_ref(), matching.as_deref());
    }
    Ok(counter.finish())
}

/// Every part's nearest rows, merged best first (cosines mean the same in every part).
fn vector_lane(placed: &[Placed<'_>], query: &[f32], k: usize) -> Result<Vec<(usize, f32)>, ServerError> {
    let mut hits = Vec::new();
    for at in placed {
        hits.extend(
            at.part
                .searcher
                .vector_lane(query, k, at.allowed.as_ref())?
                .into_iter()
                .map(|(row, score)| (at.offset + row, score)),
        );
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
        let found = at
            .part
            .searcher
            .keyword_lane_with_stats(query, k, at.allowed.as_ref(), &stats)?;
        hits.extend(found.into_iter().map(|(row, score)| (at.offset + row, score)));
    }
    best_first(&mut hits, k);
    Ok(hits)
}

/// The part holding a row numbered among all parts' rows, and the row's number in it.
fn locate<'p, 'a>(placed: &'p [Placed<'a>], row: usize) -> (&'p Placed<'a>, usize) {
    let at = &placed[placed.partition_point(|p| p.offset <= row) - 1];
    (at, row - at.offset)
}

/// The golden record of row `local` of the part `at`.
fn result_in(
    at: &Placed<'_>,
    local: usize,
    score: f32,
    lanes: serde_json::Map<String, serde_json::Value>,
) -> ChunkResult {
    let mut result = chunk_result(at.part.searcher.snapshot(), local, score, lanes);
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
