//! The file table of a version a batch run wrote (`files/<version>.parquet`): every source
//! file the run listed, with the ETag it had, whether any of it failed, and what of it the
//! version serves. The next run skips fetching a file whose ETag is still this one; a file
//! that lost a line (a removed document) is recorded with its new ETag like any other, so it
//! is not fetched again. Versions published online have no table (their deletes and uploads
//! are not per file): a run on them fetches every file.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;

use super::parquet_encode::write_batch;
use super::parquet_io::read_batches;
use super::parquet_plan::column;
use crate::error::{IndexerError, Result};
use crate::parse::file_uri_of;

const FILE: &str = "files.parquet";

/// What a version holds of one source file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileEntry {
    /// The ETag the listing gave when the run read the file (None: the source gives none).
    pub etag: Option<String>,
    /// Some or all of the file failed in that run (it is fetched again next time, unless it
    /// is `no_document`).
    pub failed: bool,
    /// Why the file is no document (a picture, an empty file), where that was its failure:
    /// a later run of the same parse signature does not fetch it again while its ETag is
    /// this one, and reports the failure as carried over.
    pub no_document: Option<String>,
    /// Live documents, chunks and tokens of the file in the version.
    pub documents: u64,
    pub chunks: u64,
    pub tokens: u64,
}

impl FileEntry {
    /// Adds one live document with `chunks` chunks and `tokens` tokens.
    pub fn add_document(&mut self, chunks: u64, tokens: u64) {
        self.documents += 1;
        self.chunks += chunks;
        self.tokens += tokens;
    }
}

/// Source files by URI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileTable {
    pub files: BTreeMap<String, FileEntry>,
}

impl FileTable {
    /// Adds a live document (`document_uri`, which may name a part of a file) to its file's entry.
    pub fn add_document(&mut self, document_uri: &str, chunks: u64, tokens: u64) {
        self.files
            .entry(file_uri_of(document_uri).to_string())
            .or_default()
            .add_document(chunks, tokens);
    }

    /// Adds what `other` holds of each file (its documents, chunks and tokens) to this table.
    pub fn add_table(&mut self, other: FileTable) {
        for (uri, entry) in other.files {
            let mine = self.files.entry(uri).or_default();
            mine.documents += entry.documents;
            mine.chunks += entry.chunks;
            mine.tokens += entry.tokens;
        }
    }

    pub fn get(&self, uri: &str) -> Option<&FileEntry> {
        self.files.get(uri)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Live documents, chunks and tokens over every file.
    pub fn totals(&self) -> FileEntry {
        let mut totals = FileEntry::default();
        for entry in self.files.values() {
            totals.documents += entry.documents;
            totals.chunks += entry.chunks;
            totals.tokens += entry.tokens;
        }
        totals
    }

    /// Encodes the table as Parquet.
    pub fn to_parquet(&self) -> Result<Vec<u8>> {
        let entries = || self.files.values();
        let counts = |f: fn(&FileEntry) -> u64| Arc::new(UInt64Array::from_iter_values(entries().map(f))) as ArrayRef;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(self.files.keys())),
            Arc::new(StringArray::from(entries().map(|e| e.etag.clone()).collect::<Vec<_>>())),
            Arc::new(BooleanArray::from(entries().map(|e| e.failed).collect::<Vec<_>>())),
            Arc::new(StringArray::from(
                entries().map(|e| e.no_document.clone()).collect::<Vec<_>>(),
            )),
            counts(|e| e.documents),
            counts(|e| e.chunks),
            counts(|e| e.tokens),
        ];
        let count = |name: &str| Field::new(name, DataType::UInt64, false);
        let schema = Schema::new(vec![
            Field::new("uri", DataType::Utf8, false),
            Field::new("etag", DataType::Utf8, true),
            Field::new("failed", DataType::Boolean, false),
            Field::new("no_document", DataType::Utf8, true),
            count("documents"),
            count("chunks"),
            count("tokens"),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| IndexerError::snapshot(FILE, e))?;
        write_batch(FILE, batch, &[])
    }

    /// Decodes a table written by `to_parquet`.
    pub fn from_parquet(bytes: Bytes) -> Result<Self> {
        let mut table = Self::default();
        for batch in read_batches(FILE, bytes)? {
            let uri = column::<StringArray>(&batch, FILE, "uri")?;
            let etag = column::<StringArray>(&batch, FILE, "etag")?;
            let failed = column::<BooleanArray>(&batch, FILE, "failed")?;
            // Tables written before the column have none.
            let no_document = match batch.column_by_name("no_document") {
                None => None,
                Some(_) => Some(column::<StringArray>(&batch, FILE, "no_document")?),
            };
            let count = |name: &str| column::<UInt64Array>(&batch, FILE, name);
            let (documents, chunks, tokens) = (count("documents")?, count("chunks")?, count("tokens")?);
            for row in 0..batch.num_rows() {
                let entry = FileEntry {
                    etag: etag.is_valid(row).then(|| etag.value(row).to_string()),
                    failed: failed.value(row),
                    no_document: no_document
                        .filter(|column| column.is_valid(row))
                        .map(|column| column.value(row).to_string()),
                    documents: documents.value(row),
                    chunks: chunks.value(row),
                    tokens: tokens.value(row),
                };
                table.files.insert(uri.value(row).to_string(), entry);
            }
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_and_without_etags_and_no_document_reasons() {
        let mut table = FileTable::default();
        table.files.insert(
            "file:///a.md".into(),
            FileEntry {
                etag: Some("\"e1\"".into()),
                failed: false,
                no_document: None,
                documents: 1,
                chunks: 3,
                tokens: 700,
            },
        );
        table.files.insert(
            "s3://b/c.jsonl".into(),
            FileEntry {
                etag: None,
                failed: true,
                no_document: None,
                documents: 40,
                chunks: 41,
                tokens: 9000,
            },
        );
        table.files.insert(
            "s3://b/pic.png".into(),
            FileEntry {
                etag: Some("\"e2\"".into()),
                failed: true,
                no_document: Some("binary file: PNG image".into()),
                documents: 0,
                chunks: 0,
                tokens: 0,
            },
        );
        let back = FileTable::from_parquet(table.to_parquet().unwrap().into()).unwrap();
        assert_eq!(back, table);
        // A table written before the `no_document` column reads as none.
        let old_schema = |batch: &RecordBatch| {
            let kept: Vec<usize> = (0..batch.num_columns())
                .filter(|&i| batch.schema().field(i).name() != "no_document")
                .collect();
            batch.project(&kept).unwrap()
        };
        let batches = read_batches(FILE, table.to_parquet().unwrap().into()).unwrap();
        let older = write_batch(FILE, old_schema(&batches[0]), &[]).unwrap();
        let back = FileTable::from_parquet(older.into()).unwrap();
        assert_eq!(back.get("s3://b/pic.png").unwrap().no_document, None);
        assert!(back.get("s3://b/pic.png").unwrap().failed);
        assert_eq!(
            back.totals(),
            FileEntry {
                etag: None,
                failed: false,
                no_document: None,
                documents: 41,
                chunks: 44,
                tokens: 9700
            }
        );
    }
}
