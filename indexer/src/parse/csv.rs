//! CSV and TSV: one table block per row (a row of blank cells left out), content_type
//! "table", the header line carried with every row so every chunk starts with it. A table of
//! up to [`PART_ROWS`] rows (and [`PART_BYTES`] of their text) is one document, named by its
//! file; a larger one is split into documents of that many consecutive rows, named
//! `<file>#rows=<first>-<last>` by the rows' numbers in the file (the header is row 1), so that
//! a table of any size is indexed (one document of millions of rows would be past the document
//! token limit), a hit names the rows it found, and rows added at a table's end leave the
//! parts before them as they were. Whisper's TSV (`start`, `end`, `text` in milliseconds) is a
//! transcript, read as subtitles are.

use super::text::decode_raw_text;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Rows a document of a table holds at most...
pub const PART_ROWS: usize = 1000;
/// ...and bytes of their text (about a quarter of a million tokens).
pub const PART_BYTES: usize = 1 << 20;

pub(super) fn parse(raw: &RawDocument, delimiter: u8) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    if delimiter == b'\t' {
        if let Some(cues) = whisper_tsv_cues(&text) {
            return super::subtitles::transcript_document(raw, &cues);
        }
    }
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader
        .byte_headers()
        .map_err(|e| ParseError::Corrupt(format!("unreadable header row: {e}")))?;
    let mut parts = TableParts::new(raw.clone(), header, delimiter);
    let mut parsed = Parsed::default();
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => parsed.documents.extend(parts.add(&record)),
            Ok(false) => break,
            Err(e) => return Err(ParseError::Corrupt(format!("row {}: {e}", parts.next_row))),
        }
    }
    parsed.documents.extend(parts.finish());
    if parsed.documents.is_empty() {
        return Err(ParseError::NoText);
    }
    Ok(parsed)
}

/// Whisper's TSV (`whisper --output_format tsv`): a header `start`, `end`, `text`, then a
/// segment a row, its times whole milliseconds. Any other table, or a row whose times are not
/// so, is `None` (read as a table).
fn whisper_tsv_cues(text: &str) -> Option<Vec<super::subtitles::Cue>> {
    let mut lines = text.trim_start_matches('\u{feff}').lines();
    let header: Vec<String> = lines
        .next()?
        .split('\t')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    if header != ["start", "end", "text"] {
        return None;
    }
    let cues: Option<Vec<_>> = lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let mut cells = line.splitn(3, '\t');
            let start = cells.next()?.trim().parse::<u64>().ok()?;
            let end = cells.next()?.trim().parse::<u64>().ok()?;
            let mut cue = super::subtitles::Cue::starting(start, end.max(start));
            cue.add_text(super::text::collapse_whitespace(cells.next().unwrap_or_default()));
            Some(cue)
        })
        .collect();
    cues.filter(|cues| !cues.is_empty())
}

/// A table's rows gathered into its documents as they are read ([`PART_ROWS`] rows or
/// [`PART_BYTES`] a document), for a table read whole and one read as a stream alike.
pub(super) struct TableParts {
    /// The file (its bytes not read here): each document's URI, name and title.
    pub file: RawDocument,
    header: String,
    separator: &'static str,
    /// The number the next row has in the file (the header is row 1).
    pub next_row: usize,
    /// The rows of the document being gathered, the first's number and their bytes.
    blocks: Vec<Block>,
    first_row: usize,
    bytes: usize,
    /// Whether a document was made: the table is then named by its parts.
    split: bool,
}

impl TableParts {
    pub fn new(file: RawDocument, header: &csv::ByteRecord, delimiter: u8) -> Self {
        let separator = if delimiter == b'\t' { "\t" } else { ", " };
        Self {
            file,
            header: cells_joined(header, separator),
            separator,
            next_row: 2,
            blocks: Vec::new(),
            first_row: 2,
            bytes: 0,
            split: false,
        }
    }

