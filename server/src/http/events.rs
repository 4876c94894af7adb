//! A collection's events as Server-Sent Events: `GET /v1/collections/{name}/events`
//! (`?job_id=` for one job's ingestion events only), each named by its type (seed 004's
//! `document_ingestion_*`, and `collection_version_loaded`) with its JSON payload and its id.
//! A client that reconnects with `Last-Event-ID` (EventSource does) or `?last_event_id=` gets
//! the kept events it missed first, or `events_missed` when some are no longer kept; so does
//! a subscriber that falls behind (re-read the job status then). The stream lasts until the
//! client leaves or the server shuts down.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::knowledge::find;
use crate::event_hub::{EventHub, NumberedEvent};
use crate::events::CollectionEvent;
use crate::http::api_error::ApiError;
use crate::ingest::Ingestion;

#[derive(Deserialize)]
pub struct EventsQuery {
    /// Only this job's events.
    job_id: Option<String>,
    /// The last event id seen, for clients that cannot send `Last-Event-ID`.
    last_event_id: Option<String>,
}

fn sse_event(hub: &EventHub, (number, event): &NumberedEvent) -> Event {
    Event::default()
        .id(hub.event_id(*number))
        .event(event.name())
        .json_data(event)
        .unwrap_or_else(|e| Event::default().comment(e.to_string()))
}

fn missed_event(missed: Option<u64>) -> Event {
    Event::default()
        .event("events_missed")
        .data(serde_json::json!({ "missed": missed }).to_string())
}

/// Subscribes before answering (the ingestion side holds the collections, the job book and
/// the event hub this needs), so nothing that happens after the response starts is missed.
pub async fn collection_events(
    State(state): State<Arc<Ingestion>>,
    Path(name): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    find(&state.collections, &name)?;
    if let Some(job_id) = &query.job_id {
        let job = state
            .jobs
            .get(job_id)
            .ok_or_else(|| ApiError::NotFound(format!("Job '{job_id}' not found")))?;
        if job.collection_name != name {
            return Err(ApiError::NotFound(format!(
                "Job '{job_id}' is not a job of collection '{name}'"
            )));
        }
    }
    let header = headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap_or_default().to_string());
    let last_seen = header.or(query.last_event_id);
    let subscription = state
        .events
        .subscribe(last_seen.as_deref())
        .ok_or_else(|| ApiError::Unavailable("the server is shutting down".into()))?;
    let job = query.job_id;
    let wanted = move |event: &CollectionEvent| {
        event.collection_name() == name && job.as_ref().is_none_or(|job| event.job_id() == Some(job.as_str()))
    };
    let mut first: Vec<Event> = Vec::new();
    if subscription.missed {
        first.push(missed_event(None));
    }
    first.extend(
        subscription
            .replay
            .iter()
            .filter(|(_, event)| wanted(event))
            .map(|numbered| sse_event(&state.events, numbered)),
    );
    let live = futures::stream::unfold(
        (subscription.live, wanted, state.events.clone()),
        |(mut receiver, wanted, hub)| async move {
            loop {
                let event = match receiver.recv().await {
                    Ok(numbered) if wanted(&numbered.1) => sse_event(&hub, &numbered),
                    Ok(_) => continue,
                    Err(RecvError::Lagged(missed)) => missed_event(Some(missed)),
                    Err(RecvError::Closed) => return None,
                };
                return Some((Ok(event), (receiver, wanted, hub)));
            }
        },
    );
    let stream = futures::StreamExt::chain(futures::stream::iter(first.into_iter().map(Ok)), live);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
