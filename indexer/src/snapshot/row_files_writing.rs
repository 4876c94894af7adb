//! A segment's row files open for writing: chunks.parquet in its staged place and
//! documents.parquet in memory, taking row groups as a run hands them over
//! ([`RowFilesWriting::encode_group`], [`RowFilesWriting::encode_document_group`]) and the
//! rest of the segment's rows at the end ([`RowFilesWriting::finish`]).

use std::io::{self, Write};
use std::time::Instant;

use super::block_sums::BLOCK_BYTES;
use super::chunks_writing::ChunksWriting;
use super::documents_writing::DocumentsWriting;
use super::parquet_io::DocumentRecord;
use super::summing_file::SummingFile;
use super::upload::StagedFile;
use super::writer::SegmentRowFiles;
use super::FileChecksum;
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};

/// A segment's row files being written: see [`super::SnapshotWriter::start_row_files`].
pub struct RowFilesWriting {
    segment_id: String,
    chunks_file: StagedFile,
    chunks: ChunksWriting<ChunksOut>,
    documents: DocumentsWriting,
}

/// Where chunks.parquet's bytes go: on a local root, its final folder, summed as written; on
/// a store, a scratch file that the upload hashes as it goes.
enum ChunksOut {
    Summed(SummingFile),
    Plain(std::fs::File),
}

impl RowFilesWriting {
    /// chunks.parquet of `segment_id`, for vectors of `dim` dimensions, written to `chunks_file`.
    pub(super) fn create(segment_id: &str, chunks_file: StagedFile, dim: usize) -> Result<Self> {
        let path = chunks_file.path();
        let out = match chunks_file.is_local() {
            true => SummingFile::create(path, Some(BLOCK_BYTES)).map(ChunksOut::Summed),
            false => std::fs::File::create(path).map(ChunksOut::Plain),
        }
        .map_err(|e| IndexerError::io(path, e))?;
        Ok(Self {
            segment_id: segment_id.to_string(),
            chunks: ChunksWriting::create(dim, out)?,
            documents: DocumentsWriting::create()?,
            chunks_file,
        })
    }

    /// Encodes and appends chunks.parquet's row group `index` (blocking; from any thread, a
    /// group at a time each): see [`ChunksWriting::encode_group`]. False once the file has
    /// failed (the error comes with [`Self::finish`]).
    pub fn encode_group<'a>(&self, index: usize, rows: impl FnOnce() -> Vec<(&'a Chunk, &'a [f32])>) -> bool {
        self.chunks.encode_group(index, rows)
    }

    /// Row groups of chunks.parquet written so far.
    pub fn groups_appended(&self) -> usize {
        self.chunks.groups_appended()
    }

    /// Encodes and appends documents.parquet's row group `index` (blocking; from any
    /// thread, a group at a time each): see [`DocumentsWriting::encode_group`].
    pub fn encode_document_group<'a>(&self, index: usize, records: impl FnOnce() -> Vec<&'a DocumentRecord>) -> bool {
        self.documents.encode_group(index, records)
    }

    /// Row groups of documents.parquet written so far.
    pub fn document_groups_appended(&self) -> usize {
        self.documents.groups_appended()
    }

    /// Writes the rest of both files' rows (blocking; every row of the segment is given,
    /// those before the groups written already ignored), side by side on the current rayon
    /// pool, so that documents.parquet's row groups fill the threads chunks.parquet's leave
    /// idle.
    pub fn finish(
        self,
        chunks: &[Chunk],
        embeddings: &Embeddings,
        documents: &[DocumentRecord],
    ) -> Result<SegmentRowFiles> {
        let started = Instant::now();
        let Self {
            segment_id,
            chunks_file,
            chunks: writing,
            documents: documents_writing,
        } = self;
        let (chunks_checksum, documents_bytes) = rayon::join(
            || {
                let out = writing.finish(chunks, embeddings)?;
                out.finish().map_err(|e| IndexerError::io(chunks_file.path(), e))
            },
            || documents_writing.finish(documents),
        );
        Ok(SegmentRowFiles {
            segment_id,
            chunks_file,
            chunks_checksum: chunks_checksum?,
            documents_bytes: documents_bytes?,
            documents: documents.len(),
            chunks: chunks.len(),
            secs: started.elapsed().as_secs_f64(),
        })
    }
}

impl ChunksOut {
    /// The file flushed: its checksum where it was summed as written.
    fn finish(self) -> io::Result<Option<FileChecksum>> {
        match self {
            Self::Summed(file) => file.finish().map(Some),
            Self::Plain(mut file) => file.flush().map(|()| None),
        }
    }
}

impl Write for ChunksOut {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Self::Summed(file) => file.write(bytes),
            Self::Plain(file) => file.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Summed(file) => file.flush(),
            Self::Plain(file) => file.flush(),
        }
    }
}
