//! chunks.parquet and documents.parquet: Arrow schemas, encoding and decoding.

use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, Float32Array, ListArray, RecordBatch, StringArray, TimestampMillisecondArray, UInt32Array,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelectionPolicy};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::parquet_encode::{write_batch, write_row_groups, ROW_GROUP_ROWS};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::parse::ContentType;

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
}

fn arrow_err(file: &'static str) -> impl Fn(arrow_schema::ArrowError) -> IndexerError {
    move |e| IndexerError::snapshot(file, e)
}

fn parquet_err(file: &'static str) -> impl Fn(parquet::errors::ParquetError) -> IndexerError {
    move |e| IndexerError::snapshot(file, e)
}

/// Every row of the Parquet file in `bytes`, in order: a batch per row group, the row groups
/// decoded on every thread of the current rayon pool.
pub(super) fn read_batches(file: &'static str, bytes: Bytes) -> Result<Vec<RecordBatch>> {
    read_batches_of(file, bytes, Columns::AllBut(&[]), WantedRows::All)
}

/// The top-level columns a reader decodes (the others are never decoded).
#[derive(Clone, Copy)]
enum Columns<'a> {
    AllBut(&'a [&'a str]),
    Only(&'a [&'a str]),
}

/// [`read_batches`] of the rows `wanted` names and the columns `columns` names.
fn read_batches_of(file: &'static str, bytes: Bytes, columns: Columns, wanted: WantedRows) -> Result<Vec<RecordBatch>> {
    let metadata = ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new().with_page_index(matches!(wanted, WantedRows::Where(..)))).map_err(parquet_err(file))?;
    let schema = metadata.metadata().file_metadata().schema_descr();
    let decoded = |name: &str| match columns {
        Columns::AllBut(skip) => !skip.contains(&name),
        Columns::Only(names) => names.contains(&name),
    };
    let kept = schema.root_schema().get_fields().iter().enumerate().filter(|(_, field)| decoded(field.name())).map(|(i, _)| i);
    let projection = ProjectionMask::roots(schema, kept);
    let groups = selected_row_groups(file, &bytes, &metadata, wanted)?;
    let decoded: Vec<Vec<RecordBatch>> = groups
        .into_par_iter()
        .map(|(group, selection)| {
            let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), metadata.clone())
                .with_projection(projection.clone())
                .with_row_groups(vec![group])
                .with_batch_size(ROW_GROUP_ROWS);
            if let Some(selection) = selection {
                builder = builder.with_row_selection(selection).with_row_selection_policy(RowSelectionPolicy::Selectors);
            }
            builder.build().map_err(parquet_err(file))?.collect::<std::result::Result<Vec<_>, _>>().map_err(arrow_err(file))
        })
        .collect::<Result<_>>()?;
    Ok(decoded.into_iter().flatten().collect())
}

fn string_list<'a>(values: impl Iterator<Item = &'a [String]>) -> ListArray {
    let mut builder = ListBuilder::new(StringBuilder::new());
    for list in values {
        for value in list {
            builder.values().append_value(value);
        }
        builder.append(true);
    }
    builder.finish()
}

pub(super) fn column<'a, T: 'static>(batch: &'a RecordBatch, file: &'static str, name: &str) -> Result<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| IndexerError::snapshot(file, format!("column `{name}` is missing or has the wrong type")))
}

fn list_strings(list: &ListArray, row: usize) -> Vec<String> {
    let values = list.value(row);
    let strings = values.as_any().downcast_ref::<StringArray>().expect("list of strings");
    (0..strings.len()).map(|i| strings.value(i).to_string()).collect()
}

const CHUNKS_FILE: &str = "chunks.parquet";
const DOCUMENTS_FILE: &str = "documents.parquet";

/// Encodes chunks and their embeddings (row `i` of `embeddings` belongs to `chunks[i]`).
pub fn chunks_to_parquet(chunks: &[Chunk], embeddings: &Embeddings) -> Result<Vec<u8>> {
    write_chunks(chunks, embeddings, Vec::new())
}

