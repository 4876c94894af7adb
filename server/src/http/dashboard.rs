//! The knowledge library dashboard: one self-contained page (no assets, no CDN) over the
//! /v1 API — collections, drag-and-drop uploads with tags, each job's progress polled as
//! seed 000 shows, documents with their status (a failed one's error in its tooltip),
//! deletes with confirmation, and a search box.

use axum::http::header;
use axum::response::{IntoResponse, Redirect};

const PAGE: &str = include_str!("dashboard.html");

pub async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
}

/// `/` opens the dashboard.
pub async fn root() -> Redirect {
    Redirect::temporary("/dashboard")
}
