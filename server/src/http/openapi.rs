//! The OpenAPI 3.1 document of every route (`GET /openapi.json`): the records' schemas are
//! derived from their Rust types (schemars), the request bodies and the answers of the routes
//! that build their JSON by hand are written here beside the route table, and every operation
//! lists its error answers in its surface's shape ([`super::api_error::Surface`]). A test
//! checks the paths against the router's own table ([`super::ROUTE_PATHS`]) and the methods
//! against what the server answers; schemathesis checks the answers against the schemas.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use crate::records::{CollectionInfo, FileInfo, IngestionJobStatus};
use crate::search::result::RetrievalResult;

/// Which error shape a route answers in.
#[derive(Clone, Copy)]
enum Errors {
    V1,
    Rag,
    OpenAi,
    Tei,
}

impl Errors {
    fn schema(self) -> &'static str {
        match self {
            Self::V1 => "#/components/schemas/Detail",
            Self::Rag => "#/components/schemas/ApiError",
            Self::OpenAi => "#/components/schemas/OpenAiError",
            Self::Tei => "#/components/schemas/TeiError",
        }
    }
}

/// An object with these properties, of which `required` must be there; others may be.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn any_object() -> Value {
    json!({ "type": "object" })
}

fn string_or_null() -> Value {
    json!({ "type": ["string", "null"] })
}

/// DELETE /v1/collections/{name}/documents: the files deleted and those that were not.
fn deleted_files() -> Value {
    object(
        json!({
            "message": { "type": "string" },
            "successful": { "type": "array", "items": { "type": "string" } },
            "failed": { "type": "array", "items": object(json!({ "file_id": { "type": "string" }, "error": { "type": "string" } }), &["file_id", "error"]) },
            "total_deleted": { "type": "integer", "minimum": 0 },
        }),
        &["message", "successful", "failed", "total_deleted"],
    )
}

/// /v1/collections/{name}/versions: every version of the collection's snapshot, oldest first,
/// as `quarry versions` lists them (`VersionSummary` in indexer/src/snapshot/versions.rs).
fn version_listing() -> Value {
    let count = json!({ "type": "integer", "minimum": 0 });
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    let run = object(
        json!({
            "documents_written": count,
            "documents_removed": { "type": ["integer", "null"], "minimum": 0 },
            "documents_failed": count,
            "documents_warned": count,
            "wall_secs": { "type": "number", "minimum": 0 },
        }),
        &[
            "documents_written",
            "documents_removed",
            "documents_failed",
            "documents_warned",
            "wall_secs",
        ],
    );
    let version = object(
        json!({
            "version": { "type": "string" },
            "created_at": { "type": "string", "format": "date-time" },
            "state": { "type": "string", "enum": ["latest", "earlier", "pending", "rolled_back"] },
            "parent": { "type": ["string", "null"] },
            "source": { "type": "string" },
            "documents": count,
            "chunks": count,
            "tokens": count,
            "segments": count,
            "new_segments": count,
            "tombstones": count,
            "precisions": strings,
            "missing_files": strings,
            "run": { "oneOf": [run, { "type": "null" }] },
        }),
        &[
            "version",
            "created_at",
            "state",
            "parent",
            "source",
            "documents",
            "chunks",
            "tokens",
            "segments",
            "new_segments",
            "tombstones",
            "precisions",
            "missing_files",
            "run",
        ],
    );
    object(
        json!({
            "collection": { "type": "string" },
            "latest": { "type": ["string", "null"] },
            "served_version": { "type": ["string", "null"] },
            "versions": { "type": "array", "items": version },
        }),
        &["collection", "latest", "served_version", "versions"],
    )
}

/// /v1/knowledge/health (200 healthy, 503 when a collection failed to load): each collection's version and load error.
fn health() -> Value {
    object(
        json!({
            "status": { "type": "string", "enum": ["healthy", "unhealthy"] },
            "backend": { "type": "string" },
            "collections": {
                "type": "object",
                "additionalProperties": object(json!({ "version": string_or_null(), "error": string_or_null() }), &["version", "error"]),
            },
        }),
        &["status", "backend", "collections"],
    )
}

