//! Every error the HTTP layer returns, mapped to a status in one place. The /v1 API answers
//! `{"detail": "..."}` (seed 000); the /api/rag API answers `{"error", "details" | "message"}` (seed 002).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::error::ServerError;

#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    NotFound(String),
    /// The request is sound but the collection's state refuses it (a rollback target that is damaged).
    Conflict(String),
    PayloadTooLarge(String),
    Busy(String),
    Unavailable(String),
    Internal(String),
    /// seed-002 validation error: which field, why.
    RagValidation {
        field: String,
        message: String,
    },
    /// seed-002 server error.
    RagInternal(String),
}

impl ApiError {
    pub fn rag_field(field: &str, message: impl Into<String>) -> Self {
        Self::RagValidation {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<ServerError> for ApiError {
    fn from(e: ServerError) -> Self {
        match e {
            ServerError::InvalidRequest(m) => Self::BadRequest(m),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<quarry_indexer::IndexerError> for ApiError {
    fn from(e: quarry_indexer::IndexerError) -> Self {
        Self::Internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            Self::BadRequest(m) => (StatusCode::BAD_REQUEST, json!({ "detail": m })),
            Self::NotFound(m) => (StatusCode::NOT_FOUND, json!({ "detail": m })),
            Self::Conflict(m) => (StatusCode::CONFLICT, json!({ "detail": m })),
            Self::PayloadTooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, json!({ "detail": m })),
            Self::Busy(m) => (StatusCode::SERVICE_UNAVAILABLE, json!({ "detail": m })),
            Self::Unavailable(m) => (StatusCode::SERVICE_UNAVAILABLE, json!({ "detail": m })),
            Self::Internal(m) => {
                tracing::error!("internal error: {m}");
                (StatusCode::INTERNAL_SERVER_ERROR, json!({ "detail": m }))
            }
            Self::RagValidation { field, message } => (
                StatusCode::BAD_REQUEST,
                json!({ "error": "Validation error", "details": { "field": field, "message": message } }),
            ),
            Self::RagInternal(m) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({ "error": "Internal server error", "message": m }),
            ),
        };
        (status, Json(body)).into_response()
    }
}

/// Gives the error responses made below the handlers their surface's documented shape:
/// `{"error", "message"}` under /api/rag, `{"detail"}` elsewhere. Those with no body (axum's
/// 404 for no route and 405 for a wrong method, the timeout layer's 408) get a message naming
/// what failed; those with a plain-text body (axum's extractors refusing a path parameter, a
/// query string or a body before a handler runs) keep their text as the message. Their
/// headers (`Allow`, `WWW-Authenticate`) are kept.
pub async fn shape_bare_errors(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let plain_text = match response.headers().get(axum::http::header::CONTENT_TYPE) {
        None => false,
        Some(value) if value.as_bytes().starts_with(b"text/plain") => true,
        Some(_) => return response,
    };
    let (parts, body) = response.into_parts();
    let text = match plain_text {
        // An extractor's rejection: a line or two.
        true => axum::body::to_bytes(body, 64 * 1024)
            .await
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
            .unwrap_or_default(),
        false => String::new(),
    };
    let message = match status {
        _ if !text.is_empty() => text,
        StatusCode::NOT_FOUND => format!("no route {method} {path}"),
        StatusCode::METHOD_NOT_ALLOWED => format!("{method} is not allowed on {path}"),
        StatusCode::REQUEST_TIMEOUT => "the request took longer than the server's request timeout".to_string(),
        other => other.canonical_reason().unwrap_or("error").to_string(),
    };
    let body = match path.starts_with("/api/rag") {
        true => json!({ "error": status.canonical_reason().unwrap_or("Error"), "message": message }),
        false => json!({ "detail": message }),
    };
    let mut parts = parts;
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    parts.headers.remove(axum::http::header::CONTENT_TYPE);
    let mut shaped = (status, Json(body)).into_response();
    for (name, value) in parts.headers.iter() {
        shaped.headers_mut().entry(name).or_insert(value.clone());
    }
    shaped
}
