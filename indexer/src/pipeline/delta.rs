//! Delta publishing: a nightly run over a snapshot that already holds most of the corpus
//! keeps the previous version's segments, writes one new segment with the documents that
//! changed or arrived, and hides the replaced and deleted copies with segment-scoped
//! tombstones (`<segment>/<document>`). Files whose ETag is the stored one are not even
//! fetched. The server's reload then reads only the new segment; compaction merges what
//! piles up.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::compact::CompactReport;
use super::stages::EmbeddedDoc;
use crate::index::IndexOptions;
use crate::parse::file_uri_of;
use crate::snapshot::{DocumentRecord, Manifest};
use crate::source::SourceEntry;

/// `--publish delta|full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PublishMode {
    /// Build on the previous version when it can: a new segment for what changed.
    #[default]
    Delta,
    /// Write every document into one new segment (what a first run does).
    Full,
}

impl std::str::FromStr for PublishMode {
    type Err = String;
    fn from_str(value: &str) -> Result<Self, String> {
        match value {
            "delta" => Ok(Self::Delta),
            "full" => Ok(Self::Full),
            other => Err(format!("unknown publish mode `{other}` (delta, full)")),
        }
    }
}

/// What a delta run did (in the run report).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeltaReport {
    /// The version this one builds on.
    pub base_version: String,
    /// Files not fetched: their ETag is the one stored and nothing of them is hidden or failed.
    pub files_unchanged: usize,
    /// Documents fetched and found unchanged (record and chunks): left where they are.
    pub documents_unchanged: usize,
    /// Documents written into the new segment (new, changed, or back after a delete).
    pub documents_written: usize,
    pub chunks_written: usize,
    /// Documents gone from the source: hidden from this version on.
    pub documents_removed: usize,
    pub tombstones_added: usize,
    /// Tombstones of documents that are back in the source (an online delete the source undid).
    pub tombstones_lifted: usize,
    /// Segments of the published version.
    pub segments: usize,
    /// The compaction that followed, when segments or hidden rows piled up.
    pub compaction: Option<CompactReport>,
}

/// One live document of the previous version.
struct LiveDoc {
    uri: String,
    etag: Option<String>,
    ingested_at: chrono::DateTime<chrono::Utc>,
    chunks: usize,
    tokens: u64,
}

/// What a run knows about the version it builds on.
pub struct PreviousVersion {
    pub manifest: Manifest,
    /// Segments that could not be read or did not match the manifest: nothing may build on them.
    unreadable: Vec<String>,
    documents: HashMap<String, LiveDoc>,
    /// Every document with rows in some segment, by id: its file.
    files_of: HashMap<String, String>,
    /// Files with a document no segment serves whole (deleted online, partly hidden): fetched.
    dirty_files: HashSet<String>,
    /// The segments holding any row of a document (live or hidden), in manifest order.
    segments_of: HashMap<String, Vec<String>>,
    /// Files that failed, wholly or in part, in the run that wrote the version (None: no report).
    failed_files: Option<HashSet<String>>,
}

/// What the new version changes against the previous one.
#[derive(Debug, Default)]
pub struct Changes {
    pub add_tombstones: Vec<String>,
    pub lift_tombstones: Vec<String>,
    pub removed_documents: usize,
    /// URIs of documents whose file failed in this run and that stay as they were.
    pub kept_after_failure: Vec<String>,
    /// Live documents, chunks and tokens of the new version.
    pub live_documents: usize,
    pub live_chunks: usize,
    pub live_tokens: u64,
}

impl PreviousVersion {
    pub(super) fn new(manifest: Manifest, failed_files: Option<HashSet<String>>) -> Self {
        Self {
            manifest,
            unreadable: Vec::new(),
            documents: HashMap::new(),
            files_of: HashMap::new(),
            dirty_files: HashSet::new(),
            segments_of: HashMap::new(),
            failed_files,
        }
    }

    fn seen(&mut self, segment: &str, record: &DocumentRecord) {
        self.files_of.insert(record.doc_id.clone(), file_uri_of(&record.uri).to_string());
        let segments = self.segments_of.entry(record.doc_id.clone()).or_default();
        if segments.last().map(String::as_str) != Some(segment) {
            segments.push(segment.to_string());
        }
    }