/// chunks.parquet written to the file at `path` (created or replaced), never whole in memory.
/// Rows that do not match their embeddings are refused before the file is touched.
pub fn chunks_to_parquet_file(chunks: &[Chunk], embeddings: &Embeddings, path: &Path) -> Result<()> {
    rows_match(chunks, embeddings)?;
    let file = std::fs::File::create(path).map_err(|e| IndexerError::io(path, e))?;
    write_chunks(chunks, embeddings, file).map(drop)
}

/// One embedding per chunk.
fn rows_match(chunks: &[Chunk], embeddings: &Embeddings) -> Result<()> {
    if embeddings.rows() != chunks.len() {
        return Err(IndexerError::snapshot(CHUNKS_FILE, format!("{} chunks but {} embeddings", chunks.len(), embeddings.rows())));
    }
    Ok(())
}

/// chunks.parquet written to `out`.
fn write_chunks<W: Write + Send>(chunks: &[Chunk], embeddings: &Embeddings, out: W) -> Result<W> {
    rows_match(chunks, embeddings)?;
    let dim = embeddings.dim as i32;
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let schema = Arc::new(Schema::new(vec![
        Field::new("chunk_id", DataType::Utf8, false),
        Field::new("doc_id", DataType::Utf8, false),
        Field::new("chunk_index", DataType::UInt32, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("token_count", DataType::UInt32, false),
        Field::new("page", DataType::UInt32, true),
        Field::new("heading_path", DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))), false),
        Field::new("content_type", DataType::Utf8, false),
        Field::new("embedding", DataType::FixedSizeList(item.clone(), dim), false),
    ]));
    // Each row group's arrays are built by the task that encodes it.
    write_row_groups(CHUNKS_FILE, schema.clone(), chunks.len(), |rows| {
        let vectors = embeddings.data[rows.start * embeddings.dim..rows.end * embeddings.dim].to_vec();
        let chunks = &chunks[rows];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.chunk_id.as_str()))),
            Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.doc_id.as_str()))),
            Arc::new(UInt32Array::from_iter_values(chunks.iter().map(|c| c.index))),
            Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.text.as_str()))),
            Arc::new(UInt32Array::from_iter_values(chunks.iter().map(|c| c.token_count))),
            Arc::new(UInt32Array::from(chunks.iter().map(|c| c.page).collect::<Vec<_>>())),
            Arc::new(string_list(chunks.iter().map(|c| c.heading_path.as_slice()))),
            Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.content_type.as_str()))),
            Arc::new(FixedSizeListArray::try_new(item.clone(), dim, Arc::new(Float32Array::from(vectors)), None).map_err(arrow_err(CHUNKS_FILE))?),
        ];
        RecordBatch::try_new(schema.clone(), columns).map_err(arrow_err(CHUNKS_FILE))
    }, out)
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
    let mut embeddings = Embeddings { dim: decoded.first().map_or(0, |(_, dim, _)| *dim), data: Vec::with_capacity(decoded.iter().map(|(_, _, v)| v.len()).sum()) };
    for (batch_chunks, _, vectors) in decoded {
        chunks.extend(batch_chunks);
        embeddings.data.extend_from_slice(vectors);
    }
    Ok((chunks, embeddings))
}

/// The rows of a Parquet file a reader wants.
#[derive(Clone, Copy)]
pub enum WantedRows<'a> {
    All,
    /// The rows whose string column (named first) holds a value the function accepts.
    Where(&'static str, &'a (dyn Fn(&str) -> bool + Sync)),
}