/// /readyz (200 ready, 503 not yet or shutting down): the collections still waiting for their first version.
fn readiness() -> Value {
    object(
        json!({ "ready": { "type": "boolean" }, "waiting_for": { "type": "array", "items": { "type": "string" } } }),
        &["ready", "waiting_for"],
    )
}

/// One vector of /v1/embeddings: floats, or base64 of little-endian f32 with `encoding_format: base64`.
fn embedding_item() -> Value {
    object(
        json!({
            "object": { "const": "embedding" },
            "index": { "type": "integer", "minimum": 0 },
            "embedding": { "oneOf": [{ "type": "array", "items": { "type": "number" } }, { "type": "string" }] },
        }),
        &["object", "index", "embedding"],
    )
}

/// Seed 002's search answer.
fn rag_results() -> Value {
    let metadata = object(
        json!({
            "documentId": string_or_null(),
            "source": string_or_null(),
            "path": string_or_null(),
            "title": string_or_null(),
            "chunkIndex": { "type": ["integer", "null"] },
            "tags": { "type": ["array", "null"], "items": { "type": "string" } },
        }),
        &["documentId", "source", "path", "title", "chunkIndex", "tags"],
    );
    let result = object(
        json!({ "text": { "type": "string" }, "score": { "type": "number" }, "metadata": metadata }),
        &["text", "score", "metadata"],
    );
    object(
        json!({ "query": { "type": "string" }, "resultCount": { "type": "integer", "minimum": 0 }, "results": { "type": "array", "items": result } }),
        &["query", "resultCount", "results"],
    )
}

/// Seed 002's chat answer (without `stream`).
fn chat_answer() -> Value {
    let source = object(
        json!({ "text": { "type": "string" }, "score": { "type": "number" }, "source": string_or_null(), "title": { "type": "string" } }),
        &["text", "score", "source", "title"],
    );
    object(
        json!({
            "status": { "const": "success" },
            "data": object(json!({ "message": { "type": "string" }, "conversationId": { "type": "string" } }), &["message", "conversationId"]),
            "ragUsed": { "type": "boolean" },
            "ragSources": { "type": "array", "items": source },
        }),
        &["status", "data", "ragUsed", "ragSources"],
    )
}

/// A collection's own layers (seed 003's dataset-level L0 and L1).
fn collection_layers() -> Value {
    object(
        json!({
            "abstract": { "type": "string" },
            "overview": { "type": "string" },
            "made_by": { "type": "string" },
            "from_documents": { "type": "integer", "minimum": 0 },
        }),
        &["abstract", "overview", "made_by", "from_documents"],
    )
}

/// One document of seed 000's summaries.
fn summary_item() -> Value {
    object(
        json!({
            "name": { "type": "string" },
            "document_id": { "type": "string" },
            "file_name": { "type": "string" },
            "title": { "type": "string" },
            "uri": { "type": "string" },
            "summary": { "type": "string" },
            "overview": { "type": "string" },
        }),
        &[
            "name",
            "document_id",
            "file_name",
            "title",
            "uri",
            "summary",
            "overview",
        ],
    )
}

/// One operation: its answers (status -> schema, or a media type other than JSON).
struct Operation {
    summary: &'static str,
    body: Option<Value>,
    /// `(status, content)`: content is a `content` map (None: no body).
    answers: Vec<(&'static str, Option<Value>)>,
    query: Vec<Value>,
    errors: Errors,
}

fn json_content(schema: Value) -> Option<Value> {
    Some(json!({ "application/json": { "schema": schema } }))
}

fn op(summary: &'static str, errors: Errors, answer: (&'static str, Value)) -> Operation {
    Operation {
        summary,
        body: None,
        answers: vec![(answer.0, json_content(answer.1))],
        query: Vec::new(),
        errors,
    }
}

impl Operation {
    fn with_json_body(mut self, schema: Value) -> Self {
        self.body = Some(json!({ "required": true, "content": { "application/json": { "schema": schema } } }));
        self
    }

    fn with_multipart_body(mut self, schema: Value) -> Self {
        self.body = Some(json!({ "required": true, "content": { "multipart/form-data": { "schema": schema } } }));
        self
    }

    fn with_query(mut self, name: &str, schema: Value) -> Self {
        self.query
            .push(json!({ "name": name, "in": "query", "required": false, "schema": schema }));
        self
    }

