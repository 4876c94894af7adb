//! Mailboxes (`.mbox`: the messages a mail client or an export keeps in one file, each after a
//! `From ` separator line; Thunderbird's folders, Google Takeout's mail, Unix spools): one
//! document per message, read as an `.eml` is ([`super::email`]), named
//! `<file>#message=<n>` (its place in the mailbox, from 1: a mailbox grows at its end, so the
//! messages before keep their names). The mailbox is split here, where it is read (a
//! separator is a `From ` line that carries a time; `>From ` lines are unquoted, mboxrd), and
//! its messages are parsed in parallel by the parser that read it: each message a worker
//! parses has the worker's deadline and memory limit to itself, so a whole export in one file
//! is read message by message. A message that cannot be read fails alone, as the mailbox's
//! failed item; the others are indexed.

use std::io::BufRead;

use bytes::Bytes;
use chrono::{DateTime, NaiveDateTime, Utc};
use rayon::prelude::*;

use super::detect::is_header_field;
use super::jsonl_stream::read_line_within;
use super::message_body::date_value;
use super::{Format, ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Messages a batch holds at most...
pub const BATCH_MESSAGES: usize = 1024;
/// ...and bytes of messages (a larger message makes a batch alone).
pub const BATCH_BYTES: usize = 32 << 20;

/// The messages of a mailbox, parsed by `members` (this process's parser, or the one that
/// sends them to workers), a batch at a time, as a mailbox read as a stream is.
pub(super) fn parse(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    let mut messages = Messages::new(&raw.bytes[..], usize::MAX);
    let mut parsed = Parsed::default();
    while !messages.ended() {
        // Bytes in memory read without error.
        let (batch, _) = messages.next_batch();
        parsed.append(read_messages(raw, batch, members));
    }
    match messages.split() {
        0 => Err(no_message_found()),
        _ => Ok(parsed),
    }
}

/// What a file in which no separator line was found fails as.
pub(super) fn no_message_found() -> ParseError {
    ParseError::Corrupt(
        "MBOX: no message found (each message of a mailbox begins with a line \"From <sender> <date>\")".into(),
    )
}

/// A message of a mailbox as split: its place (from 1), its bytes after its separator line
/// (quoted `From ` lines unquoted; at most the splitter's limit of them), their whole length,
/// and the time its separator line gives.
pub(super) struct Message {
    number: usize,
    bytes: Vec<u8>,
    length: usize,
    time: Option<DateTime<Utc>>,
}

/// `batch`'s messages of `mailbox`, parsed in parallel by `members` as `.eml` files named
/// `<mailbox>#message=<n>`; a message that cannot be read (or was longer than kept) fails
/// alone.
pub(super) fn read_messages(mailbox: &RawDocument, batch: Vec<Message>, members: &dyn Parser) -> Parsed {
    let read: Vec<Parsed> = batch
        .into_par_iter()
        .map(
            |Message {
                 number,
                 bytes,
                 length,
                 time,
             }| {
                let uri = format!("{}#message={number}", mailbox.uri);
                let failed = |reason: String| {
                    Parsed::failed(ItemFailure {
                        reason: format!("message {number}: {reason}"),
                        uri: uri.clone(),
                    })
                };
                if length > bytes.len() {
                    return failed(format!(
                        "{length} bytes, longer than the {} MiB a message of a mailbox read as a stream may hold",
                        bytes.len() >> 20
                    ));
                }
                let message = mailbox.inner(uri.clone(), mailbox.relative_path.clone(), Bytes::from(bytes));
                let mut parsed = members
                    .parse_as(Format::Email, &message)
                    .unwrap_or_else(|error| failed(error.as_item_reason()));
                // A message without a `Date` field is dated by its separator line.
                for document in &mut parsed.documents {
                    if let (false, Some(time)) = (document.metadata.contains_key("date"), time) {
                        document.metadata.insert("date".into(), date_value(time));
                    }
                }
                parsed
            },
        )
        .collect();
    read.into_iter().collect()
}

/// A mailbox's messages split from its bytes as they are read, a batch at a time, each kept to
/// `most` bytes; bytes before the first separator line are no message.
pub(super) struct Messages<R> {
    lines: R,
    most: usize,
    /// The message being read, once a separator line was.
    current: Option<Message>,
    line: Vec<u8>,
    /// Separator lines read so far.
    split: usize,
    ended: bool,
}

/// Bytes of a line kept past a message's limit, enough to tell a separator line.
const SEPARATOR_BYTES: usize = 1024;

impl<R: BufRead> Messages<R> {
    pub fn new(lines: R, most: usize) -> Self {
        Self {
            lines,
            most,
            current: None,
            line: Vec::new(),
            split: 0,
            ended: false,
        }
    }

    /// Messages found so far (whole or being read).
    pub fn split(&self) -> usize {
        self.split
    }

    /// Whether the input ended, or failed.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The next batch of messages ([`BATCH_MESSAGES`] or [`BATCH_BYTES`] at most), in order,
    /// and the error the input failed with, if it did: the message being read then is left
    /// out, and the input has ended.
    pub fn next_batch(&mut self) -> (Vec<Message>, Option<std::io::Error>) {
        let (mut batch, mut bytes) = (Vec::new(), 0);
        while !self.ended && batch.len() < BATCH_MESSAGES && bytes < BATCH_BYTES {
            let room = match &self.current {
                Some(message) => self.most.saturating_sub(message.bytes.len()),
                None => 0,
            };
            let (length, ended_by_newline) =
                match read_line_within(&mut self.lines, &mut self.line, room.max(SEPARATOR_BYTES)) {
                    Ok(Some(read)) => read,
                    Ok(None) => {
                        self.ended = true;
                        batch.extend(self.current.take());
                        break;
                    }
                    Err(error) => {
                        self.ended = true;
                        return (batch, Some(error));
                    }
                };
            let line = &self.line[..];
            if is_separator(line) {
                self.split += 1;
                let next = Message {
                    number: self.split,
                    bytes: Vec::new(),
                    length: 0,
                    time: separator_time(line),
                };
                if let Some(message) = self.current.replace(next) {
                    bytes += message.bytes.len();
                    batch.push(message);
                }
                continue;
            }
            let Some(message) = self.current.as_mut() else {
                continue;
            };
            let quotes = usize::from(is_quoted_from(line));
            let line = &line[quotes..];
            message.length += length - quotes + usize::from(ended_by_newline);
            message.bytes.extend_from_slice(&line[..line.len().min(room)]);
            if ended_by_newline && message.bytes.len() < self.most {
                message.bytes.push(b'\n');
            }
        }
        (batch, None)
    }
}

/// Whether `line` separates two messages: `From `, then a sender and a date with its time
/// (`From - Tue Dec 01 10:00:00 2026`, `From alice@example.com Tue Dec  1 10:00:00 2026`), so
/// that a body's unquoted "From now on, ..." does not split its message.
fn is_separator(line: &[u8]) -> bool {
    line.starts_with(b"From ")
        && line.split(u8::is_ascii_whitespace).any(|word| {
            let mut parts = word.split(|b| *b == b':');
            let two_digits = |p: &[u8]| p.len() == 2 && p.iter().all(u8::is_ascii_digit);
            let (first, second) = (parts.next(), parts.next());
            first.is_some_and(two_digits) && second.is_some_and(two_digits) && parts.all(two_digits)
        })
}

/// The time a separator line gives (`From - Tue Dec  1 10:00:00 2026`: asctime's month, day,
/// time and year, a zone between time and year skipped), read as UTC, as mail systems write it.
fn separator_time(line: &[u8]) -> Option<DateTime<Utc>> {
    let line = std::str::from_utf8(line).ok()?;
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    let at = words.iter().rposition(|w| w.len() >= 5 && w.as_bytes()[2] == b':')?;
    let (month, day) = (words.get(at.checked_sub(2)?)?, words.get(at - 1)?);
    let year = words[at + 1..]
        .iter()
        .find(|w| w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))?;
    let time = match words[at].len() {
        5 => format!("{}:00", words[at]),
        _ => words[at].to_string(),
    };
    let written = format!("{month} {day} {time} {year}");
    let time = NaiveDateTime::parse_from_str(&written, "%b %d %H:%M:%S %Y").ok()?;
    Some(time.and_utc())
}

