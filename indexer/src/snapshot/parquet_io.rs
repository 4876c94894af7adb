//! chunks.parquet and documents.parquet: Arrow schemas, encoding and decoding.

use std::io::Write;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    Array, FixedSizeListArray, Float32Array, ListArray, RecordBatch, StringArray, TimestampMillisecondArray,
    UInt32Array, UInt64Array,
};
use bytes::Bytes;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::chunks_writing::ChunksWriting;
use super::documents_writing::DocumentsWriting;
pub use super::parquet_plan::WantedRows;
use super::parquet_plan::{column, plan, read_batches_of, Columns, RowPlan};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::parse::ContentType;
use crate::summary::DocumentLayers;

/// One row of documents.parquet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentRecord {
    pub doc_id: String,
    pub uri: String,
    pub file_name: String,
    pub title: String,
    pub source: String,
    pub tags: Vec<String>,
    pub content_hash: String,
    pub size: u64,
    pub etag: Option<String>,
    pub chunk_count: u32,
    /// JSON object, as text.
    pub metadata: String,
    pub ingested_at: chrono::DateTime<chrono::Utc>,
    /// Its L0 and L1 and what made them (columns `abstract`, `overview` and `layers_by`;
    /// empty in files written before them).
    pub layers: DocumentLayers,
    /// What its parser read less than whole ([`crate::parse::Document::warnings`]; column
    /// `warnings`, empty in files written before it).
    pub warnings: Vec<String>,
}

/// Every row of the Parquet file in `bytes`, in order: a batch per row group, the row groups
/// decoded on every thread of the current rayon pool.
pub(super) fn read_batches(file: &'static str, bytes: Bytes) -> Result<Vec<RecordBatch>> {
    read_batches_of(file, bytes, Columns::ALL, WantedRows::All)
}

pub(super) fn string_list<'a>(values: impl Iterator<Item = &'a [String]>) -> ListArray {
    let mut builder = ListBuilder::new(StringBuilder::new());
    for list in values {
        for value in list {
            builder.values().append_value(value);
        }
        builder.append(true);
    }
    builder.finish()
}

fn list_strings(list: &ListArray, row: usize) -> Vec<String> {
    let values = list.value(row);
    let strings = values.as_any().downcast_ref::<StringArray>().expect("list of strings");
    (0..strings.len()).map(|i| strings.value(i).to_string()).collect()
}

pub(super) const CHUNKS_FILE: &str = "chunks.parquet";
pub(super) const DOCUMENTS_FILE: &str = "documents.parquet";

/// The columns of documents.parquet that say where each document's rows are.
pub(super) const OUTLINE_COLUMNS: Columns<'static> = Columns::Only(&["doc_id", "uri", "chunk_count", "layers_by"]);

/// Encodes chunks and their embeddings (row `i` of `embeddings` belongs to `chunks[i]`).
pub fn chunks_to_parquet(chunks: &[Chunk], embeddings: &Embeddings) -> Result<Vec<u8>> {
    write_chunks(chunks, embeddings, Vec::new())
}

/// chunks.parquet written to the file at `path` (created or replaced), never whole in memory.
/// Rows that do not match their embeddings are refused before the file is touched.
#[cfg(test)]
pub fn chunks_to_parquet_file(chunks: &[Chunk], embeddings: &Embeddings, path: &std::path::Path) -> Result<()> {
    rows_match(chunks, embeddings)?;
    let file = std::fs::File::create(path).map_err(|e| IndexerError::io(path, e))?;
    write_chunks(chunks, embeddings, file).map(drop)
}

/// One embedding per chunk (checked before a file is created).
#[cfg(test)]
fn rows_match(chunks: &[Chunk], embeddings: &Embeddings) -> Result<()> {
    if embeddings.rows() != chunks.len() {
        return Err(IndexerError::snapshot(
            CHUNKS_FILE,
            format!("{} chunks but {} embeddings", chunks.len(), embeddings.rows()),
        ));
    }
    Ok(())
}

