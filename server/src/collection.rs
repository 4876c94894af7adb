//! A collection: a snapshot root, the Searcher over its current version (swapped whole, so
//! every answer comes from one version), the files uploaded to it, and its load state.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Utc};
use quarry_indexer::embed::Embedder;
use quarry_indexer::snapshot::{Manifest, SnapshotReader};
use quarry_indexer::IndexerError;
use serde::{Deserialize, Serialize};

use crate::collection_layers::CollectionLayersCache;
use crate::records::{CollectionInfo, FileInfo, FileStatus};
use crate::search::loaded::{LoadOptions, LoadedSnapshot};
use crate::search::searcher::Searcher;

/// What is persisted about a collection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CollectionRecord {
    pub name: String,
    /// The snapshot root.
    pub uri: String,
    /// Created over the API: its snapshot lives under the data dir and is deleted with it.
    pub managed: bool,
    pub description: Option<String>,
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

pub struct Collection {
    pub record: CollectionRecord,
    searcher: RwLock<Option<Arc<Searcher>>>,
    pub updated_at: RwLock<DateTime<Utc>>,
    /// The last load error; the previous version keeps serving meanwhile.
    pub load_error: RwLock<Option<String>>,
    /// Serializes version changes (uploads, deletes, RAG upserts) of this collection.
    pub publish_lock: tokio::sync::Mutex<()>,
    /// Uploaded files, persisted by the registry.
    pub files: Mutex<Vec<FileInfo>>,
    /// The collection's own layers, made for the version last asked for.
    pub collection_layers: CollectionLayersCache,
}

/// Valid names: lowercase letters, digits, `_` and `-`, starting with a letter or digit, at most 64.
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!("invalid collection name '{name}': use 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit"))
    }
}