/// Decodes chunks.parquet (in memory, a [`super::positioned_file::PositionedFile`] or
/// [`super::checked_blocks::CheckedBlocks`]) a few row groups at a time (one per thread, in
/// parallel), handing each group's chunks and embeddings to `part` in row order: a reader
/// that keeps little of each row needs a few groups' rows in memory, not the whole segment
/// decoded. With [`WantedRows::Where`] only the wanted rows are decoded and handed to
/// `part`, their pages alone read ([`selected_row_groups`]). Returns the rows handed to `part`.
pub fn chunks_from_parquet_in_parts<R: ChunkReader + Clone + 'static>(source: R, wanted: WantedRows, part: impl FnMut(Vec<Chunk>, Embeddings) -> Result<()>) -> Result<u64> {
    let metadata = chunk_file_metadata(&source, wanted)?;
    let plan = plan_rows(&source, metadata, wanted)?;
    decode_planned_rows(source, plan, part)
}

/// chunks.parquet's metadata, with the page index when only some rows are wanted.
pub(super) fn chunk_file_metadata<R: ChunkReader>(source: &R, wanted: WantedRows) -> Result<ArrowReaderMetadata> {
    ArrowReaderMetadata::load(source, ArrowReaderOptions::new().with_page_index(matches!(wanted, WantedRows::Where(..)))).map_err(parquet_err(CHUNKS_FILE))
}

/// How many bytes from the end of a Parquet file of `file_bytes` bytes hold its metadata and
/// page index, given its last `tail.len()` bytes: None when they are all in `tail`, else the
/// number of bytes from the end needed.
pub(super) fn metadata_bytes_needed(tail: &Bytes, file_bytes: u64) -> Result<Option<u64>> {
    use parquet::errors::ParquetError;
    match parquet::file::metadata::ParquetMetaDataReader::new().with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional).try_parse_sized(tail, file_bytes) {
        Ok(()) => Ok(None),
        Err(ParquetError::NeedMoreData(needed)) => Ok(Some(needed as u64)),
        Err(e) => Err(parquet_err(CHUNKS_FILE)(e)),
    }
}

/// The byte ranges of one top-level column's chunks in every row group (what
/// [`plan_rows`] reads of the column that [`WantedRows::Where`] names).
pub(super) fn column_byte_ranges(metadata: &ArrowReaderMetadata, name: &str) -> Result<Vec<Range<u64>>> {
    let parquet = metadata.metadata();
    let leaves: Vec<usize> = (0..parquet.file_metadata().schema_descr().num_columns())
        .filter(|&leaf| parquet.file_metadata().schema_descr().column(leaf).path().parts().first().is_some_and(|root| root == name))
        .collect();
    if leaves.is_empty() {
        return Err(IndexerError::snapshot(CHUNKS_FILE, format!("no {name} column")));
    }
    Ok(parquet.row_groups().iter().flat_map(|group| leaves.iter().map(move |&leaf| chunk_range(group.column(leaf)))).collect())
}

fn chunk_range(column: &parquet::file::metadata::ColumnChunkMetaData) -> Range<u64> {
    let (start, length) = column.byte_range();
    start..start + length
}

/// What a reader of chunks.parquet decodes: the row groups holding wanted rows, each with
/// the selection of those rows (None: every row of the group).
pub(super) struct RowPlan {
    metadata: ArrowReaderMetadata,
    groups: Vec<(usize, Option<RowSelection>)>,
}

/// The row groups and rows of chunks.parquet that `wanted` names (for [`WantedRows::Where`],
/// its column read and decoded here).
pub(super) fn plan_rows<R: ChunkReader + Clone + 'static>(source: &R, metadata: ArrowReaderMetadata, wanted: WantedRows) -> Result<RowPlan> {
    let groups = selected_row_groups(CHUNKS_FILE, source, &metadata, wanted)?;
    Ok(RowPlan { metadata, groups })
}

