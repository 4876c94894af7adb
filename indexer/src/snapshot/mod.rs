//! Snapshots (format v1): immutable segments (chunks.parquet, documents.parquet,
//! vectors.faiss, keyword/) plus a manifest per version and a LATEST pointer, written
//! data first, manifest next, LATEST last, so a reader never sees a half-written snapshot.

mod block_sums;
mod cache;
mod checked_blocks;
mod chunks_writing;
mod documents_writing;
mod file_table;
mod gc;
mod latest_guard;
mod manifest;
mod parquet_encode;
mod parquet_io;
mod parquet_plan;
mod partial_file;
mod reader;
mod row_files_writing;
mod run_shards;
mod summing_file;
mod upload;
mod versions;
mod writer;

pub use block_sums::{BlockSums, FileHasher, BLOCK_BYTES};
pub use cache::{local_copy, LocalCopy};
pub use file_table::{FileEntry, FileTable};
pub use gc::{collect_garbage, GcOptions, GcReport};
pub use latest_guard::{LatestExpected, LatestGuard, LOCK_FILE};
pub use manifest::{
    tombstone_document, ChunkerManifest, Counts, FileChecksum, IndexManifest, KeywordManifest, LanguageReading,
    Manifest, SegmentManifest, Tombstones, FORMAT_VERSION,
};
pub use parquet_encode::ROW_GROUP_ROWS;
pub use parquet_io::{
    chunks_from_parquet, chunks_from_parquet_without_embeddings, chunks_to_parquet, documents_from_parquet,
    documents_to_parquet, DocumentOutline, DocumentRecord, WantedRows,
};
pub use reader::{SnapshotReader, Verification};
pub use row_files_writing::RowFilesWriting;
pub use run_shards::{run_layout, valid_run_id, PublishedRun, ShardRecord, ShardSummary};
pub use versions::{
    abandoned_versions, list_versions, roll_back, rollback_records, RollbackOptions, RollbackRecord, RollbackReport,
    RollbackTarget, RunSummary, StoredRollback, VersionListing, VersionState, VersionSummary,
};
pub use writer::{new_version_id, SavedVectors, SegmentRowFiles, SnapshotWriter, WrittenSegment};

/// sha256 of some bytes, as lowercase hex (content hashes and file checksums).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// sha256 of a file's contents, as lowercase hex, read in blocks (a file of any size costs
/// one block of memory).
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    file_checksum(path, None).map(|checksum| checksum.sha256)
}

/// A local file's sha256 and size (and block sums of `block_bytes` blocks when asked), read in
/// blocks (one block of memory whatever the size).
pub(crate) fn file_checksum(path: &std::path::Path, block_bytes: Option<u64>) -> std::io::Result<FileChecksum> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = FileHasher::new(block_bytes);
    let mut block = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut block)? {
            0 => return Ok(hasher.finish()),
            n => hasher.update(&block[..n]),
        }
    }
}

/// Object names inside a snapshot root.
pub mod layout {
    pub const LATEST: &str = "LATEST";
    pub const CHUNKS: &str = "chunks.parquet";
    pub const DOCUMENTS: &str = "documents.parquet";
    pub const VECTORS: &str = "vectors.faiss";
    pub const KEYWORD_DIR: &str = "keyword";

    pub fn manifest(version: &str) -> String {
        format!("manifests/{version}.json")
    }

    pub fn segment_file(segment: &str, file: &str) -> String {
        format!("segments/{segment}/{file}")
    }

    pub fn report(version: &str) -> String {
        format!("reports/{version}.json")
    }

    /// The file table of a version a batch run wrote.
    pub fn files(version: &str) -> String {
        format!("files/{version}.parquet")
    }

    /// A rollback's record (see `versions`).
    pub fn rollback(id: &str) -> String {
        format!("rollbacks/{id}.json")
    }
}
