//! POST /v1/collections/{name}/search: the Searcher behind the bounded search queue; and
//! POST /v1/search: several collections (or all) searched as one.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;

use serde_json::{Map, Value};

use super::knowledge::find;
use super::llm_stages::{compress, llm_for, rewrite, take_llm_stages, LlmStages};
use super::ApiJson;
use crate::app::HttpSettings;
use crate::collection::Collection;
use crate::http::api_error::ApiError;
use crate::http::search_queue::SearchQueue;
use crate::metrics::Metrics;
use crate::registry::CollectionRegistry;
use crate::search::facets::empty_facets;
use crate::search::result::RetrievalResult;
use crate::search::scope::SearchScope;
use crate::search::searcher::{Mode, SearchRequest, SearchTimings};

/// What a search route needs: the collections, the search pool, and the metrics it times.
#[derive(Clone)]
pub struct SearchParts {
    pub collections: Arc<CollectionRegistry>,
    pub queue: Arc<SearchQueue>,
    pub metrics: Arc<Metrics>,
}

pub async fn search(
    State(parts): State<SearchParts>,
    State(settings): State<Arc<HttpSettings>>,
    Path(name): Path<String>,
    ApiJson(mut body): ApiJson<Map<String, Value>>,
) -> Result<Json<RetrievalResult>, ApiError> {
    let stages = take_llm_stages(&mut body)?;
    let request = search_request(body)?;
    let collection = find(&parts.collections, &name)?;
    with_llm_stages(&settings, stages, request, |request| {
        run_search(&parts, &collection, request)
    })
    .await
    .map(Json)
}

fn search_request(body: Map<String, Value>) -> Result<SearchRequest, ApiError> {
    // The error names the field it is about (`query_syntax: unknown variant ...`).
    serde_path_to_error::deserialize(Value::Object(body))
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// Runs `search` with seed 001's LLM stages around it when the body asked for them
/// ([`super::llm_stages`]).
async fn with_llm_stages<F>(
    settings: &HttpSettings,
    stages: LlmStages,
    mut request: SearchRequest,
    search: impl FnOnce(SearchRequest) -> F,
) -> Result<RetrievalResult, ApiError>
where
    F: std::future::Future<Output = Result<RetrievalResult, ApiError>>,
{
    if !stages.any() {
        return search(request).await;
    }
    let llm = llm_for(settings.llm.as_ref())?;
    request.validate()?;
    if request.query.trim().is_empty() {
        return Err(ApiError::BadRequest(
            "rewrite_query and compress read the query: give one beside similar_to".into(),
        ));
    }
    let rewritten = match stages.rewrite {
        true => Some(rewrite(&llm, &request.query, &stages.history).await?),
        false => None,
    };
    if let Some(query) = &rewritten {
        request.query = query.clone();
    }
    let query = request.query.clone();
    let mut result = search(request).await?;
    if stages.compress {
        compress(&llm, &query, &mut result).await?;
    }
    result.rewritten_query = rewritten;
    Ok(result)
}

/// Validates and runs a search on the version `collection` serves. A collection without one
/// answers no chunks: with `success: true` when nothing was published yet, with `success:
/// false` and the reason in `error_message` when its snapshot failed to load (seed 000's
/// retriever reports such failures in the result instead of raising).
pub(crate) async fn run_search(
    parts: &SearchParts,
    collection: &Collection,
    request: SearchRequest,
) -> Result<RetrievalResult, ApiError> {
    let Some(searcher) = collection.searcher() else {
        request.validate()?;
        if let Some(similar_to) = &request.similar_to {
            // No version served: no chunk or document to rank by.
            return Err(similar_to.not_found().into());
        }
        let load_error = collection.load_error.read().expect("load error lock").clone();
        return Ok(RetrievalResult {
            chunks: Vec::new(),
            total_tokens: 0,
            query: request.query.clone(),
            backend: "quarry".into(),
            success: load_error.is_none(),
            error_message: load_error.map(|e| format!("the collection's snapshot did not load: {e}")),
            mode: request.mode.as_str().into(),
            underfilled: true,
            facets: (!request.facets.is_empty()).then(|| empty_facets(&request.facets)),
            rewritten_query: None,
            suggestion: None,
        });
    };
    let mode = request.mode;
    let outcome = parts
        .queue
        .run(&parts.metrics, move || searcher.search(&request))
        .await??;
    record_timings(&parts.metrics, mode, outcome.timings);
    Ok(outcome.result)
}

fn record_timings(metrics: &Metrics, mode: Mode, timings: SearchTimings) {
    metrics
        .lane_seconds
        .with_label_values(&["embed"])
        .observe(timings.embed_secs);
    metrics
        .lane_seconds
        .with_label_values(&[mode.as_str()])
        .observe(timings.search_secs);
}

/// `POST /v1/search`: a collection search's body, plus `collections` (names; omitted, every
/// collection the server has). Results are ranked as if one collection held them all, each
/// naming its collection in `metadata.collection`.
pub async fn search_all(
    State(parts): State<SearchParts>,
    State(settings): State<Arc<HttpSettings>>,
    ApiJson(mut body): ApiJson<Map<String, Value>>,
) -> Result<Json<RetrievalResult>, ApiError> {
    let stages = take_llm_stages(&mut body)?;
    let names = match body.remove("collections") {
        None | Some(serde_json::Value::Null) => parts.collections.names(),
        Some(names) => {
            let names: Vec<String> = serde_json::from_value(names)
                .map_err(|e| ApiError::BadRequest(format!("collections must be a list of collection names: {e}")))?;
            if names.is_empty() {
                return Err(ApiError::BadRequest(
                    "collections must name at least one collection (leave it out to search them all)".into(),
                ));
            }
            let mut unique: Vec<String> = Vec::with_capacity(names.len());
            for name in names {
                if !unique.contains(&name) {
                    unique.push(name);
                }
            }
            unique
        }
    };
    let request = search_request(body)?;
    let mut searched = Vec::with_capacity(names.len());
    for name in names {
        // An empty collection (or one whose snapshot failed to load) adds nothing.
        if let Some(searcher) = find(&parts.collections, &name)?.searcher() {
            searched.push((name, searcher));
        }
    }
    let search = |request: SearchRequest| async {
        let mode = request.mode;
        let outcome = parts
            .queue
            .run(&parts.metrics, move || {
                SearchScope::collections(&searched).search(&request)
            })
            .await??;
        record_timings(&parts.metrics, mode, outcome.timings);
        Ok(outcome.result)
    };
    with_llm_stages(&settings, stages, request, search).await.map(Json)
}