impl RowPlan {
    /// The bytes [`decode_planned_rows`] reads: of each planned row group, every column's
    /// chunk when all its rows are wanted, else each column's dictionary page and the data
    /// pages holding a selected row (the ranges Parquet's own async reader fetches).
    pub fn byte_ranges(&self) -> Vec<Range<u64>> {
        let parquet = self.metadata.metadata();
        let mut ranges = Vec::new();
        for (group, selection) in &self.groups {
            let columns = parquet.row_group(*group).columns();
            let pages = parquet.offset_index().map(|index| &index[*group]);
            for (leaf, column) in columns.iter().enumerate() {
                let chunk = chunk_range(column);
                match (selection, pages.and_then(|pages| pages.get(leaf))) {
                    (Some(selection), Some(pages)) => {
                        if let Some(first) = pages.page_locations().first().filter(|first| first.offset as u64 != chunk.start) {
                            ranges.push(chunk.start..first.offset as u64);
                        }
                        ranges.extend(selection.scan_ranges(pages.page_locations()));
                    }
                    _ => ranges.push(chunk),
                }
            }
        }
        ranges
    }
}

/// Decodes the planned rows a few row groups at a time (see [`chunks_from_parquet_in_parts`]).
pub(super) fn decode_planned_rows<R: ChunkReader + Clone + 'static>(source: R, plan: RowPlan, mut part: impl FnMut(Vec<Chunk>, Embeddings) -> Result<()>) -> Result<u64> {
    let RowPlan { metadata, groups } = plan;
    let mut handed = 0u64;
    for window in groups.chunks(rayon::current_num_threads().max(1)) {
        let decoded: Vec<Vec<(Vec<Chunk>, Embeddings)>> = window
            .par_iter()
            .map(|(group, selection)| {
                let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone()).with_row_groups(vec![*group]).with_batch_size(ROW_GROUP_ROWS);
                if let Some(selection) = selection {
                    // Selectors (not a mask over every row): the pages without a selected row
                    // are skipped, never read.
                    builder = builder.with_row_selection(selection.clone()).with_row_selection_policy(RowSelectionPolicy::Selectors);
                }
                builder
                    .build()
                    .map_err(parquet_err(CHUNKS_FILE))?
                    .map(|batch| {
                        let batch = batch.map_err(arrow_err(CHUNKS_FILE))?;
                        let (chunks, dim, vectors) = chunks_of_batch(&batch)?;
                        Ok((chunks, Embeddings { dim, data: vectors.to_vec() }))
                    })
                    .collect()
            })
            .collect::<Result<_>>()?;
        for (chunks, embeddings) in decoded.into_iter().flatten() {
            handed += chunks.len() as u64;
            part(chunks, embeddings)?;
        }
    }
    Ok(handed)
}

/// The row groups of `file` holding a row `wanted` names, each with the selection of those
/// rows (None: every row of the group). For [`WantedRows::Where`] the one column is decoded
/// first; a reader given the selection then reads and decompresses only the pages holding a
/// selected row (the page index the writer stores says where each page starts).
fn selected_row_groups<R: ChunkReader + Clone + 'static>(file: &'static str, source: &R, metadata: &ArrowReaderMetadata, wanted: WantedRows) -> Result<Vec<(usize, Option<RowSelection>)>> {
    let groups = 0..metadata.metadata().num_row_groups();
    let WantedRows::Where(name, keep) = wanted else {
        return Ok(groups.map(|group| (group, None)).collect());
    };
    let schema = metadata.metadata().file_metadata().schema_descr();
    let index = schema.root_schema().get_fields().iter().position(|field| field.name() == name).ok_or_else(|| IndexerError::snapshot(file, format!("no {name} column")))?;
    let projection = ProjectionMask::roots(schema, [index]);
    let groups: Vec<Option<(usize, Option<RowSelection>)>> = groups
        .into_par_iter()
        .map(|group| {
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
                .with_projection(projection.clone())
                .with_row_groups(vec![group])
                .with_batch_size(ROW_GROUP_ROWS)
                .build()
                .map_err(parquet_err(file))?;
            let mut filters = Vec::new();
            for batch in reader {
                let batch = batch.map_err(arrow_err(file))?;
                let values = column::<StringArray>(&batch, file, name)?;
                filters.push(values.iter().map(|value| Some(value.is_some_and(keep))).collect::<BooleanArray>());
            }
            let kept: usize = filters.iter().map(BooleanArray::true_count).sum();
            let rows: usize = filters.iter().map(BooleanArray::len).sum();
            Ok(match kept {
                0 => None,
                _ if kept == rows => Some((group, None)),
                _ => Some((group, Some(RowSelection::from_filters(&filters)))),
            })
        })
        .collect::<Result<_>>()?;
    Ok(groups.into_iter().flatten().collect())
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
    let values = vectors.values().as_any().downcast_ref::<Float32Array>().ok_or_else(|| IndexerError::snapshot(CHUNKS_FILE, "embedding values are not f32"))?;
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
            })
        })
        .collect()
}