    /// `record`'s copy in `segment` is whole and visible (a later segment's copy replaces it).
    pub(super) fn live(&mut self, segment: &str, record: &DocumentRecord, tokens: u64) {
        self.seen(segment, record);
        let doc = LiveDoc { uri: record.uri.clone(), etag: record.etag.clone(), ingested_at: record.ingested_at, chunks: record.chunk_count as usize, tokens };
        self.documents.insert(record.doc_id.clone(), doc);
    }

    /// `record`'s copy in `segment` is hidden, or some of its rows are.
    pub(super) fn hidden(&mut self, segment: &str, record: &DocumentRecord) {
        self.seen(segment, record);
        self.documents.remove(&record.doc_id);
    }

    pub(super) fn mark_incomplete(&mut self, segment: &str) {
        self.unreadable.push(segment.to_string());
    }

    /// After the last segment: files with a document that is not live are dirty.
    pub(super) fn finish(&mut self) {
        let dirty: HashSet<String> = self.files_of.iter().filter(|(id, _)| !self.documents.contains_key(*id)).map(|(_, file)| file.clone()).collect();
        self.dirty_files = dirty;
    }

    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    /// Whether a delta may build on this version with `index` and `min_recall`; the reason when not.
    pub fn delta_refusal(&self, index: &IndexOptions, min_recall: Option<f64>) -> Option<String> {
        if !self.unreadable.is_empty() {
            return Some(format!("segment {} of version {} is unreadable: publishing a full version", self.unreadable.join(", "), self.version()));
        }
        let recall = self.manifest.recall_check.as_ref().map(|check| check.recall);
        if let (Some(min), Some(recall)) = (min_recall, recall) {
            if recall < min {
                return Some(format!("version {} has ANN recall@10 {recall:.4}, below --min-recall {min}: publishing a full version", self.version()));
            }
        }
        match index.kind.name() {
            Some(asked) if asked != self.manifest.index.kind => {
                Some(format!("version {} has a {} index and {asked} was asked for: publishing a full version", self.version(), self.manifest.index.kind))
            }
            _ => None,
        }
    }

    /// The listed files that need not be fetched: the ETag is the one the file had when a
    /// document of it was last written (documents left in place keep older ETags; a run
    /// writes every changed document of a file it reads, and removals leave hidden rows, which
    /// make the file dirty), every document of the file is live, none of it failed in the run
    /// that wrote the version, and that run parsed with the same signature. Says in `notes` why
    /// nothing could be skipped.
    pub fn unchanged_files(&self, entries: &[SourceEntry], parse_sig: &str, notes: &mut Vec<String>) -> HashSet<String> {
        if self.manifest.parse_sig.as_deref() != Some(parse_sig) {
            notes.push(format!("version {} was parsed by another indexer build or with other tags or limits: every file is fetched", self.version()));
            return HashSet::new();
        }
        let Some(failed) = &self.failed_files else {
            notes.push(format!("version {} has no run report (published online?): every file is fetched", self.version()));
            return HashSet::new();
        };
        // Per file, the ETag of its most recently written documents (one run, one fetch).
        let mut etags: HashMap<&str, (chrono::DateTime<chrono::Utc>, Option<&str>)> = HashMap::new();
        for doc in self.documents.values() {
            let latest = etags.entry(file_uri_of(&doc.uri)).or_insert((doc.ingested_at, doc.etag.as_deref()));
            if doc.ingested_at > latest.0 {
                *latest = (doc.ingested_at, doc.etag.as_deref());
            }
        }
        entries
            .iter()
            .filter(|entry| {
                let stored = etags.get(entry.uri.as_str()).and_then(|(_, etag)| *etag);
                stored.is_some() && stored == entry.etag.as_deref() && !self.dirty_files.contains(&entry.uri) && !failed.contains(&entry.uri)
            })
            .map(|entry| entry.uri.clone())
            .collect()
    }

