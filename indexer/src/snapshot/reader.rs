//! Reads a published snapshot: LATEST, the manifest, segment data, checksum verification.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use object_store::ObjectStoreExt;
use serde::Serialize;

use super::checked_blocks::CheckedBlocks;
use super::file_table::FileTable;
use super::layout;
use super::manifest::{FileChecksum, Manifest, FORMAT_VERSION};
use super::parquet_io::{
    chunks_from_parquet, decode_chunk_rows, decode_documents, decode_outlines, documents_from_parquet, DocumentOutline,
    DocumentRecord, CHUNKS_FILE, DOCUMENTS_FILE, OUTLINE_COLUMNS,
};
use super::parquet_plan::{
    column_byte_ranges, file_metadata, metadata_bytes_needed, plan, plan_rows, Columns, RowPlan, WantedRows,
};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::store::{open_location, Location, StoreOptions};

/// Files hashed or downloaded at once (each read block by block, so memory stays small).
pub(super) const FILES_AT_ONCE: usize = 4;

/// Range requests in flight at once when fetching blocks of one file.
const FETCHES_AT_ONCE: usize = 8;

/// Bytes fetched from a remote Parquet file's end at first, to find its metadata.
const METADATA_GUESS_BYTES: u64 = 256 << 10;

/// One published version of a snapshot.
pub struct SnapshotReader {
    root: Location,
    manifest: Manifest,
    /// Bytes of segment Parquet files read (and checked) by the row reads so far.
    rows_bytes_read: AtomicU64,
}

