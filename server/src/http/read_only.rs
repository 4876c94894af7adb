//! A read-only replica's refusal of writes: with `--read-only`, every route that changes
//! something (what an admin API key is needed for, [`super::auth::needs`]) answers 405 in its
//! surface's error shape, saying why and where writes go, with `Allow` listing the methods the
//! route still takes.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::app::HttpSettings;
use crate::http::api_error::{ApiError, Surface};
use crate::http::auth::{needs, Needs, Role};

/// The middleware: lets reads and searches through; a write gets its 405.
pub async fn refuse_writes(State(settings): State<Arc<HttpSettings>>, request: Request, next: Next) -> Response {
    if !settings.read_only {
        return next.run(request).await;
    }
    // Unknown routes keep their 404.
    let Some(path) = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
    else {
        return next.run(request).await;
    };
    if needs(request.method(), &path) != Needs::Key(Role::Admin) {
        return next.run(request).await;
    }
    ApiError::MethodNotAllowed {
        message: format!(
            "{} {path}: this server is a read-only replica (--read-only); send writes to the server or batch job that writes this root",
            request.method()
        ),
        allow: allowed_methods(&path),
    }
    .respond(Surface::of_path(&path))
}

/// The methods a read-only replica takes on a route: GET where the route reads, nothing on
/// the routes that only write.
fn allowed_methods(path: &str) -> &'static str {
    match path {
        "/api/rag/ingest" | "/v1/collections/{name}/reload" | "/v1/collections/{name}/rollback" => "",
        _ => "GET",
    }
}