    /// Adds the next row; the document it completed (the one before it was full), if any.
    pub fn add(&mut self, record: &csv::ByteRecord) -> Option<Document> {
        let full = self.next_row - self.first_row >= PART_ROWS || self.bytes >= PART_BYTES;
        let done = if full { self.part(self.next_row - 1) } else { None };
        self.next_row += 1;
        // A row of blank cells is no text.
        if record.iter().any(|cell| !cell.trim_ascii().is_empty()) {
            let row = cells_joined(record, self.separator);
            self.bytes += row.len();
            self.blocks.push(Block {
                text: row,
                kind: ContentType::Table,
                header: Some(self.header.clone()),
                ..Default::default()
            });
        }
        done
    }

    /// The last document, once the table ended: the whole table's where it was not split.
    pub fn finish(&mut self) -> Option<Document> {
        let last = self.next_row - 1;
        match self.split {
            false if self.blocks.is_empty() => None,
            false => {
                let blocks = std::mem::take(&mut self.blocks);
                Some(self.document(self.file.uri.clone(), Document::stem_of(&self.file), blocks))
            }
            true => self.part(last),
        }
    }

    /// A document of `blocks`, its content hash that of its header and rows (a part's, as
    /// read whole or as a stream).
    fn document(&self, uri: String, title: String, blocks: Vec<Block>) -> Document {
        let mut content = self.header.clone();
        for block in &blocks {
            content.push('\n');
            content.push_str(&block.text);
        }
        Document::from_part(&self.file, uri, content.as_bytes(), title, blocks)
    }

    /// The rows gathered, through row `last`, as a document named by their numbers (None where
    /// all were blank); the next part starts after them.
    fn part(&mut self, last: usize) -> Option<Document> {
        let (first, blocks) = (self.first_row, std::mem::take(&mut self.blocks));
        self.split = true;
        self.first_row = last + 1;
        self.bytes = 0;
        if blocks.is_empty() {
            return None;
        }
        let uri = format!("{}#rows={first}-{last}", self.file.uri);
        let title = format!("{}, rows {first}-{last}", Document::stem_of(&self.file));
        Some(self.document(uri, title, blocks))
    }
}

/// A row's cells joined by `separator` (cells that are not UTF-8 read with U+FFFD in place of
/// their bad bytes: a table read whole is decoded first; one read as a stream must be UTF-8).
fn cells_joined(record: &csv::ByteRecord, separator: &str) -> String {
    record
        .iter()
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, raw_for_test, said_when, AutoParser, ContentType, ParseError, Parser};

    #[test]
    fn rows_carry_the_header() {
        let doc = document_of("prices.csv", "item,price\n\"gpu, big\",100\ncpu,5\n");
        assert_eq!(doc.blocks.len(), 2);
        assert!(doc
            .blocks
            .iter()
            .all(|b| b.kind == ContentType::Table && b.header.as_deref() == Some("item, price")));
        assert_eq!(doc.blocks[0].text, "gpu, big, 100");
        let tsv = document_of("t.tsv", "a\tb\n1\t2\n");
        assert_eq!(tsv.blocks[0].text, "1\t2");
        assert_eq!(
            AutoParser.parse(&raw_for_test("h.csv", "only,header\n")).unwrap_err(),
            ParseError::NoText
        );
    }

    #[test]
    fn whispers_tsv_is_a_transcript_and_other_timed_tables_stay_tables() {
        let tsv = "start\tend\ttext\n0\t2400\tThe tide turns at noon.\n2400\t4980\tThe harbour master is late.\n\
                   61500\t63000\tShips wait outside.\n";
        let document = document_of("harbour.tsv", tsv);
        assert_eq!(
            said_when(&document),
            [
                vec![("The tide turns at noon. ", 0), ("The harbour master is late.", 2)],
                vec![("Ships wait outside.", 61)],
            ]
        );
        assert_eq!(document.blocks[0].kind, ContentType::Text);
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(63.0));
        // Times that are no milliseconds, or another header: a table.
        for table in [
            "start\tend\ttext\n0:00\t0:02\tThe tide\n",
            "start\tend\tnote\n0\t2400\tThe tide\n",
        ] {
            let document = document_of("times.tsv", table);
            assert_eq!(document.blocks[0].kind, ContentType::Table, "{table}");
        }
    }
}
