//! JSONL corpora read as a stream, a batch of lines at a time: a file past `--max-file-mb`
//! and a compressed one (`corpus.jsonl.gz`, `.zst`, `.bz2`, `.xz`, inflated as it is read,
//! with no bound on what it inflates to), so a corpus of any size is read in the memory of
//! one batch and one line. Each line is read as `json.rs` reads a line of a file read whole:
//! the same documents, URIs (`<file>#<_id>`, else `#L<line>`) and failures, a bad line
//! failing alone. A line must be UTF-8 (as JSON Lines are) and at most [`MAX_LINE_BYTES`]; a
//! longer one fails alone and is read past. Where the bytes stop being readable partway (a
//! damaged compressed stream, a source that fails), the lines before are kept and the file
//! fails from that line on.

use std::io::{BufRead, BufReader, Read};

use rayon::prelude::*;

use super::json::read_jsonl_line;
use super::record_stream::{batch_or_end, inflating};
use super::text::declared_by_source;
use super::text_stream::DecodedText;
use super::{ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Bytes of lines a batch holds at most (a longer line makes a batch alone)...
pub const BATCH_BYTES: usize = 8 << 20;
/// ...and lines (blank ones too), so a corpus of short records is passed on as it is read.
pub const BATCH_LINES: usize = 4096;
/// The longest line read: a longer one fails alone (a JSON record this large is past the
/// document token limit many times over).
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Failed lines reported one by one; past them a file's failed lines are counted, and
/// reported together once it ends (a gigabyte of lines that are no records is no million
/// failures in the run report).
pub const LISTED_LINE_FAILURES: usize = 1000;

/// A JSONL file's lines read in order, yielding a [`Parsed`] batch at a time.
pub struct JsonlStream {
    /// The file (its bytes empty): each document's URI, name, etag and source.
    file: RawDocument,
    lines: BufReader<DecodedText>,
    /// The number of the next line, from 1.
    next_line: usize,
    /// Documents and failures yielded so far.
    yielded: usize,
    /// Lines that failed, and the last of them.
    failed_lines: usize,
    last_failed_line: usize,
    done: bool,
}

impl JsonlStream {
    /// Reads `file`'s lines from `bytes` (inflated first where they are compressed).
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>) -> Result<Self, ParseError> {
        let lines = DecodedText::open(inflating(bytes, file.size)?, declared_by_source(&file))?;
        Ok(Self {
            file,
            lines,
            next_line: 1,
            yielded: 0,
            failed_lines: 0,
            last_failed_line: 0,
            done: false,
        })
    }

    /// The next batch of lines read into `parsed` (parsed in parallel, added in their order);
    /// false at the end of the file.
    fn read_batch(&mut self, parsed: &mut Parsed) -> std::io::Result<bool> {
        let (mut batch_bytes, mut lines) = (0, Vec::new());
        let last_line = self.next_line + BATCH_LINES;
        let mut more = Ok(true);
        while batch_bytes < BATCH_BYTES && self.next_line < last_line {
            let mut line = Vec::new();
            let length = match read_line_within(&mut self.lines, &mut line, MAX_LINE_BYTES) {
                Ok(Some((length, _))) => length,
                Ok(None) => {
                    more = Ok(false);
                    break;
                }
                Err(e) => {
                    more = Err(e);
                    break;
                }
            };
            lines.push((self.next_line, length, line));
            self.next_line += 1;
            batch_bytes += length.min(MAX_LINE_BYTES);
        }
        let read: Vec<Parsed> = lines
            .par_iter()
            .map(|(line_no, length, line)| {
                let mut one = Parsed::default();
                read_line(&self.file, line, *length, *line_no, &mut one);
                one
            })
            .collect();
        for ((line_no, ..), one) in lines.iter().zip(read) {
            parsed.documents.extend(one.documents);
            if one.failures.is_empty() {
                continue;
            }
            self.failed_lines += 1;
            self.last_failed_line = *line_no;
            if self.failed_lines <= LISTED_LINE_FAILURES {
                parsed.failures.extend(one.failures);
            }
        }
        more
    }
}

