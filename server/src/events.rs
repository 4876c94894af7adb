//! A collection's events, broadcast to every subscriber of its event stream (Server-Sent
//! Events): ingestion (seed 004's: a file's ingestion started, its progress through the
//! stages — parsing, chunking, embedding batch by batch, storing —, completed or failed), and
//! a new version served (an upload's or delete's publish, a reload, a nightly run's snapshot
//! picked up by polling).

use chrono::{DateTime, Utc};
use serde::Serialize;

/// A stage of a file's ingestion, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Parsing,
    Chunking,
    Embedding,
    Storing,
}

/// Where a file's ingestion is: its stage, its percent (the FileProgress's
/// `progress_percent`), and while embedding the chunks done of all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageProgress {
    pub stage: Stage,
    pub percent: f64,
    /// (chunks processed, total chunks) from chunking on.
    pub chunks: Option<(usize, usize)>,
}

impl StageProgress {
    /// Parsing has begun.
    pub fn started() -> Self {
        Self {
            stage: Stage::Parsing,
            percent: 10.0,
            chunks: None,
        }
    }

    /// Parsed (seed 004: parsing, 0.25).
    pub fn parsed() -> Self {
        Self {
            stage: Stage::Parsing,
            percent: 25.0,
            chunks: None,
        }
    }

    /// Chunked into `total` chunks (seed 004: chunking, 0.50).
    pub fn chunked(total: usize) -> Self {
        Self {
            stage: Stage::Chunking,
            percent: 50.0,
            chunks: Some((0, total)),
        }
    }

    /// `done` of `total` chunks embedded (or given a stored vector): 50% to 90%.
    pub fn embedding(done: usize, total: usize) -> Self {
        let fraction = if total == 0 {
            1.0
        } else {
            done.min(total) as f64 / total as f64
        };
        Self {
            stage: Stage::Embedding,
            percent: 50.0 + 40.0 * fraction,
            chunks: Some((done, total)),
        }
    }

    /// Embedded, being published with the job's other files (seed 004: storing, 0.95).
    pub fn storing(total: usize) -> Self {
        Self {
            stage: Stage::Storing,
            percent: 95.0,
            chunks: Some((total, total)),
        }
    }
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Started,
    Progress,
    Completed,
    Failed,
}

impl EventKind {
    /// The seed's event type, the SSE event name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Started => "document_ingestion_started",
            Self::Progress => "document_ingestion_progress",
            Self::Completed => "document_ingestion_completed",
            Self::Failed => "document_ingestion_failed",
        }
    }
}

/// Which file an event is about.
#[derive(Debug, Clone)]
pub struct FileRef {
    pub collection_name: String,
    pub job_id: String,
    pub file_id: String,
    pub file_name: String,
}

/// One event: the seed-004 payload (`document_id` is the file's id, `status` processing |
/// ready | failed, `progress` 0 to 1), with the event type, job, collection and file name.
#[derive(Debug, Clone, Serialize)]
pub struct IngestionEvent {
    pub event: &'static str,
    pub document_id: String,
    pub file_name: String,
    pub job_id: String,
    pub collection_name: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks_processed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_chunks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the error's message leaves out (what was found wrong in a corrupted file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<String>,
    pub timestamp: DateTime<Utc>,
}

impl IngestionEvent {
    fn of(kind: EventKind, file: &FileRef, status: &'static str) -> Self {
        Self {
            event: kind.name(),
            document_id: file.file_id.clone(),
            file_name: file.file_name.clone(),
            job_id: file.job_id.clone(),
            collection_name: file.collection_name.clone(),
            status,
            stage: None,
            progress: None,
            chunks_processed: None,
            total_chunks: None,
            chunk_count: None,
            token_count: None,
            error: None,
            error_detail: None,
            timestamp: Utc::now(),
        }
    }

    pub fn started(file: &FileRef) -> Self {
        Self::of(EventKind::Started, file, "processing")
    }

    pub fn progress(file: &FileRef, at: StageProgress) -> Self {
        let mut event = Self::of(EventKind::Progress, file, "processing");
        event.stage = Some(at.stage);
        event.progress = Some(at.percent / 100.0);
        if let Some((done, total)) = at.chunks {
            event.chunks_processed = Some(done);
            event.total_chunks = Some(total);
        }
        event
    }