/// Encodes documents.parquet.
pub fn documents_to_parquet(documents: &[DocumentRecord]) -> Result<Vec<u8>> {
    const FILE: &str = DOCUMENTS_FILE;
    let strings = |f: fn(&DocumentRecord) -> &str| Arc::new(StringArray::from_iter_values(documents.iter().map(f))) as ArrayRef;
    let columns: Vec<ArrayRef> = vec![
        strings(|d| &d.doc_id),
        strings(|d| &d.uri),
        strings(|d| &d.file_name),
        strings(|d| &d.title),
        strings(|d| &d.source),
        Arc::new(string_list(documents.iter().map(|d| d.tags.as_slice()))),
        strings(|d| &d.content_hash),
        Arc::new(UInt64Array::from_iter_values(documents.iter().map(|d| d.size))),
        Arc::new(StringArray::from(documents.iter().map(|d| d.etag.clone()).collect::<Vec<_>>())),
        Arc::new(UInt32Array::from_iter_values(documents.iter().map(|d| d.chunk_count))),
        strings(|d| &d.metadata),
        Arc::new(TimestampMillisecondArray::from_iter_values(documents.iter().map(|d| d.ingested_at.timestamp_millis())).with_timezone("UTC")),
    ];
    let utf8 = |name: &str| Field::new(name, DataType::Utf8, false);
    let schema = Schema::new(vec![
        utf8("doc_id"),
        utf8("uri"),
        utf8("file_name"),
        utf8("title"),
        utf8("source"),
        Field::new("tags", DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))), false),
        utf8("content_hash"),
        Field::new("size", DataType::UInt64, false),
        Field::new("etag", DataType::Utf8, true),
        Field::new("chunk_count", DataType::UInt32, false),
        utf8("metadata"),
        Field::new("ingested_at", DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())), false),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), columns).map_err(arrow_err(FILE))?;
    write_batch(FILE, batch)
}

/// Decodes documents.parquet.
pub fn documents_from_parquet(bytes: Bytes) -> Result<Vec<DocumentRecord>> {
    documents_from_parquet_where(bytes, WantedRows::All)
}

/// Decodes the rows of documents.parquet `wanted` names (the others are not decoded).
pub fn documents_from_parquet_where(bytes: Bytes, wanted: WantedRows) -> Result<Vec<DocumentRecord>> {
    let mut documents = Vec::new();
    for batch in read_batches_of(DOCUMENTS_FILE, bytes, Columns::AllBut(&[]), wanted)? {
        let s = |name: &str| column::<StringArray>(&batch, DOCUMENTS_FILE, name);
        let (doc_id, uri, file_name, title, source, hash, etag, metadata) =
            (s("doc_id")?, s("uri")?, s("file_name")?, s("title")?, s("source")?, s("content_hash")?, s("etag")?, s("metadata")?);
        let tags = column::<ListArray>(&batch, DOCUMENTS_FILE, "tags")?;
        let size = column::<UInt64Array>(&batch, DOCUMENTS_FILE, "size")?;
        let chunk_count = column::<UInt32Array>(&batch, DOCUMENTS_FILE, "chunk_count")?;
        let ingested = column::<TimestampMillisecondArray>(&batch, DOCUMENTS_FILE, "ingested_at")?;
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
            });
        }
    }
    Ok(documents)
}

/// Where a document's rows are, without the rest of its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentOutline {
    pub doc_id: String,
    pub uri: String,
    pub chunk_count: u32,
}

