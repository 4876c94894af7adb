//! The seed-002 RAG contract, exactly: POST /api/rag/ingest (created | updated | unchanged by
//! content hash; the response holds status, documentId, chunkCount and nothing else) and
//! POST /api/rag/search (topK 1..20, default 5; minScore 0..1; filters source / tags).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use quarry_indexer::parse::doc_id_for;
use quarry_indexer::pipeline::VersionChange;
use quarry_indexer::source::RawDocument;
use serde_json::{json, Map, Value};

use super::search::{run_search, SearchParts};
use super::user_scope::{scope_to_user, user_id_member, USER_ID_KEY};
use crate::app::HttpSettings;
use crate::http::api_error::{ApiError, RagError};
use crate::ingest::online::{
    chunker_for, process_file, publish, serve_latest_before_change, FileSettings, ProcessedFile, StoredVectors,
};
use crate::ingest::Ingestion;
use crate::search::filter::Filters;
use crate::search::query_syntax::QuerySyntax;
use crate::search::result::ChunkResult;
use crate::search::searcher::SearchRequest;

pub(super) fn body_object(body: &Bytes) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::field("body", "request body must be a JSON object")),
        Err(e) => Err(ApiError::field("body", format!("request body is not valid JSON: {e}"))),
    }
}

fn required_string<'a>(object: &'a Map<String, Value>, field: &str) -> Result<&'a str, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Err(ApiError::field(field, format!("{field} is required"))),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ApiError::field(field, format!("{field} must be a string"))),
    }
}

fn string_list(object: &Map<String, Value>, field: &str) -> Result<Vec<String>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ApiError::field(field, format!("{field} must be an array of strings")))
            })
            .collect(),
        Some(_) => Err(ApiError::field(field, format!("{field} must be an array of strings"))),
    }
}

/// A float JSON number with no fractional part, as an integer (`5.0` is 5).
fn whole_number(value: &Value) -> Option<u64> {
    value
        .as_f64()
        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
        .map(|f| f as u64)
}

fn valid_source(source: &str) -> bool {
    !source.is_empty()
        && source
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

async fn ingest_document(
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let object = body_object(&body)?;
    let source = required_string(&object, "source")?.to_string();
    let path = required_string(&object, "path")?.to_string();
    let title = required_string(&object, "title")?.to_string();
    let text = required_string(&object, "text")?.to_string();
    if text.trim().is_empty() {
        return Err(ApiError::field("text", "text must be a non-empty string"));
    }
    if !valid_source(&source) {
        return Err(ApiError::field("source", "source must match pattern ^[a-zA-Z0-9_-]+$"));
    }
    let tags = string_list(&object, "tags")?;
    let hash = match object.get("hash") {
        None | Some(Value::Null) => None,
        Some(Value::String(h)) => Some(h.clone()),
        Some(_) => return Err(ApiError::field("hash", "hash must be a string")),
    };
    let extra = match object.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(ApiError::field("metadata", "metadata must be an object")),
    };
    let collection = state
        .collections
        .get(&settings.rag_collection)
        .ok_or_else(|| ApiError::Unavailable("the RAG collection is not loaded".into()))?;
    let uri = format!("rag://{source}/{path}");
    let document_id = doc_id_for(&uri);
    let content_hash = hash.unwrap_or_else(|| quarry_indexer::snapshot::sha256_hex(text.as_bytes()));

    let _guard = collection.publish_lock.lock().await;
    serve_latest_before_change(&state, &collection)
        .await
        .map_err(ApiError::Internal)?;
    let searcher = collection.searcher();
    let existing = searcher.as_ref().and_then(|searcher| {
        searcher
            .snapshot()
            .live_document(&document_id)
            .map(|(d, chunks, segment)| (d.content_hash.clone(), chunks, segment.to_string()))
    });
    if let Some((stored_hash, chunks, _)) = &existing {
        if *stored_hash == content_hash {
            return Ok(Json(
                json!({ "status": "unchanged", "documentId": document_id, "chunkCount": chunks }),
            ));
        }
    }
    // An update embeds only the chunks whose text the stored copy does not hold.
    let stored = match (&existing, &searcher) {
        (Some(_), Some(searcher)) => StoredVectors::ByText(
            searcher
                .snapshot()
                .live_vectors_by_text(&document_id)
                .map_err(|e| ApiError::Internal(e.to_string()))?,
        ),
        _ => StoredVectors::None,
    };
    let chunker = chunker_for(&state, collection.manifest().as_ref()).map_err(ApiError::Internal)?;
    let raw = RawDocument {
        uri,
        relative_path: "document.txt".into(),
        size: text.len() as u64,
        bytes: text.into_bytes().into(),
        etag: None,
        source: source.clone(),
        content_type: None,
    };
    let worker = state.clone();
    let ProcessedFile {
        mut documents,
        embedded_chunks,
        // Plain text: nothing of it goes unread.
        warnings: _,
    } = tokio::task::spawn_blocking(move || {
        process_file(
            &worker,
            &raw,
            FileSettings {
                chunker,
                stored: &stored,
                tags: &[],
                user_id: None,
                progress: &|_| {},
            },
        )
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(|failure| ApiError::field("text", failure.reason_with_detail()))?;
    let mut metadata = extra;
    metadata.insert("path".into(), path.clone().into());
    for document in &mut documents {
        document.record.title = title.clone();
        document.record.file_name = path.rsplit('/').next().unwrap_or(&path).to_string();
        document.record.tags = tags.clone();
        document.record.content_hash = content_hash.clone();
        document.record.metadata = Value::Object(metadata.clone()).to_string();
    }
    let chunk_count: usize = documents.iter().map(|d| d.chunks.len()).sum();
    let tombstones = existing
        .iter()
        .map(|(_, _, segment)| format!("{segment}/{document_id}"))
        .collect();
    publish(
        &state,
        &collection,
        VersionChange {
            documents,
            tombstones,
            embedded_chunks,
        },
    )
    .await
    .map_err(ApiError::Internal)?;
    let status = if existing.is_some() { "updated" } else { "created" };
    Ok(Json(
        json!({ "status": status, "documentId": document_id, "chunkCount": chunk_count }),
    ))
}

async fn search_documents(
    State(parts): State<SearchParts>,
    State(settings): State<Arc<HttpSettings>>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let object = body_object(&body)?;
    let query = required_string(&object, "query")?.to_string();
    if query.trim().is_empty() {
        return Err(ApiError::field("query", "query is required"));
    }
    let top_k = top_k(object.get("topK"), "topK")?;
    let min_score = match object.get("minScore") {
        None | Some(Value::Null) => 0.0,
        Some(value) => match value.as_f64() {
            Some(s) if (0.0..=1.0).contains(&s) => s as f32,
            _ => return Err(ApiError::field("minScore", "minScore must be a number between 0 and 1")),
        },
    };
    let filters = rag_filters(object.get("filters"), "filters")?;
    let result = rag_search(&parts, &settings, &query, top_k, min_score, filters).await?;
    let results: Vec<Value> = result
        .iter()
        .map(|chunk| {
            let m = &chunk.metadata;
            let path = m
                .get("document")
                .and_then(|d| d.get("path"))
                .cloned()
                .unwrap_or_else(|| m.get("uri").cloned().unwrap_or(Value::Null));
            json!({
                "text": chunk.content,
                "score": chunk.score,
                "metadata": {
                    "documentId": m.get("doc_id"),
                    "source": m.get("source"),
                    "path": path,
                    "title": m.get("title"),
                    "chunkIndex": m.get("chunk_index"),
                    "tags": m.get("tags"),
                }
            })
        })
        .collect();
    Ok(Json(
        json!({ "query": query, "resultCount": results.len(), "results": results }),
    ))
}

/// Seed 002's `topK` (or `ragTopK`): an integer 1..20 (`5.0` is 5), 5 when absent.
pub(super) fn top_k(value: Option<&Value>, field: &str) -> Result<usize, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(5),
        Some(value) => match value.as_u64().or_else(|| whole_number(value)) {
            Some(k) if (1..=20).contains(&k) => Ok(k as usize),
            _ => Err(ApiError::field(
                field,
                format!("{field} must be an integer between 1 and 20"),
            )),
        },
    }
}

