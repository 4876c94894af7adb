//! The error table: every error the HTTP layer returns — the library errors
//! ([`IndexerError`], [`ServerError`]) by variant, and the routes' own — is an [`ApiError`]
//! kind with one status, and its body comes from one function per surface: the /v1 API
//! answers `{"detail": "..."}` (seed 000), the /api/rag API `{"error", "details" | "message"}`
//! (seed 002; its handlers return [`RagError`]), `/v1/embeddings` OpenAI's `{"error":
//! {"message", "type", "param", "code"}}` ([`OpenAiError`]) and `/embed` Text Embeddings
//! Inference's `{"error", "error_type"}` ([`TeiError`]).

use axum::http::header::{HeaderValue, ALLOW, WWW_AUTHENTICATE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use quarry_indexer::IndexerError;

use crate::error::ServerError;

/// What went wrong, whatever surface answers it.
#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    /// One request field is invalid: which, and why (seed 002 names the field apart).
    InvalidField {
        field: String,
        message: String,
    },
    /// No API key, or an unknown one.
    Unauthorized(String),
    /// A key that may not do what the route does.
    Forbidden(String),
    NotFound(String),
    /// The route exists but this server does not take its method (a read-only replica's
    /// writes); `allow` lists what it takes.
    MethodNotAllowed {
        message: String,
        allow: &'static str,
    },
    /// The request is sound but the state refuses it (LATEST moved, a damaged target, ...).
    Conflict(String),
    PayloadTooLarge(String),
    /// A well-formed request whose content cannot be served (Text Embeddings Inference's
    /// validation errors).
    Unprocessable(String),
    /// The search queue is full.
    Busy(String),
    /// A part the request needs is not there (shutting down, a store that did not load).
    Unavailable(String),
    /// A service the request needs (the LLM) failed or answered what cannot be used.
    Upstream(String),
    /// A service the request needs (the LLM) did not answer in time.
    UpstreamTimeout(String),
    Internal(String),
}

/// The error shapes: seed 000's `{"detail"}` on /v1 and everything else, seed 002's
/// `{"error", "message" | "details"}` under /api (/api/rag, /api/chat), OpenAI's on
/// /v1/embeddings and Text Embeddings Inference's on /embed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    V1,
    Rag,
    OpenAi,
    Tei,
}

impl Surface {
    /// The surface a request path belongs to.
    pub fn of_path(path: &str) -> Self {
        match path {
            "/v1/embeddings" => Surface::OpenAi,
            "/embed" => Surface::Tei,
            _ if path.starts_with("/api/") => Surface::Rag,
            _ => Surface::V1,
        }
    }

    /// The body of an error with `status` and `message` (`field`: the request field it is
    /// about, if one) on this surface.
    pub fn error_body(self, status: StatusCode, message: &str, field: Option<&str>) -> serde_json::Value {
        let reason = status.canonical_reason().unwrap_or("Error");
        match self {
            Surface::V1 => json!({ "detail": message }),
            Surface::Rag => json!({ "error": reason, "message": message }),
            Surface::OpenAi => {
                let kind = match status.as_u16() {
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    429 | 503 => "overloaded_error",
                    400..=499 => "invalid_request_error",
                    _ => "server_error",
                };
                json!({ "error": { "message": message, "type": kind, "param": field, "code": null } })
            }
            Surface::Tei => {
                let kind = match status.as_u16() {
                    503 => "Overloaded",
                    400..=499 => "Validation",
                    _ => "Backend",
                };
                json!({ "error": message, "error_type": kind })
            }
        }
    }
}

