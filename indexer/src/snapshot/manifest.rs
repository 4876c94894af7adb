//! The manifest: everything a reader needs to trust and use one snapshot version.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::block_sums::BlockSums;
use crate::chunk::ChunkerConfig;
use crate::embed::ModelInfo;
use crate::index::{IndexSpec, RecallCheck};

/// The snapshot format this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    /// Sortable version id, also the manifest's file name.
    pub version: String,
    /// The version this one was built on (a delta, an online change, a compaction), which it
    /// keeps everything of but what it changed; none for a full version (and in versions
    /// written before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The sharded run that published this version (`quarry index --shards`, then `quarry
    /// publish`); none for a run of one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Where the documents came from.
    pub source: String,
    pub model: ModelInfo,
    pub chunker: ChunkerManifest,
    pub index: IndexManifest,
    pub keyword: KeywordManifest,
    /// What turned files into documents in the batch run that wrote this version (the
    /// indexer's version and the settings that shape document records); a later run skips
    /// fetching unchanged files only when its own signature is the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_sig: Option<String>,
    /// ANN recall@k against exact search, measured before publishing.
    #[serde(default)]
    pub recall_check: Option<RecallCheck>,
    pub segments: Vec<SegmentManifest>,
    /// Chunk ids hidden from results (deletes after publishing).
    #[serde(default)]
    pub tombstones: Vec<String>,
    pub counts: Counts,
    /// sha256 and size of every file, by path relative to the snapshot root.
    pub checksums: BTreeMap<String, FileChecksum>,
}

