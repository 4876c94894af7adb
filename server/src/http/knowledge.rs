//! The seed-000 knowledge-layer API: collections, documents (uploads as jobs), job status, health.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use quarry_indexer::pipeline::VersionChange;
use serde::Deserialize;
use serde_json::json;

use super::user_scope::{parse_user_id, USER_ID_KEY};
use super::ApiJson;
use crate::app::HttpSettings;
use crate::collection::{validate_name, Collection, CollectionRecord};
use crate::http::api_error::ApiError;
use crate::ingest::jobs::{submit, uploads_dir, Submitted, Upload};
use crate::ingest::online::publish;
use crate::ingest::Ingestion;
use crate::records::{CollectionInfo, FileInfo, IngestionJobStatus, JobState};
use crate::registry::CollectionRegistry;

fn not_found(name: &str) -> ApiError {
    ApiError::NotFound(format!("Collection '{name}' not found"))
}

pub(crate) fn find(collections: &CollectionRegistry, name: &str) -> Result<Arc<Collection>, ApiError> {
    collections.get(name).ok_or_else(|| not_found(name))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateCollection {
    name: String,
    description: Option<String>,
    #[serde(default)]
    metadata: serde_json::Map<String, serde_json::Value>,
}

pub async fn create_collection(
    State(collections): State<Arc<CollectionRegistry>>,
    ApiJson(body): ApiJson<CreateCollection>,
) -> Result<(StatusCode, Json<CollectionInfo>), ApiError> {
    validate_name(&body.name).map_err(ApiError::BadRequest)?;
    if collections.get(&body.name).is_some() {
        return Err(ApiError::BadRequest(format!(
            "Collection '{}' already exists",
            body.name
        )));
    }
    let root = collections.managed_root(&body.name);
    std::fs::create_dir_all(&root).map_err(|e| ApiError::Internal(format!("{}: {e}", root.display())))?;
    let record = CollectionRecord {
        name: body.name,
        uri: root.display().to_string(),
        managed: true,
        description: body.description,
        metadata: body.metadata,
        created_at: chrono::Utc::now(),
    };
    let collection = collections.add(record).await.map_err(ApiError::Internal)?;
    Ok((StatusCode::CREATED, Json(collection.info())))
}

pub async fn list_collections(State(collections): State<Arc<CollectionRegistry>>) -> Json<Vec<CollectionInfo>> {
    Json(collections.all().iter().map(|c| c.info()).collect())
}

pub async fn get_collection(
    State(collections): State<Arc<CollectionRegistry>>,
    Path(name): Path<String>,
) -> Result<Json<CollectionInfo>, ApiError> {
    Ok(Json(find(&collections, &name)?.info()))
}

/// Deletes a collection and, for one created here, its snapshot. The collection behind
/// /api/rag cannot be deleted (its routes would have nothing to work on): a 409 says so.
pub async fn delete_collection(
    State(collections): State<Arc<CollectionRegistry>>,
    State(settings): State<Arc<HttpSettings>>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&collections, &name)?;
    let backs = match name.as_str() {
        rag if rag == settings.rag_collection => Some("/api/rag (--rag-collection)"),
        library if library == settings.knowledge_collection => Some("/api/knowledge (--knowledge-collection)"),
        _ => None,
    };
    if let Some(route) = backs {
        return Err(ApiError::Conflict(format!(
            "collection '{name}' backs {route} and cannot be deleted; delete its documents instead"
        )));
    }
    let _guard = collection.publish_lock.lock().await;
    collections
        .remove(&collection)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(
        json!({ "message": format!("Collection '{name}' deleted"), "name": name, "snapshot_deleted": collection.record.managed }),
    ))
}

pub async fn reload_collection(
    State(collections): State<Arc<CollectionRegistry>>,
    Path(name): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&collections, &name)?;
    let _guard = collection.publish_lock.lock().await;
    let changed = collections.reload(&collection).await.map_err(|e| {
        ApiError::Internal(format!(
            "reload of '{name}' failed; the previous version keeps serving: {e}"
        ))
    })?;
    collections.refresh_snapshot_metric();
    Ok(Json(json!({ "reloaded": changed, "collection": collection.info() })))
}

/// The last path component of an uploaded file's name.
pub(crate) fn clean_file_name(name: &str) -> String {
    let name = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    if name.is_empty() {
        "upload".into()
    } else {
        name.to_string()
    }
}

/// The most tags an upload may give its files, and the longest tag.
const MAX_UPLOAD_TAGS: usize = 32;
const MAX_TAG_CHARS: usize = 64;

