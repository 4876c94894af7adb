//! Incremental runs: the embeddings the previous version stored, reused for every document
//! whose content hash, chunker signature and model are unchanged, so a nightly run embeds
//! only what changed. A changed document keeps the stored vectors of its chunks whose text
//! is unchanged (chunks never cross a page or section, so an edit touches only its own) and
//! embeds the rest. Anything doubtful (another model or chunker, a segment whose bytes do
//! not match the manifest, a tombstoned document) is embedded afresh.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use serde::Serialize;

use super::delta::PreviousVersion;
use super::spilled_vectors::SpilledVectors;
use super::types::{ChunkedDoc, EmbeddedDoc};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::index::gather_rows;
use crate::parse::file_uri_of;
use crate::snapshot::{DocumentRecord, SnapshotReader, Tombstones, WantedRows};
use crate::store::StoreOptions;
use crate::summary::DocumentLayers;

/// What a run reused from the previous version (in the run report).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReuseReport {
    /// The version the embeddings came from; None when nothing could be reused.
    pub from_version: Option<String>,
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
    /// Segments of the previous version whose rows (chunks and embeddings) were read.
    pub segments_read: usize,
    /// Rows of those segments decoded: the rows of the documents looked for (the files this
    /// run fetched), not every row of the segments.
    pub rows_read: u64,
    /// Bytes of the previous version's segment files read from the store (and checked) to
    /// find and reuse them: of documents.parquet the columns saying where each document is
    /// and the records of the documents looked for, of chunks.parquet their rows; the blocks
    /// holding those pages where the manifest has block sums, else whole files.
    pub bytes_read: u64,
    /// Why the previous version's embeddings were not usable, or a part of them was skipped.
    pub notes: Vec<String>,
    /// Documents whose file failed in this run (fetch, parse or chunk) and whose last good
    /// version was carried over from `from_version` (the failure is still reported).
    pub kept_after_failure: Vec<String>,
    /// A full version: documents added through a server's API (uploads, RAG ingests) carried
    /// over from `from_version` (and from versions other writers published during the run).
    pub api_documents_kept: usize,
    /// Changed documents that kept the stored vectors of their unchanged chunk texts (their
    /// other chunks were embedded); not counted in `documents`, `chunks`, `tokens`.
    pub changed_documents: ChunkReuse,
}

/// Chunks of changed documents whose text, and so whose vector, was already stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChunkReuse {
    /// Changed documents with at least one chunk reused.
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
}

/// What a stored document's embeddings were computed from, and where they wait.
struct StoredDoc {
    /// [`record_key`] of its record.
    record_key: u64,
    content_hash: String,
    ingested_at: chrono::DateTime<chrono::Utc>,
    /// Per chunk, in order, its text's key ([`StoredEmbeddings::text_key`]).
    text_keys: Vec<u64>,
    /// Per chunk, in order, the position of its row in the spilled vectors.
    positions: Vec<u64>,
}

impl StoredDoc {
    /// Whether it was computed from `document`'s content and chunk texts (`fresh_keys`, the
    /// keys of its chunks' texts): all of its vectors serve.
    fn same_texts(&self, document: &ChunkedDoc, fresh_keys: &[u64]) -> bool {
        self.content_hash == document.record.content_hash && self.text_keys == fresh_keys
    }

    /// [`Self::same_texts`], and `document`'s record is the stored one: a delta leaves it
    /// where it is.
    fn unchanged(&self, document: &ChunkedDoc, fresh_keys: &[u64]) -> bool {
        self.same_texts(document, fresh_keys) && self.record_key == record_key(&document.record)
    }
}

/// One row of a stored document, as its segment is read.
struct StoredRow {
    index: u32,
    position: u64,
    text_key: u64,
    tokens: u32,
}

/// A stored document's rows, gathered as its segment is read (in any order).
struct RowsRead {
    record: DocumentRecord,
    rows: Vec<StoredRow>,
    /// A tombstone hides one of them.
    hidden: bool,
}

