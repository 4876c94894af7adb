//! Seed 000's document summaries over HTTP: each live document's one-sentence summary (its
//! L0, made at ingest) and overview (L1), a page at a time, with the page rendered as the
//! seed's `available_documents` block for an agent's system prompt, and the collection's own
//! layers (seed 003's dataset-level L0 and L1, made from its documents' abstracts).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::Json;
use quarry_indexer::parse::file_uri_of;
use quarry_indexer::snapshot::DocumentRecord;
use serde::Deserialize;
use serde_json::json;

use super::knowledge::find;
use crate::collection_layers::CollectionLayers;
use crate::http::api_error::ApiError;
use crate::ingest::Ingestion;

/// Summaries a page holds by default, and at most.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryPage {
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

/// `GET /v1/collections/{name}/summaries?offset=&limit=`: the live documents that have a
/// summary, in the snapshot's order (segment by segment, by URI within one), and the
/// collection's own layers, made by the server's summarizer.
pub async fn list(
    State(ingestion): State<Arc<Ingestion>>,
    Path(name): Path<String>,
    Query(page): Query<SummaryPage>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let limit = page.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_LIMIT}, got {limit}"
        )));
    }
    let collection = find(&ingestion.collections, &name)?;
    let Some(searcher) = collection.searcher() else {
        return Ok(Json(page_json(
            &name,
            0,
            page.offset,
            Vec::new(),
            &CollectionLayers::default(),
        )));
    };
    let collection_layers = collection
        .collection_layers
        .of(searcher.snapshot().clone(), ingestion.summarizer.clone(), display_name)
        .await
        .map_err(|e| ApiError::Internal(format!("making the collection's layers: {e}")))?;
    let snapshot = searcher.snapshot();
    let summarized = || {
        snapshot
            .live_documents()
            .map(|(document, _, _)| document)
            .filter(|document| !document.layers.abstract_text.is_empty())
    };
    let documents: Vec<serde_json::Value> = summarized()
        .skip(page.offset)
        .take(limit)
        .map(|d| {
            json!({
                "name": display_name(d),
                "document_id": d.doc_id,
                "file_name": d.file_name,
                "title": d.title,
                "uri": d.uri,
                "summary": d.layers.abstract_text,
                "overview": d.layers.overview,
            })
        })
        .collect();
    Ok(Json(page_json(
        &name,
        summarized().count(),
        page.offset,
        documents,
        &collection_layers,
    )))
}

/// A document's name in the listing: its file's, or for a part of a file (a JSONL line) its
/// title, else its URI.
fn display_name(document: &DocumentRecord) -> &str {
    match (file_uri_of(&document.uri) == document.uri, document.title.is_empty()) {
        (true, _) => &document.file_name,
        (false, false) => &document.title,
        (false, true) => &document.uri,
    }
}

fn page_json(
    name: &str,
    total: usize,
    offset: usize,
    documents: Vec<serde_json::Value>,
    collection: &CollectionLayers,
) -> serde_json::Value {
    let available = available_documents(&documents);
    json!({
        "collection_name": name,
        "total": total,
        "offset": offset,
        "documents": documents,
        "available_documents": available,
        "collection": {
            "abstract": collection.layers.abstract_text,
            "overview": collection.layers.overview,
            "made_by": collection.layers.made_by,
            "from_documents": collection.from_documents,
        },
    })
}

/// Seed 000's prompt block listing the documents ("- **name**: summary"); empty for none.
fn available_documents(documents: &[serde_json::Value]) -> String {
    if documents.is_empty() {
        return String::new();
    }
    let mut block = String::from(
        "## Uploaded Documents\n\nThe user has uploaded the following documents to the knowledge base:\n\n",
    );
    for document in documents {
        let name = document["name"].as_str().unwrap_or_default();
        let summary = document["summary"].as_str().unwrap_or_default();
        block.push_str(&format!("- **{name}**: {summary}\n"));
    }
    block.push_str(
        "\nWhen the query relates to these documents, prioritize searching them before using external tools.",
    );
    block
}
