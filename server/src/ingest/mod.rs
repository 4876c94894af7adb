//! Online ingestion: upload jobs with their persisted status, worker pool and resumption
//! ([`jobs`]), and the indexer pipeline run on one file and published as a new version of a
//! collection ([`online`]). [`Ingestion`] is what both need.

pub mod jobs;
pub mod online;

use std::path::PathBuf;
use std::sync::Arc;

use quarry_indexer::parse::Parser;
use quarry_indexer::pipeline::CompactOptions;
use quarry_indexer::summary::Summarizer;
use tokio::sync::Semaphore;

use crate::event_hub::EventHub;
use crate::metrics::Metrics;
use crate::registry::CollectionRegistry;
use jobs::JobBook;

/// What ingestion works with: the collections it publishes into, the job book, the event
/// hub its progress goes to, the worker slots, and how files are parsed and segments merged.
pub struct Ingestion {
    pub collections: Arc<CollectionRegistry>,
    pub jobs: JobBook,
    pub events: Arc<EventHub>,
    pub metrics: Arc<Metrics>,
    /// One permit per ingestion worker.
    pub ingest_slots: Arc<Semaphore>,
    pub workers: usize,
    /// Uploads wait here, a folder per job.
    pub uploads_root: PathBuf,
    pub parser: Arc<dyn Parser>,
    pub compact: CompactOptions,
    /// Makes each uploaded document's layers.
    pub summarizer: Arc<dyn Summarizer>,
}

impl Ingestion {
    /// Whether no ingestion job is running.
    pub fn idle(&self) -> bool {
        self.ingest_slots.available_permits() >= self.workers
    }
}
