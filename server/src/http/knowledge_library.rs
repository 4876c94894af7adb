//! Seed 004's knowledge library: `/api/knowledge/documents` (upload one file with a name and
//! tags, list, get one, delete one) and `/api/knowledge/search` (query, top_k, tags,
//! similarity_threshold -> its SearchResult records), over the collection
//! `--knowledge-collection` (default `knowledge`, created at start-up). An upload is an
//! ingestion job like a /v1 upload; the document record is the seed's `documents` row (`raw_text`
//! left out): `status` pending, processing, ready or failed, the seed's classified `error`.
//! Errors come in the /api shape (`{"error", "message"}`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Multipart, Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Map, Value};

use super::knowledge::{clean_file_name, delete_files, parse_tags};
use super::rag::body_object;
use super::search::{run_search, SearchParts};
use super::user_scope::{owned_by, parse_user_id, scope_to_user, user_id_member, USER_ID_KEY};
use crate::app::HttpSettings;
use crate::collection::Collection;
use crate::http::api_error::{ApiError, RagError};
use crate::ingest::jobs::{submit, uploads_dir, Submitted, Upload};
use crate::ingest::Ingestion;
use crate::records::{FileInfo, FileStatus};
use crate::search::filter::Filters;
use crate::search::query_syntax::QuerySyntax;
use crate::search::searcher::{Mode, SearchRequest};

fn library(state: &Ingestion, settings: &HttpSettings) -> Result<Arc<Collection>, ApiError> {
    state
        .collections
        .get(&settings.knowledge_collection)
        .ok_or_else(|| ApiError::Unavailable("the knowledge library's collection is not loaded".into()))
}

fn content_type(file_name: &str) -> &'static str {
    match file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .as_deref()
    {
        Some("pdf") => "application/pdf",
        Some("md" | "markdown") => "text/markdown",
        Some("rst" | "rest") => "text/x-rst",
        Some("adoc" | "asciidoc") => "text/asciidoc",
        Some("org") => "text/x-org",
        Some("ipynb") => "application/x-ipynb+json",
        Some("tex" | "latex" | "ltx") => "application/x-tex",
        Some("wiki" | "mediawiki" | "wikitext") => "text/x-wiki",
        Some("bib" | "bibtex") => "application/x-bibtex",
        Some("ris") => "application/x-research-info-systems",
        Some("nbib" | "medline") => "application/nbib",
        Some("vtt") => "text/vtt",
        Some("srt") => "application/x-subrip",
        Some("sbv") => "text/x-sbv",
        Some("ttml" | "dfxp") => "application/ttml+xml",
        Some("ass" | "ssa") => "text/x-ssa",
        Some("smi" | "sami") => "application/x-sami",
        Some("xml" | "nxml" | "dbk" | "tei") => "application/xml",
        Some("rss") => "application/rss+xml",
        Some("atom") => "application/atom+xml",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Some("pptx") => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Some("odt") => "application/vnd.oasis.opendocument.text",
        Some("ods") => "application/vnd.oasis.opendocument.spreadsheet",
        Some("odp") => "application/vnd.oasis.opendocument.presentation",
        Some("epub") => "application/epub+zip",
        Some("fb2") => "application/x-fictionbook+xml",
        Some("enex") => "application/enex+xml",
        Some("rtf") => "application/rtf",
        Some("doc" | "dot") => "application/msword",
        Some("hwp") => "application/x-hwp",
        Some("hwpx") => "application/hwp+zip",
        Some("xls" | "xlt") => "application/vnd.ms-excel",
        Some("ppt" | "pps" | "pot") => "application/vnd.ms-powerpoint",
        Some("eml") => "message/rfc822",
        Some("mbox" | "mbx") => "application/mbox",
        Some("msg") => "application/vnd.ms-outlook",
        Some("zip") => "application/zip",
        Some("7z") => "application/x-7z-compressed",
        Some("tar") => "application/x-tar",
        Some("gz" | "tgz") => "application/gzip",
        Some("zst" | "zstd" | "tzst") => "application/zstd",
        Some("bz2" | "tbz" | "tbz2") => "application/x-bzip2",
        Some("xz" | "txz") => "application/x-xz",
        Some("lz4") => "application/x-lz4",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("jsonl") => "application/jsonl",
        Some("txt") => "text/plain",
        _ => "application/octet-stream",
    }
}