    pub fn completed(file: &FileRef, chunk_count: usize, token_count: u64) -> Self {
        let mut event = Self::of(EventKind::Completed, file, "ready");
        event.chunk_count = Some(chunk_count);
        event.token_count = Some(token_count);
        event
    }

    pub fn failed(file: &FileRef, error: &str, detail: Option<&str>) -> Self {
        let mut event = Self::of(EventKind::Failed, file, "failed");
        event.error = Some(error.to_string());
        event.error_detail = detail.map(str::to_string);
        event
    }
}

/// A collection began serving a new version.
#[derive(Debug, Clone, Serialize)]
pub struct VersionEvent {
    pub event: &'static str,
    pub collection_name: String,
    pub version: String,
    pub previous_version: Option<String>,
    pub documents: usize,
    pub chunks: usize,
    pub timestamp: DateTime<Utc>,
}

impl VersionEvent {
    pub const NAME: &'static str = "collection_version_loaded";
}

/// Anything a collection's event stream carries.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CollectionEvent {
    Ingestion(IngestionEvent),
    Version(VersionEvent),
}

impl CollectionEvent {
    /// The event's type, the SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ingestion(event) => event.event,
            Self::Version(event) => event.event,
        }
    }

    pub fn collection_name(&self) -> &str {
        match self {
            Self::Ingestion(event) => &event.collection_name,
            Self::Version(event) => &event.collection_name,
        }
    }

    /// The job an ingestion event belongs to.
    pub fn job_id(&self) -> Option<&str> {
        match self {
            Self::Ingestion(event) => Some(&event.job_id),
            Self::Version(_) => None,
        }
    }
}

impl From<IngestionEvent> for CollectionEvent {
    fn from(event: IngestionEvent) -> Self {
        Self::Ingestion(event)
    }
}

impl From<VersionEvent> for CollectionEvent {
    fn from(event: VersionEvent) -> Self {
        Self::Version(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_progress_rises_through_the_stages() {
        let steps = [
            StageProgress::started(),
            StageProgress::parsed(),
            StageProgress::chunked(8),
            StageProgress::embedding(3, 8),
            StageProgress::embedding(8, 8),
            StageProgress::storing(8),
        ];
        assert!(
            steps
                .windows(2)
                .all(|w| w[0].stage <= w[1].stage && w[0].percent < w[1].percent),
            "{steps:?}"
        );
        assert_eq!(StageProgress::embedding(8, 8).percent, 90.0);
        assert_eq!(
            StageProgress::embedding(0, 0).percent,
            90.0,
            "nothing to embed is all embedded"
        );
        assert_eq!(StageProgress::embedding(3, 8).percent, 65.0);
    }

    #[test]
    fn events_carry_the_seed_payload_fields() {
        let file = FileRef {
            collection_name: "c".into(),
            job_id: "j".into(),
            file_id: "f".into(),
            file_name: "a.md".into(),
        };
        let progress = serde_json::to_value(IngestionEvent::progress(&file, StageProgress::embedding(3, 8))).unwrap();
        assert_eq!(
            (
                progress["event"].as_str(),
                progress["status"].as_str(),
                progress["stage"].as_str()
            ),
            (
                Some("document_ingestion_progress"),
                Some("processing"),
                Some("embedding")
            )
        );
        assert_eq!(
            (
                progress["progress"].as_f64(),
                progress["chunks_processed"].as_u64(),
                progress["total_chunks"].as_u64()
            ),
            (Some(0.65), Some(3), Some(8))
        );
        assert!(
            progress.get("error").is_none() && progress.get("chunk_count").is_none(),
            "{progress}"
        );
        let failed = serde_json::to_value(IngestionEvent::failed(&file, "file is empty", None)).unwrap();
        assert_eq!(
            (
                failed["status"].as_str(),
                failed["error"].as_str(),
                failed["document_id"].as_str()
            ),
            (Some("failed"), Some("file is empty"), Some("f"))
        );
        assert!(
            failed.get("stage").is_none() && failed.get("error_detail").is_none(),
            "{failed}"
        );
        let corrupt = IngestionEvent::failed(
            &file,
            "File appears corrupted. Please verify the file and try again.",
            Some("PDF has no pages"),
        );
        let corrupt = serde_json::to_value(corrupt).unwrap();
        assert_eq!(corrupt["error_detail"], "PDF has no pages");
    }
}
