//! Delta publishing: a nightly run over a snapshot that already holds most of the corpus
//! keeps the previous version's segments, writes new segments with the documents that
//! changed or arrived (one, unless they hold more than a run's segment), and hides the
//! replaced and deleted copies with segment-scoped tombstones (`<segment>/<document>`).
//! Files whose ETag is the one in the version's file table are not even fetched, and the
//! segments holding only their documents are not read. The server's reload then reads only
//! the new segments; compaction merges what piles up.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::compact::CompactReport;
use super::report::Failure;
use crate::error::IndexerError;
use crate::index::IndexOptions;
use crate::parse::{added_through_api, file_uri_of};
use crate::snapshot::{tombstone_document, DocumentOutline, FileTable, Manifest, SnapshotReader, Tombstones};
use crate::source::SourceEntry;

/// `--publish delta|full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PublishMode {
    /// Build on the previous version when it can: new segments for what changed.
    #[default]
    Delta,
    /// Write every document into new segments (what a first run does).
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
    /// Files not fetched: their ETag is the one in the previous version's file table and nothing of them failed.
    pub files_unchanged: usize,
    /// Documents fetched and found unchanged (record and chunks): left where they are.
    pub documents_unchanged: usize,
    /// Documents written into the new segment (new, changed, or back after a delete).
    pub documents_written: usize,
    pub chunks_written: usize,
    /// Documents gone from the source: hidden from this version on.
    pub documents_removed: usize,
    /// Documents added through a server's API (uploads, RAG ingests): kept, not the source's to remove.
    pub documents_from_api: usize,
    pub tombstones_added: usize,
    /// Tombstones of documents that are back in the source (an online delete the source undid).
    pub tombstones_lifted: usize,
    /// The version another writer published on top of the base while the run worked, which
    /// this run's change was put on top of in turn (none when the base was still LATEST).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebased_onto: Option<String>,
    /// Segments of the published version.
    pub segments: usize,
    /// The compaction that followed, when segments or hidden rows piled up.
    pub compaction: Option<CompactReport>,
}

/// One live document of the previous version.
struct LiveDoc {
    uri: String,
    chunks: u32,
    /// What made its layers: an index into [`PreviousVersion::layer_makers`].
    layers_by: usize,
    /// The segment (index in the manifest) holding the live copy.
    segment: usize,
    /// Known once that segment's rows are read.
    tokens: Option<u64>,
}

/// What a run knows about the version it builds on. Reading it costs the manifest, the file
/// table and every segment's documents.parquet; a segment's rows and embeddings are read
/// (`StoredEmbeddings::read_segments`) only when it holds a document of a file the run fetches.
pub struct PreviousVersion {
    pub manifest: Manifest,
    /// Segments that could not be read or did not match the manifest: nothing may build on them.
    unreadable: Vec<String>,
    documents: HashMap<String, LiveDoc>,
    /// The summarizers that made the live documents' layers, each named once.
    layer_makers: Vec<String>,
    /// The segments holding any row of a document (live or hidden), as manifest indexes, in
    /// order, each with the rows of that copy no tombstone hides yet.
    segments_of: HashMap<String, Vec<(usize, u32)>>,
    /// Per segment (manifest index), the rows tombstones hide.
    hidden_rows: Vec<u64>,
    /// The file table of the run that wrote the version (None: published online or by an older build).
    files: Option<FileTable>,
    /// Segments whose rows were read.
    rows_read: HashSet<usize>,
}

/// Documents, chunks and tokens (tokens only of documents whose rows were read).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LiveCount {
    pub documents: u64,
    pub chunks: u64,
    pub tokens: u64,
}

impl LiveCount {
    fn add(&mut self, chunks: u64, tokens: u64) {
        self.documents += 1;
        self.chunks += chunks;
        self.tokens += tokens;
    }
}