impl RowsRead {
    /// The document, with its tokens, when its rows are whole (every chunk once) and none is hidden.
    fn into_stored(mut self) -> Option<(StoredDoc, u64)> {
        self.rows.sort_unstable_by_key(|row| row.index);
        let whole = self.rows.len() == self.record.chunk_count as usize
            && self.rows.iter().enumerate().all(|(i, row)| row.index as usize == i);
        if !whole || self.hidden {
            return None;
        }
        let tokens = self.rows.iter().map(|row| u64::from(row.tokens)).sum();
        let stored = StoredDoc {
            record_key: record_key(&self.record),
            content_hash: self.record.content_hash,
            ingested_at: self.record.ingested_at,
            text_keys: self.rows.iter().map(|row| row.text_key).collect(),
            positions: self.rows.iter().map(|row| row.position).collect(),
        };
        Some((stored, tokens))
    }
}

/// What [`StoredEmbeddings::take`] found for a document.
enum Stored {
    /// Every chunk's vector, in order.
    Whole(Vec<f32>),
    /// Per chunk, the stored vector of the same text, if any (at least one is).
    Chunks(Vec<Option<Vec<f32>>>),
    Nothing,
}

/// The previous version's embeddings by document id.
pub struct StoredEmbeddings {
    version: String,
    documents: HashMap<String, StoredDoc>,
    /// Documents handed out whose record is the stored one too: nothing about them changed.
    unchanged: HashSet<String>,
    /// Chunks of changed documents handed out with their stored vectors.
    changed: ChunkReuse,
    /// Keys chunk texts (a random key per run: stored and fresh texts are keyed alike, and
    /// only ever compared within one document).
    text_keyer: RandomState,
    /// The stored documents' vectors, out of memory (created with the first segment read).
    spilled: Option<SpilledVectors>,
}

/// A fingerprint of a record less the time it was ingested, its layers' texts (made after
/// the comparison, from the text the rest of the record stands for; which summarizer made
/// them counts) and, for a part of a file such as a JSONL line, the file's ETag (one changed
/// line must not rewrite the records of every other line). Records that differ in nothing
/// else have the same key.
fn record_key(record: &DocumentRecord) -> u64 {
    let part_of_a_file = file_uri_of(&record.uri) != record.uri;
    let etag = if part_of_a_file { None } else { record.etag.clone() };
    let comparable = DocumentRecord {
        ingested_at: chrono::DateTime::UNIX_EPOCH,
        etag,
        layers: DocumentLayers {
            made_by: record.layers.made_by.clone(),
            ..Default::default()
        },
        ..record.clone()
    };
    let mut hasher = std::hash::DefaultHasher::new();
    comparable.hash(&mut hasher);
    hasher.finish()
}

impl StoredEmbeddings {
    /// Opens the version LATEST names at `uri` and reads what it holds (no rows yet), if it was
    /// embedded by `model_sha256` with chunker signature `chunker_sig`. None (with the reason in
    /// `report.notes`) when there is no previous version or it cannot be reused; a run then
    /// embeds everything.
    pub async fn open_previous(
        uri: &str,
        store: &StoreOptions,
        model_sha256: &str,
        chunker_sig: &str,
        report: &mut ReuseReport,
    ) -> Option<(SnapshotReader, PreviousVersion)> {
        let reader = match SnapshotReader::open(uri, store).await {
            Ok(reader) => reader,
            Err(IndexerError::NoSnapshot { .. }) => return None,
            Err(e) => {
                report
                    .notes
                    .push(format!("previous version not read, embedding everything: {e}"));
                return None;
            }
        };
        let manifest = reader.manifest();
        if manifest.model.sha256 != model_sha256 {
            report.notes.push(format!("version {} was embedded by another model (sha256 {}): embedding everything; documents added through the API are not carried over (upload them again)", manifest.version, manifest.model.sha256));
            return None;
        }
        if manifest.chunker.sig != chunker_sig {
            report.notes.push(format!("version {} was chunked with other settings ({}): embedding everything; documents added through the API are not carried over (upload them again)", manifest.version, manifest.chunker.sig));
            return None;
        }
        let previous = PreviousVersion::read(&reader, &mut report.notes).await;
        Some((reader, previous))
    }

    /// Whether `doc_id` was handed out unchanged (record and chunks as stored).
    pub fn is_unchanged(&self, doc_id: &str) -> bool {
        self.unchanged.contains(doc_id)
    }

