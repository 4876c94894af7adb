//! Retrieval quality of a loaded snapshot of a BEIR corpus: nDCG@10, recall@10/100 and
//! MRR@10 per mode (plus exact dense search), and the vector lane's ANN recall@10 against
//! exact search over the same vectors. Document ids are the BEIR ids in the URI fragment.

use std::collections::{HashMap, HashSet};

use quarry_datasets::beir::BeirDataset;
use quarry_datasets::metrics::{summarize, Summary};
use serde::Serialize;

use crate::error::ServerError;
use crate::search::query_syntax::QuerySyntax;
use crate::search::scope::SearchScope;
use crate::search::searcher::{Mode, SearchRequest, Searcher};

/// Chunks fetched per query so that 100 distinct documents are (nearly always) covered.
const CHUNK_DEPTH: usize = 300;

/// The metrics of one mode.
#[derive(Debug, Clone, Serialize)]
pub struct ModeResult {
    pub mode: String,
    pub summary: Summary,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// The mode a search gets when it names none.
    pub default_mode: String,
    pub snapshot: String,
    pub version: String,
    pub index: String,
    pub queries: usize,
    pub modes: Vec<ModeResult>,
    pub ann_recall_at_10: f64,
    pub mean_query_embed_ms: f64,
    /// Each mode's ranking of each query: documents (BEIR ids) best first with the score of
    /// their best chunk (a TREC run, [`EvalReport::trec_run`]).
    #[serde(skip)]
    pub runs: HashMap<String, HashMap<String, Vec<(String, f32)>>>,
    /// The weight `auto` gave the vector lane for each query (the keyword lane's is 1 minus it).
    pub auto_vector_weights: std::collections::BTreeMap<String, f32>,
}

impl EvalReport {
    pub fn mode(&self, name: &str) -> Option<&Summary> {
        self.modes.iter().find(|m| m.mode == name).map(|m| &m.summary)
    }

    /// One mode's run in TREC format (`qid Q0 doc rank score tag`), queries in id order.
    pub fn trec_run(&self, mode: &str) -> Option<String> {
        let runs = self.runs.get(mode)?;
        let mut queries: Vec<&String> = runs.keys().collect();
        queries.sort();
        let tag = mode.replace(' ', "_").replace(['(', ')'], "");
        let mut out = String::new();
        for query in queries {
            for (rank, (doc, score)) in runs[query].iter().enumerate() {
                out.push_str(&format!("{query} Q0 {doc} {} {score} quarry-{tag}\n", rank + 1));
            }
        }
        Some(out)
    }
}

/// Documents ranked for one query: rows mapped to BEIR ids, best chunk per document, with its score.
fn documents_of(searcher: &Searcher, rows: impl Iterator<Item = (usize, f32)>, depth: usize) -> Vec<(String, f32)> {
    let snapshot = searcher.snapshot();
    let mut seen = HashSet::new();
    let mut ranked = Vec::new();
    for (row, score) in rows {
        let document = snapshot.document_of(row);
        let id = document
            .uri
            .rsplit_once('#')
            .map(|(_, id)| id.to_string())
            .unwrap_or_else(|| document.doc_id.clone());
        if seen.insert(id.clone()) {
            ranked.push((id, score));
            if ranked.len() == depth {
                break;
            }
        }
    }
    ranked
}

/// Runs every judged query of `dataset` through each mode, with the default request.
pub fn evaluate(searcher: &Searcher, dataset: &BeirDataset) -> Result<EvalReport, ServerError> {
    evaluate_with(searcher, dataset, &SearchRequest::default())
}