/// chunks.parquet written to `out` (rows that do not match their embeddings are refused by
/// [`ChunksWriting::finish`]).
fn write_chunks<W: Write + Send>(chunks: &[Chunk], embeddings: &Embeddings, out: W) -> Result<W> {
    ChunksWriting::create(embeddings.dim, out)?.finish(chunks, embeddings)
}

fn content_type_of(value: &str) -> Result<ContentType> {
    serde_json::from_value(serde_json::Value::String(value.to_string()))
        .map_err(|_| IndexerError::snapshot(CHUNKS_FILE, format!("unknown content_type `{value}`")))
}

/// Decodes chunks.parquet back into chunks and embeddings.
pub fn chunks_from_parquet(bytes: Bytes) -> Result<(Vec<Chunk>, Embeddings)> {
    let batches = read_batches(CHUNKS_FILE, bytes)?;
    let decoded: Vec<(Vec<Chunk>, usize, &[f32])> = batches.par_iter().map(chunks_of_batch).collect::<Result<_>>()?;
    let mut chunks = Vec::with_capacity(decoded.iter().map(|(c, _, _)| c.len()).sum());
    let mut embeddings = Embeddings {
        dim: decoded.first().map_or(0, |(_, dim, _)| *dim),
        data: Vec::with_capacity(decoded.iter().map(|(_, _, v)| v.len()).sum()),
    };
    for (batch_chunks, _, vectors) in decoded {
        chunks.extend(batch_chunks);
        embeddings.data.extend_from_slice(vectors);
    }
    Ok((chunks, embeddings))
}

/// The chunks and embeddings of a plan's rows of chunks.parquet, handed to `part` a batch at
/// a time in row order ([`RowPlan::decode`]). Returns the rows handed on.
pub(super) fn decode_chunk_rows<R: ChunkReader + Clone + 'static>(
    source: R,
    plan: RowPlan,
    mut part: impl FnMut(Vec<Chunk>, Embeddings) -> Result<()>,
) -> Result<u64> {
    plan.decode(
        source,
        |batch| {
            let (chunks, dim, vectors) = chunks_of_batch(batch)?;
            Ok((
                chunks,
                Embeddings {
                    dim,
                    data: vectors.to_vec(),
                },
            ))
        },
        |(chunks, embeddings)| part(chunks, embeddings),
    )
}

/// Decodes chunks.parquet's chunks alone: the embedding column is neither read nor decoded
/// (a reader whose vectors live in the vector index).
pub fn chunks_from_parquet_without_embeddings(bytes: Bytes) -> Result<Vec<Chunk>> {
    let batches = read_batches_of(CHUNKS_FILE, bytes, Columns::AllBut(&["embedding"]), WantedRows::All)?;
    let decoded: Vec<Vec<Chunk>> = batches.par_iter().map(chunk_rows_of_batch).collect::<Result<_>>()?;
    Ok(decoded.into_iter().flatten().collect())
}

/// The chunks of one batch of chunks.parquet, the embedding width, and the batch's embedding rows.
fn chunks_of_batch(batch: &RecordBatch) -> Result<(Vec<Chunk>, usize, &[f32])> {
    let chunks = chunk_rows_of_batch(batch)?;
    let vectors = column::<FixedSizeListArray>(batch, CHUNKS_FILE, "embedding")?;
    let dim = vectors.value_length() as usize;
    let values = vectors
        .values()
        .as_any()
        .downcast_ref::<Float32Array>()
        .ok_or_else(|| IndexerError::snapshot(CHUNKS_FILE, "embedding values are not f32"))?;
    let start = vectors.offset() * dim;
    let vectors = &values.values()[start..start + batch.num_rows() * dim];
    Ok((chunks, dim, vectors))
}