/// Whether `line` is a quoted `From ` line (`>From `, `>>From `, ...), which loses one `>`.
fn is_quoted_from(line: &[u8]) -> bool {
    let quotes = line.iter().take_while(|b| **b == b'>').count();
    quotes > 0 && line[quotes..].starts_with(b"From ")
}

/// Whether a file begins as a mailbox: a `From ` separator line that carries a time
/// (`From - Tue Dec 01 10:00:00 2026`, `From alice@example.com Tue Dec  1 10:00:00 2026`), then a
/// header field.
pub(super) fn looks_like_a_mailbox(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4 << 10)]);
    let mut lines = head.lines();
    let (Some(separator), Some(field)) = (lines.next(), lines.next()) else {
        return false;
    };
    is_separator(separator.as_bytes()) && is_header_field(field)
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, failures_of, outline_of, raw_for_test, AutoParser, Format, Parser};

    const INSPECTION: &[u8] = include_bytes!("../../tests/fixtures/inspection.eml");

    /// A mailbox of three messages: the fixture message, one whose body quotes a `From ` line
    /// and one that is no message at all.
    fn mailbox() -> Vec<u8> {
        let mut mbox = b"From hanako@example.jp Tue Nov  3 09:30:00 2026\n".to_vec();
        mbox.extend_from_slice(INSPECTION);
        mbox.extend_from_slice(
            b"\nFrom - Wed Nov  4 10:00:00 2026\n\
              From: ops@example.com\nTo: team@example.com\nDate: Wed, 4 Nov 2026 10:00:00 +0000\n\n\
              Valve 7 replaced.\n\n>From now on, check it weekly.\n\n\
              From nobody Thu Nov  5 11:00:00 2026\n\n\n",
        );
        mbox
    }

    #[test]
    fn each_message_is_a_document_and_a_broken_one_fails_alone() {
        let parsed = AutoParser.parse(&raw_for_test("archive.mbox", mailbox())).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/archive.mbox#message=1",
                "memory://test/archive.mbox#message=2"
            ]
        );
        let first = &parsed.documents[0];
        assert_eq!(first.title, "配管点検の報告");
        assert!(first
            .blocks
            .iter()
            .any(|b| b.text == "配管の腐食は見られませんでした。"));
        // The untitled message is named by the mailbox and its place; its quoted line unquoted.
        let second = &parsed.documents[1];
        assert_eq!(second.title, "archive, message 2");
        let title = vec!["archive, message 2"];
        assert_eq!(
            outline_of(second)
                .into_iter()
                .map(|(t, p, _)| (t, p))
                .collect::<Vec<_>>(),
            vec![
                (
                    "From: ops@example.com\nTo: team@example.com\nDate: 2026-11-04T10:00:00Z",
                    title.clone()
                ),
                ("Valve 7 replaced.", title.clone()),
                ("From now on, check it weekly.", title),
            ]
        );
        assert_eq!(first.metadata["date"], "2026-11-03T00:30:00Z", "its own Date field");
        assert_eq!(second.metadata["date"], "2026-11-04T10:00:00Z");
        assert_ne!(first.doc_id, second.doc_id);
        assert_ne!(first.content_hash, second.content_hash);
        // The first message's locked attachment and the third message fail alone, named.
        assert_eq!(
            failures_of(&parsed),
            [
                (
                    "memory://test/archive.mbox#message=1#attachment=plan.docx",
                    "attachment plan.docx: DOCX is encrypted (saved with a password, or under DRM). Please upload an unlocked version."
                ),
                (
                    "memory://test/archive.mbox#message=3",
                    "message 3: no message headers found"
                ),
            ]
        );
    }

    #[test]
    fn a_message_without_a_date_is_dated_by_its_separator_line() {
        let mbox =
            b"From ops@example.com Tue Dec  1 22:05:09 2026\nFrom: ops@example.com\nSubject: pier\n\nOpen at six.\n\n\
            From - Wed Dec 02 07:30 +0100 2026\nSubject: ferry\n\nHourly.\n";
        let parsed = AutoParser.parse(&raw_for_test("spool.mbox", &mbox[..])).unwrap();
        let dates: Vec<&serde_json::Value> = parsed.documents.iter().map(|d| &d.metadata["date"]).collect();
        assert_eq!(dates, ["2026-12-01T22:05:09Z", "2026-12-02T07:30:00Z"]);
        assert_eq!(super::separator_time(b"From nobody Thu Feb 30 11:00:00 2026\n"), None);
        assert_eq!(super::separator_time(b"From nobody 11:00:00\n"), None);
    }

    #[test]
    fn a_mailbox_is_known_by_its_separator_line() {
        let mbox = mailbox();
        assert_eq!(detect_format("Inbox", &mbox).unwrap(), Format::Mbox);
        assert_eq!(detect_format("All mail.mbox", b"x").unwrap(), Format::Mbox);
        // Prose that begins with "From " is text.
        let prose = b"From the minutes of 3 May:\nAction: buy valves\n";
        assert_eq!(detect_format("minutes", prose).unwrap(), Format::Text);
        let empty = AutoParser
            .parse(&raw_for_test("empty.mbox", &b"no separator here\n"[..]))
            .unwrap_err();
        assert!(
            empty.detail().unwrap().starts_with("MBOX: no message found"),
            "{empty:?}"
        );
    }
}
