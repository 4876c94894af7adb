//! chunks.parquet being written: its schema, a row group's batch, and the file open while
//! row groups are handed to it. A run hands it the row groups of documents whose place in
//! the segment is settled while it still embeds the rest (`pipeline::row_stream`); the rows
//! left are encoded once the segment is cut. The bytes are those of one pass over every row.

use std::io::Write;
use std::sync::Arc;

use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::parquet_encode::RowGroupFile;
use super::parquet_io::{string_list, CHUNKS_FILE};
use super::parquet_plan::arrow_err;
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};

/// chunks.parquet open for row groups.
pub struct ChunksWriting<W: Write + Send> {
    file: RowGroupFile<W>,
    schema: SchemaRef,
    dim: usize,
}

impl<W: Write + Send> ChunksWriting<W> {
    /// The file for vectors of `dim` dimensions, written to `out`.
    pub fn create(dim: usize, out: W) -> Result<Self> {
        let schema = chunks_schema(dim);
        let file = RowGroupFile::create(CHUNKS_FILE, schema.clone(), &["chunk_id", "doc_id", "text"], out)?;
        Ok(Self { file, schema, dim })
    }

    /// Encodes and appends row group `index` (the file's rows `index × ROW_GROUP_ROWS` on):
    /// `rows`, each a chunk and its vector, `ROW_GROUP_ROWS` of them unless it is the
    /// file's last. False once the file has failed (the error comes with [`Self::finish`]).
    pub fn encode_group<'a>(&self, index: usize, rows: impl FnOnce() -> Vec<(&'a Chunk, &'a [f32])>) -> bool {
        self.file.encode_group(index, || {
            let rows = rows();
            let mut vectors = Vec::with_capacity(rows.len() * self.dim);
            for (chunk, vector) in &rows {
                if vector.len() != self.dim {
                    return Err(IndexerError::snapshot(
                        CHUNKS_FILE,
                        format!(
                            "chunk {}: a vector of {} dimensions, not {}",
                            chunk.chunk_id,
                            vector.len(),
                            self.dim
                        ),
                    ));
                }
                vectors.extend_from_slice(vector);
            }
            let chunks: Vec<&Chunk> = rows.into_iter().map(|(chunk, _)| chunk).collect();
            chunks_batch(&self.schema, &chunks, vectors)
        })
    }

    /// Row groups appended so far: the rows before `groups × ROW_GROUP_ROWS` are in the file.
    pub fn groups_appended(&self) -> usize {
        self.file.groups_appended()
    }

    /// Encodes the rows not yet in the file (every row from the first group not yet
    /// appended) of the segment's `chunks` with their `embeddings`, on every thread of the
    /// current rayon pool, then writes the footer. The rows before are those handed over
    /// already, in this order.
    pub fn finish(self, chunks: &[Chunk], embeddings: &Embeddings) -> Result<W> {
        if embeddings.dim != self.dim || embeddings.rows() != chunks.len() {
            return Err(IndexerError::snapshot(
                CHUNKS_FILE,
                format!(
                    "{} chunks but {} embeddings of {} dimensions (the file's: {})",
                    chunks.len(),
                    embeddings.rows(),
                    embeddings.dim,
                    self.dim
                ),
            ));
        }
        self.file.encode_rest(chunks.len(), |rows| {
            let vectors = embeddings.data[rows.start * self.dim..rows.end * self.dim].to_vec();
            let chunks: Vec<&Chunk> = chunks[rows].iter().collect();
            chunks_batch(&self.schema, &chunks, vectors)
        })?;
        self.file.finish()
    }
}

/// chunks.parquet's columns for vectors of `dim` dimensions.
fn chunks_schema(dim: usize) -> SchemaRef {
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    Arc::new(Schema::new(vec![
        Field::new("chunk_id", DataType::Utf8, false),
        Field::new("doc_id", DataType::Utf8, false),
        Field::new("chunk_index", DataType::UInt32, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("token_count", DataType::UInt32, false),
        Field::new("page", DataType::UInt32, true),
        Field::new(
            "heading_path",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
        Field::new("content_type", DataType::Utf8, false),
        Field::new("start_seconds", DataType::UInt32, true),
        Field::new("embedding", DataType::FixedSizeList(item, dim as i32), false),
    ]))
}

/// One row group's batch: `chunks` with their `vectors` (row-major, in order).
fn chunks_batch(schema: &SchemaRef, chunks: &[&Chunk], vectors: Vec<f32>) -> Result<RecordBatch> {
    let DataType::FixedSizeList(item, dim) = schema.field(schema.fields().len() - 1).data_type() else {
        unreachable!("chunks.parquet's last column holds the vectors")
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            chunks.iter().map(|c| c.chunk_id.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.doc_id.as_str()))),
        Arc::new(UInt32Array::from_iter_values(chunks.iter().map(|c| c.index))),
        Arc::new(StringArray::from_iter_values(chunks.iter().map(|c| c.text.as_str()))),
        Arc::new(UInt32Array::from_iter_values(chunks.iter().map(|c| c.token_count))),
        Arc::new(UInt32Array::from(chunks.iter().map(|c| c.page).collect::<Vec<_>>())),
        Arc::new(string_list(chunks.iter().map(|c| c.heading_path.as_slice()))),
        Arc::new(StringArray::from_iter_values(
            chunks.iter().map(|c| c.content_type.as_str()),
        )),
        Arc::new(UInt32Array::from(
            chunks.iter().map(|c| c.start_seconds).collect::<Vec<_>>(),
        )),
        Arc::new(
            FixedSizeListArray::try_new(item.clone(), *dim, Arc::new(Float32Array::from(vectors)), None)
                .map_err(arrow_err(CHUNKS_FILE))?,
        ),
    ];
    RecordBatch::try_new(schema.clone(), columns).map_err(arrow_err(CHUNKS_FILE))
}