impl Manifest {
    /// A manifest with no segments, tombstones, counts, checksums or recall check yet.
    pub fn new(
        version: String,
        source: String,
        model: ModelInfo,
        chunker: ChunkerManifest,
        index: IndexManifest,
    ) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            version,
            parent: None,
            run_id: None,
            created_at: chrono::Utc::now(),
            source,
            model,
            chunker,
            index,
            keyword: KeywordManifest::tantivy(),
            parse_sig: None,
            recall_check: None,
            segments: Vec::new(),
            tombstones: Vec::new(),
            counts: Counts::default(),
            checksums: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkerManifest {
    pub config: ChunkerConfig,
    pub sig: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexManifest {
    pub kind: String,
    pub params: IndexSpec,
    pub metric: String,
    /// The device that embedded and built (`cpu`, `cuda:0`).
    pub built_on: String,
}

impl IndexManifest {
    /// An inner-product index built from `spec` on `built_on`.
    pub fn new(spec: IndexSpec, built_on: String) -> Self {
        Self {
            kind: spec.name().into(),
            params: spec,
            metric: "inner_product".into(),
            built_on,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordManifest {
    pub engine: String,
    pub analyzer: String,
}

impl KeywordManifest {
    /// tantivy with quarry's analyzer: the only keyword engine.
    pub fn tantivy() -> Self {
        Self {
            engine: "tantivy".into(),
            analyzer: crate::index::KEYWORD_ANALYZER.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentManifest {
    pub id: String,
    /// This segment's vector index, when it differs from the manifest's (small online segments are flat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexSpec>,
    pub documents: usize,
    pub chunks: usize,
    /// Files of this segment, relative to the snapshot root.
    pub files: Vec<String>,
    /// Its chunks by detected language, with how the model reads their words (segments
    /// written before this was measured have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<LanguageReading>,
}

/// A segment's chunks of one detected language and how the embedding model reads their
/// words ([`crate::embed::read_words`]), measured on up to [`crate::pipeline::READING_SAMPLE`]
/// of the segment's chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageReading {
    /// ISO 639-3 (`eng`, `deu`, `jpn`, ...), `und` where no language could be told.
    pub language: String,
    pub chunks: u64,
    /// Words of the measured chunks, those the model reads well (not as its unknown token nor
    /// as single characters), and those it reads whole (one vocabulary token).
    #[serde(flatten)]
    pub reading: crate::embed::WordReading,
}

impl LanguageReading {
    /// Adds another reading of the same language.
    pub fn add(&mut self, other: &LanguageReading) {
        self.chunks += other.chunks;
        self.reading.add(&other.reading);
    }
}

impl Manifest {
    /// The next version `version` built on this one: everything of this one, with this one as
    /// its parent, created now, by no sharded run.
    pub fn successor(&self, version: String) -> Manifest {
        Manifest {
            version,
            parent: Some(self.version.clone()),
            run_id: None,
            created_at: chrono::Utc::now(),
            ..self.clone()
        }
    }

    /// The vector index spec of one segment.
    pub fn segment_index(&self, segment: &SegmentManifest) -> IndexSpec {
        segment.index.clone().unwrap_or_else(|| self.index.params.clone())
    }

    /// Why a segment's `chunks` rows and `embeddings` do not fit this manifest's model (None
    /// when they do): one vector of the model's dimension per chunk.
    pub fn embeddings_mismatch(&self, chunks: usize, embeddings: &crate::embed::Embeddings) -> Option<String> {
        let fits = embeddings.dim == self.model.dim && embeddings.data.len() == chunks * self.model.dim;
        (!fits).then(|| {
            format!(
                "{chunks} chunks with {} values of dimension {} (the model has {})",
                embeddings.data.len(),
                embeddings.dim,
                self.model.dim
            )
        })
    }

    /// Adds `segment`, a segment of `from` (another version), with its counts and the
    /// checksums `from` holds of its files.
    pub fn add_segment_of(&mut self, segment: SegmentManifest, from: &Manifest) {
        self.counts.documents += segment.documents;
        self.counts.chunks += segment.chunks;
        for file in &segment.files {
            if let Some(sum) = from.checksums.get(file) {
                self.checksums.insert(file.clone(), sum.clone());
            }
        }
        self.segments.push(segment);
    }

    /// The tombstones, for matching rows against them.
    pub fn tombstone_set(&self) -> Tombstones<'_> {
        Tombstones::of(&self.tombstones)
    }
}

/// The document a chunk id (`<document id>-<index>`) belongs to; None for anything else.
fn chunk_document(id: &str) -> Option<&str> {
    id.rsplit_once('-')
        .filter(|(_, index)| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()))
        .map(|(doc, _)| doc)
}

/// The document a tombstone hides (all of it, or a chunk of it) wherever it is stored: a
/// document id itself, a chunk id's document; None for one scoped to a segment
/// (`<segment>/<document>`).
pub fn tombstone_document(tombstone: &str) -> Option<&str> {
    (!tombstone.contains('/')).then(|| chunk_document(tombstone).unwrap_or(tombstone))
}

/// A manifest's tombstones. One names a chunk id, a document id, or `<segment id>/<document
/// id>` (one segment's copy of a document that a later segment replaced).
pub struct Tombstones<'a>(HashSet<&'a str>, HashSet<&'a str>, HashMap<&'a str, HashSet<&'a str>>);

impl<'a> Tombstones<'a> {
    /// Matches rows against `tombstones`.
    pub fn of(tombstones: &'a [String]) -> Self {
        let set: HashSet<&str> = tombstones.iter().map(String::as_str).collect();
        // Chunk ids are `<document id>-<index>`: the documents a tombstone may hide a chunk of.
        let chunk_documents = set
            .iter()
            .filter(|t| !t.contains('/'))
            .filter_map(|t| chunk_document(t))
            .collect();
        // Segment ids hold no '/': the first one ends the segment's part.
        let mut by_segment: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (segment, doc_id) in set.iter().filter_map(|t| t.split_once('/')) {
            by_segment.entry(segment).or_default().insert(doc_id);
        }
        Tombstones(set, chunk_documents, by_segment)
    }

    /// Whether the chunk `chunk_id` of document `doc_id`, stored in `segment`, is hidden.
    pub fn hides(&self, segment: &str, doc_id: &str, chunk_id: &str) -> bool {
        !self.0.is_empty() && (self.0.contains(chunk_id) || self.hides_document(segment, doc_id))
    }

    /// Whether the copy of document `doc_id` stored in `segment` is hidden as a whole.
    pub fn hides_document(&self, segment: &str, doc_id: &str) -> bool {
        !self.0.is_empty()
            && (self.0.contains(doc_id) || self.2.get(segment).is_some_and(|documents| documents.contains(doc_id)))
    }

    /// Whether any row of the copy of `doc_id` (with `chunk_count` chunks) stored in
    /// `segment` is hidden, without reading its rows.
    pub fn hides_any_row(&self, segment: &str, doc_id: &str, chunk_count: u32) -> bool {
        self.hides_document(segment, doc_id)
            || (self.1.contains(doc_id)
                && (0..chunk_count).any(|index| self.0.contains(format!("{doc_id}-{index}").as_str())))
    }

    /// How many rows of the copy of `doc_id` (with `chunk_count` chunks) stored in `segment`
    /// are hidden, without reading its rows.
    pub fn hidden_rows(&self, segment: &str, doc_id: &str, chunk_count: u32) -> u32 {
        if self.hides_document(segment, doc_id) {
            chunk_count
        } else if self.1.contains(doc_id) {
            (0..chunk_count)
                .filter(|index| self.0.contains(format!("{doc_id}-{index}").as_str()))
                .count() as u32
        } else {
            0
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Counts {
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChecksum {
    pub sha256: String,
    pub bytes: u64,
    /// Checksums of the file's blocks, for files read by range (chunks.parquet); absent in
    /// files written without them (other files, older builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<BlockSums>,
}

impl FileChecksum {
    /// The block size of its block sums, if it has them (a checker of the file hashes blocks
    /// of that size too).
    pub fn block_bytes(&self) -> Option<u64> {
        self.blocks.as_ref().map(|blocks| blocks.block_bytes)
    }
}

#[cfg(test)]
mod tombstone_tests {
    use super::*;

    #[test]
    fn tombstones_hide_a_chunk_a_document_or_one_segments_copy() {
        let tombstones = ["d1-2".to_string(), "d2".into(), "seg-a/d3".into()];
        let dead = Tombstones::of(&tombstones);
        assert!(
            dead.hides("seg-a", "d1", "d1-2") && !dead.hides("seg-a", "d1", "d1-1"),
            "a chunk id hides that chunk only"
        );
        assert!(
            dead.hides("seg-b", "d2", "d2-0") && dead.hides_document("seg-a", "d2"),
            "a document id hides its every copy"
        );
        assert!(
            dead.hides("seg-a", "d3", "d3-0") && dead.hides_document("seg-a", "d3"),
            "a segment's copy is hidden"
        );
        assert!(
            !dead.hides("seg-b", "d3", "d3-0") && !dead.hides_document("seg-b", "d3"),
            "the copy in another segment is not"
        );
        assert!(
            !dead.hides_document("seg-a", "d1")
                && dead.hides_any_row("seg-a", "d1", 3)
                && !dead.hides_any_row("seg-a", "d1", 2)
        );
        assert!(!Tombstones::of(&[]).hides("seg-a", "d2", "d2-0"));
    }

    #[test]
    fn a_tombstone_names_the_document_it_hides_wherever_it_is_stored() {
        assert_eq!(tombstone_document("d1"), Some("d1"));
        assert_eq!(tombstone_document("d1-12"), Some("d1"));
        assert_eq!(tombstone_document("seg-a/d3"), None, "a segment's copy only");
        assert_eq!(tombstone_document("d1-x"), Some("d1-x"), "not a chunk id");
    }
}