/// Adds the comma-separated tags of an upload's `tags` field to `tags` (trimmed, empty ones
/// and repeats dropped).
pub(crate) fn parse_tags(text: &str, tags: &mut Vec<String>) -> Result<(), ApiError> {
    for tag in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(ApiError::BadRequest(format!(
                "tags: '{tag}' is longer than {MAX_TAG_CHARS} characters"
            )));
        }
        if !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_string());
        }
    }
    if tags.len() > MAX_UPLOAD_TAGS {
        return Err(ApiError::BadRequest(format!(
            "tags: {} given, at most {MAX_UPLOAD_TAGS}",
            tags.len()
        )));
    }
    Ok(())
}

/// The request's `Idempotency-Key`: a retried upload with the key of an earlier one gets
/// that upload's answer instead of a second job.
fn idempotency_key(headers: &axum::http::HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    match value.to_str() {
        Ok(key) if (1..=255).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(Some(key.to_string()))
        }
        _ => Err(ApiError::BadRequest(
            "Idempotency-Key must be 1 to 255 visible ASCII characters".into(),
        )),
    }
}

/// Files (multipart fields `files`) become one ingestion job; an optional `tags` field
/// (comma-separated) tags every document of them, for search filters, and an optional
/// `user_id` field makes them that user's ([`super::user_scope`]).
pub async fn upload_documents(
    State(state): State<Arc<Ingestion>>,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let collection = find(&state.collections, &name)?;
    let key = idempotency_key(&headers)?;
    let mut multipart = multipart.map_err(|e| {
        ApiError::BadRequest(format!(
            "expected multipart/form-data with a 'files' field: {}",
            e.body_text()
        ))
    })?;
    let job_id = uuid::Uuid::new_v4().to_string();
    let dir = uploads_dir(&state, &job_id);
    let mut uploads = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    let mut user_id: Option<String> = None;
    let cleanup = |dir: &std::path::Path| {
        let _ = std::fs::remove_dir_all(dir);
    };
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => {
                cleanup(&dir);
                return Err(if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge(e.body_text())
                } else {
                    ApiError::BadRequest(e.body_text())
                });
            }
        };
        let Some(file_name) = field.file_name().map(clean_file_name) else {
            let read = match field.name() {
                Some("tags") => {
                    let text = field
                        .text()
                        .await
                        .map_err(|e| ApiError::BadRequest(format!("tags: {}", e.body_text())));
                    text.and_then(|text| parse_tags(&text, &mut tags))
                }
                Some(USER_ID_KEY) => {
                    let text = field
                        .text()
                        .await
                        .map_err(|e| ApiError::BadRequest(format!("{USER_ID_KEY}: {}", e.body_text())));
                    text.and_then(|text| parse_user_id(USER_ID_KEY, &text))
                        .map(|id| user_id = Some(id))
                }
                _ => Ok(()),
            };
            if let Err(e) = read {
                cleanup(&dir);
                return Err(e);
            }
            continue;
        };
        let content_type = field.content_type().map(str::to_string);
        let bytes = match field.bytes().await {
            Ok(bytes) => bytes,
            Err(e) => {
                cleanup(&dir);
                return Err(if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge(e.body_text())
                } else {
                    ApiError::BadRequest(e.body_text())
                });
            }
        };
        let file_id = format!("file-{}", uuid::Uuid::new_v4().simple());
        let path = dir.join(&file_id);
        if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &bytes)) {
            cleanup(&dir);
            return Err(ApiError::Internal(format!("saving the upload: {e}")));
        }
        uploads.push(Upload {
            file_id,
            file_name,
            path,
            size: bytes.len() as u64,
            tags: Vec::new(),
            user_id: None,
            content_type,
        });
    }
    if uploads.is_empty() {
        return Err(ApiError::BadRequest(
            "no files uploaded: send one or more multipart fields named 'files' with a filename".into(),
        ));
    }
    for upload in &mut uploads {
        upload.tags = tags.clone();
        upload.user_id = user_id.clone();
    }
    let file_ids: Vec<String> = uploads.iter().map(|u| u.file_id.clone()).collect();
    let count = uploads.len();
    match submit(&state, &collection, job_id, uploads, key) {
        Ok(Submitted::New(job_id)) => Ok((
            StatusCode::ACCEPTED,
            Json(
                json!({ "job_id": job_id, "file_ids": file_ids, "message": format!("Ingestion job submitted for {count} file(s)") }),
            ),
        )),
        Ok(Submitted::Earlier(earlier)) => {
            // The retry's copies go; the earlier job's answer is repeated.
            cleanup(&dir);
            let file_ids: Vec<&str> = earlier.file_details.iter().map(|f| f.file_id.as_str()).collect();
            let message = format!("Ingestion job submitted for {} file(s)", file_ids.len());
            Ok((
                StatusCode::ACCEPTED,
                Json(json!({ "job_id": earlier.job_id, "file_ids": file_ids, "message": message })),
            ))
        }
        Err(e) => {
            cleanup(&dir);
            Err(ApiError::Internal(format!("recording the upload: {e}")))
        }
    }
}