    fn answering(mut self, status: &'static str, content: Option<Value>) -> Self {
        self.answers.push((status, content));
        self
    }

    fn render(self, path: &str) -> Value {
        let mut parameters: Vec<Value> = path
            .split('/')
            .filter_map(|part| part.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
            .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
            .collect();
        parameters.extend(self.query);
        let mut responses = Map::new();
        for (status, content) in self.answers {
            let mut answer = json!({ "description": status });
            if let Some(content) = content {
                answer["content"] = content;
            }
            responses.insert(status.to_string(), answer);
        }
        responses.insert(
            "default".into(),
            json!({ "description": "an error, in the route's error shape", "content": { "application/json": { "schema": { "$ref": self.errors.schema() } } } }),
        );
        let mut operation = json!({ "summary": self.summary, "parameters": parameters, "responses": responses });
        if let Some(body) = self.body {
            operation["requestBody"] = body;
        }
        operation
    }
}

/// The body of a /v1 search (search.md), with every field it takes.
/// One example of a search by example: a chunk or a document, by id.
fn example_id() -> Value {
    json!({
        "type": "object",
        "properties": { "chunk_id": { "type": "string" }, "document_id": { "type": "string" } },
        "additionalProperties": false
    })
}

fn search_request() -> Value {
    let strings = json!({ "oneOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }] });
    let filters = json!({
        "type": "object",
        "properties": {
            "source": strings, "tags": strings, "file_name": strings, "doc_id": strings,
            "metadata": { "type": "object" },
            "ingested_after": { "type": "string", "format": "date-time" },
            "ingested_before": { "type": "string", "format": "date-time" },
            "exclude": { "type": "object" }
        },
        "additionalProperties": false
    });
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "collections": { "type": "array", "items": { "type": "string" } },
            "top_k": { "type": "integer", "minimum": 0 },
            "offset": { "type": "integer", "minimum": 0 },
            "mode": { "type": "string", "enum": ["vector", "keyword", "hybrid", "auto", "semantic", "dense", "bm25", ""] },
            "filters": filters,
            "min_score": { "type": ["number", "null"] },
            "vector_weight": { "type": "number" },
            "keyword_weight": { "type": "number" },
            "rrf_k": { "type": "number" },
            "max_chunks_per_document": { "type": ["integer", "null"], "minimum": 0 },
            "highlight": { "type": "boolean" },
            "context_chunks": { "type": "integer", "minimum": 0 },
            "facets": { "type": "array", "items": { "type": "string" } },
            "facet_size": { "type": "integer", "minimum": 0 },
            "layer": { "type": "string" },
            "query_syntax": {
                "type": "string",
                "enum": ["simple", "plain"],
                "description": "simple (the default): \"quoted phrases\" must be in each result, -words and -\"phrases\" in none, a word* also finds the words it begins and a word~ the words a typing error or two from it; plain: every character is text"
            },
            "similar_to": {
                "type": "object",
                "description": "search by example: rank by a chunk's or a document's stored embedding; several examples (like) by their mean, moved away from the unlike examples (2 x mean(like) - mean(unlike)); the examples' documents left out unless include_source",
                "properties": {
                    "chunk_id": { "type": "string" },
                    "document_id": { "type": "string" },
                    "like": { "type": "array", "maxItems": 32, "items": example_id() },
                    "unlike": { "type": "array", "maxItems": 32, "items": example_id() },
                    "include_source": { "type": "boolean" }
                },
                "additionalProperties": false
            },
            "suggest": {
                "type": "boolean",
                "description": "did you mean: the result's suggestion corrects the query's words no live row holds to the index's nearest words (a typing error or two away)"
            },
            "typo_tolerance": {
                "type": "boolean",
                "default": true,
                "description": "each of the query's words no live row holds is also read as the index's nearest word (the correction suggest would give): the keyword lane looks it up, and the vector lane also embeds the query with the corrections, each row scored by the nearer reading"
            },
            "rewrite_query": { "type": "boolean" },
            "history": { "type": "array", "items": { "type": "object" } },
            "compress": { "type": "boolean" }
        },
        "anyOf": [{ "required": ["query"] }, { "required": ["similar_to"] }]
    })
}

