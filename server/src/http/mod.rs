//! The HTTP appliance over the search engine and the ingestion jobs: the router (one file
//! per surface), errors mapped to statuses ([`api_error`]), API keys ([`auth`]) and the bounded pool
//! searches run on ([`search_queue`]).

pub mod api_error;
pub mod auth;
pub mod chat;
pub mod dashboard;
pub mod embeddings;
pub mod events;
pub mod knowledge;
pub mod knowledge_library;
pub mod llm_stages;
pub mod openapi;
pub mod ops;
pub mod rag;
pub mod read_only;
pub mod search;
pub mod search_queue;
pub mod summaries;
pub mod user_scope;
pub mod versions;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::routing::{get, post};
use axum::Router;

use crate::app::AppState;
use crate::http::api_error::ApiError;

/// Declares the route table once: [`ROUTE_PATHS`] (what the OpenAPI document must describe)
/// and [`routes`] (the router).
macro_rules! route_table {
    ($( $path:literal => $handlers:expr ),* $(,)?) => {
        /// Every path the router serves.
        pub const ROUTE_PATHS: &[&str] = &[$($path),*];

        /// Every route of the server.
        pub fn routes() -> Router<AppState> {
            Router::new()$(.route($path, $handlers))*
        }
    };
}

route_table! {
    "/v1/collections" => post(knowledge::create_collection).get(knowledge::list_collections),
    "/v1/collections/{name}" => get(knowledge::get_collection).delete(knowledge::delete_collection),
    "/v1/collections/{name}/documents" => post(knowledge::upload_documents)
        .get(knowledge::list_documents)
        .delete(knowledge::delete_documents),
    "/v1/collections/{name}/search" => post(search::search),
    "/v1/search" => post(search::search_all),
    "/v1/collections/{name}/events" => get(events::collection_events),
    "/v1/collections/{name}/reload" => post(knowledge::reload_collection),
    "/v1/collections/{name}/versions" => get(versions::list),
    "/v1/collections/{name}/summaries" => get(summaries::list),
    "/v1/collections/{name}/rollback" => post(versions::rollback),
    "/v1/documents/{job_id}/status" => get(knowledge::job_status),
    "/v1/knowledge/health" => get(knowledge::health),
    "/v1/embeddings" => post(embeddings::openai_embeddings),
    "/embed" => post(embeddings::tei_embed),
    "/api/rag/ingest" => post(rag::ingest),
    "/api/rag/search" => post(rag::search),
    "/api/chat" => post(chat::chat),
    "/api/knowledge/documents" => post(knowledge_library::upload_document).get(knowledge_library::list_documents),
    "/api/knowledge/documents/{id}" => get(knowledge_library::get_document).delete(knowledge_library::delete_document),
    "/api/knowledge/search" => post(knowledge_library::search),
    "/healthz" => get(ops::healthz),
    "/readyz" => get(ops::readyz),
    "/metrics" => get(ops::metrics),
    "/dashboard" => get(dashboard::page),
    "/" => get(dashboard::root),
    "/openapi.json" => get(openapi::serve),
}

/// A JSON body whose rejections (malformed JSON, wrong types, unknown fields) answer 400
/// with `{"detail": ...}` instead of axum's plain-text 422.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(JsonRejection::BytesRejection(e)) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::PayloadTooLarge(e.body_text()))
            }
            Err(rejection) => Err(ApiError::BadRequest(format!(
                "invalid JSON body: {}",
                rejection.body_text()
            ))),
        }
    }
}
