//! POST /v1/collections/{name}/search: the Searcher behind the bounded search queue.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;

use super::knowledge::find;
use super::ApiJson;
use crate::api_error::ApiError;
use crate::app::AppState;
use crate::result::RetrievalResult;
use crate::searcher::SearchRequest;

pub async fn search(State(state): State<Arc<AppState>>, Path(name): Path<String>, ApiJson(request): ApiJson<SearchRequest>) -> Result<Json<RetrievalResult>, ApiError> {
    let collection = find(&state, &name)?;
    run_search(&state, collection.searcher(), request).await.map(Json)
}

/// Validates and runs a search on one snapshot version; an empty collection answers no chunks.
pub(crate) async fn run_search(state: &AppState, searcher: Option<Arc<crate::searcher::Searcher>>, request: SearchRequest) -> Result<RetrievalResult, ApiError> {
    let Some(searcher) = searcher else {
        return Ok(RetrievalResult {
            chunks: Vec::new(),
            total_tokens: 0,
            query: request.query.clone(),
            backend: "quarry".into(),
            success: true,
            error_message: None,
            mode: request.mode.as_str().into(),
            underfilled: true,
        });
    };
    let mode = request.mode;
    let outcome = state.search.run(&state.metrics, move || searcher.search(&request)).await??;
    state.metrics.lane_seconds.with_label_values(&["embed"]).observe(outcome.timings.embed_secs);
    state.metrics.lane_seconds.with_label_values(&[mode.as_str()]).observe(outcome.timings.search_secs);
    Ok(outcome.result)
}
