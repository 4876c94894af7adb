//! Liveness, readiness, Prometheus metrics, the request-tracking middleware, and the early
//! answer to bodies declared larger than the limit.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::app::{HttpSettings, Lifecycle};
use crate::http::api_error::{ApiError, Surface};
use crate::metrics::Metrics;
use crate::registry::CollectionRegistry;

pub async fn healthz() -> &'static str {
    "ok"
}

/// Ready once start-up is done, every collection served from a snapshot root (`--collection`)
/// serves a version (a replica started before the first publish waits for its poll to load
/// one), and while not shutting down. `waiting_for` names the collections without a version.
pub async fn readyz(
    State(lifecycle): State<Arc<Lifecycle>>,
    State(collections): State<Arc<CollectionRegistry>>,
) -> impl IntoResponse {
    let waiting_for: Vec<String> = collections
        .all()
        .iter()
        .filter(|c| !c.record.managed && c.version().is_none())
        .map(|c| c.name().to_string())
        .collect();
    let ready = lifecycle.ready.load(Ordering::SeqCst)
        && !lifecycle.shutting_down.load(Ordering::SeqCst)
        && waiting_for.is_empty();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(json!({ "ready": ready, "waiting_for": waiting_for })))
}

pub async fn metrics(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], metrics.render())
}

/// Counts every request and times it, labelled by its route pattern.
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    metrics
        .request_seconds
        .with_label_values(&[&route])
        .observe(started.elapsed().as_secs_f64());
    metrics
        .requests
        .with_label_values(&[&route, &method, response.status().as_str()])
        .inc();
    response
}

/// Bytes of a refused body still read (and dropped) after the 413, and for how long.
const DRAIN_BYTES: usize = 64 << 20;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// A request whose Content-Length is over the body limit gets its 413 at once, while its body
/// is read and dropped in the background (up to DRAIN_BYTES / DRAIN_TIME): closing the
/// connection on unread bytes resets it, and the client would see the reset instead of the 413.
pub async fn refuse_oversized(State(settings): State<Arc<HttpSettings>>, request: Request, next: Next) -> Response {
    let limit = settings.upload_limit;
    let surface = Surface::of_path(request.uri().path());
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let Some(declared) = declared.filter(|&n| n > limit as u64) else {
        return next.run(request).await;
    };
    let mut body = request.into_body().into_data_stream();
    tokio::spawn(async move {
        use futures::StreamExt;
        let mut read = 0usize;
        let _ = tokio::time::timeout(DRAIN_TIME, async {
            while let Some(Ok(bytes)) = body.next().await {
                read += bytes.len();
                if read > DRAIN_BYTES {
                    break;
                }
            }
        })
        .await;
    });
    ApiError::PayloadTooLarge(format!(
        "request body of {declared} bytes exceeds the limit of {limit} bytes"
    ))
    .respond(surface)
}