    /// The tombstones and counts of the version that keeps everything of this one but
    /// `written` (documents in the new segment) and what the source no longer has.
    pub fn changes(&self, written: &[EmbeddedDoc], unchanged_documents: &HashSet<String>, unchanged_files: &HashSet<String>, failed_files: &HashSet<&str>) -> Changes {
        let mut changes = Changes::default();
        let written_ids: HashSet<&str> = written.iter().map(|d| d.record.doc_id.as_str()).collect();
        let existing: HashSet<&str> = self.manifest.tombstones.iter().map(String::as_str).collect();
        let hide = |changes: &mut Changes, doc_id: &str| {
            for segment in self.segments_of.get(doc_id).into_iter().flatten() {
                let tombstone = format!("{segment}/{doc_id}");
                if !existing.contains(tombstone.as_str()) {
                    changes.add_tombstones.push(tombstone);
                }
            }
        };
        let mut ids: Vec<&String> = self.documents.keys().collect();
        ids.sort();
        for id in ids {
            if written_ids.contains(id.as_str()) {
                continue;
            }
            let doc = &self.documents[id];
            let file = file_uri_of(&doc.uri);
            let stays = unchanged_documents.contains(id) || unchanged_files.contains(file);
            if stays || failed_files.contains(file) {
                if !stays {
                    changes.kept_after_failure.push(doc.uri.clone());
                }
                changes.live_documents += 1;
                changes.live_chunks += doc.chunks;
                changes.live_tokens += doc.tokens;
            } else {
                changes.removed_documents += 1;
                hide(&mut changes, id);
            }
        }
        for doc in written {
            let id = doc.record.doc_id.as_str();
            hide(&mut changes, id);
            let chunk_prefix = format!("{id}-");
            changes.lift_tombstones.extend(self.manifest.tombstones.iter().filter(|t| t.as_str() == id || t.starts_with(&chunk_prefix)).cloned());
            changes.live_documents += 1;
            changes.live_chunks += doc.chunks.len();
            changes.live_tokens += doc.tokens();
        }
        changes.kept_after_failure.sort();
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkerConfig;
    use crate::embed::{ModelInfo, Pooling};
    use crate::index::{IndexKind, IndexSpec, RecallCheck};
    use crate::snapshot::{ChunkerManifest, IndexManifest};

    fn previous(kind: IndexSpec, recall: f64) -> PreviousVersion {
        let model = ModelInfo { name: "m".into(), sha256: "s".into(), dim: 4, max_tokens: 256, pooling: Pooling::Mean };
        let chunker = ChunkerManifest { config: ChunkerConfig::default(), sig: "c".into() };
        let mut manifest = Manifest::new("v1".into(), "src".into(), model, chunker, IndexManifest::new(kind, "cpu".into()));
        manifest.recall_check = Some(RecallCheck { k: 10, queries: 200, query_source: "chunks".into(), recall });
        PreviousVersion::new(manifest, Some(HashSet::new()))
    }

    #[test]
    fn a_delta_builds_only_on_what_the_run_would_publish() {
        let hnsw = IndexSpec::Hnsw { m: 32, ef_construction: 200, ef_search: 128 };
        let auto = IndexOptions::default();
        assert_eq!(previous(hnsw.clone(), 0.97).delta_refusal(&auto, None), None);
        assert_eq!(previous(hnsw.clone(), 0.97).delta_refusal(&IndexOptions { kind: IndexKind::Hnsw, ..auto.clone() }, Some(0.95)), None);
        let other_kind = previous(hnsw.clone(), 0.97).delta_refusal(&IndexOptions { kind: IndexKind::IvfFlat, ..auto.clone() }, None).unwrap();
        assert!(other_kind.contains("has a hnsw index and ivf-flat was asked for"), "{other_kind}");
        let low_recall = previous(hnsw, 0.9).delta_refusal(&auto, Some(0.95)).unwrap();
        assert!(low_recall.contains("below --min-recall 0.95"), "{low_recall}");
        let mut unreadable = previous(IndexSpec::Flat, 1.0);
        unreadable.mark_incomplete("seg-1");
        assert!(unreadable.delta_refusal(&auto, None).unwrap().contains("segment seg-1 of version v1 is unreadable"));
    }
}