/// A file as seed 004's document record.
fn document_of(file: &FileInfo) -> Value {
    let status = match file.status {
        FileStatus::Uploading => "pending",
        FileStatus::Ingesting => "processing",
        FileStatus::Success => "ready",
        FileStatus::Failed => "failed",
    };
    let meta = &file.metadata;
    let mut metadata = Map::new();
    for key in ["error_detail", "snapshot_version", "job_id", "warnings"] {
        if let Some(value) = meta.get(key) {
            metadata.insert(key.into(), value.clone());
        }
    }
    json!({
        "id": file.file_id,
        "name": meta.get("name").and_then(Value::as_str).unwrap_or(&file.file_name),
        "filename": file.file_name,
        "content_type": content_type(&file.file_name),
        "tags": meta.get("tags").cloned().unwrap_or_else(|| json!([])),
        "user_id": meta.get(USER_ID_KEY),
        "status": status,
        "error": file.error_message,
        "chunk_count": file.chunk_count,
        "token_count": meta.get("token_count").and_then(Value::as_u64).unwrap_or(0),
        "metadata": metadata,
        "created_at": file.uploaded_at,
        "updated_at": file.ingested_at.or(file.uploaded_at),
    })
}

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("no document {id} in the knowledge library"))
}

/// `POST /api/knowledge/documents`: multipart `file` (one), `name`, `tags` (comma-separated),
/// `user_id` (the owner, [`super::user_scope`]).
async fn upload(
    state: Arc<Ingestion>,
    settings: Arc<HttpSettings>,
    mut multipart: Multipart,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let collection = library(&state, &settings)?;
    let (mut file, mut name, mut tags, mut user_id) = (None, None, Vec::new(), None);
    while let Some(field) = multipart.next_field().await.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge(e.body_text()),
        _ => ApiError::BadRequest(e.body_text()),
    })? {
        let field_name = field.name().unwrap_or_default().to_string();
        match (field_name.as_str(), field.file_name().map(clean_file_name)) {
            ("file", Some(file_name)) => {
                if file.is_some() {
                    return Err(ApiError::field("file", "send one file per upload"));
                }
                let content_type = field.content_type().map(str::to_string);
                let bytes = field.bytes().await.map_err(|e| ApiError::BadRequest(e.body_text()))?;
                file = Some((file_name, bytes, content_type));
            }
            ("name", None) => name = Some(field.text().await.map_err(|e| ApiError::BadRequest(e.body_text()))?),
            ("tags", None) => {
                let text = field.text().await.map_err(|e| ApiError::BadRequest(e.body_text()))?;
                parse_tags(&text, &mut tags)?;
            }
            (USER_ID_KEY, None) => {
                let text = field.text().await.map_err(|e| ApiError::BadRequest(e.body_text()))?;
                user_id = Some(parse_user_id(USER_ID_KEY, &text)?);
            }
            _ => {}
        }
    }
    let (file_name, bytes, content_type) = file.ok_or_else(|| {
        ApiError::field(
            "file",
            "file is required: a multipart field named 'file' with a filename",
        )
    })?;
    let name = name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| file_name.clone());
    let job_id = uuid::Uuid::new_v4().to_string();
    let dir = uploads_dir(&state, &job_id);
    let file_id = uuid::Uuid::new_v4().to_string();
    let path = dir.join(&file_id);
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, &bytes))
        .map_err(|e| ApiError::Internal(format!("saving the upload: {e}")))?;
    let upload = Upload {
        file_id: file_id.clone(),
        file_name,
        path,
        size: bytes.len() as u64,
        tags: tags.clone(),
        user_id,
        content_type,
    };
    match submit(&state, &collection, job_id, vec![upload], None) {
        Ok(Submitted::New(_)) => {}
        Ok(Submitted::Earlier(_)) => unreachable!("no idempotency key was given"),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(ApiError::Internal(format!("recording the upload: {e}")));
        }
    }
    let record = {
        let mut files = collection.files.lock().expect("files lock");
        let info = files
            .iter_mut()
            .find(|f| f.file_id == file_id)
            .ok_or_else(|| ApiError::Internal("the upload's record is missing".into()))?;
        info.metadata.insert("name".into(), name.into());
        info.metadata.insert("tags".into(), tags.into());
        info.clone()
    };
    state
        .collections
        .save_files(&collection)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((StatusCode::ACCEPTED, Json(document_of(&record))))
}