/// Seed 002's `filters` (or `ragFilters`) object: `source` (a string) and `tags` (strings),
/// and `user_id` (seed 001's scoping: that user's documents only); `field` names it in errors.
pub(super) fn rag_filters(value: Option<&Value>, field: &str) -> Result<Filters, ApiError> {
    let mut filters = Filters::default();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(f)) => {
            match f.get("source") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => filters.source = vec![s.clone()],
                Some(_) => {
                    return Err(ApiError::field(
                        &format!("{field}.source"),
                        format!("{field}.source must be a string"),
                    ))
                }
            }
            filters.tags = string_list(f, "tags").map_err(|_| {
                ApiError::field(
                    &format!("{field}.tags"),
                    format!("{field}.tags must be an array of strings"),
                )
            })?;
            let user_field = format!("{field}.{USER_ID_KEY}");
            scope_to_user(&mut filters, user_id_member(f.get(USER_ID_KEY), &user_field)?);
        }
        Some(_) => return Err(ApiError::field(field, format!("{field} must be an object"))),
    }
    Ok(filters)
}

/// The RAG collection's best `top_k` chunks for `query` (seed 002's search): a store that is
/// not loaded, or did not load, is a 503.
pub(super) async fn rag_search(
    parts: &SearchParts,
    settings: &HttpSettings,
    query: &str,
    top_k: usize,
    min_score: f32,
    filters: Filters,
) -> Result<Vec<ChunkResult>, ApiError> {
    let collection = parts
        .collections
        .get(&settings.rag_collection)
        .ok_or_else(|| ApiError::Unavailable("the RAG collection is not loaded".into()))?;
    // Seed 002's callers are programs sending a question as it was asked: its quotes and
    // dashes (`-Xmx`) are text, not phrases and exclusions.
    let request = SearchRequest {
        query: query.to_string(),
        top_k,
        min_score: Some(min_score),
        filters,
        query_syntax: QuerySyntax::Plain,
        ..Default::default()
    };
    let result = run_search(parts, &collection, request).await.map_err(|e| match e {
        // The request's only free text is the query: what the search refuses is about it.
        ApiError::BadRequest(m) => ApiError::field("query", m),
        other => other,
    })?;
    // A store that did not load: seed 002's 503, not an empty answer.
    if !result.success {
        let reason = result.error_message.unwrap_or_default();
        return Err(ApiError::Unavailable(format!("the RAG collection: {reason}")));
    }
    Ok(result.chunks)
}

/// `POST /api/rag/ingest`, its errors in seed 002's shape.
pub async fn ingest(
    state: State<Arc<Ingestion>>,
    settings: State<Arc<HttpSettings>>,
    body: Bytes,
) -> Result<Json<Value>, RagError> {
    Ok(ingest_document(state, settings, body).await?)
}

/// `POST /api/rag/search`, its errors in seed 002's shape.
pub async fn search(
    parts: State<SearchParts>,
    settings: State<Arc<HttpSettings>>,
    body: Bytes,
) -> Result<Json<Value>, RagError> {
    Ok(search_documents(parts, settings, body).await?)
}