/// The chunks of one batch of chunks.parquet (any embedding column is not looked at).
fn chunk_rows_of_batch(batch: &RecordBatch) -> Result<Vec<Chunk>> {
    let ids = column::<StringArray>(batch, CHUNKS_FILE, "chunk_id")?;
    let doc_ids = column::<StringArray>(batch, CHUNKS_FILE, "doc_id")?;
    let indexes = column::<UInt32Array>(batch, CHUNKS_FILE, "chunk_index")?;
    let texts = column::<StringArray>(batch, CHUNKS_FILE, "text")?;
    let tokens = column::<UInt32Array>(batch, CHUNKS_FILE, "token_count")?;
    let pages = column::<UInt32Array>(batch, CHUNKS_FILE, "page")?;
    let headings = column::<ListArray>(batch, CHUNKS_FILE, "heading_path")?;
    let kinds = column::<StringArray>(batch, CHUNKS_FILE, "content_type")?;
    // Snapshots written before transcripts' times were kept have no such column.
    let starts = match batch.column_by_name("start_seconds") {
        Some(_) => Some(column::<UInt32Array>(batch, CHUNKS_FILE, "start_seconds")?),
        None => None,
    };
    (0..batch.num_rows())
        .map(|row| {
            Ok(Chunk {
                chunk_id: ids.value(row).to_string(),
                doc_id: doc_ids.value(row).to_string(),
                index: indexes.value(row),
                text: texts.value(row).to_string(),
                page: pages.is_valid(row).then(|| pages.value(row)),
                heading_path: list_strings(headings, row),
                content_type: content_type_of(kinds.value(row))?,
                token_count: tokens.value(row),
                start_seconds: starts.filter(|s| s.is_valid(row)).map(|s| s.value(row)),
            })
        })
        .collect()
}

/// Encodes documents.parquet.
pub fn documents_to_parquet(documents: &[DocumentRecord]) -> Result<Vec<u8>> {
    DocumentsWriting::create()?.finish(documents)
}

/// Decodes documents.parquet.
pub fn documents_from_parquet(bytes: Bytes) -> Result<Vec<DocumentRecord>> {
    documents_from_parquet_where(bytes, WantedRows::All)
}

/// Decodes the rows of documents.parquet `wanted` names (the others are not decoded).
pub fn documents_from_parquet_where<R: ChunkReader + Clone + 'static>(
    source: R,
    wanted: WantedRows,
) -> Result<Vec<DocumentRecord>> {
    decode_documents(source.clone(), plan(DOCUMENTS_FILE, &source, Columns::ALL, wanted)?)
}

/// The document records of a plan's rows of documents.parquet, in row order.
pub(super) fn decode_documents<R: ChunkReader + Clone + 'static>(
    source: R,
    plan: RowPlan,
) -> Result<Vec<DocumentRecord>> {
    plan.decode_all(source, documents_of_batch)
}