/// What the new version changes against the previous one.
#[derive(Debug, Default)]
pub struct Changes {
    pub add_tombstones: Vec<String>,
    pub lift_tombstones: Vec<String>,
    pub removed_documents: usize,
    /// URIs of documents whose file failed in this run and that stay as they were.
    pub kept_after_failure: Vec<String>,
    /// Live documents added through a server's API (uploads, RAG ingests), which a batch run
    /// keeps as they are.
    pub api_documents: LiveCount,
    /// What the new version serves of each file (ETags and failures are the run's to fill in).
    pub files: FileTable,
    /// Rows tombstones hide in each segment of the previous version, once the new ones are added
    /// (lifted ones left counted: the documents they hid are written again and their old copies hidden).
    pub hidden_rows: HashMap<String, u64>,
}

impl PreviousVersion {
    /// Reads what `reader`'s version holds, document by document (where each is, not its
    /// record), without reading any rows:
    /// a segment whose files are missing or have another size than the manifest says, or
    /// whose documents.parquet fails its checksum, is unreadable (and said so in `notes`).
    pub(super) async fn read(reader: &SnapshotReader, notes: &mut Vec<String>) -> Self {
        let manifest = reader.manifest().clone();
        let manifest_segments = manifest.segments.len();
        let files = reader.read_file_table().await.unwrap_or_else(|e| {
            notes.push(format!(
                "the file table of version {} is unreadable, every file is fetched: {e}",
                manifest.version
            ));
            None
        });
        let mut previous = Self {
            manifest,
            unreadable: Vec::new(),
            documents: HashMap::new(),
            layer_makers: Vec::new(),
            segments_of: HashMap::new(),
            hidden_rows: vec![0; manifest_segments],
            files,
            rows_read: HashSet::new(),
        };
        let tombstones = reader.manifest().tombstone_set();
        for (index, segment) in reader.manifest().segments.iter().enumerate() {
            let records = match reader.segment_files_problem(&segment.id).await {
                Ok(None) => reader.read_segment_outlines(&segment.id).await,
                Ok(Some(problem)) => Err(IndexerError::snapshot(&segment.id, problem)),
                Err(e) => Err(e),
            };
            match records {
                Ok(records) => previous.add_segment(index, &segment.id, records, &tombstones),
                Err(e) => {
                    notes.push(format!("segment {} not reused: {e}", segment.id));
                    previous.mark_incomplete(&segment.id);
                }
            }
        }
        previous
    }

    /// The records of segment `index`, in manifest order: a later segment's copy of a
    /// document replaces an earlier one, and a copy any tombstone touches is not live.
    fn add_segment(&mut self, index: usize, segment: &str, records: Vec<DocumentOutline>, tombstones: &Tombstones<'_>) {
        for record in records {
            let hidden = tombstones.hidden_rows(segment, &record.doc_id, record.chunk_count);
            self.hidden_rows[index] += u64::from(hidden);
            let segments = self.segments_of.entry(record.doc_id.clone()).or_default();
            if segments.last().map(|&(last, _)| last) != Some(index) {
                segments.push((index, record.chunk_count - hidden));
            }
            if tombstones.hides_any_row(segment, &record.doc_id, record.chunk_count) {
                self.documents.remove(&record.doc_id);
            } else {
                let layers_by = match self.layer_makers.iter().position(|m| *m == record.layers_by) {
                    Some(known) => known,
                    None => {
                        self.layer_makers.push(record.layers_by);
                        self.layer_makers.len() - 1
                    }
                };
                self.documents.insert(
                    record.doc_id,
                    LiveDoc {
                        uri: record.uri,
                        chunks: record.chunk_count,
                        layers_by,
                        segment: index,
                        tokens: None,
                    },
                );
            }
        }
    }

    /// Keeps only the documents (and file table entries) `owns` accepts: a shard of a sharded
    /// run builds on its own part of the version and leaves the rest as it is.
    pub(super) fn keep_part(&mut self, owns: impl Fn(&str) -> bool) {
        self.documents.retain(|_, doc| owns(&doc.uri));
        if let Some(table) = &mut self.files {
            table.files.retain(|uri, _| owns(uri));
        }
    }