pub async fn list_documents(
    State(collections): State<Arc<CollectionRegistry>>,
    Path(name): Path<String>,
) -> Result<Json<Vec<FileInfo>>, ApiError> {
    Ok(Json(find(&collections, &name)?.list_files()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteFiles {
    file_ids: Vec<String>,
}

pub async fn delete_documents(
    State(state): State<Arc<Ingestion>>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<DeleteFiles>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let collection = find(&state.collections, &name)?;
    if body.file_ids.is_empty() {
        return Err(ApiError::BadRequest("file_ids must name at least one file".into()));
    }
    let (successful, failed) = delete_files(&state, &collection, &body.file_ids).await?;
    Ok(Json(json!({
        "message": format!("Deleted {} of {} files", successful.len(), body.file_ids.len()),
        "successful": successful,
        "failed": failed,
        "total_deleted": successful.len(),
    })))
}

/// Deletes the files `ids` names (by id or name) from `collection`: their documents hidden in
/// a new version, their records gone. The ids deleted, and `{file_id, error}` for the others.
pub(crate) async fn delete_files(
    state: &Arc<Ingestion>,
    collection: &Arc<Collection>,
    ids: &[String],
) -> Result<(Vec<String>, Vec<serde_json::Value>), ApiError> {
    let _guard = collection.publish_lock.lock().await;
    let files = collection.list_files();
    let mut successful = Vec::new();
    let mut failed = Vec::new();
    let mut tombstones = Vec::new();
    let mut removed: HashSet<String> = HashSet::new();
    for id in ids {
        let matching: Vec<&FileInfo> = files
            .iter()
            .filter(|f| &f.file_id == id || &f.file_name == id)
            .filter(|f| !removed.contains(&f.file_id))
            .collect();
        if matching.is_empty() {
            failed.push(json!({ "file_id": id, "error": "Not found or already deleted" }));
            continue;
        }
        for file in matching {
            removed.insert(file.file_id.clone());
            if let Some(ids) = file.metadata.get("doc_ids").and_then(|v| v.as_array()) {
                tombstones.extend(ids.iter().filter_map(|v| v.as_str().map(str::to_string)));
            }
        }
        successful.push(id.clone());
    }
    if !tombstones.is_empty() {
        publish(
            state,
            collection,
            VersionChange {
                documents: Vec::new(),
                tombstones,
                embedded_chunks: 0,
            },
        )
        .await
        .map_err(ApiError::Internal)?;
    }
    collection
        .files
        .lock()
        .expect("files lock")
        .retain(|f| !removed.contains(&f.file_id));
    state
        .collections
        .save_files(collection)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((successful, failed))
}

/// A job's IngestionJobStatus; a pending one says where it waits in `metadata`
/// (`queue_position` of `queue_length`: the pending jobs, oldest first).
pub async fn job_status(
    State(state): State<Arc<Ingestion>>,
    Path(job_id): Path<String>,
) -> Result<Json<IngestionJobStatus>, ApiError> {
    let mut job = state
        .jobs
        .get(&job_id)
        .ok_or_else(|| ApiError::NotFound(format!("Job '{job_id}' not found")))?;
    if job.status == JobState::Pending {
        let mut pending: Vec<(chrono::DateTime<chrono::Utc>, String)> = state
            .jobs
            .all()
            .into_iter()
            .filter(|j| j.status == JobState::Pending)
            .map(|j| (j.submitted_at, j.job_id))
            .collect();
        pending.sort();
        if let Some(at) = pending.iter().position(|(_, id)| *id == job_id) {
            job.metadata.insert("queue_position".into(), (at + 1).into());
            job.metadata.insert("queue_length".into(), pending.len().into());
        }
    }
    Ok(Json(job))
}

pub async fn health(State(collections): State<Arc<CollectionRegistry>>) -> impl IntoResponse {
    let collections = collections.all();
    let details: serde_json::Map<String, serde_json::Value> = collections
        .iter()
        .map(|c| {
            (
                c.name().to_string(),
                json!({ "version": c.version(), "error": c.load_error.read().expect("load error lock").clone() }),
            )
        })
        .collect();
    let unhealthy = collections
        .iter()
        .any(|c| c.load_error.read().expect("load error lock").is_some());
    let status = if unhealthy {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (
        status,
        Json(
            json!({ "status": if unhealthy { "unhealthy" } else { "healthy" }, "backend": "quarry", "collections": details }),
        ),
    )
}