/// The document records of one batch of documents.parquet.
fn documents_of_batch(batch: &RecordBatch) -> Result<Vec<DocumentRecord>> {
    let s = |name: &str| column::<StringArray>(batch, DOCUMENTS_FILE, name);
    let (doc_id, uri, file_name, title, source, hash, etag, metadata) = (
        s("doc_id")?,
        s("uri")?,
        s("file_name")?,
        s("title")?,
        s("source")?,
        s("content_hash")?,
        s("etag")?,
        s("metadata")?,
    );
    let tags = column::<ListArray>(batch, DOCUMENTS_FILE, "tags")?;
    let size = column::<UInt64Array>(batch, DOCUMENTS_FILE, "size")?;
    let chunk_count = column::<UInt32Array>(batch, DOCUMENTS_FILE, "chunk_count")?;
    let ingested = column::<TimestampMillisecondArray>(batch, DOCUMENTS_FILE, "ingested_at")?;
    // Files written before the layers have neither column.
    let layer = |name: &str| match batch.column_by_name(name) {
        None => Ok(None),
        Some(_) => column::<StringArray>(batch, DOCUMENTS_FILE, name).map(Some),
    };
    let (abstracts, overviews, made_by) = (layer("abstract")?, layer("overview")?, layer("layers_by")?);
    let warnings = match batch.column_by_name("warnings") {
        None => None,
        Some(_) => Some(column::<ListArray>(batch, DOCUMENTS_FILE, "warnings")?),
    };
    let text_at = |array: Option<&StringArray>, row: usize| array.map(|a| a.value(row).to_string()).unwrap_or_default();
    let mut documents = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        documents.push(DocumentRecord {
            doc_id: doc_id.value(row).to_string(),
            uri: uri.value(row).to_string(),
            file_name: file_name.value(row).to_string(),
            title: title.value(row).to_string(),
            source: source.value(row).to_string(),
            tags: list_strings(tags, row),
            content_hash: hash.value(row).to_string(),
            size: size.value(row),
            etag: etag.is_valid(row).then(|| etag.value(row).to_string()),
            chunk_count: chunk_count.value(row),
            metadata: metadata.value(row).to_string(),
            ingested_at: chrono::DateTime::from_timestamp_millis(ingested.value(row)).unwrap_or_default(),
            layers: DocumentLayers {
                abstract_text: text_at(abstracts, row),
                overview: text_at(overviews, row),
                made_by: text_at(made_by, row),
            },
            warnings: warnings.map(|list| list_strings(list, row)).unwrap_or_default(),
        });
    }
    Ok(documents)
}

/// Where a document's rows are, without the rest of its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentOutline {
    pub doc_id: String,
    pub uri: String,
    pub chunk_count: u32,
    /// What made its layers (empty in files written before layers).
    pub layers_by: String,
}

