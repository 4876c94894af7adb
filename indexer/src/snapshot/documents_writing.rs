//! documents.parquet being written: its schema, a row group's batch, and the file (in
//! memory) open while row groups are handed to it, as chunks.parquet's are
//! (`chunks_writing.rs`): a run hands it the row groups of documents whose place in the
//! segment is settled while it still embeds the rest. The bytes are those of one pass over
//! every row.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray, TimestampMillisecondArray, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use super::parquet_encode::RowGroupFile;
use super::parquet_io::{string_list, DocumentRecord, DOCUMENTS_FILE};
use super::parquet_plan::arrow_err;
use crate::error::Result;

/// documents.parquet open for row groups, written in memory.
pub struct DocumentsWriting {
    file: RowGroupFile<Vec<u8>>,
    schema: SchemaRef,
}

impl DocumentsWriting {
    pub fn create() -> Result<Self> {
        let schema = documents_schema();
        let file = RowGroupFile::create(
            DOCUMENTS_FILE,
            schema.clone(),
            &["doc_id", "uri", "content_hash"],
            Vec::new(),
        )?;
        Ok(Self { file, schema })
    }

    /// Encodes and appends row group `index` (the file's rows `index × ROW_GROUP_ROWS` on):
    /// the documents `records` gives, `ROW_GROUP_ROWS` of them unless it is the file's last.
    /// False once the file has failed (the error comes with [`Self::finish`]).
    pub fn encode_group<'a>(&self, index: usize, records: impl FnOnce() -> Vec<&'a DocumentRecord>) -> bool {
        self.file
            .encode_group(index, || documents_batch(&self.schema, &records()))
    }

    /// Row groups appended so far.
    pub fn groups_appended(&self) -> usize {
        self.file.groups_appended()
    }

    /// Encodes the segment's `documents` not yet in the file (every one from the first group
    /// not yet appended) on every thread of the current rayon pool, then writes the footer:
    /// the file's bytes. The documents before are those handed over already, in this order.
    pub fn finish(self, documents: &[DocumentRecord]) -> Result<Vec<u8>> {
        self.file.encode_rest(documents.len(), |rows| {
            let records: Vec<&DocumentRecord> = documents[rows].iter().collect();
            documents_batch(&self.schema, &records)
        })?;
        self.file.finish()
    }
}

/// documents.parquet's columns.
fn documents_schema() -> SchemaRef {
    let utf8 = |name: &str| Field::new(name, DataType::Utf8, false);
    Arc::new(Schema::new(vec![
        utf8("doc_id"),
        utf8("uri"),
        utf8("file_name"),
        utf8("title"),
        utf8("source"),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
        utf8("content_hash"),
        Field::new("size", DataType::UInt64, false),
        Field::new("etag", DataType::Utf8, true),
        Field::new("chunk_count", DataType::UInt32, false),
        utf8("metadata"),
        Field::new(
            "ingested_at",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
        utf8("abstract"),
        utf8("overview"),
        utf8("layers_by"),
        Field::new(
            "warnings",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
    ]))
}

/// One row group's batch: `documents`, in order.
fn documents_batch(schema: &SchemaRef, documents: &[&DocumentRecord]) -> Result<RecordBatch> {
    let strings = |f: fn(&DocumentRecord) -> &str| {
        Arc::new(StringArray::from_iter_values(documents.iter().map(|d| f(d)))) as ArrayRef
    };
    let columns: Vec<ArrayRef> = vec![
        strings(|d| &d.doc_id),
        strings(|d| &d.uri),
        strings(|d| &d.file_name),
        strings(|d| &d.title),
        strings(|d| &d.source),
        Arc::new(string_list(documents.iter().map(|d| d.tags.as_slice()))),
        strings(|d| &d.content_hash),
        Arc::new(UInt64Array::from_iter_values(documents.iter().map(|d| d.size))),
        Arc::new(StringArray::from(
            documents.iter().map(|d| d.etag.clone()).collect::<Vec<_>>(),
        )),
        Arc::new(UInt32Array::from_iter_values(documents.iter().map(|d| d.chunk_count))),
        strings(|d| &d.metadata),
        Arc::new(
            TimestampMillisecondArray::from_iter_values(documents.iter().map(|d| d.ingested_at.timestamp_millis()))
                .with_timezone("UTC"),
        ),
        strings(|d| &d.layers.abstract_text),
        strings(|d| &d.layers.overview),
        strings(|d| &d.layers.made_by),
        Arc::new(string_list(documents.iter().map(|d| d.warnings.as_slice()))),
    ];
    RecordBatch::try_new(schema.clone(), columns).map_err(arrow_err(DOCUMENTS_FILE))
}
