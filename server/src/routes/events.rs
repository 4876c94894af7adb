//! A collection's events as Server-Sent Events: `GET /v1/collections/{name}/events`
//! (`?job_id=` for one job's ingestion events only), each named by its type (seed 004's
//! `document_ingestion_*`, and `collection_version_loaded`) with its JSON payload.
//! The stream lasts until the client leaves or the server shuts down; a subscriber that
//! falls behind gets an `events_missed` event (re-read the job status then).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::knowledge::find;
use crate::api_error::ApiError;
use crate::app::AppState;
use crate::events::CollectionEvent;

#[derive(Deserialize)]
pub struct EventsQuery {
    /// Only this job's events.
    job_id: Option<String>,
}

/// Subscribes before answering, so nothing that happens after the response starts is missed.
pub async fn collection_events(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(query): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    find(&state, &name)?;
    if let Some(job_id) = &query.job_id {
        let job = state.jobs.get(job_id).ok_or_else(|| ApiError::NotFound(format!("Job '{job_id}' not found")))?;
        if job.collection_name != name {
            return Err(ApiError::NotFound(format!("Job '{job_id}' is not a job of collection '{name}'")));
        }
    }
    let receiver = state.events.subscribe().ok_or_else(|| ApiError::Unavailable("the server is shutting down".into()))?;
    let wanted = move |event: &CollectionEvent| event.collection_name() == name && query.job_id.as_ref().is_none_or(|job| event.job_id() == Some(job.as_str()));
    let stream = futures::stream::unfold((receiver, wanted), |(mut receiver, wanted)| async move {
        loop {
            let event = match receiver.recv().await {
                Ok(event) if wanted(&event) => Event::default().event(event.name()).json_data(&event).unwrap_or_else(|e| Event::default().comment(e.to_string())),
                Ok(_) => continue,
                Err(RecvError::Lagged(missed)) => Event::default().event("events_missed").data(serde_json::json!({ "missed": missed }).to_string()),
                Err(RecvError::Closed) => return None,
            };
            return Some((Ok(event), (receiver, wanted)));
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