fn rag_filters() -> Value {
    json!({ "type": "object", "properties": {
        "source": { "type": "string" },
        "tags": { "type": "array", "items": { "type": "string" } },
        "user_id": { "type": "string" }
    } })
}

/// Every route: (path, method, operation).
fn operations() -> Vec<(&'static str, &'static str, Operation)> {
    use Errors::{OpenAi, Rag, Tei, V1};
    let upload_answer = object(
        json!({ "job_id": { "type": "string" }, "file_ids": { "type": "array", "items": { "type": "string" } }, "message": { "type": "string" } }),
        &["job_id", "file_ids", "message"],
    );
    let library_document = object(
        json!({ "id": { "type": "string" }, "name": { "type": "string" }, "filename": { "type": "string" }, "status": { "type": "string", "enum": ["pending", "processing", "ready", "failed"] } }),
        &[
            "id",
            "name",
            "filename",
            "status",
            "chunk_count",
            "token_count",
            "created_at",
        ],
    );
    let text = |media: &str| Some(json!({ media: { "schema": { "type": "string" } } }));
    vec![
        ("/v1/collections", "post", op("Create a collection", V1, ("201", reference("CollectionInfo"))).with_json_body(object(
            json!({ "name": { "type": "string" }, "description": { "type": ["string", "null"] }, "metadata": { "type": "object" } }),
            &["name"],
        ))),
        ("/v1/collections", "get", op("List the collections", V1, ("200", json!({ "type": "array", "items": reference("CollectionInfo") })))),
        ("/v1/collections/{name}", "get", op("One collection", V1, ("200", reference("CollectionInfo")))),
        ("/v1/collections/{name}", "delete", op("Delete a collection", V1, ("200", object(json!({ "message": { "type": "string" }, "name": { "type": "string" } }), &["message", "name"])))),
        ("/v1/collections/{name}/documents", "post", op("Upload files (an ingestion job)", V1, ("202", upload_answer.clone())).with_multipart_body(object(
            json!({ "files": { "type": "array", "items": { "type": "string", "format": "binary" } }, "tags": { "type": "string" }, "user_id": { "type": "string" } }),
            &["files"],
        ))),
        ("/v1/collections/{name}/documents", "get", op("The collection's files", V1, ("200", json!({ "type": "array", "items": reference("FileInfo") })))),
        ("/v1/collections/{name}/documents", "delete", op("Delete files", V1, ("200", deleted_files())).with_json_body(object(
            json!({ "file_ids": { "type": "array", "items": { "type": "string" } } }),
            &["file_ids"],
        ))),
        ("/v1/collections/{name}/search", "post", op("Search a collection", V1, ("200", reference("RetrievalResult"))).with_json_body(search_request())),
        ("/v1/search", "post", op("Search several collections as one", V1, ("200", reference("RetrievalResult"))).with_json_body(search_request())),
        ("/v1/collections/{name}/events", "get", Operation { summary: "The collection's ingestion events (server-sent events)", body: None, answers: vec![("200", text("text/event-stream"))], query: vec![json!({ "name": "job_id", "in": "query", "required": false, "schema": { "type": "string" } })], errors: V1 }),
        ("/v1/collections/{name}/reload", "post", op("Load the collection's LATEST now", V1, ("200", object(json!({ "reloaded": { "type": "boolean" } }), &["reloaded", "collection"])))),
        ("/v1/collections/{name}/versions", "get", op("The snapshot's versions", V1, ("200", version_listing()))),
        ("/v1/collections/{name}/summaries", "get", op("Seed 000's document summaries and the collection's own layers", V1, ("200", object(
            json!({ "collection_name": { "type": "string" }, "total": { "type": "integer", "minimum": 0 }, "offset": { "type": "integer", "minimum": 0 }, "documents": { "type": "array", "items": summary_item() }, "available_documents": { "type": "string" }, "collection": collection_layers() }),
            &["collection_name", "total", "offset", "documents", "available_documents", "collection"],
        ))).with_query("offset", json!({ "type": "integer", "minimum": 0 })).with_query("limit", json!({ "type": "integer", "minimum": 1, "maximum": 1000 }))),
        ("/v1/collections/{name}/rollback", "post", op("Serve an earlier version", V1, ("200", object(json!({}), &["rollback", "collection"]))).with_json_body(object(
            json!({ "version": { "type": ["string", "null"] }, "verify": { "type": "boolean" }, "dry_run": { "type": "boolean" } }),
            &[],
        ))),
        ("/v1/documents/{job_id}/status", "get", op("An ingestion job's status", V1, ("200", reference("IngestionJobStatus")))),
        ("/v1/knowledge/health", "get", op("Health of every collection", V1, ("200", health())).answering("503", json_content(health()))),
        ("/v1/embeddings", "post", op("OpenAI's embeddings API", OpenAi, ("200", object(
            json!({ "object": { "const": "list" }, "data": { "type": "array", "items": embedding_item() }, "model": { "type": "string" }, "usage": object(json!({ "prompt_tokens": { "type": "integer", "minimum": 0 }, "total_tokens": { "type": "integer", "minimum": 0 } }), &["prompt_tokens", "total_tokens"]) }),
            &["object", "data", "model", "usage"],
        ))).with_json_body(object(
            json!({ "input": {}, "model": { "type": "string" }, "encoding_format": { "type": "string", "enum": ["float", "base64"] }, "dimensions": { "type": "integer" }, "user": { "type": "string" }, "truncate": { "type": "boolean" } }),
            &["input"],
        ))),
        ("/embed", "post", op("Text Embeddings Inference's embed", Tei, ("200", json!({ "type": "array", "items": { "type": "array", "items": { "type": "number" } } }))).with_json_body(object(
            json!({ "inputs": { "oneOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }] }, "normalize": { "type": "boolean" }, "truncate": { "type": "boolean" } }),
            &["inputs"],
        ))),
        ("/api/rag/ingest", "post", op("Seed 002: ingest a document", Rag, ("200", object(json!({ "status": { "type": "string" }, "documentId": { "type": "string" }, "chunkCount": { "type": "integer" } }), &["status", "documentId", "chunkCount"]))).with_json_body(object(
            json!({ "source": { "type": "string" }, "path": { "type": "string" }, "title": { "type": "string" }, "text": { "type": "string" }, "tags": { "type": "array", "items": { "type": "string" } }, "hash": { "type": "string" }, "metadata": { "type": "object" } }),
            &["source", "path", "title", "text"],
        ))),
        ("/api/rag/search", "post", op("Seed 002: search", Rag, ("200", rag_results())).with_json_body(object(
            json!({ "query": { "type": "string" }, "topK": { "type": "integer", "minimum": 1, "maximum": 20 }, "minScore": { "type": "number", "minimum": 0, "maximum": 1 }, "filters": rag_filters() }),
            &["query"],
        ))),
        ("/api/chat", "post", Operation { summary: "Seed 002: chat through the LLM endpoint", body: None, answers: vec![("200", Some(json!({ "application/json": { "schema": chat_answer() }, "text/event-stream": { "schema": { "type": "string" } } })))], query: Vec::new(), errors: Rag }.with_json_body(object(
            json!({ "model": { "type": "string" }, "messages": { "type": "array", "items": { "type": "object" } }, "useRag": { "type": "boolean" }, "ragTopK": { "type": "integer" }, "ragFilters": rag_filters(), "stream": { "type": "boolean" } }),
            &["messages"],
        ))),
        ("/api/knowledge/documents", "post", op("Seed 004: upload a document", Rag, ("202", library_document.clone())).with_multipart_body(object(
            json!({ "file": { "type": "string", "format": "binary" }, "name": { "type": "string" }, "tags": { "type": "string" }, "user_id": { "type": "string" } }),
            &["file"],
        ))),
        ("/api/knowledge/documents", "get", op("Seed 004: the documents", Rag, ("200", json!({ "type": "array", "items": library_document.clone() }))).with_query("user_id", json!({ "type": "string" }))),
        ("/api/knowledge/documents/{id}", "get", op("Seed 004: one document", Rag, ("200", library_document))),
        ("/api/knowledge/documents/{id}", "delete", Operation { summary: "Seed 004: delete a document", body: None, answers: vec![("204", None)], query: Vec::new(), errors: Rag }),
        ("/api/knowledge/search", "post", op("Seed 004: search", Rag, ("200", json!({ "type": "array", "items": object(json!({ "similarity": { "type": "number" }, "heading_path": { "type": "array" } }), &["chunk_id", "document_id", "document_name", "content", "similarity", "token_count"]) }))).with_json_body(object(
            json!({ "query": { "type": "string" }, "top_k": { "type": "integer", "minimum": 1, "maximum": 100 }, "tags": { "type": "array", "items": { "type": "string" } }, "similarity_threshold": { "type": "number", "minimum": 0, "maximum": 1 }, "user_id": { "type": "string" } }),
            &["query"],
        ))),
        ("/healthz", "get", Operation { summary: "Liveness", body: None, answers: vec![("200", text("text/plain"))], query: Vec::new(), errors: V1 }),
        ("/readyz", "get", op("Readiness", V1, ("200", readiness())).answering("503", json_content(readiness()))),
        ("/metrics", "get", Operation { summary: "Prometheus metrics", body: None, answers: vec![("200", text("text/plain"))], query: Vec::new(), errors: V1 }),
        ("/dashboard", "get", Operation { summary: "The dashboard", body: None, answers: vec![("200", text("text/html"))], query: Vec::new(), errors: V1 }),
        ("/", "get", Operation { summary: "Redirects to the dashboard", body: None, answers: vec![("307", None), ("200", text("text/html"))], query: Vec::new(), errors: V1 }),
        ("/openapi.json", "get", op("This document", V1, ("200", any_object()))),
    ]
}

/// The error bodies, one per surface.
fn error_schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Detail",
            object(json!({ "detail": { "type": ["string", "array"] } }), &["detail"]),
        ),
        (
            "ApiError",
            object(
                json!({ "error": { "type": "string" }, "message": { "type": "string" }, "details": {} }),
                &["error"],
            ),
        ),
        (
            "OpenAiError",
            object(
                json!({ "error": object(json!({ "message": { "type": "string" }, "type": { "type": "string" }, "param": { "type": ["string", "null"] }, "code": {} }), &["message", "type"]) }),
                &["error"],
            ),
        ),
        (
            "TeiError",
            object(
                json!({ "error": { "type": "string" }, "error_type": { "type": "string" } }),
                &["error", "error_type"],
            ),
        ),
    ]
}

