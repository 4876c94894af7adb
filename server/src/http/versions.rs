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
use crate::http::api_error::ApiError;
use crate::registry::CollectionRegistry;

pub async fn list(
    State(collections): State<Arc<CollectionRegistry>>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&collections, &name)?;
    let served = collection.version();
    match list_versions(&collection.record.uri, collections.store()).await {
        Ok(listing) => Ok(Json(
            json!({ "collection": name, "latest": listing.latest, "served_version": served, "versions": listing.versions }),
        )),
        // A collection created here that nothing was uploaded to yet.
        Err(IndexerError::NoSnapshot { .. }) if collection.record.managed => Ok(Json(
            json!({ "collection": name, "latest": null, "served_version": null, "versions": [] }),
        )),
        Err(e) => Err(e.into()),
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
    State(collections): State<Arc<CollectionRegistry>>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<RollbackRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&collections, &name)?;
    let target = body.version.map_or(RollbackTarget::Previous, RollbackTarget::Version);
    let options = RollbackOptions {
        target,
        verify: body.verify,
        dry_run: body.dry_run,
    };
    let _guard = collection.publish_lock.lock().await;
    let report = roll_back(&collection.record.uri, collections.store(), &options)
        .await
        .map_err(ApiError::from)?;
    if report.changed && !report.dry_run {
        collections.reload(&collection).await.map_err(|e| {
            ApiError::Internal(format!(
                "LATEST of '{name}' now names {}, but loading it failed; the previous version keeps serving: {e}",
                report.to
            ))
        })?;
        collections.refresh_snapshot_metric();
    }
    Ok(Json(json!({ "rollback": report, "collection": collection.info() })))
}