impl Collection {
    pub fn new(record: CollectionRecord, files: Vec<FileInfo>) -> Self {
        Self {
            updated_at: RwLock::new(record.created_at),
            record,
            searcher: RwLock::new(None),
            load_error: RwLock::new(None),
            publish_lock: tokio::sync::Mutex::new(()),
            files: Mutex::new(files),
            collection_layers: CollectionLayersCache::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.record.name
    }

    /// The Searcher of the current version, if one is published.
    pub fn searcher(&self) -> Option<Arc<Searcher>> {
        self.searcher.read().expect("searcher lock").clone()
    }

    pub fn manifest(&self) -> Option<Manifest> {
        self.searcher().map(|s| s.snapshot().manifest.clone())
    }

    pub fn version(&self) -> Option<String> {
        self.searcher().map(|s| s.snapshot().manifest.version.clone())
    }

    /// Loads LATEST if it differs from the version served; swaps only a fully loaded one.
    /// Returns whether the version changed. An empty managed collection is not an error.
    pub async fn reload(&self, load: &LoadOptions, embedder: &Arc<dyn Embedder>) -> Result<bool, String> {
        let outcome = self.try_reload(load, embedder).await;
        *self.load_error.write().expect("load error lock") = outcome.as_ref().err().cloned();
        outcome
    }

    async fn try_reload(&self, load: &LoadOptions, embedder: &Arc<dyn Embedder>) -> Result<bool, String> {
        let latest = match SnapshotReader::latest_version(&self.record.uri, &load.store).await {
            Ok(version) => version,
            Err(IndexerError::NoSnapshot { .. }) if self.record.managed => return Ok(false),
            Err(e) => return Err(e.to_string()),
        };
        if self.version().as_deref() == Some(latest.as_str()) {
            return Ok(false);
        }
        let options = LoadOptions {
            version: Some(latest),
            ..load.clone()
        };
        let previous = self.searcher().map(|s| s.snapshot().clone());
        let loaded = LoadedSnapshot::load_after(&self.record.uri, &options, previous)
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!(
            "{}: version {} loaded, {} of {} segments kept from the previous one",
            self.name(),
            loaded.manifest.version,
            loaded.reused_segments,
            loaded.segments.len()
        );
        let loaded = Arc::new(loaded);
        build_field_indexes_in_background(&loaded);
        let searcher = Searcher::new(loaded, embedder.clone()).map_err(|e| e.to_string())?;
        *self.searcher.write().expect("searcher lock") = Some(Arc::new(searcher));
        *self.updated_at.write().expect("updated lock") = Utc::now();
        Ok(true)
    }

    /// The seed-000 CollectionInfo.
    pub fn info(&self) -> CollectionInfo {
        let searcher = self.searcher();
        let mut metadata = self.record.metadata.clone();
        metadata.insert("snapshot_uri".into(), self.record.uri.clone().into());
        let (file_count, chunk_count) = match &searcher {
            Some(searcher) => {
                let snapshot = searcher.snapshot();
                let manifest = &snapshot.manifest;
                metadata.insert("snapshot_version".into(), manifest.version.clone().into());
                metadata.insert("embedding_model".into(), manifest.model.name.clone().into());
                metadata.insert("embedding_precisions".into(), manifest.model.precisions.clone().into());
                metadata.insert("vector_dimensions".into(), manifest.model.dim.into());
                metadata.insert("index_type".into(), manifest.index.params.factory().into());
                metadata.insert("segments".into(), manifest.segments.len().into());
                metadata.insert("keyword_analyzer".into(), manifest.keyword.analyzer.clone().into());
                let readings = searcher.language_readings();
                let languages: Vec<serde_json::Value> = readings
                    .iter()
                    .map(|r| serde_json::json!({ "language": r.language, "name": quarry_indexer::pipeline::language_name(&r.language), "chunks": r.chunks, "model_reads_whole": r.reading.whole_share(), "model_reads_well": r.reading.well_share() }))
                    .collect();
                metadata.insert("languages".into(), languages.into());
                if let Some(share) = quarry_indexer::pipeline::whole_share(readings) {
                    metadata.insert("model_reads_whole".into(), share.into());
                }
                if let Some(warning) = quarry_indexer::pipeline::weak_reading_warning(readings) {
                    metadata.insert("model_reading_warning".into(), warning.into());
                }
                (
                    self.list_files()
                        .iter()
                        .filter(|f| f.status == FileStatus::Success)
                        .count(),
                    snapshot.live_rows(),
                )
            }
            None => (0, 0),
        };
        if let Some(error) = self.load_error.read().expect("load error lock").clone() {
            metadata.insert("load_error".into(), error.into());
        }
        CollectionInfo {
            name: self.record.name.clone(),
            description: self.record.description.clone(),
            file_count,
            chunk_count,
            created_at: Some(self.record.created_at),
            updated_at: Some(*self.updated_at.read().expect("updated lock")),
            backend: "quarry".into(),
            metadata,
        }
    }

    /// Uploaded files (every state), then the source files of the snapshot's documents that
    /// did not come from an upload (a batch run's), one entry per file: the documents of a
    /// JSONL file are grouped under it (the URI without its `#fragment`). A file that is one
    /// document has its one-sentence summary (seed 000; the document's L0) in
    /// `metadata.summary`.
    pub fn list_files(&self) -> Vec<FileInfo> {
        let mut files = self.files.lock().expect("files lock").clone();
        if let Some(searcher) = self.searcher() {
            let uploaded: std::collections::HashSet<String> = files
                .iter()
                .filter_map(|f| f.metadata.get("doc_ids"))
                .filter_map(|ids| ids.as_array())
                .flatten()
                .filter_map(|id| id.as_str().map(str::to_string))
                .collect();
            let mut by_file: BTreeMap<String, FileInfo> = BTreeMap::new();
            let mut uploaded_summaries: std::collections::HashMap<&str, &str> = Default::default();
            let mut warned: BTreeMap<String, Vec<&quarry_indexer::snapshot::DocumentRecord>> = BTreeMap::new();
            for (document, chunks, _segment) in searcher.snapshot().live_documents() {
                if uploaded.contains(&document.doc_id) || document.uri.starts_with("upload://") {
                    uploaded_summaries.insert(&document.doc_id, &document.layers.abstract_text);
                    continue;
                }
                let file_uri = quarry_indexer::parse::file_uri_of(&document.uri).to_string();
                let entry = by_file.entry(file_uri.clone()).or_insert_with(|| FileInfo {
                    file_id: quarry_indexer::parse::doc_id_for(&file_uri),
                    file_name: document.file_name.clone(),
                    collection_name: self.record.name.clone(),
                    status: FileStatus::Success,
                    file_size: Some(0),
                    chunk_count: 0,
                    uploaded_at: None,
                    ingested_at: Some(document.ingested_at),
                    expiration_date: None,
                    error_message: None,
                    metadata: serde_json::json!({ "uri": file_uri, "source": document.source, "doc_ids": [] })
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                });
                entry.chunk_count += chunks;
                entry.file_size = Some(entry.file_size.unwrap_or(0) + document.size);
                if !document.warnings.is_empty() {
                    warned.entry(file_uri.clone()).or_default().push(document);
                }
                if let Some(serde_json::Value::Array(ids)) = entry.metadata.get_mut("doc_ids") {
                    ids.push(document.doc_id.clone().into());
                }
                if document.uri == file_uri {
                    entry.metadata.insert("title".into(), document.title.clone().into());
                    add_summary(entry, &document.layers.abstract_text);
                }
            }
            for file in &mut files {
                let ids = file.metadata.get("doc_ids").and_then(|ids| ids.as_array());
                let only = match ids.map(Vec::as_slice) {
                    Some([only]) => only.as_str().and_then(|id| uploaded_summaries.get(id)).copied(),
                    _ => None,
                };
                if let Some(summary) = only {
                    add_summary(file, summary);
                }
            }
            for (file_uri, records) in warned {
                if let Some(file) = by_file.get_mut(&file_uri) {
                    file.metadata
                        .insert("warnings".into(), crate::records::file_warnings_of(records).into());
                }
            }
            files.extend(by_file.into_values());
        }
        files
    }
}

/// Puts a non-empty `summary` in `file.metadata.summary`.
fn add_summary(file: &mut FileInfo, summary: &str) {
    if !summary.is_empty() {
        file.metadata.insert("summary".into(), summary.into());
    }
}

/// Builds the field indexes of the segments of `snapshot` that have none yet (those a reload
/// did not share with the previous version) on a thread of their own: the first filtered
/// search after a load does not wait for them (about a quarter of a second per field at a
/// million documents), nor does the load.
fn build_field_indexes_in_background(snapshot: &Arc<LoadedSnapshot>) {
    let segments: Vec<Arc<crate::search::loaded::SegmentData>> = snapshot
        .segments
        .iter()
        .filter(|s| !s.data.field_index.is_built())
        .map(|s| s.data.clone())
        .collect();
    if segments.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new().name("field-indexes".into()).spawn(move || {
        let started = std::time::Instant::now();
        for data in &segments {
            data.field_index.build_all(&data.documents, &data.doc_of_row);
        }
        tracing::debug!(
            "field indexes of {} segments built in {:.2} s",
            segments.len(),
            started.elapsed().as_secs_f64()
        );
    });
    if let Err(e) = spawned {
        tracing::warn!("field indexes not built ahead (the first filter on each field builds its own): {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("my_documents").is_ok());
        assert!(validate_name("docs-2024").is_ok());
        for bad in ["", "My", "_x", "a b", "a/b", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