fn add_schema<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

/// The document.
pub fn document() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut generator = settings.into_generator();
    add_schema::<CollectionInfo>(&mut generator);
    add_schema::<FileInfo>(&mut generator);
    add_schema::<IngestionJobStatus>(&mut generator);
    add_schema::<RetrievalResult>(&mut generator);
    let mut schemas: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    for (name, schema) in error_schemas() {
        schemas.insert(name.into(), schema);
    }
    let mut paths = Map::new();
    for (path, method, operation) in operations() {
        let item = paths.entry(path).or_insert_with(|| json!({}));
        item[method] = operation.render(path);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "quarry",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "quarry serve: the /v1 knowledge layer (seed 000), /api/rag and /api/chat (seed 002), /api/knowledge (seed 004), OpenAI's and Text Embeddings Inference's embeddings routes. docs/http-api.md tells each route."
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": { "apiKey": { "type": "http", "scheme": "bearer" } }
        }
    })
}

/// `GET /openapi.json`.
pub async fn serve() -> axum::Json<Value> {
    axum::Json(document())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_the_router_serves_is_described_and_nothing_else() {
        let document = document();
        let mut described: Vec<&str> = document["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut served: Vec<&str> = crate::http::ROUTE_PATHS.to_vec();
        described.sort_unstable();
        served.sort_unstable();
        assert_eq!(described, served);
    }

    #[test]
    fn the_records_schemas_come_from_their_types() {
        let document = document();
        let schemas = &document["components"]["schemas"];
        let file_info = &schemas["FileInfo"]["properties"];
        for field in ["file_id", "file_name", "status", "chunk_count", "metadata"] {
            assert!(file_info.get(field).is_some(), "FileInfo.{field}: {file_info}");
        }
        assert!(schemas["RetrievalResult"]["properties"]["chunks"].is_object());
        assert!(schemas["IngestionJobStatus"]["properties"]["file_details"].is_object());
    }
}