/// The outlines of a plan's rows of documents.parquet (a plan of [`OUTLINE_COLUMNS`] at least).
pub(super) fn decode_outlines<R: ChunkReader + Clone + 'static>(
    source: R,
    plan: RowPlan,
) -> Result<Vec<DocumentOutline>> {
    plan.decode_all(source, |batch| {
        let (doc_id, uri) = (
            column::<StringArray>(batch, DOCUMENTS_FILE, "doc_id")?,
            column::<StringArray>(batch, DOCUMENTS_FILE, "uri")?,
        );
        let chunk_count = column::<UInt32Array>(batch, DOCUMENTS_FILE, "chunk_count")?;
        let layers_by = match batch.column_by_name("layers_by") {
            None => None,
            Some(_) => Some(column::<StringArray>(batch, DOCUMENTS_FILE, "layers_by")?),
        };
        Ok((0..batch.num_rows())
            .map(|row| DocumentOutline {
                doc_id: doc_id.value(row).to_string(),
                uri: uri.value(row).to_string(),
                chunk_count: chunk_count.value(row),
                layers_by: layers_by.map(|a| a.value(row).to_string()).unwrap_or_default(),
            })
            .collect())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use std::collections::HashSet;

    use super::super::parquet_encode::ROW_GROUP_ROWS;
    use super::*;

    /// Decodes chunks.parquet a few row groups at a time, as a segment read does.
    fn chunks_from_parquet_in_parts<R: ChunkReader + Clone + 'static>(
        source: R,
        wanted: WantedRows,
        part: impl FnMut(Vec<Chunk>, Embeddings) -> Result<()>,
    ) -> Result<u64> {
        decode_chunk_rows(source.clone(), plan(CHUNKS_FILE, &source, Columns::ALL, wanted)?, part)
    }

    fn document_outlines_from_parquet(bytes: Bytes) -> Result<Vec<DocumentOutline>> {
        decode_outlines(
            bytes.clone(),
            plan(DOCUMENTS_FILE, &bytes, OUTLINE_COLUMNS, WantedRows::All)?,
        )
    }

    fn test_chunks(count: u32) -> Vec<Chunk> {
        (0..count)
            .map(|i| Chunk {
                chunk_id: format!("d-{i}"),
                doc_id: "d".into(),
                index: i,
                text: format!("text {i} ✓"),
                page: (i > 0).then_some(i),
                heading_path: vec!["A".into(), format!("B{i}")],
                content_type: if i == 2 { ContentType::Table } else { ContentType::Text },
                token_count: 3 + i,
                start_seconds: (i == 1).then_some(754),
            })
            .collect()
    }

    #[test]
    fn chunks_written_before_transcripts_times_read_without_them() {
        let chunks = test_chunks(3);
        let embeddings = Embeddings {
            dim: 4,
            data: (0..12).map(|x| x as f32).collect(),
        };
        let bytes: Bytes = chunks_to_parquet(&chunks, &embeddings).unwrap().into();
        // The same file less its start_seconds column, as an older build wrote it.
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader
            .map(|batch| {
                let mut batch = batch.unwrap();
                batch.remove_column(batch.schema().index_of("start_seconds").unwrap());
                batch
            })
            .collect();
        let mut older = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut older, batches[0].schema(), None).unwrap();
        batches.iter().for_each(|batch| writer.write(batch).unwrap());
        writer.close().unwrap();
        let (back, vectors) = chunks_from_parquet(older.into()).unwrap();
        assert!(chunks.iter().any(|c| c.start_seconds.is_some()));
        let without_times: Vec<Chunk> = chunks
            .into_iter()
            .map(|c| Chunk {
                start_seconds: None,
                ..c
            })
            .collect();
        assert_eq!(back, without_times);
        assert_eq!(vectors, embeddings);
    }

    #[test]
    fn chunks_and_documents_round_trip() {
        let chunks = test_chunks(3);
        let embeddings = Embeddings {
            dim: 4,
            data: (0..12).map(|x| x as f32 * 0.5).collect(),
        };
        let bytes: Bytes = chunks_to_parquet(&chunks, &embeddings).unwrap().into();
        let (back, vectors) = chunks_from_parquet(bytes.clone()).unwrap();
        assert_eq!(back, chunks);
        assert_eq!(vectors, embeddings);
        assert_eq!(chunks_from_parquet_without_embeddings(bytes).unwrap(), chunks);

        let record = DocumentRecord {
            doc_id: "d".into(),
            uri: "file:///x/a.md".into(),
            file_name: "a.md".into(),
            title: "A".into(),
            source: "file".into(),
            tags: vec!["t1".into()],
            content_hash: "ab".into(),
            size: 10,
            etag: None,
            chunk_count: 3,
            metadata: "{\"k\":1}".into(),
            ingested_at: chrono::DateTime::from_timestamp_millis(1_700_000_000_123).unwrap(),
            layers: DocumentLayers {
                abstract_text: "Ein Satz.".into(),
                overview: "Ein Satz. Noch einer ✓.".into(),
                made_by: "extractive-v1".into(),
            },
            warnings: vec!["page 2 of 3: text could not be extracted (…); it was left out".into()],
        };
        let back = documents_from_parquet(documents_to_parquet(std::slice::from_ref(&record)).unwrap().into()).unwrap();
        assert_eq!(back, std::slice::from_ref(&record));

        // Outlines, and the records of some files only.
        let records: Vec<DocumentRecord> = (0..5)
            .map(|i| DocumentRecord {
                doc_id: format!("d{i}"),
                uri: format!("file:///x/{}.jsonl#{i}", i % 2),
                chunk_count: i,
                ..record.clone()
            })
            .collect();
        let bytes: Bytes = documents_to_parquet(&records).unwrap().into();
        let outlines = document_outlines_from_parquet(bytes.clone()).unwrap();
        assert!(outlines
            .iter()
            .map(|o| (&o.doc_id, &o.uri, o.chunk_count))
            .eq(records.iter().map(|r| (&r.doc_id, &r.uri, r.chunk_count))));
        let of_file_one = |uri: &str| uri.starts_with("file:///x/1.jsonl");
        let back = documents_from_parquet_where(bytes, WantedRows::Where("uri", &of_file_one)).unwrap();
        assert_eq!(back, [records[1].clone(), records[3].clone()]);
    }

    #[test]
    fn rows_keep_their_order_across_row_groups_decoded_in_parallel() {
        let count = ROW_GROUP_ROWS * 3 + 17;
        let chunks = test_chunks(count as u32);
        let embeddings = Embeddings {
            dim: 2,
            data: (0..count * 2).map(|x| x as f32).collect(),
        };
        let bytes = chunks_to_parquet(&chunks, &embeddings).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let bytes: Bytes = bytes.into();
        let (back, vectors) = pool.install(|| chunks_from_parquet(bytes.clone())).unwrap();
        assert!(back == chunks, "chunks differ after the round trip");
        assert_eq!(vectors, embeddings);
        let back = pool
            .install(|| chunks_from_parquet_without_embeddings(bytes.clone()))
            .unwrap();
        assert!(back == chunks, "chunks differ when read without their embeddings");

        // In parts, from memory and from a file read by position, its blocks checked as they
        // are read (row groups decoded three at once).
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let mut hasher = super::super::FileHasher::new(Some(64 * 1024));
        hasher.update(&bytes);
        let checked =
            super::super::checked_blocks::CheckedBlocks::local(file.path(), "chunks.parquet", &hasher.finish())
                .unwrap()
                .unwrap();
        for (back, vectors, parts) in [
            read_in_parts(&pool, bytes.clone()),
            read_in_parts(&pool, checked.clone()),
        ] {
            assert!(back == chunks, "chunks differ when read in parts");
            assert_eq!((vectors, parts), (embeddings.data.clone(), 4));
        }
        // Each block is counted once, however many threads read it.
        assert!(
            checked.bytes_read() <= bytes.len() as u64 && checked.bytes_read() * 10 > bytes.len() as u64 * 9,
            "{} of {}",
            checked.bytes_read(),
            bytes.len()
        );
    }

    #[test]
    fn wanted_documents_are_read_from_their_pages_alone() {
        // Documents of 100 rows over four row groups, vectors wide enough for several pages a group.
        let (count, dim) = (ROW_GROUP_ROWS * 3 + 17, 128);
        let mut chunks = test_chunks(count as u32);
        chunks
            .iter_mut()
            .enumerate()
            .for_each(|(row, chunk)| chunk.doc_id = format!("doc-{}", row / 100));
        let embeddings = Embeddings {
            dim,
            data: (0..count * dim).map(|x| (x as f32 * 0.37).sin()).collect(),
        };
        let bytes: Bytes = chunks_to_parquet(&chunks, &embeddings).unwrap().into();
        // One document inside the second row group, one at the end of the last, one that is not there.
        let documents: HashSet<String> = ["doc-200", "doc-491", "doc-9999"].map(String::from).into();
        let expected: Vec<usize> = (0..count)
            .filter(|&row| documents.contains(&chunks[row].doc_id))
            .collect();
        assert_eq!(expected.len(), 100 + 69);

        let counted = CountedBytes {
            bytes: bytes.clone(),
            read: Arc::default(),
        };
        let (mut back, mut vectors) = (Vec::new(), Vec::new());
        let keep = |doc_id: &str| documents.contains(doc_id);
        let handed = chunks_from_parquet_in_parts(
            counted.clone(),
            WantedRows::Where("doc_id", &keep),
            |part_chunks, part_vectors| {
                back.extend(part_chunks);
                vectors.extend(part_vectors.data);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(handed, expected.len() as u64);
        assert!(
            back.iter().eq(expected.iter().map(|&row| &chunks[row])),
            "the wanted rows, in row order"
        );
        assert!(
            vectors.iter().eq(expected.iter().flat_map(|&row| embeddings.row(row))),
            "their own vectors"
        );
        let read = counted.read.load(std::sync::atomic::Ordering::Relaxed);
        // The three row groups they touch are about two thirds of the file; their pages, a tenth.
        assert!(
            read * 5 < bytes.len() as u64,
            "{read} of {} bytes read for 169 of {count} rows",
            bytes.len()
        );

        // Every row: every byte is read (the counter counts what it should).
        let all = CountedBytes {
            bytes: bytes.clone(),
            read: Arc::default(),
        };
        let handed = chunks_from_parquet_in_parts(all.clone(), WantedRows::All, |_, _| Ok(())).unwrap();
        assert_eq!(handed, count as u64);
        assert!(all.read.load(std::sync::atomic::Ordering::Relaxed) * 10 > bytes.len() as u64 * 9);
    }

    /// A Parquet source in memory that counts the bytes read from it.
    #[derive(Clone)]
    struct CountedBytes {
        bytes: Bytes,
        read: Arc<std::sync::atomic::AtomicU64>,
    }

    impl parquet::file::reader::Length for CountedBytes {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
    }

    impl ChunkReader for CountedBytes {
        type T = std::io::Cursor<Bytes>;

        fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
            let rest = self.bytes.slice(start as usize..);
            self.read
                .fetch_add(rest.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(std::io::Cursor::new(rest))
        }

        fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
            self.read.fetch_add(length as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(self.bytes.slice(start as usize..start as usize + length))
        }
    }

    /// Every part [`chunks_from_parquet_in_parts`] hands over, one after another, and how many parts.
    fn read_in_parts<R: ChunkReader + Clone + 'static>(
        pool: &rayon::ThreadPool,
        source: R,
    ) -> (Vec<Chunk>, Vec<f32>, usize) {
        let (mut back, mut vectors, mut parts) = (Vec::new(), Vec::new(), 0);
        pool.install(|| {
            chunks_from_parquet_in_parts(source, WantedRows::All, |part_chunks, part_vectors| {
                assert!(part_chunks.len() <= ROW_GROUP_ROWS && part_vectors.data.len() == part_chunks.len() * 2);
                back.extend(part_chunks);
                vectors.extend(part_vectors.data);
                parts += 1;
                Ok(())
            })
        })
        .unwrap();
        (back, vectors, parts)
    }

    #[test]
    fn a_chunks_file_holds_the_bytes_chunks_to_parquet_makes() {
        let count = ROW_GROUP_ROWS * 2 + 7;
        let chunks = test_chunks(count as u32);
        let embeddings = Embeddings {
            dim: 3,
            data: (0..count * 3).map(|x| (x as f32).sin()).collect(),
        };
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("chunks.parquet");
        std::fs::write(
            &path,
            b"an older, longer file that must not leave a tail behind".repeat(100_000),
        )
        .unwrap();
        // Three row groups on two threads: two waves written to the file.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| chunks_to_parquet_file(&chunks, &embeddings, &path))
            .unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(
            written == chunks_to_parquet(&chunks, &embeddings).unwrap(),
            "the file differs from the in-memory encoding"
        );
        let (back, vectors) = chunks_from_parquet(written.into()).unwrap();
        assert!(back == chunks, "chunks differ after the round trip through the file");
        assert_eq!(vectors, embeddings);

        let missing = folder.path().join("no such folder").join("chunks.parquet");
        let err = chunks_to_parquet_file(&chunks, &embeddings, &missing).unwrap_err();
        assert!(
            matches!(&err, IndexerError::Io { path, .. } if path == &missing),
            "{err}"
        );
        let mismatched = Embeddings {
            dim: 3,
            data: vec![0.0; 3],
        };
        let err = chunks_to_parquet_file(&chunks, &mismatched, &path).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{count} chunks but 1 embeddings")),
            "{err}"
        );
        assert!(
            std::fs::read(&path).unwrap() == chunks_to_parquet(&chunks, &embeddings).unwrap(),
            "a refused write touched the file"
        );
    }

    #[test]
    fn mismatched_embeddings_are_refused() {
        let err = chunks_to_parquet(
            &[],
            &Embeddings {
                dim: 2,
                data: vec![0.0, 1.0],
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("0 chunks but 1 embeddings"), "{err}");
    }
}
