//! Liveness, readiness, Prometheus metrics, and the request-tracking middleware.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::app::AppState;

pub async fn healthz() -> &'static str {
    "ok"
}

/// Ready once start-up has loaded every collection and while not shutting down.
pub async fn readyz(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    let ready = state.ready.load(Ordering::SeqCst) && !state.shutting_down.load(Ordering::SeqCst);
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "ready": ready })))
}

pub async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}

/// Counts every request and times it, labelled by its route pattern.
pub async fn track(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics.request_seconds.with_label_values(&[&route]).observe(started.elapsed().as_secs_f64());
    state.metrics.requests.with_label_values(&[&route, &method, response.status().as_str()]).inc();
    response
}