    /// Nothing stored yet, from `version`.
    pub fn new(version: &str) -> Self {
        Self {
            version: version.to_string(),
            documents: HashMap::new(),
            unchanged: HashSet::new(),
            changed: ChunkReuse::default(),
            text_keyer: RandomState::new(),
            spilled: None,
        }
    }

    /// Reads the rows of every segment of `previous` not read yet that holds the live copy of
    /// a document from a file `fetched` accepts (the files this run fetches), keeping those
    /// documents' embeddings (spilled to a temporary file) and what they were computed from.
    /// A segment is decoded a row group at a time. A segment whose rows fail their checksum
    /// or do not decode is unreadable.
    pub async fn read_segments(
        &mut self,
        reader: &SnapshotReader,
        previous: &mut PreviousVersion,
        fetched: impl Fn(&str) -> bool + Sync,
        report: &mut ReuseReport,
    ) {
        let wanted_segments = previous.segments_to_read(&fetched);
        if wanted_segments.is_empty() {
            return;
        }
        if self.spilled.is_none() {
            match SpilledVectors::new(reader.manifest().model.dim) {
                Ok(spilled) => self.spilled = Some(spilled),
                Err(e) => {
                    // Reuse is an optimisation: the documents are embedded again.
                    report.notes.push(format!("stored embeddings are not reused: {e}"));
                    return;
                }
            }
        }
        let tombstones = reader.manifest().tombstone_set();
        let of_fetched_file = |uri: &str| fetched(file_uri_of(uri));
        for index in wanted_segments {
            let segment = &reader.manifest().segments[index].id;
            let records = match reader
                .read_segment_documents_where(segment, WantedRows::Where("uri", &of_fetched_file))
                .await
            {
                Ok(records) => records,
                Err(e) => {
                    report.notes.push(format!("segment {segment} not reused: {e}"));
                    previous.mark_incomplete(segment);
                    continue;
                }
            };
            let mut wanted: HashMap<String, RowsRead> = records
                .into_iter()
                .filter(|r| previous.is_live_in(&r.doc_id, index))
                .map(|record| {
                    (
                        record.doc_id.clone(),
                        RowsRead {
                            record,
                            rows: Vec::new(),
                            hidden: false,
                        },
                    )
                })
                .collect();
            let wanted_ids: HashSet<String> = wanted.keys().cloned().collect();
            let (spilled, keyer) = (self.spilled.as_mut().expect("created above"), &self.text_keyer);
            let mut spill_failed = None;
            let read = reader
                .read_segment_rows_in_parts(
                    segment,
                    WantedRows::Where("doc_id", &|doc_id| wanted_ids.contains(doc_id)),
                    |chunks, embeddings| {
                        for (row, chunk) in chunks.into_iter().enumerate() {
                            let Some(document) = wanted.get_mut(&chunk.doc_id) else {
                                continue;
                            };
                            document.hidden |= tombstones.hides(segment, &chunk.doc_id, &chunk.chunk_id);
                            match spilled.append(&embeddings, &[row]) {
                                Ok(position) => document.rows.push(StoredRow {
                                    index: chunk.index,
                                    position,
                                    text_key: keyer.hash_one(&chunk.text),
                                    tokens: chunk.token_count,
                                }),
                                Err(e) => {
                                    // Stops the read; told apart from a damaged segment below.
                                    let stop = IndexerError::Config(e.to_string());
                                    spill_failed = Some(e);
                                    return Err(stop);
                                }
                            }
                        }
                        Ok(())
                    },
                )
                .await;
            if let Some(e) = spill_failed {
                report.notes.push(format!(
                    "stored embeddings from segment {segment} on are not reused: {e}"
                ));
                return;
            }
            match read {
                Ok(rows) => report.rows_read += rows,
                Err(e) => {
                    report.notes.push(format!("segment {segment} not reused: {e}"));
                    previous.mark_incomplete(segment);
                    continue;
                }
            }
            report.segments_read += 1;
            for (doc_id, document) in wanted {
                if document.rows.is_empty() {
                    continue;
                }
                match document.into_stored() {
                    Some((stored, tokens)) => {
                        previous.rows_read(&doc_id, tokens);
                        self.documents.insert(doc_id, stored);
                    }
                    // Rows missing, or a tombstone hides some of them: that copy cannot be used.
                    None => previous.rows_missing(&doc_id),
                }
            }
        }
    }

