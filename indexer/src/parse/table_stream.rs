//! A CSV or TSV table read as a stream (past `--max-file-mb`, or compressed: a data export of
//! millions of rows, `products.csv.gz`), its rows read by the csv crate as the file is read
//! (and inflated) and gathered into the documents a table read whole is split into
//! ([`super::csv::TableParts`]: 1,000 rows a document, named `<file>#rows=<first>-<last>`), a
//! batch of [`BATCH_PARTS`] documents at a time. A row may hold [`MAX_ROW_BYTES`] at most: past
//! that (a quote never closed makes the rest of a file one cell) the reading stops, the rows
//! before kept. The bytes must be UTF-8 (a byte order mark is left out; bytes that are not UTF-8
//! read as U+FFFD), as a file read whole is decoded first.

use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::csv::TableParts;
use super::record_stream::{batch_or_end, inflating};
use super::text::declared_by_source;
use super::text_stream::DecodedText;
use super::{ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Documents (of up to 1,000 rows or 1 MiB each) a batch holds at most: 32 MiB of rows at
/// most, as a mailbox's batch, and documents enough for the chunking of a batch, done a
/// document a thread, to keep a GPU host's 16 cores busy.
pub const BATCH_PARTS: usize = 32;
/// The most bytes one row may take.
pub const MAX_ROW_BYTES: u64 = 64 << 20;

pub struct TableStream {
    rows: csv::Reader<RowBound>,
    /// Bytes read from the file when the last row ended.
    row_ended_at: Arc<AtomicU64>,
    parts: TableParts,
    record: csv::ByteRecord,
    yielded: usize,
    done: bool,
}

impl TableStream {
    /// Reads `file`'s rows from `bytes` (inflated first where they are compressed), its cells
    /// separated by `delimiter`.
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>, delimiter: u8) -> Result<Self, ParseError> {
        let text = DecodedText::open(inflating(bytes, file.size)?, declared_by_source(&file))?;
        let row_ended_at = Arc::new(AtomicU64::new(0));
        let bound = RowBound {
            inner: text,
            read: 0,
            row_ended_at: row_ended_at.clone(),
        };
        let mut rows = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_reader(bound);
        let header = rows
            .byte_headers()
            .map_err(|e| ParseError::Corrupt(format!("unreadable header row: {e}")))?
            .clone();
        row_ended_at.store(rows.position().byte(), Ordering::Relaxed);
        Ok(Self {
            parts: TableParts::new(file, &header, delimiter),
            rows,
            row_ended_at,
            record: csv::ByteRecord::new(),
            yielded: 0,
            done: false,
        })
    }
}

impl Iterator for TableStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut parsed = Parsed::default();
            self.read_batch(&mut parsed);
            if let Some(item) = batch_or_end(parsed, &mut self.yielded, self.done, || ParseError::NoText) {
                return Some(item);
            }
        }
        None
    }
}

impl TableStream {
    /// Rows read into `parsed` until it holds [`BATCH_PARTS`] documents or the table ended.
    fn read_batch(&mut self, parsed: &mut Parsed) {
        while !self.done && parsed.documents.len() < BATCH_PARTS {
            match self.rows.read_byte_record(&mut self.record) {
                Ok(true) => {
                    self.row_ended_at.store(self.rows.position().byte(), Ordering::Relaxed);
                    parsed.documents.extend(self.parts.add(&self.record));
                }
                Ok(false) => self.done = true,
                Err(e) => {
                    // The rows before are kept; the file fails from this row on.
                    self.done = true;
                    parsed.failures.push(ItemFailure {
                        uri: self.parts.file.uri.clone(),
                        reason: format!("reading stopped at row {}: {e}", self.parts.next_row),
                    });
                }
            }
            if self.done {
                parsed.documents.extend(self.parts.finish());
            }
        }
    }
}

/// A table's bytes, failing a read once the row being read has taken [`MAX_ROW_BYTES`].
struct RowBound {
    inner: BufReader<DecodedText>,
    /// Bytes read so far.
    read: u64,
    row_ended_at: Arc<AtomicU64>,
}