/// One line of `file`, `length` bytes long (`line` holding at most [`MAX_LINE_BYTES`] of
/// them), read into `parsed`.
fn read_line(file: &RawDocument, line: &[u8], length: usize, line_no: usize, parsed: &mut Parsed) {
    let failure = |reason: String| ItemFailure {
        uri: format!("{}#L{line_no}", file.uri),
        reason: format!("line {line_no}: {reason}"),
    };
    if length > MAX_LINE_BYTES {
        parsed.failures.push(failure(format!(
            "{length} bytes, longer than the {} MiB a line of a JSONL file streamed may hold",
            MAX_LINE_BYTES >> 20
        )));
        return;
    }
    match std::str::from_utf8(line) {
        Ok(text) => read_jsonl_line(file, text.trim_end_matches('\r'), line_no, parsed),
        Err(e) => parsed.failures.push(failure(format!(
            "not UTF-8 (byte {} of the line; JSON Lines are UTF-8)",
            e.valid_up_to() + 1
        ))),
    }
}

impl JsonlStream {
    /// The failed lines past the first [`LISTED_LINE_FAILURES`], as one failure of the file.
    fn unlisted_failures(&self) -> Option<ItemFailure> {
        let unlisted = self.failed_lines.checked_sub(LISTED_LINE_FAILURES).filter(|n| *n > 0)?;
        Some(ItemFailure {
            uri: self.file.uri.clone(),
            reason: format!(
                "{unlisted} more lines failed after the first {LISTED_LINE_FAILURES} (the last of them line {})",
                self.last_failed_line
            ),
        })
    }
}

impl Iterator for JsonlStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut parsed = Parsed::default();
            match self.read_batch(&mut parsed) {
                Ok(more) => self.done = !more,
                Err(e) => {
                    self.done = true;
                    // The lines before are kept; the file fails from this line on.
                    parsed.failures.push(ItemFailure {
                        uri: self.file.uri.clone(),
                        reason: format!("reading stopped at line {}: {e}", self.next_line),
                    });
                }
            }
            if self.done {
                parsed.failures.extend(self.unlisted_failures());
            }
            let empty = self.next_line == 1;
            let nothing = move || if empty { ParseError::Empty } else { ParseError::NoText };
            if let Some(item) = batch_or_end(parsed, &mut self.yielded, self.done, nothing) {
                return Some(item);
            }
        }
        None
    }
}