/// Decodes documents.parquet's doc_id, uri and chunk_count columns alone.
pub fn document_outlines_from_parquet(bytes: Bytes) -> Result<Vec<DocumentOutline>> {
    let mut outlines = Vec::new();
    for batch in read_batches_of(DOCUMENTS_FILE, bytes, Columns::Only(&["doc_id", "uri", "chunk_count"]), WantedRows::All)? {
        let (doc_id, uri) = (column::<StringArray>(&batch, DOCUMENTS_FILE, "doc_id")?, column::<StringArray>(&batch, DOCUMENTS_FILE, "uri")?);
        let chunk_count = column::<UInt32Array>(&batch, DOCUMENTS_FILE, "chunk_count")?;
        outlines.extend((0..batch.num_rows()).map(|row| DocumentOutline { doc_id: doc_id.value(row).to_string(), uri: uri.value(row).to_string(), chunk_count: chunk_count.value(row) }));
    }
    Ok(outlines)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

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
            })
            .collect()
    }

    #[test]
    fn chunks_and_documents_round_trip() {
        let chunks = test_chunks(3);
        let embeddings = Embeddings { dim: 4, data: (0..12).map(|x| x as f32 * 0.5).collect() };
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
        };
        let back = documents_from_parquet(documents_to_parquet(std::slice::from_ref(&record)).unwrap().into()).unwrap();
        assert_eq!(back, [record.clone()]);

        // Outlines, and the records of some files only.
        let records: Vec<DocumentRecord> = (0..5).map(|i| DocumentRecord { doc_id: format!("d{i}"), uri: format!("file:///x/{}.jsonl#{i}", i % 2), chunk_count: i, ..record.clone() }).collect();
        let bytes: Bytes = documents_to_parquet(&records).unwrap().into();
        let outlines = document_outlines_from_parquet(bytes.clone()).unwrap();
        assert!(outlines.iter().map(|o| (&o.doc_id, &o.uri, o.chunk_count)).eq(records.iter().map(|r| (&r.doc_id, &r.uri, r.chunk_count))));
        let of_file_one = |uri: &str| uri.starts_with("file:///x/1.jsonl");
        let back = documents_from_parquet_where(bytes, WantedRows::Where("uri", &of_file_one)).unwrap();
        assert_eq!(back, [records[1].clone(), records[3].clone()]);
    }

    #[test]
    fn rows_keep_their_order_across_row_groups_decoded_in_parallel() {
        let count = ROW_GROUP_ROWS * 3 + 17;
        let chunks = test_chunks(count as u32);
        let embeddings = Embeddings { dim: 2, data: (0..count * 2).map(|x| x as f32).collect() };
        let bytes = chunks_to_parquet(&chunks, &embeddings).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let bytes: Bytes = bytes.into();
        let (back, vectors) = pool.install(|| chunks_from_parquet(bytes.clone())).unwrap();
        assert!(back == chunks, "chunks differ after the round trip");
        assert_eq!(vectors, embeddings);
        let back = pool.install(|| chunks_from_parquet_without_embeddings(bytes.clone())).unwrap();
        assert!(back == chunks, "chunks differ when read without their embeddings");

        // In parts, from memory and from a file read by position (row groups decoded three at once).
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let positioned = super::super::positioned_file::PositionedFile::new(file).unwrap();
        for (back, vectors, parts) in [read_in_parts(&pool, bytes), read_in_parts(&pool, positioned)] {
            assert!(back == chunks, "chunks differ when read in parts");
            assert_eq!((vectors, parts), (embeddings.data.clone(), 4));
        }
    }

    #[test]
    fn wanted_documents_are_read_from_their_pages_alone() {
        // Documents of 100 rows over four row groups, vectors wide enough for several pages a group.
        let (count, dim) = (ROW_GROUP_ROWS * 3 + 17, 128);
        let mut chunks = test_chunks(count as u32);
        chunks.iter_mut().enumerate().for_each(|(row, chunk)| chunk.doc_id = format!("doc-{}", row / 100));
        let embeddings = Embeddings { dim, data: (0..count * dim).map(|x| (x as f32 * 0.37).sin()).collect() };
        let bytes: Bytes = chunks_to_parquet(&chunks, &embeddings).unwrap().into();
        // One document inside the second row group, one at the end of the last, one that is not there.
        let documents: HashSet<String> = ["doc-200", "doc-491", "doc-9999"].map(String::from).into();
        let expected: Vec<usize> = (0..count).filter(|&row| documents.contains(&chunks[row].doc_id)).collect();
        assert_eq!(expected.len(), 100 + 69);

        let counted = CountedBytes { bytes: bytes.clone(), read: Arc::default() };
        let (mut back, mut vectors) = (Vec::new(), Vec::new());
        let keep = |doc_id: &str| documents.contains(doc_id);
        let handed = chunks_from_parquet_in_parts(counted.clone(), WantedRows::Where("doc_id", &keep), |part_chunks, part_vectors| {
            back.extend(part_chunks);
            vectors.extend(part_vectors.data);
            Ok(())
        })
        .unwrap();
        assert_eq!(handed, expected.len() as u64);
        assert!(back.iter().eq(expected.iter().map(|&row| &chunks[row])), "the wanted rows, in row order");
        assert!(vectors.iter().eq(expected.iter().flat_map(|&row| embeddings.row(row))), "their own vectors");
        let read = counted.read.load(std::sync::atomic::Ordering::Relaxed);
        // The three row groups they touch are about two thirds of the file; their pages, a tenth.
        assert!(read * 5 < bytes.len() as u64, "{read} of {} bytes read for 169 of {count} rows", bytes.len());

        // Every row: every byte is read (the counter counts what it should).
        let all = CountedBytes { bytes: bytes.clone(), read: Arc::default() };
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
            self.read.fetch_add(rest.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(std::io::Cursor::new(rest))
        }

        fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
            self.read.fetch_add(length as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(self.bytes.slice(start as usize..start as usize + length))
        }
    }

    /// Every part [`chunks_from_parquet_in_parts`] hands over, one after another, and how many parts.
    fn read_in_parts<R: ChunkReader + Clone + 'static>(pool: &rayon::ThreadPool, source: R) -> (Vec<Chunk>, Vec<f32>, usize) {
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
        let embeddings = Embeddings { dim: 3, data: (0..count * 3).map(|x| (x as f32).sin()).collect() };
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("chunks.parquet");
        std::fs::write(&path, b"an older, longer file that must not leave a tail behind".repeat(100_000)).unwrap();
        // Three row groups on two threads: two waves written to the file.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| chunks_to_parquet_file(&chunks, &embeddings, &path)).unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(written == chunks_to_parquet(&chunks, &embeddings).unwrap(), "the file differs from the in-memory encoding");
        let (back, vectors) = chunks_from_parquet(written.into()).unwrap();
        assert!(back == chunks, "chunks differ after the round trip through the file");
        assert_eq!(vectors, embeddings);

        let missing = folder.path().join("no such folder").join("chunks.parquet");
        let err = chunks_to_parquet_file(&chunks, &embeddings, &missing).unwrap_err();
        assert!(matches!(&err, IndexerError::Io { path, .. } if path == &missing), "{err}");
        let mismatched = Embeddings { dim: 3, data: vec![0.0; 3] };
        let err = chunks_to_parquet_file(&chunks, &mismatched, &path).unwrap_err();
        assert!(err.to_string().contains(&format!("{count} chunks but 1 embeddings")), "{err}");
        assert!(std::fs::read(&path).unwrap() == chunks_to_parquet(&chunks, &embeddings).unwrap(), "a refused write touched the file");
    }

    #[test]
    fn mismatched_embeddings_are_refused() {
        let err = chunks_to_parquet(&[], &Embeddings { dim: 2, data: vec![0.0, 1.0] }).unwrap_err();
        assert!(err.to_string().contains("0 chunks but 1 embeddings"), "{err}");
    }
}