impl ApiError {
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        Self::InvalidField {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The table of statuses.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::InvalidField { .. } => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Busy(_) | Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Upstream(_) => StatusCode::BAD_GATEWAY,
            Self::UpstreamTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// What a user reads.
    pub fn message(&self) -> String {
        match self {
            Self::InvalidField { field, message } => format!("{field}: {message}"),
            Self::MethodNotAllowed { message, .. } => message.clone(),
            Self::BadRequest(m)
            | Self::Unauthorized(m)
            | Self::Forbidden(m)
            | Self::NotFound(m)
            | Self::Conflict(m)
            | Self::PayloadTooLarge(m)
            | Self::Unprocessable(m)
            | Self::Busy(m)
            | Self::Unavailable(m)
            | Self::Upstream(m)
            | Self::UpstreamTimeout(m)
            | Self::Internal(m) => m.clone(),
        }
    }

    /// The table of bodies, per surface.
    pub fn body(&self, surface: Surface) -> serde_json::Value {
        match (surface, self) {
            (Surface::Rag, Self::InvalidField { field, message }) => {
                json!({ "error": "Validation error", "details": { "field": field, "message": message } })
            }
            (Surface::Rag, Self::Internal(m)) => json!({ "error": "Internal server error", "message": m }),
            (surface, Self::InvalidField { field, .. }) => {
                surface.error_body(self.status(), &self.message(), Some(field))
            }
            (surface, _) => surface.error_body(self.status(), &self.message(), None),
        }
    }

    /// The response on `surface` (a 401 says how to authenticate).
    pub fn respond(self, surface: Surface) -> Response {
        if let Self::Internal(m) = &self {
            tracing::error!("internal error: {m}");
        }
        let mut response = (self.status(), Json(self.body(surface))).into_response();
        match self {
            Self::Unauthorized(_) => {
                response
                    .headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            Self::MethodNotAllowed { allow, .. } => {
                response.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
            }
            _ => {}
        }
        response
    }
}

/// The library errors, each variant to the kind of failure it is.
impl From<IndexerError> for ApiError {
    fn from(e: IndexerError) -> Self {
        match e {
            IndexerError::NoSuchVersion { .. } | IndexerError::NoSnapshot { .. } => Self::NotFound(e.to_string()),
            IndexerError::NoEarlierVersion { .. }
            | IndexerError::LatestMoved { .. }
            | IndexerError::Snapshot { .. }
            | IndexerError::Checksum { .. } => Self::Conflict(e.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ServerError> for ApiError {
    fn from(e: ServerError) -> Self {
        match e {
            ServerError::InvalidRequest(m) => Self::BadRequest(m),
            ServerError::UnknownExample(m) => Self::NotFound(m),
            ServerError::Indexer(e) => e.into(),
            other @ (ServerError::ModelMismatch { .. } | ServerError::Corrupt { .. } | ServerError::Settings(_)) => {
                Self::Internal(other.to_string())
            }
            timeout @ ServerError::LlmTimeout { .. } => Self::UpstreamTimeout(timeout.to_string()),
            other @ (ServerError::LlmUnreachable { .. }
            | ServerError::LlmStatus { .. }
            | ServerError::LlmAnswer { .. }) => Self::Upstream(other.to_string()),
        }
    }
}

/// /v1 and the other routes answer in seed 000's shape.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.respond(Surface::V1)
    }
}

/// A handler error answered in one surface's shape: `$name(ApiError)`, made from anything an
/// [`ApiError`] is made from.
macro_rules! surface_error {
    ($(#[$doc:meta])* $name:ident, $surface:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name(pub ApiError);

        impl<E: Into<ApiError>> From<E> for $name {
            fn from(e: E) -> Self {
                $name(e.into())
            }
        }

        impl IntoResponse for $name {
            fn into_response(self) -> Response {
                self.0.respond($surface)
            }
        }
    };
}

surface_error!(
    /// An error of the /api/rag routes: seed 002's shape.
    RagError,
    Surface::Rag
);
surface_error!(
    /// An error of `/v1/embeddings`: OpenAI's shape.
    OpenAiError,
    Surface::OpenAi
);
surface_error!(
    /// An error of `/embed`: Text Embeddings Inference's shape.
    TeiError,
    Surface::Tei
);

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
    let body = Surface::of_path(&path).error_body(status, &message, None);
    let mut parts = parts;
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    parts.headers.remove(axum::http::header::CONTENT_TYPE);
    let mut shaped = (status, Json(body)).into_response();
    for (name, value) in parts.headers.iter() {
        shaped.headers_mut().entry(name).or_insert(value.clone());
    }
    shaped
}