pub async fn upload_document(
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<impl IntoResponse, RagError> {
    let multipart = multipart.map_err(|e| {
        ApiError::BadRequest(format!(
            "expected multipart/form-data with a 'file' field: {}",
            e.body_text()
        ))
    })?;
    Ok(upload(state, settings, multipart).await?)
}

/// `GET /api/knowledge/documents[?user_id=]`: every document (of that user), newest first.
pub async fn list_documents(
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Vec<Value>>, RagError> {
    let user_id = match query.get(USER_ID_KEY) {
        Some(text) => Some(parse_user_id(USER_ID_KEY, text)?),
        None => None,
    };
    let mut files = library(&state, &settings)?.list_files();
    files.retain(|file| owned_by(&file.metadata, user_id.as_deref()));
    files.sort_by_key(|file| std::cmp::Reverse(file.uploaded_at));
    Ok(Json(files.iter().map(document_of).collect()))
}

/// `GET /api/knowledge/documents/{id}`.
pub async fn get_document(
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RagError> {
    let files = library(&state, &settings)?.list_files();
    let file = files.iter().find(|f| f.file_id == id).ok_or_else(|| not_found(&id))?;
    Ok(Json(document_of(file)))
}

/// `DELETE /api/knowledge/documents/{id}`: the document and its chunks (204).
pub async fn delete_document(
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    Path(id): Path<String>,
) -> Result<StatusCode, RagError> {
    let collection = library(&state, &settings)?;
    if !collection.list_files().iter().any(|f| f.file_id == id) {
        return Err(not_found(&id).into());
    }
    let (deleted, _) = delete_files(&state, &collection, std::slice::from_ref(&id)).await?;
    match deleted.is_empty() {
        true => Err(not_found(&id).into()),
        false => Ok(StatusCode::NO_CONTENT),
    }
}

/// `POST /api/knowledge/search`: `{query, top_k (1..100, default 5), tags (any of them),
/// similarity_threshold (0..1, default 0.7), user_id (that user's documents only)}` -> seed
/// 004's SearchResult records, by cosine similarity.
pub async fn search(
    State(parts): State<SearchParts>,
    State(state): State<Arc<Ingestion>>,
    State(settings): State<Arc<HttpSettings>>,
    body: axum::body::Bytes,
) -> Result<Json<Vec<Value>>, RagError> {
    let object = body_object(&body)?;
    let query = match object.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
        _ => return Err(ApiError::field("query", "query must be a non-empty string").into()),
    };
    let top_k = match object.get("top_k") {
        None | Some(Value::Null) => 5,
        Some(value) => match value.as_u64() {
            Some(k) if (1..=100).contains(&k) => k as usize,
            _ => return Err(ApiError::field("top_k", "top_k must be an integer between 1 and 100").into()),
        },
    };
    let threshold = match object.get("similarity_threshold") {
        None | Some(Value::Null) => 0.7,
        Some(value) => match value.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => t as f32,
            _ => {
                return Err(
                    ApiError::field("similarity_threshold", "similarity_threshold must be between 0 and 1").into(),
                )
            }
        },
    };
    let tags: Vec<String> = match object.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(|t| t.as_str().map(str::to_string)).collect()
        }
        Some(_) => return Err(ApiError::field("tags", "tags must be an array of strings").into()),
    };
    let mut filters = Filters {
        tags,
        ..Default::default()
    };
    scope_to_user(&mut filters, user_id_member(object.get(USER_ID_KEY), USER_ID_KEY)?);
    let collection = library(&state, &settings)?;
    // Seed 004's semantic search reads its query as text, as its seed describes it.
    let request = SearchRequest {
        query,
        top_k,
        mode: Mode::Vector,
        min_score: Some(threshold),
        filters,
        query_syntax: QuerySyntax::Plain,
        ..Default::default()
    };
    let result = run_search(&parts, &collection, request).await?;
    let files = collection.list_files();
    let results = result
        .chunks
        .iter()
        .map(|chunk| {
            let m = &chunk.metadata;
            // An upload's document is `upload://<collection>/<file id>/<name>`.
            let uri = m.get("uri").and_then(Value::as_str).unwrap_or_default();
            let file_id = uri.split('/').nth(3).unwrap_or_default();
            let name = files
                .iter()
                .find(|f| f.file_id == file_id)
                .and_then(|f| f.metadata.get("name").and_then(Value::as_str))
                .unwrap_or(&chunk.file_name);
            json!({
                "chunk_id": chunk.chunk_id,
                "document_id": file_id,
                "document_name": name,
                "tags": m.get("tags").cloned().unwrap_or_else(|| json!([])),
                "content": chunk.content,
                "heading_path": m.get("heading_path").cloned().unwrap_or_else(|| json!([])),
                "similarity": chunk.score,
                "token_count": m.get("token_count").cloned().unwrap_or(Value::from(0)),
            })
        })
        .collect();
    Ok(Json(results))
}
