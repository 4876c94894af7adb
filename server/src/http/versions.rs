//! A collection's snapshot versions over HTTP: the list `quarry versions` prints, and a
//! rollback (`quarry rollback`) that the collection serves when the request returns.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;
use quarry_indexer::snapshot::{list_versions, roll_back, RollbackOptions, RollbackTarget};
use quarry_indexer::IndexerError;
use serde::Deserialize;
use serde_json::json;

use super::knowledge::find;
use super::ApiJson;
use crate::app::AppState;
use crate::http::api_error::ApiError;

pub async fn list(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&state, &name)?;
    let served = collection.version();
    match list_versions(&collection.record.uri, &state.options.store).await {
        Ok(listing) => Ok(Json(
            json!({ "collection": name, "latest": listing.latest, "served_version": served, "versions": listing.versions }),
        )),
        // A collection created here that nothing was uploaded to yet.
        Err(IndexerError::NoSnapshot { .. }) if collection.record.managed => Ok(Json(
            json!({ "collection": name, "latest": null, "served_version": null, "versions": [] }),
        )),
        Err(e) => Err(ApiError::Internal(e.to_string())),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// A version id; left out, the previous one.
    version: Option<String>,
    #[serde(default = "yes")]
    verify: bool,
    #[serde(default)]
    dry_run: bool,
}

fn yes() -> bool {
    true
}

/// Rolls the collection's root back (or forward) to a version and serves it before answering.
pub async fn rollback(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<RollbackRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&state, &name)?;
    let target = body.version.map_or(RollbackTarget::Previous, RollbackTarget::Version);
    let options = RollbackOptions {
        target,
        verify: body.verify,
        dry_run: body.dry_run,
    };
    let _guard = collection.publish_lock.lock().await;
    let report = roll_back(&collection.record.uri, &state.options.store, &options)
        .await
        .map_err(|e| match e {
            IndexerError::NoSuchVersion { .. } | IndexerError::NoSnapshot { .. } => ApiError::NotFound(e.to_string()),
            IndexerError::NoEarlierVersion { .. }
            | IndexerError::LatestMoved { .. }
            | IndexerError::Snapshot { .. }
            | IndexerError::Checksum { .. } => ApiError::Conflict(e.to_string()),
            other => ApiError::Internal(other.to_string()),
        })?;
    if report.changed && !report.dry_run {
        state.reload_collection(&collection).await.map_err(|e| {
            ApiError::Internal(format!(
                "LATEST of '{name}' now names {}, but loading it failed; the previous version keeps serving: {e}",
                report.to
            ))
        })?;
        state.refresh_snapshot_metric();
    }
    Ok(Json(json!({ "rollback": report, "collection": collection.info() })))
}