    pub(super) fn mark_incomplete(&mut self, segment: &str) {
        self.unreadable.push(segment.to_string());
    }

    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    /// The segments (manifest indexes) not yet read that hold the live copy of a document
    /// from a file `fetched` accepts; marked as read.
    pub(super) fn segments_to_read(&mut self, fetched: impl Fn(&str) -> bool) -> Vec<usize> {
        let unreadable: HashSet<usize> = self
            .manifest
            .segments
            .iter()
            .enumerate()
            .filter(|(_, s)| self.unreadable.contains(&s.id))
            .map(|(i, _)| i)
            .collect();
        let mut wanted: Vec<usize> = self
            .documents
            .values()
            .filter(|doc| fetched(file_uri_of(&doc.uri)))
            .map(|doc| doc.segment)
            .filter(|index| !self.rows_read.contains(index) && !unreadable.contains(index))
            .collect::<HashSet<usize>>()
            .into_iter()
            .collect();
        wanted.sort_unstable();
        self.rows_read.extend(wanted.iter().copied());
        wanted
    }

    /// Whether segment `index` holds the live copy of `doc_id`.
    pub(super) fn is_live_in(&self, doc_id: &str, index: usize) -> bool {
        self.documents.get(doc_id).is_some_and(|doc| doc.segment == index)
    }

    /// The live copy of `doc_id`, now read: its tokens.
    pub(super) fn rows_read(&mut self, doc_id: &str, tokens: u64) {
        if let Some(doc) = self.documents.get_mut(doc_id) {
            doc.tokens = Some(tokens);
        }
    }

    /// The copy of `doc_id` thought live lacks rows: it is not live.
    pub(super) fn rows_missing(&mut self, doc_id: &str) {
        self.documents.remove(doc_id);
    }

    /// Whether a delta may build on this version with `index` and `min_recall`; the reason when not.
    pub fn delta_refusal(&self, index: &IndexOptions, min_recall: Option<f64>) -> Option<String> {
        if !self.unreadable.is_empty() {
            return Some(format!(
                "segment {} of version {} is unreadable: publishing a full version",
                self.unreadable.join(", "),
                self.version()
            ));
        }
        let recall = self.manifest.recall_check.as_ref().map(|check| check.recall);
        if let (Some(min), Some(recall)) = (min_recall, recall) {
            if recall < min {
                return Some(format!(
                    "version {} has ANN recall@10 {recall:.4}, below --min-recall {min}: publishing a full version",
                    self.version()
                ));
            }
        }
        match index.kind.name() {
            Some(asked) if asked != self.manifest.index.kind => Some(format!(
                "version {} has a {} index and {asked} was asked for: publishing a full version",
                self.version(),
                self.manifest.index.kind
            )),
            _ => None,
        }
    }

    /// How many live documents each source file (the file part of a document's URI) has in
    /// this version; documents added through a server's API are no source file's.
    pub(super) fn live_documents_per_file(&self) -> HashMap<&str, u64> {
        let mut live: HashMap<&str, u64> = HashMap::new();
        for doc in self.documents.values().filter(|doc| !added_through_api(&doc.uri)) {
            *live.entry(file_uri_of(&doc.uri)).or_default() += 1;
        }
        live
    }

    /// How many live documents of this version were added through a server's API (uploads,
    /// RAG ingests).
    pub(super) fn api_documents(&self) -> usize {
        self.documents
            .values()
            .filter(|doc| added_through_api(&doc.uri))
            .count()
    }

    /// Whether this version's file table lists `uri` (a file some run read, even if it failed).
    pub(super) fn lists_file(&self, uri: &str) -> bool {
        self.files.as_ref().is_some_and(|table| table.get(uri).is_some())
    }