    /// The documents handed out that changed in nothing but their ingestion time, and the
    /// chunks of changed documents handed out with their stored vectors.
    pub fn into_outcome(self) -> (HashSet<String>, ChunkReuse) {
        (self.unchanged, self.changed)
    }

    fn text_key(&self, text: &str) -> u64 {
        self.text_keyer.hash_one(text)
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// Documents stored.
    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// Whether `document` is the stored one as it was (same content, chunk texts and record):
    /// what [`Self::reuse`] will count as unchanged, told before anything is read.
    pub fn holds_as_is(&self, document: &ChunkedDoc) -> bool {
        self.documents
            .get(&document.record.doc_id)
            .is_some_and(|stored| stored.unchanged(document, &self.text_keys_of(document)))
    }

    /// The keys of `document`'s chunks' texts, in order.
    fn text_keys_of(&self, document: &ChunkedDoc) -> Vec<u64> {
        document
            .chunks
            .iter()
            .map(|chunk: &Chunk| self.text_key(&chunk.text))
            .collect()
    }

    /// The stored vectors of `document` (each stored document is handed out once): all of
    /// them when its content hash and chunk texts are the stored ones — a document whose
    /// record is the stored one too keeps its first ingestion time and is counted as
    /// unchanged — else those of its chunks whose text the stored copy holds.
    fn take(&mut self, document: &mut ChunkedDoc) -> Stored {
        let Some(stored) = self.documents.remove(&document.record.doc_id) else {
            return Stored::Nothing;
        };
        let fresh_keys = self.text_keys_of(document);
        let (same, unchanged) = (
            stored.same_texts(document, &fresh_keys),
            stored.unchanged(document, &fresh_keys),
        );
        let vectors = match self
            .spilled
            .as_mut()
            .map(|spilled| spilled.read_rows(&stored.positions))
        {
            Some(Ok(vectors)) => vectors,
            Some(Err(e)) => {
                tracing::warn!(
                    "{}: stored embeddings unreadable, embedding it again: {e}",
                    document.record.uri
                );
                return Stored::Nothing;
            }
            None => return Stored::Nothing,
        };
        if same {
            if unchanged {
                document.record.ingested_at = stored.ingested_at;
                self.unchanged.insert(document.record.doc_id.clone());
            }
            return Stored::Whole(vectors);
        }
        let dim = vectors.len() / stored.text_keys.len().max(1);
        let by_text: HashMap<u64, usize> = stored
            .text_keys
            .iter()
            .enumerate()
            .map(|(row, &key)| (key, row))
            .collect();
        let found: Vec<Option<Vec<f32>>> = fresh_keys
            .iter()
            .map(|key| {
                by_text
                    .get(key)
                    .map(|&row| vectors[row * dim..(row + 1) * dim].to_vec())
            })
            .collect();
        if found.iter().all(Option::is_none) {
            return Stored::Nothing;
        }
        Stored::Chunks(found)
    }

    /// Splits `documents` into those whose embeddings are all reused (returned with their
    /// vectors) and those left to embed (kept in `documents`, with the stored vectors of
    /// their unchanged chunk texts in `stored_vectors`).
    pub fn reuse(&mut self, documents: &mut Vec<ChunkedDoc>) -> Vec<EmbeddedDoc> {
        let mut reused = Vec::new();
        let mut remaining = Vec::with_capacity(documents.len());
        for mut document in documents.drain(..) {
            match self.take(&mut document) {
                Stored::Whole(vectors) => reused.push(EmbeddedDoc {
                    record: document.record,
                    chunks: document.chunks,
                    vectors,
                    languages: document.languages,
                }),
                Stored::Chunks(found) if found.iter().all(Option::is_some) => {
                    let vectors = found.into_iter().flatten().flatten().collect();
                    reused.push(EmbeddedDoc {
                        record: document.record,
                        chunks: document.chunks,
                        vectors,
                        languages: document.languages,
                    });
                }
                Stored::Chunks(found) => {
                    let reused_chunks = document
                        .chunks
                        .iter()
                        .zip(&found)
                        .filter(|(_, vector)| vector.is_some())
                        .map(|(chunk, _)| chunk);
                    self.changed.documents += 1;
                    for chunk in reused_chunks {
                        self.changed.chunks += 1;
                        self.changed.tokens += chunk.token_count as u64;
                    }
                    document.stored_vectors = found;
                    remaining.push(document);
                }
                Stored::Nothing => remaining.push(document),
            }
        }
        *documents = remaining;
        reused
    }
}

/// Each document of one segment that has rows there, with its rows in chunk order, or None
/// when that copy cannot be used (rows missing, or a tombstone hides any of them). A later
/// segment's copy of a document replaces an earlier one: apply the segments in order.
fn segment_documents(
    segment: &str,
    records: Vec<DocumentRecord>,
    chunks: &[Chunk],
    tombstones: &Tombstones<'_>,
) -> Vec<(DocumentRecord, Option<Vec<usize>>)> {
    let mut rows_of: HashMap<&str, Vec<(u32, usize)>> = HashMap::new();
    for (row, chunk) in chunks.iter().enumerate() {
        rows_of
            .entry(chunk.doc_id.as_str())
            .or_default()
            .push((chunk.index, row));
    }
    let mut out = Vec::new();
    for record in records {
        let Some(mut rows) = rows_of.remove(record.doc_id.as_str()) else {
            continue;
        };
        rows.sort_unstable();
        let whole = rows.len() == record.chunk_count as usize
            && rows.iter().enumerate().all(|(i, &(index, _))| index as usize == i);
        let hidden = rows
            .iter()
            .any(|&(_, row)| tombstones.hides(segment, &record.doc_id, &chunks[row].chunk_id));
        let usable = (whole && !hidden).then(|| rows.into_iter().map(|(_, row)| row).collect());
        out.push((record, usable));
    }
    out
}

/// The live documents of `version` at `uri` whose URI `keep` accepts (those of a file that
/// failed in this run, those added through the API), minus the ids in `present`: their
/// stored rows, so a bad night (an S3 error, a file that no longer parses) or a full version
/// loses nothing. Of each segment only those documents' records and rows are decoded, and a
/// segment holding none of them has no row read.
pub async fn last_good_versions(
    uri: &str,
    store: &StoreOptions,
    version: &str,
    keep: &(dyn Fn(&str) -> bool + Sync),
    present: &HashSet<&str>,
) -> Result<Vec<EmbeddedDoc>> {
    let reader = SnapshotReader::open_version(uri, version, store).await?;
    let tombstones = reader.manifest().tombstone_set();
    let mut kept: HashMap<String, EmbeddedDoc> = HashMap::new();
    for segment in &reader.manifest().segments {
        let mut records = reader
            .read_segment_documents_where(&segment.id, WantedRows::Where("uri", keep))
            .await?;
        records.retain(|r| !present.contains(r.doc_id.as_str()));
        if records.is_empty() {
            continue;
        }
        let wanted: HashSet<&str> = records.iter().map(|r| r.doc_id.as_str()).collect();
        let (mut chunks, mut embeddings) = (
            Vec::new(),
            Embeddings {
                dim: reader.manifest().model.dim,
                data: Vec::new(),
            },
        );
        reader
            .read_segment_rows_in_parts(
                &segment.id,
                WantedRows::Where("doc_id", &|doc_id| wanted.contains(doc_id)),
                |part_chunks, part_embeddings| {
                    chunks.extend(part_chunks);
                    embeddings.data.extend(part_embeddings.data);
                    Ok(())
                },
            )
            .await?;
        for (record, rows) in segment_documents(&segment.id, records, &chunks, &tombstones) {
            match rows {
                Some(rows) => {
                    let doc = EmbeddedDoc {
                        vectors: gather_rows(&embeddings.data, embeddings.dim, rows.iter().copied()),
                        chunks: rows.iter().map(|&row| chunks[row].clone()).collect(),
                        record,
                        languages: Vec::new(),
                    };
                    kept.insert(doc.record.doc_id.clone(), doc);
                }
                None => {
                    kept.remove(&record.doc_id);
                }
            }
        }
    }
    let mut kept: Vec<EmbeddedDoc> = kept.into_values().collect();
    kept.sort_by(|a, b| a.record.uri.cmp(&b.record.uri));
    Ok(kept)
}