impl Read for RowBound {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let row_started = self.row_ended_at.load(Ordering::Relaxed);
        if self.read.saturating_sub(row_started) > MAX_ROW_BYTES {
            return Err(std::io::Error::other(format!(
                "a row past {} MiB (a quote never closed?)",
                MAX_ROW_BYTES >> 20
            )));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::gzip;
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::{raw_for_test, AutoParser, Parser};

    fn stream(name: &str, bytes: Vec<u8>) -> TableStream {
        let file = raw_for_test(name, Vec::new());
        let delimiter = if name.ends_with(".tsv") { b'\t' } else { b',' };
        TableStream::open(file, Box::new(std::io::Cursor::new(bytes)), delimiter).unwrap()
    }

    /// A table of `rows` rows: an id, a name with a comma in quotes, a description; every
    /// hundredth row blank.
    fn table(rows: usize) -> String {
        let mut text = String::from("\u{feff}id,name,description\r\n");
        for i in 1..=rows {
            match i % 100 {
                0 => text.push_str(",,\r\n"),
                _ => text.push_str(&format!(
                    "{i},\"valve {i}, brass\",\"fits the north pier's pipes, size {}\"\r\n",
                    i % 7
                )),
            }
        }
        text
    }

    #[test]
    fn a_table_read_as_a_stream_is_split_into_the_documents_of_the_table_read_whole() {
        let text = table(4500);
        let whole = AutoParser.parse(&raw_for_test("parts.csv", text.clone())).unwrap();
        let uris: Vec<&str> = whole.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/parts.csv#rows=2-1001",
                "memory://test/parts.csv#rows=1002-2001",
                "memory://test/parts.csv#rows=2002-3001",
                "memory://test/parts.csv#rows=3002-4001",
                "memory://test/parts.csv#rows=4002-4501"
            ]
        );
        assert_eq!(whole.documents[0].title, "parts, rows 2-1001");
        assert_eq!(whole.documents[0].blocks.len(), 990, "blank rows left out");
        assert_eq!(
            whole.documents[0].blocks[0].text,
            "1, valve 1, brass, fits the north pier's pipes, size 1"
        );
        assert_eq!(
            whole.documents[0].blocks[0].header.as_deref(),
            Some("id, name, description")
        );
        for bytes in [text.clone().into_bytes(), gzip(text.as_bytes())] {
            let batches: Vec<Parsed> = stream("parts.csv", bytes).map(Result::unwrap).collect();
            assert_eq!(batches.len(), 1, "up to 32 documents a batch");
            let streamed: Parsed = batches.into_iter().collect();
            let documents: Vec<_> = streamed.documents.iter().collect();
            assert_same_documents(&documents, &whole.documents);
            assert!(streamed.failures.is_empty());
        }
        let sizes: Vec<usize> = stream("big.csv", table(40_000).into_bytes())
            .map(|batch| batch.unwrap().documents.len())
            .collect();
        assert_eq!(sizes, [BATCH_PARTS, 40 - BATCH_PARTS]);
        // A small table is one document named by its file, read either way; its parts'
        // content hashes differ where their rows do.
        let small = table(50);
        let whole = AutoParser.parse(&raw_for_test("small.csv", small.clone())).unwrap();
        let streamed: Parsed = stream("small.csv", gzip(small.as_bytes()))
            .map(Result::unwrap)
            .collect();
        assert_eq!(whole.documents.len(), 1);
        assert_eq!(whole.documents[0].uri, "memory://test/small.csv");
        assert_eq!(whole.documents[0].title, "small");
        assert_same_documents(&streamed.documents.iter().collect::<Vec<_>>(), &whole.documents);
        let parts = AutoParser.parse(&raw_for_test("parts.csv", table(4500))).unwrap();
        assert_ne!(parts.documents[0].content_hash, parts.documents[1].content_hash);
    }

    #[test]
    fn wide_rows_make_smaller_parts_and_a_quote_never_closed_stops_the_reading() {
        let cell = "x".repeat(4000);
        let mut text = String::from("id\tnotes\n");
        for i in 1..=600 {
            text.push_str(&format!("{i}\t{cell}\n"));
        }
        let whole = AutoParser.parse(&raw_for_test("wide.tsv", text.clone())).unwrap();
        // 262 rows of 4,000 bytes pass 1 MiB.
        assert_eq!(whole.documents[0].uri, "memory://test/wide.tsv#rows=2-263");
        let streamed: Parsed = stream("wide.tsv", text.into_bytes()).map(Result::unwrap).collect();
        assert_same_documents(&streamed.documents.iter().collect::<Vec<_>>(), &whole.documents);
        // A quote opened and never closed: the reading stops past 64 MiB, the rows before kept.
        let mut text = table(1500).into_bytes();
        text.extend_from_slice(b"1501,\"never closed,");
        text.extend(std::iter::repeat_n(b'y', (MAX_ROW_BYTES + (4 << 20)) as usize));
        let streamed: Parsed = stream("open.csv", text).map(Result::unwrap).collect();
        assert_eq!(streamed.documents.len(), 2);
        assert_eq!(streamed.documents[1].uri, "memory://test/open.csv#rows=1002-1501");
        assert_eq!(streamed.failures.len(), 1);
        assert_eq!(
            streamed.failures[0].reason,
            "reading stopped at row 1502: a row past 64 MiB (a quote never closed?)"
        );
    }

    #[test]
    fn a_table_of_no_row_fails_as_read_whole() {
        let error = stream("h.csv", b"only,header\n".to_vec()).next().unwrap().unwrap_err();
        assert_eq!(error, ParseError::NoText);
    }

    #[test]
    fn a_table_in_a_legacy_encoding_or_utf16_is_decoded_as_read_whole() {
        // Past its first megabyte of ASCII rows, a Windows-1252 table's accented names.
        let mut text = table(30_000).replacen('\u{feff}', "", 1);
        text.push_str("30001,\"Müller, café\",\"crème brûlée, size 2\"\r\n");
        let latin = encoding_rs::WINDOWS_1252.encode(&text).0.into_owned();
        let whole = AutoParser.parse(&raw_for_test("latin.csv", latin.clone())).unwrap();
        let last = whole.documents.last().unwrap();
        assert_eq!(
            last.blocks.last().unwrap().text,
            "30001, Müller, café, crème brûlée, size 2"
        );
        let streamed: Parsed = stream("latin.csv", gzip(&latin)).map(Result::unwrap).collect();
        assert_same_documents(&streamed.documents.iter().collect::<Vec<_>>(), &whole.documents);
        // UTF-16 with its byte order mark, as Excel's "Unicode text" writes a TSV.
        let tsv = "名前\t都市\n山田\t東京\n".repeat(1500);
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(tsv.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let whole = AutoParser.parse(&raw_for_test("unicode.tsv", utf16.clone())).unwrap();
        assert_eq!(whole.documents[0].blocks[0].text, "山田\t東京");
        let streamed: Parsed = stream("unicode.tsv", utf16).map(Result::unwrap).collect();
        assert_same_documents(&streamed.documents.iter().collect::<Vec<_>>(), &whole.documents);
    }
}