    /// The listed files that need not be fetched: the version's file table has the file with
    /// the listed ETag, nothing of it failed (or it is no document: a picture, an empty file,
    /// which the same bytes and build fail alike), the version serves every document the table
    /// counts for it, the run that wrote it parsed with the same signature, and the layers of
    /// each of its documents were made by `layers_by`, the run's summarizer (not by one it fell
    /// back to). Says in `notes` why nothing could be skipped.
    pub fn unchanged_files(
        &self,
        entries: &[SourceEntry],
        parse_sig: &str,
        layers_by: &str,
        notes: &mut Vec<String>,
    ) -> HashSet<String> {
        if self.manifest.parse_sig.as_deref() != Some(parse_sig) {
            notes.push(format!(
                "version {} was parsed by another indexer build or with other tags or limits: every file is fetched",
                self.version()
            ));
            return HashSet::new();
        }
        let Some(table) = &self.files else {
            notes.push(format!(
                "version {} has no file table (published online, or by an older build): every file is fetched",
                self.version()
            ));
            return HashSet::new();
        };
        let live = self.live_documents_per_file();
        let layers_again: HashSet<&str> = self
            .documents
            .values()
            .filter(|doc| self.layer_makers[doc.layers_by] != layers_by && !added_through_api(&doc.uri))
            .map(|doc| file_uri_of(&doc.uri))
            .collect();
        if !layers_again.is_empty() {
            notes.push(format!(
                "{} files hold documents whose layers a summarizer other than {layers_by} made: they are fetched to make them again",
                layers_again.len()
            ));
        }
        entries
            .iter()
            .filter(|entry| {
                table.get(&entry.uri).is_some_and(|file| {
                    file.etag.is_some()
                        && file.etag == entry.etag
                        && (!file.failed || file.no_document.is_some())
                        && live.get(entry.uri.as_str()).copied().unwrap_or(0) == file.documents
                        && !layers_again.contains(entry.uri.as_str())
                })
            })
            .map(|entry| entry.uri.clone())
            .collect()
    }

    /// The failures of the `unchanged` files that are no document, carried over as the run
    /// that read them reported them (they are not read again).
    pub fn no_document_failures(&self, unchanged: &HashSet<String>) -> Vec<Failure> {
        let Some(table) = &self.files else {
            return Vec::new();
        };
        let mut failures: Vec<Failure> = unchanged
            .iter()
            .filter_map(|uri| {
                let reason = table.get(uri)?.no_document.clone()?;
                Some(Failure {
                    unchanged_since: Some(self.version().to_string()),
                    no_document: true,
                    ..Failure::new(uri, "parse", reason)
                })
            })
            .collect();
        failures.sort_by(|a, b| a.uri.cmp(&b.uri));
        failures
    }