/// Runs every judged query of `dataset` through each mode, each request as `base` but for its
/// query, mode, depth and syntax (`base.typo_tolerance: false` measures the lanes without it).
pub fn evaluate_with(
    searcher: &Searcher,
    dataset: &BeirDataset,
    base: &SearchRequest,
) -> Result<EvalReport, ServerError> {
    let queries = dataset.judged_queries();
    if queries.is_empty() {
        return Err(ServerError::InvalidRequest("the dataset has no judged queries".into()));
    }
    let snapshot = searcher.snapshot();
    let row_of: HashMap<&str, usize> = snapshot
        .chunks()
        .enumerate()
        .map(|(row, c)| (c.chunk_id.as_str(), row))
        .collect();
    let mut runs: HashMap<String, HashMap<String, Vec<(String, f32)>>> = HashMap::new();
    let mut ann_recall = 0.0;
    let mut embed_secs = 0.0;
    let mut auto_vector_weights = std::collections::BTreeMap::new();
    let scope = SearchScope::one(searcher);
    for query in &queries {
        let started = std::time::Instant::now();
        let vector = searcher.embed_query(&query.text)?;
        embed_secs += started.elapsed().as_secs_f64();
        // A judged set's queries are text, not query syntax (Cranfield's "-dash" is a
        // transcribed dash, not a word to leave out).
        let request = |mode: Mode| SearchRequest {
            query: query.text.clone(),
            mode,
            top_k: CHUNK_DEPTH,
            query_syntax: QuerySyntax::Plain,
            ..base.clone()
        };
        // Read once for every mode: the typed embedding and, under typo tolerance, the
        // corrected query's.
        let readings = scope.readings(&request(Mode::Auto), Some(vector.clone()))?;
        for mode in Mode::ALL {
            let result = scope.search_with_readings(&request(mode), &readings)?.result;
            if mode == Mode::Auto {
                let weight = result
                    .chunks
                    .first()
                    .and_then(|c| c.metadata["auto_vector_weight"].as_f64());
                let weight = weight.map_or_else(|| searcher.auto_weights(&query.text).vector, |w| w as f32);
                auto_vector_weights.insert(query.id.clone(), weight);
            }
            let rows = result
                .chunks
                .iter()
                .filter_map(|c| row_of.get(c.chunk_id.as_str()).map(|&row| (row, c.score)));
            runs.entry(mode.as_str().to_string())
                .or_default()
                .insert(query.id.clone(), documents_of(searcher, rows, 100));
        }
        // Exact search over the same readings (a row by its best), as the vector mode ranks.
        let exact_readings = readings.nearest(
            CHUNK_DEPTH,
            |reading| searcher.exact_vector_lane(reading, CHUNK_DEPTH),
            |row| snapshot.embedding(row).ok(),
        )?;
        runs.entry("vector (exact)".into()).or_default().insert(
            query.id.clone(),
            documents_of(searcher, exact_readings.iter().map(|h| (h.row, h.score)), 100),
        );
        // The index's recall, of the query as typed.
        let exact = searcher.exact_vector_lane(&vector, 10)?;
        let approximate: Vec<usize> = searcher
            .vector_lane(&vector, 10, None)?
            .into_iter()
            .map(|h| h.row)
            .collect();
        let truth = &exact[..exact.len().min(10)];
        ann_recall += truth.iter().filter(|h| approximate.contains(&h.row)).count() as f64 / truth.len().max(1) as f64;
    }
    let qrels: HashMap<String, HashMap<String, i32>> = queries
        .iter()
        .map(|q| (q.id.clone(), dataset.qrels[&q.id].clone()))
        .collect();
    let ids_only = |mode: &str| -> HashMap<String, Vec<String>> {
        runs[mode]
            .iter()
            .map(|(q, ranked)| (q.clone(), ranked.iter().map(|(d, _)| d.clone()).collect()))
            .collect()
    };
    let mut modes: Vec<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
    modes.insert(1, "vector (exact)");
    Ok(EvalReport {
        default_mode: Mode::default().as_str().to_string(),
        snapshot: snapshot.uri.clone(),
        version: snapshot.manifest.version.clone(),
        index: snapshot.manifest.index.params.factory(),
        queries: queries.len(),
        modes: modes
            .iter()
            .map(|m| ModeResult {
                mode: m.to_string(),
                summary: summarize(&ids_only(m), &qrels),
            })
            .collect(),
        ann_recall_at_10: ann_recall / queries.len() as f64,
        mean_query_embed_ms: embed_secs * 1e3 / queries.len() as f64,
        runs,
        auto_vector_weights,
    })
}