/// Reads one line (its `\n` left out) into `line`, keeping at most `most` bytes of it: the
/// line's whole length and whether a `\n` ended it (else the input did), or None at the end
/// of the input.
pub(super) fn read_line_within(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    most: usize,
) -> std::io::Result<Option<(usize, bool)>> {
    line.clear();
    let mut length = 0;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((length > 0).then_some((length, false)));
        }
        let (taken, ends) = match memchr::memchr(b'\n', available) {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        let room = most.saturating_sub(line.len()).min(taken);
        line.extend_from_slice(&available[..room]);
        length += taken;
        input.consume(taken + usize::from(ends));
        if ends {
            return Ok(Some((length, true)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::{bzip2, gzip, xz};
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::{failures_of, raw_for_test, AutoParser, Document, Parser};

    fn stream(name: &str, bytes: Vec<u8>) -> JsonlStream {
        let file = raw_for_test(name, Vec::new());
        JsonlStream::open(file, Box::new(std::io::Cursor::new(bytes))).unwrap()
    }

    fn corpus(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("{{\"_id\": \"d{i}\", \"title\": \"Title {i}\", \"text\": \"text of document {i}\"}}\n"))
            .collect()
    }

    #[test]
    fn lines_read_as_a_stream_are_the_documents_of_the_file_read_whole() {
        let text = format!(
            "\u{feff}{}\n\r\n{{\"_id\": 7, \"text\": \" \"}}\nnot json\r\n[1]\n{}",
            corpus(3),
            corpus(1)
        );
        let whole = AutoParser.parse(&raw_for_test("c.jsonl", text.clone())).unwrap();
        for bytes in [
            text.clone().into_bytes(),
            gzip(text.as_bytes()),
            bzip2(text.as_bytes()),
            xz(text.as_bytes()),
        ] {
            let batches: Vec<Parsed> = stream("c.jsonl", bytes).map(Result::unwrap).collect();
            assert_eq!(batches.len(), 1);
            let streamed = &batches[0];
            let uris = |p: &Parsed| p.documents.iter().map(|d| d.uri.clone()).collect::<Vec<_>>();
            assert_eq!(uris(streamed), uris(&whole));
            assert_eq!(uris(streamed)[0], "memory://test/c.jsonl#d0");
            assert_eq!(failures_of(streamed), failures_of(&whole));
            let hashes = |p: &Parsed| p.documents.iter().map(|d| d.content_hash.clone()).collect::<Vec<_>>();
            assert_eq!(hashes(streamed), hashes(&whole));
        }
        assert_eq!(
            failures_of(&stream("c.jsonl", text.into_bytes()).next().unwrap().unwrap()),
            [
                ("memory://test/c.jsonl#7", "line 6: no text content found"),
                (
                    "memory://test/c.jsonl#L7",
                    "line 7: invalid JSON at column 2: expected ident at line 1 column 2"
                ),
                ("memory://test/c.jsonl#L8", "line 8: expected a JSON object"),
            ]
        );
    }

    #[test]
    fn a_large_file_comes_in_batches_with_its_lines_numbered_across_them() {
        // 3,000 lines of about 4 KiB (a batch ends past 8 MiB), then 10,000 short ones (a
        // batch ends at 4,096 lines), then a bad one.
        let filler = "x".repeat(4000);
        let mut text = String::new();
        for i in 0..13_000 {
            let filler = if i < 3000 { filler.as_str() } else { "" };
            text.push_str(&format!("{{\"text\": \"{i} {filler}\"}}\n"));
        }
        text.push_str("{\"text\": 5\n");
        let batches: Vec<Parsed> = stream("big.jsonl", gzip(text.as_bytes())).map(Result::unwrap).collect();
        let sizes: Vec<usize> = batches.iter().map(|b| b.documents.len() + b.failures.len()).collect();
        let long_line = 4000 + 13;
        let by_bytes = BATCH_BYTES.div_ceil(long_line + 3);
        assert!(
            sizes[0] >= by_bytes && sizes[0] <= BATCH_BYTES.div_ceil(long_line),
            "{sizes:?}"
        );
        assert!(sizes.contains(&BATCH_LINES), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 13_001, "{sizes:?}");
        let documents: Vec<&Document> = batches.iter().flat_map(|b| &b.documents).collect();
        for (i, document) in documents.iter().enumerate() {
            assert_eq!(document.uri, format!("memory://test/big.jsonl#L{}", i + 1));
            assert!(document.blocks[0].text.starts_with(&format!("{i} ")));
        }
        let last = batches.last().unwrap();
        assert_eq!(last.failures.len(), 1);
        assert!(
            last.failures[0].reason.starts_with("line 13001: invalid JSON"),
            "{:?}",
            last.failures
        );
    }

    #[test]
    fn a_line_too_long_or_not_utf8_fails_alone() {
        // UTF-8 from its first line on: a later line's stray Latin-1 byte fails that line.
        let mut text = "{\"text\": \"first ü\"}\n{\"text\": \"".as_bytes().to_vec();
        text.extend(std::iter::repeat_n(b'y', MAX_LINE_BYTES + 10));
        text.extend(b"\"}\n{\"text\": \"caf\xE9\"}\n{\"text\": \"last\"}".iter());
        let parsed: Vec<Parsed> = stream("long.jsonl", text).map(Result::unwrap).collect();
        let texts: Vec<&str> = parsed
            .iter()
            .flat_map(|p| &p.documents)
            .map(|d| d.blocks[0].text.as_str())
            .collect();
        assert_eq!(texts, ["first ü", "last"]);
        let failures: Vec<(&str, &str)> = parsed.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/long.jsonl#L2");
        assert!(
            failures[0]
                .1
                .starts_with("line 2: 67108886 bytes, longer than the 64 MiB"),
            "{failures:?}"
        );
        assert_eq!(
            failures[1],
            (
                "memory://test/long.jsonl#L3",
                "line 3: not UTF-8 (byte 14 of the line; JSON Lines are UTF-8)"
            )
        );
    }

    #[test]
    fn damage_partway_keeps_the_lines_before_it() {
        let mut bytes = gzip(corpus(2000).as_bytes());
        let middle = bytes.len() / 2;
        bytes.truncate(middle);
        let parsed: Vec<Parsed> = stream("cut.jsonl.gz", bytes).map(Result::unwrap).collect();
        let documents: usize = parsed.iter().map(|p| p.documents.len()).sum();
        assert!(documents > 100 && documents < 2000, "{documents}");
        let failures: Vec<(&str, &str)> = parsed.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/cut.jsonl.gz");
        assert!(failures[0].1.starts_with("reading stopped at line "), "{failures:?}");
    }

    #[test]
    fn lines_that_are_no_records_are_listed_up_to_a_bound_then_counted() {
        let mut text = String::from("{\"text\": \"kept\"}\n");
        for i in 0..2500 {
            text.push_str(&format!("record {i}\n"));
        }
        text.push_str("{\"text\": \"kept too\"}\n");
        let parsed: Vec<Parsed> = stream("noise.jsonl", text.into_bytes()).map(Result::unwrap).collect();
        let texts: Vec<&str> = parsed
            .iter()
            .flat_map(|p| &p.documents)
            .map(|d| d.blocks[0].text.as_str())
            .collect();
        assert_eq!(texts, ["kept", "kept too"]);
        let failures: Vec<(&str, &str)> = parsed.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), LISTED_LINE_FAILURES + 1);
        assert_eq!(failures[LISTED_LINE_FAILURES - 1].0, "memory://test/noise.jsonl#L1001");
        assert_eq!(
            failures[LISTED_LINE_FAILURES],
            (
                "memory://test/noise.jsonl",
                "1500 more lines failed after the first 1000 (the last of them line 2501)"
            )
        );
    }

    #[test]
    fn binary_files_fail_whole_and_utf16_or_legacy_encodings_are_read_as_whole() {
        let open = |bytes: Vec<u8>| {
            JsonlStream::open(
                raw_for_test("b.jsonl", Vec::new()),
                Box::new(std::io::Cursor::new(bytes)),
            )
        };
        let binary = open(gzip(b"{\"text\": \"a\"}\n\x00\x01\x02")).err().unwrap();
        assert!(
            matches!(binary, ParseError::Binary(ref at) if at == "NUL byte at offset 14"),
            "{binary:?}"
        );
        // A Shift_JIS corpus (as Windows' Japanese tools save one) and a UTF-16 one.
        let text = "{\"text\": \"東京都の天気は晴れ\"}\n".repeat(3);
        let shift_jis = encoding_rs::SHIFT_JIS.encode(&text).0.into_owned();
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        for bytes in [shift_jis, utf16] {
            let whole = AutoParser.parse(&raw_for_test("b.jsonl", bytes.clone())).unwrap();
            assert_eq!(whole.documents[0].blocks[0].text, "東京都の天気は晴れ");
            let streamed = open(bytes).unwrap().next().unwrap().unwrap();
            assert_same_documents(&streamed.documents.iter().collect::<Vec<_>>(), &whole.documents);
            assert_eq!(failures_of(&streamed), failures_of(&whole));
        }
    }

    #[test]
    fn a_file_of_nothing_fails_as_such() {
        assert!(matches!(
            stream("e.jsonl", Vec::new()).next(),
            Some(Err(ParseError::Empty))
        ));
        assert!(matches!(
            stream("e.jsonl", gzip(b"")).next(),
            Some(Err(ParseError::Empty))
        ));
        assert!(matches!(
            stream("b.jsonl", b"\n  \n\n".to_vec()).next(),
            Some(Err(ParseError::NoText))
        ));
        let mut blank = stream("b.jsonl", b"\n".to_vec());
        assert!(blank.next().is_some_and(|r| r.is_err()));
        assert!(blank.next().is_none());
    }
}