/// The outcome of checking every file against the manifest.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verification {
    pub files_checked: usize,
    pub bytes_checked: u64,
    /// (path, problem) for each file that is missing or differs.
    pub problems: Vec<(String, String)>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl SnapshotReader {
    /// Opens the version LATEST points at.
    pub async fn open(uri: &str, options: &StoreOptions) -> Result<Self> {
        let root = open_location(uri, options, false)?;
        let version = read_latest(&root).await?;
        Self::open_at(root, &version).await
    }

    /// The version LATEST names, without reading its manifest.
    pub async fn latest_version(uri: &str, options: &StoreOptions) -> Result<String> {
        read_latest(&open_location(uri, options, false)?).await
    }

    /// Opens a given version.
    pub async fn open_version(uri: &str, version: &str, options: &StoreOptions) -> Result<Self> {
        Self::open_at(open_location(uri, options, false)?, version).await
    }

    pub(crate) async fn open_at(root: Location, version: &str) -> Result<Self> {
        let path = layout::manifest(version);
        let bytes = get(&root, &path).await?;
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| IndexerError::snapshot(&path, format!("invalid manifest: {e}")))?;
        if manifest.format_version != FORMAT_VERSION {
            return Err(IndexerError::snapshot(
                &path,
                format!(
                    "format version {} is not supported (this build reads {FORMAT_VERSION})",
                    manifest.format_version
                ),
            ));
        }
        Ok(Self {
            root,
            manifest,
            rows_bytes_read: AtomicU64::new(0),
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Bytes of segment Parquet files the row reads of this reader have read from the store
    /// and checked so far: the blocks holding the pages decoded where the manifest has block
    /// sums, else whole files.
    pub fn rows_bytes_read(&self) -> u64 {
        self.rows_bytes_read.load(Ordering::Relaxed)
    }

    pub fn uri(&self) -> &str {
        &self.root.uri
    }

    pub(super) fn location(&self) -> &Location {
        &self.root
    }

    /// Reads a file below the root.
    pub async fn get(&self, relative: &str) -> Result<Bytes> {
        get(&self.root, relative).await
    }

    /// Reads a file the manifest lists, refusing it unless its sha256 is the manifest's.
    pub async fn get_verified(&self, relative: &str) -> Result<Bytes> {
        let bytes = self.get(relative).await?;
        match self.manifest.checksums.get(relative) {
            Some(expected) if expected.sha256 == super::sha256_hex(&bytes) => Ok(bytes),
            Some(_) => Err(IndexerError::snapshot(
                relative,
                "bytes differ from the manifest's checksum",
            )),
            None => Err(IndexerError::snapshot(
                relative,
                "the manifest lists no checksum for it",
            )),
        }
    }

    /// The manifest's checksum of a file.
    fn expected(&self, relative: &str) -> Result<&FileChecksum> {
        self.manifest
            .checksums
            .get(relative)
            .ok_or_else(|| IndexerError::snapshot(relative, "the manifest lists no checksum for it"))
    }

    /// A file the manifest lists, read by position, once its sha256 is the manifest's: in a
    /// local root the file itself, else a copy streamed into an unnamed temporary file (in
    /// `TMPDIR`) while it is checked. However large, none of it is held in memory.
    async fn get_verified_by_position(&self, relative: &str) -> Result<CheckedBlocks> {
        use std::io::Write;
        let expected = self.expected(relative)?;
        let verify = |checksum: Option<FileChecksum>| match checksum {
            Some(checksum) if checksum.sha256 == expected.sha256 => Ok(()),
            Some(_) => Err(IndexerError::snapshot(
                relative,
                "bytes differ from the manifest's checksum",
            )),
            None => Err(IndexerError::snapshot(
                relative,
                "the manifest lists it, but it is missing from the store",
            )),
        };
        if let Some(root) = self.root.local_path() {
            verify(self.checksum(relative).await?)?;
            let path = root.join(relative);
            let file = std::fs::File::open(&path).map_err(|e| IndexerError::io(&path, e))?;
            return CheckedBlocks::verified_whole(relative, file, expected);
        }
        let uri = self.root.uri_of(&self.root.child(relative));
        let copy_error = |e| IndexerError::io(format!("(temporary copy of {uri})"), e);
        let mut copy = std::io::BufWriter::with_capacity(1 << 20, tempfile::tempfile().map_err(copy_error)?);
        verify(
            self.stream_blocks(relative, |block| copy.write_all(block).map_err(copy_error))
                .await?,
        )?;
        let file = copy.into_inner().map_err(|e| copy_error(e.into_error()))?;
        CheckedBlocks::verified_whole(relative, file, expected)
    }

    /// A segment file (a Parquet file of `kind`) opened for a read of the rows `wanted` names
    /// and the columns `columns` names, with the plan of that read. A file with block sums in
    /// the manifest is checked block by block as it is read, and from a remote root only the
    /// blocks the read needs are fetched ([`Self::fetch_planned`]) unless it reads every row
    /// and column; a file without them is checked whole first (a remote one downloaded whole).
    async fn open_planned(
        &self,
        file: &str,
        kind: &'static str,
        columns: Columns<'_>,
        wanted: WantedRows<'_>,
    ) -> Result<(CheckedBlocks, RowPlan)> {
        let expected = self.expected(file)?;
        let every_byte = matches!(wanted, WantedRows::All) && columns.is_all();
        let source = match self.root.local_path() {
            Some(root) => CheckedBlocks::local(&root.join(file), file, expected)?,
            None if every_byte => None,
            None => match CheckedBlocks::remote_copy(file, expected)? {
                Some(copy) => {
                    let plan = self.fetch_planned(file, kind, &copy, columns, wanted).await?;
                    return Ok((copy, plan));
                }
                None => None,
            },
        };
        let source = match source {
            Some(source) => source,
            None => self.get_verified_by_position(file).await?,
        };
        let plan = plan(kind, &source, columns, wanted)?;
        Ok((source, plan))
    }

    /// A row read of `file`: opened and planned ([`Self::open_planned`]), decoded by `decode`,
    /// and the bytes it read counted ([`Self::rows_bytes_read`]).
    async fn read_planned<T>(
        &self,
        file: &str,
        kind: &'static str,
        columns: Columns<'_>,
        wanted: WantedRows<'_>,
        decode: impl FnOnce(CheckedBlocks, RowPlan) -> Result<T>,
    ) -> Result<T> {
        let (source, plan) = self.open_planned(file, kind, columns, wanted).await?;
        let decoded = decode(source.clone(), plan);
        self.rows_bytes_read.fetch_add(source.bytes_read(), Ordering::Relaxed);
        decoded
    }

    /// Fetches into `copy` what a read of `wanted` rows and `columns` needs, in three rounds
    /// of concurrent range requests: the metadata and page index at the file's end, the column
    /// that says which rows are wanted, then the pages holding them. Returns the plan.
    #[allow(clippy::single_range_in_vec_init)] // a list of one range, not the range's values
    async fn fetch_planned(
        &self,
        file: &str,
        kind: &'static str,
        copy: &CheckedBlocks,
        columns: Columns<'_>,
        wanted: WantedRows<'_>,
    ) -> Result<RowPlan> {
        let length = copy.bytes();
        let mut tail = length.min(METADATA_GUESS_BYTES);
        loop {
            self.fetch_blocks(file, copy, &[length - tail..length]).await?;
            let bytes = copy
                .read_range(length - tail..length)
                .map_err(|e| IndexerError::snapshot(file, e))?;
            match metadata_bytes_needed(kind, &bytes, length)? {
                None => break,
                Some(needed) if needed > tail && needed <= length => tail = needed,
                Some(needed) => {
                    return Err(IndexerError::snapshot(
                        file,
                        format!("its metadata needs {needed} bytes of a {length}-byte file"),
                    ))
                }
            }
        }
        let metadata = file_metadata(kind, copy, wanted)?;
        if let WantedRows::Where(column, _) = wanted {
            self.fetch_blocks(file, copy, &column_byte_ranges(kind, &metadata, column)?)
                .await?;
        }
        let plan = plan_rows(kind, copy, metadata, columns, wanted)?;
        self.fetch_blocks(file, copy, &plan.byte_ranges()).await?;
        Ok(plan)
    }

    /// Fetches the blocks of `file` holding `ranges` that `copy` lacks: one range request per
    /// run of neighbouring absent blocks, several at once, each streamed into the copy block by
    /// block and every block checked as it completes (a request costs a block of memory).
    async fn fetch_blocks(&self, file: &str, copy: &CheckedBlocks, ranges: &[std::ops::Range<u64>]) -> Result<()> {
        use futures::{StreamExt, TryStreamExt};
        let key = self.root.child(file);
        let uri = self.root.uri_of(&key);
        let (key, uri) = (&key, &uri);
        futures::stream::iter(copy.missing(ranges))
            .map(|range| async move {
                let options = object_store::GetOptions {
                    range: Some(range.clone().into()),
                    ..Default::default()
                };
                let mut body = self
                    .root
                    .store
                    .get_opts(key, options)
                    .await
                    .map_err(|e| IndexerError::store(uri, e))?
                    .into_stream();
                let mut block = copy.block_filler(range.start);
                while let Some(bytes) = body.try_next().await.map_err(|e| IndexerError::store(uri, e))? {
                    block.push(&bytes)?;
                }
                block.finish(range.end)
            })
            .buffer_unordered(FETCHES_AT_ONCE)
            .try_collect::<()>()
            .await
    }

    /// One segment's chunks and embeddings (its file checked against the manifest and read by
    /// position: [`Self::open_planned`]), the rows `wanted` names, handed to `part` a row
    /// group at a time, in row order ([`chunks_from_parquet_in_parts`]): about a row group per
    /// thread is in memory at once, and of a row group only the pages holding wanted rows are
    /// decoded.
    pub async fn read_segment_rows_in_parts(
        &self,
        segment: &str,
        wanted: WantedRows<'_>,
        mut part: impl FnMut(Vec<Chunk>, Embeddings) -> Result<()>,
    ) -> Result<u64> {
        let file = layout::segment_file(segment, layout::CHUNKS);
        let part = |chunks: Vec<Chunk>, embeddings| match self.manifest.embeddings_mismatch(chunks.len(), &embeddings) {
            Some(reason) => Err(IndexerError::snapshot(file.clone(), reason)),
            None => part(chunks, embeddings),
        };
        self.read_planned(&file, CHUNKS_FILE, Columns::ALL, wanted, |source, plan| {
            decode_chunk_rows(source, plan, part)
        })
        .await
    }

    /// One segment's document records, checked against the manifest.
    pub async fn read_segment_documents(&self, segment: &str) -> Result<Vec<DocumentRecord>> {
        self.read_segment_documents_where(segment, WantedRows::All).await
    }

    /// Where each of one segment's documents is (doc_id, uri, chunk count; the rest of the
    /// records not read), the file checked against the manifest.
    pub async fn read_segment_outlines(&self, segment: &str) -> Result<Vec<DocumentOutline>> {
        self.read_planned(
            &layout::segment_file(segment, layout::DOCUMENTS),
            DOCUMENTS_FILE,
            OUTLINE_COLUMNS,
            WantedRows::All,
            decode_outlines,
        )
        .await
    }

    /// The records of one segment's documents that `wanted` names (the file checked against
    /// the manifest; the other rows not decoded).
    pub async fn read_segment_documents_where(
        &self,
        segment: &str,
        wanted: WantedRows<'_>,
    ) -> Result<Vec<DocumentRecord>> {
        self.read_planned(
            &layout::segment_file(segment, layout::DOCUMENTS),
            DOCUMENTS_FILE,
            Columns::ALL,
            wanted,
            decode_documents,
        )
        .await
    }

    /// What is wrong with a segment's files without reading them (one listing): a file the
    /// manifest names that is missing or has another size. None when all are there.
    pub async fn segment_files_problem(&self, segment: &str) -> Result<Option<String>> {
        let sizes = self.root.list_below(&layout::segment_file(segment, "")).await?;
        let Some(files) = self
            .manifest
            .segments
            .iter()
            .find(|s| s.id == segment)
            .map(|s| &s.files)
        else {
            return Ok(Some(format!(
                "version {} has no segment {segment}",
                self.manifest.version
            )));
        };
        for file in files {
            let expected = self.manifest.checksums.get(file).map(|c| c.bytes);
            match (sizes.get(file).map(|meta| meta.size), expected) {
                (None, _) => return Ok(Some(format!("{file} is missing"))),
                (Some(size), Some(bytes)) if size != bytes => {
                    return Ok(Some(format!("{file} has {size} bytes, the manifest says {bytes}")))
                }
                (Some(_), None) => return Ok(Some(format!("{file}: the manifest lists no checksum for it"))),
                _ => {}
            }
        }
        Ok(None)
    }

    /// The file table the batch run that wrote this version left; None when it has none
    /// (published online, or by an older build).
    pub async fn read_file_table(&self) -> Result<Option<FileTable>> {
        match self.get(&layout::files(&self.manifest.version)).await {
            Ok(bytes) => FileTable::from_parquet(bytes).map(Some),
            Err(IndexerError::Store {
                cause: object_store::Error::NotFound { .. },
                ..
            }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// Hashes every file the manifest lists, block by block and several at once, and compares
    /// size and sha256.
    pub async fn verify(&self) -> Result<Verification> {
        use futures::{StreamExt, TryStreamExt};
        // Listed first: a closure inside the stream would keep the future from being `Send`.
        // Unordered, so a big file does not hold back the files after it.
        let mut checks = Vec::with_capacity(self.manifest.checksums.len());
        for (path, expected) in &self.manifest.checksums {
            checks.push(async move { self.checksum(path).await.map(|actual| (path, expected, actual)) });
        }
        let mut results: Vec<_> = futures::stream::iter(checks)
            .buffer_unordered(FILES_AT_ONCE)
            .try_collect()
            .await?;
        results.sort_by(|a, b| a.0.cmp(b.0));
        let mut verification = Verification::default();
        for (path, expected, actual) in results {
            verification.files_checked += 1;
            let Some(actual) = actual else {
                verification.problems.push((path.clone(), "missing".into()));
                continue;
            };
            verification.bytes_checked += actual.bytes;
            if actual != *expected {
                verification.problems.push((
                    path.clone(),
                    format!(
                        "sha256 {} ({} bytes), manifest says {} ({} bytes)",
                        actual.sha256, actual.bytes, expected.sha256, expected.bytes
                    ),
                ));
            }
        }
        Ok(verification)
    }

    /// A file's sha256 and size, read block by block (a file of any size costs one block of
    /// memory; a local one is hashed on a blocking thread); `None` when it is missing.
    /// Block sums are computed where the manifest lists them for the file.
    pub async fn checksum(&self, relative: &str) -> Result<Option<FileChecksum>> {
        let Some(dir) = self.root.local_path() else {
            return self.stream_blocks(relative, |_| Ok(())).await;
        };
        let path = dir.join(relative);
        let block_bytes = self.block_bytes_of(relative);
        tokio::task::spawn_blocking(move || match super::file_checksum(&path, block_bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(IndexerError::io(&path, e)),
            Ok(checksum) => Ok(Some(checksum)),
        })
        .await
        .map_err(|e| IndexerError::snapshot(relative, format!("checksum: {e}")))?
    }

    /// Copies a file below the root to `to`, block by block as it arrives, and returns its
    /// sha256 and size (the caller compares them with the manifest's).
    pub async fn download(&self, relative: &str, to: &std::path::Path) -> Result<FileChecksum> {
        use std::io::Write;
        let mut file =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(to).map_err(|e| IndexerError::io(to, e))?);
        let checksum = self
            .stream_blocks(relative, |block| {
                file.write_all(block).map_err(|e| IndexerError::io(to, e))
            })
            .await?;
        file.flush().map_err(|e| IndexerError::io(to, e))?;
        checksum
            .ok_or_else(|| IndexerError::snapshot(relative, "the manifest lists it, but it is missing from the store"))
    }

    /// The block size of the block sums the manifest lists for a file, if any.
    fn block_bytes_of(&self, relative: &str) -> Option<u64> {
        self.manifest
            .checksums
            .get(relative)
            .and_then(FileChecksum::block_bytes)
    }

    /// Reads a file from the store block by block, hashing each block and handing it to
    /// `sink` (block sums computed where the manifest lists them); `None` when the file is
    /// missing.
    async fn stream_blocks(
        &self,
        relative: &str,
        mut sink: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<Option<FileChecksum>> {
        use futures::TryStreamExt;
        let key = self.root.child(relative);
        let uri = self.root.uri_of(&key);
        let mut blocks = match self.root.store.get(&key).await {
            Ok(result) => result.into_stream(),
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(IndexerError::store(&uri, e)),
        };
        let mut hasher = super::FileHasher::new(self.block_bytes_of(relative));
        while let Some(block) = blocks.try_next().await.map_err(|e| IndexerError::store(&uri, e))? {
            hasher.update(&block);
            sink(&block)?;
        }
        Ok(Some(hasher.finish()))
    }

    /// The live chunks and their embeddings, segment after segment (rows tombstones hide left out).
    pub async fn read_chunks(&self) -> Result<(Vec<Chunk>, Embeddings)> {
        let dim = self.manifest.model.dim;
        let tombstones = self.manifest.tombstone_set();
        let mut chunks = Vec::new();
        let mut embeddings = Embeddings { dim, data: Vec::new() };
        for segment in &self.manifest.segments {
            let (seg_chunks, seg_vectors) =
                chunks_from_parquet(self.get(&layout::segment_file(&segment.id, layout::CHUNKS)).await?)?;
            for (row, chunk) in seg_chunks.into_iter().enumerate() {
                if !tombstones.hides(&segment.id, &chunk.doc_id, &chunk.chunk_id) {
                    embeddings.data.extend_from_slice(seg_vectors.row(row));
                    chunks.push(chunk);
                }
            }
        }
        Ok((chunks, embeddings))
    }

    /// The live document records (those tombstones hide as a whole left out).
    pub async fn read_documents(&self) -> Result<Vec<DocumentRecord>> {
        let tombstones = self.manifest.tombstone_set();
        let mut documents = Vec::new();
        for segment in &self.manifest.segments {
            let records =
                documents_from_parquet(self.get(&layout::segment_file(&segment.id, layout::DOCUMENTS)).await?)?;
            documents.extend(
                records
                    .into_iter()
                    .filter(|r| !tombstones.hides_document(&segment.id, &r.doc_id)),
            );
        }
        Ok(documents)
    }
}

/// The version LATEST names; `NoSnapshot` when there is no LATEST.
pub(super) async fn read_latest(root: &Location) -> Result<String> {
    match get(root, layout::LATEST).await {
        Ok(bytes) => Ok(version_named(&bytes)),
        Err(IndexerError::Store {
            cause: object_store::Error::NotFound { .. },
            ..
        }) => Err(IndexerError::NoSnapshot { uri: root.uri.clone() }),
        Err(other) => Err(other),
    }
}

/// The version id LATEST's bytes hold.
pub(super) fn version_named(latest: &[u8]) -> String {
    String::from_utf8_lossy(latest).trim().to_string()
}

pub(super) async fn get(root: &Location, relative: &str) -> Result<Bytes> {
    let key = root.child(relative);
    let uri = root.uri_of(&key);
    let result = root.store.get(&key).await.map_err(|e| IndexerError::store(&uri, e))?;
    result.bytes().await.map_err(|e| IndexerError::store(&uri, e))
}