    /// The tombstones and per-file contents of the version that keeps everything of this one
    /// but the documents `written_ids` (in the new segments, which hold `written_files` of
    /// each file) and what the source no longer has.
    pub(super) fn changes(
        &self,
        written_ids: &HashSet<String>,
        written_files: FileTable,
        unchanged_documents: &HashSet<String>,
        unchanged_files: &HashSet<String>,
        failed_files: &HashSet<String>,
    ) -> Changes {
        let mut changes = Changes {
            hidden_rows: self
                .manifest
                .segments
                .iter()
                .zip(&self.hidden_rows)
                .map(|(s, &rows)| (s.id.clone(), rows))
                .collect(),
            ..Default::default()
        };
        let existing: HashSet<&str> = self.manifest.tombstones.iter().map(String::as_str).collect();
        let hide = |changes: &mut Changes, doc_id: &str| {
            for &(index, visible_rows) in self.segments_of.get(doc_id).into_iter().flatten() {
                let tombstone = format!("{}/{doc_id}", self.manifest.segments[index].id);
                if !existing.contains(tombstone.as_str()) {
                    changes.add_tombstones.push(tombstone);
                    *changes
                        .hidden_rows
                        .entry(self.manifest.segments[index].id.clone())
                        .or_default() += u64::from(visible_rows);
                }
            }
        };
        let mut ids: Vec<&String> = self.documents.keys().collect();
        ids.sort();
        for id in ids {
            let doc = &self.documents[id];
            let file = file_uri_of(&doc.uri);
            if written_ids.contains(id.as_str()) || unchanged_files.contains(file) {
                continue; // counted below
            }
            if added_through_api(&doc.uri) {
                // Not the source's: it stays, outside the file table, until deleted through the API.
                changes.api_documents.add(doc.chunks as u64, doc.tokens.unwrap_or(0));
                continue;
            }
            let stays = unchanged_documents.contains(id);
            if stays || failed_files.contains(file) {
                if !stays {
                    changes.kept_after_failure.push(doc.uri.clone());
                }
                changes
                    .files
                    .add_document(&doc.uri, doc.chunks as u64, doc.tokens.unwrap_or(0));
            } else {
                changes.removed_documents += 1;
                hide(&mut changes, id);
            }
        }
        if let Some(table) = &self.files {
            for file in unchanged_files {
                if let Some(entry) = table.get(file) {
                    changes.files.files.insert(file.clone(), entry.clone());
                }
            }
        }
        let mut written: Vec<&String> = written_ids.iter().collect();
        written.sort();
        for id in written {
            hide(&mut changes, id);
            changes.lift_tombstones.extend(
                self.manifest
                    .tombstones
                    .iter()
                    .filter(|t| tombstone_document(t) == Some(id.as_str()))
                    .cloned(),
            );
        }
        changes.files.add_table(written_files);
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
        let model = ModelInfo {
            name: "m".into(),
            sha256: "s".into(),
            dim: 4,
            max_tokens: 256,
            pooling: Pooling::Mean,
            precisions: Vec::new(),
        };
        let chunker = ChunkerManifest {
            config: ChunkerConfig::default(),
            sig: "c".into(),
        };
        let mut manifest = Manifest::new(
            "v1".into(),
            "src".into(),
            model,
            chunker,
            IndexManifest::new(kind, "cpu".into()),
        );
        manifest.recall_check = Some(RecallCheck {
            k: 10,
            queries: 200,
            query_source: "chunks".into(),
            recall,
        });
        PreviousVersion {
            manifest,
            unreadable: Vec::new(),
            documents: HashMap::new(),
            layer_makers: Vec::new(),
            segments_of: HashMap::new(),
            hidden_rows: Vec::new(),
            files: None,
            rows_read: HashSet::new(),
        }
    }

    #[test]
    fn a_delta_builds_only_on_what_the_run_would_publish() {
        let hnsw = IndexSpec::Hnsw {
            m: 32,
            ef_construction: 200,
            ef_search: 128,
            builder: crate::index::HnswBuilder::Faiss,
        };
        let auto = IndexOptions::default();
        assert_eq!(previous(hnsw.clone(), 0.97).delta_refusal(&auto, None), None);
        assert_eq!(
            previous(hnsw.clone(), 0.97).delta_refusal(
                &IndexOptions {
                    kind: IndexKind::Hnsw,
                    ..auto.clone()
                },
                Some(0.95)
            ),
            None
        );
        let other_kind = previous(hnsw.clone(), 0.97)
            .delta_refusal(
                &IndexOptions {
                    kind: IndexKind::IvfFlat,
                    ..auto.clone()
                },
                None,
            )
            .unwrap();
        assert!(
            other_kind.contains("has a hnsw index and ivf-flat was asked for"),
            "{other_kind}"
        );
        let low_recall = previous(hnsw, 0.9).delta_refusal(&auto, Some(0.95)).unwrap();
        assert!(low_recall.contains("below --min-recall 0.95"), "{low_recall}");
        let mut unreadable = previous(IndexSpec::Flat, 1.0);
        unreadable.mark_incomplete("seg-1");
        assert!(unreadable
            .delta_refusal(&auto, None)
            .unwrap()
            .contains("segment seg-1 of version v1 is unreadable"));
    }
}
