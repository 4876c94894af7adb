//! A mailbox read as a stream (past `--max-file-mb`, or compressed: Google Takeout's
//! `All mail Including Spam and Trash.mbox`, a Thunderbird folder of years of mail), a batch of
//! messages at a time: split as the file is read (and inflated) by the splitter a mailbox read
//! whole is split by ([`super::mbox`]), each batch's messages parsed in parallel by the run's
//! parser (a worker's deadline and memory limit to each) into the same documents, URIs
//! (`<file>#message=<n>`) and failures. A message is kept to [`MAX_MESSAGE_BYTES`]; a longer
//! one fails alone and is read past. Where the bytes stop being readable partway (a damaged
//! compressed stream, a source that fails), the messages before are kept.

use std::io::{BufReader, Read};
use std::sync::Arc;

use super::mbox::{no_message_found, read_messages, Messages};
use super::record_stream::{batch_or_end, inflating};
use super::{ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// The longest message kept, as `--max-file-mb`'s default: a message with attachments larger
/// than a file may be fails alone.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

pub struct MailboxStream {
    /// The file (its bytes empty): each document's URI, name, etag and source.
    file: RawDocument,
    messages: Messages<BufReader<Box<dyn Read + Send>>>,
    members: Arc<dyn Parser>,
    yielded: usize,
}

impl MailboxStream {
    /// Reads `file`'s messages from `bytes` (inflated first where they are compressed), each
    /// parsed by `members`.
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>, members: Arc<dyn Parser>) -> Result<Self, ParseError> {
        let lines = BufReader::with_capacity(1 << 20, inflating(bytes, file.size)?);
        Ok(Self {
            file,
            messages: Messages::new(lines, MAX_MESSAGE_BYTES),
            members,
            yielded: 0,
        })
    }
}

impl Iterator for MailboxStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.messages.ended() {
            let (batch, error) = self.messages.next_batch();
            let mut parsed = read_messages(&self.file, batch, &*self.members);
            if let Some(error) = error {
                // The messages before are kept; the file fails from the one being read on.
                let place = match self.messages.split() {
                    0 => "before the first message".to_string(),
                    n => format!("in message {n}"),
                };
                parsed.failures.push(ItemFailure {
                    uri: self.file.uri.clone(),
                    reason: format!("reading stopped {place}: {error}"),
                });
            }
            let ended = self.messages.ended();
            if let Some(item) = batch_or_end(parsed, &mut self.yielded, ended, no_message_found) {
                return Some(item);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::{bzip2, gzip};
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::{failures_of, raw_for_test, AutoParser};

    const INSPECTION: &[u8] = include_bytes!("../../tests/fixtures/inspection.eml");

    fn stream(name: &str, bytes: Vec<u8>) -> MailboxStream {
        let file = raw_for_test(name, Vec::new());
        MailboxStream::open(file, Box::new(std::io::Cursor::new(bytes)), Arc::new(AutoParser)).unwrap()
    }

    const PREAMBLE: &[u8] = b"Text before the first separator is no message.\n";

    /// A mailbox of `count` messages: every seventh the fixture message (with its locked
    /// attachment), every eleventh with a quoted `From ` line and no `Date` field, every
    /// thirteenth no message at all; CRLF line ends in some.
    fn mailbox(count: usize) -> Vec<u8> {
        let mut mbox = PREAMBLE.to_vec();
        for i in 1..=count {
            mbox.extend_from_slice(
                format!("From sender{i}@example.com Tue Nov  3 09:{:02}:00 2026\n", i % 60).as_bytes(),
            );
            if i % 7 == 0 {
                mbox.extend_from_slice(INSPECTION);
                mbox.push(b'\n');
            } else if i % 13 == 0 {
                mbox.extend_from_slice(b"\n\n");
            } else if i % 11 == 0 {
                mbox.extend_from_slice(
                    format!("From: ops{i}@example.com\r\nSubject: valve {i}\r\n\r\nReplaced.\r\n>From now on, weekly.\r\n\r\n")
                        .as_bytes(),
                );
            } else {
                mbox.extend_from_slice(
                    format!(
                        "From: ops{i}@example.com\nSubject: valve {i}\nDate: Wed, 4 Nov 2026 10:00:00 +0000\n\n\
                         Valve {i} replaced at the north pier.\n\n"
                    )
                    .as_bytes(),
                );
            }
        }
        mbox
    }

    #[test]
    fn messages_read_as_a_stream_are_the_documents_of_the_mailbox_read_whole() {
        let text = mailbox(2100);
        let whole = AutoParser.parse(&raw_for_test("archive.mbox", text.clone())).unwrap();
        assert_eq!(whole.documents.len(), 2100 - 2100 / 13 + 2100 / 91);
        for bytes in [text.clone(), gzip(&text), bzip2(&text)] {
            let batches: Vec<Parsed> = stream("archive.mbox", bytes).map(Result::unwrap).collect();
            assert_eq!(batches.len(), 3, "1,024 messages a batch");
            let streamed: Parsed = batches.into_iter().collect();
            let documents: Vec<_> = streamed.documents.iter().collect();
            assert_same_documents(&documents, &whole.documents);
            assert_eq!(failures_of(&streamed), failures_of(&whole));
        }
        let eleventh = &whole.documents.iter().find(|d| d.uri.ends_with("#message=11")).unwrap();
        let texts: Vec<&str> = eleventh.blocks.iter().map(|b| b.text.as_str()).collect();
        assert!(
            texts.iter().any(|t| t.ends_with("Replaced.\nFrom now on, weekly.")),
            "{texts:?}"
        );
        assert_eq!(
            eleventh.metadata["date"], "2026-11-03T09:11:00Z",
            "dated by its separator"
        );
        assert_eq!(
            failures_of(&whole)[..2],
            [
                (
                    "memory://test/archive.mbox#message=7#attachment=plan.docx",
                    "attachment plan.docx: DOCX is encrypted (saved with a password, or under DRM). Please upload an unlocked version."
                ),
                ("memory://test/archive.mbox#message=13", "message 13: no message headers found"),
            ]
        );
    }

    #[test]
    fn a_message_past_the_limit_fails_alone_and_damage_keeps_the_messages_before() {
        let mut text = mailbox(3);
        text.extend_from_slice(b"From big@example.com Tue Nov  3 10:00:00 2026\nSubject: big\n\n");
        let line = vec![b'a'; 1 << 20];
        for _ in 0..(MAX_MESSAGE_BYTES >> 20) + 1 {
            text.extend_from_slice(&line);
            text.push(b'\n');
        }
        text.extend_from_slice(&mailbox(2)[PREAMBLE.len()..]);
        let streamed: Parsed = stream("big.mbox", text).map(Result::unwrap).collect();
        let uris: Vec<&str> = streamed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/big.mbox#message=1",
                "memory://test/big.mbox#message=2",
                "memory://test/big.mbox#message=3",
                "memory://test/big.mbox#message=5",
                "memory://test/big.mbox#message=6"
            ]
        );
        let length = "Subject: big\n\n".len() + (line.len() + 1) * ((MAX_MESSAGE_BYTES >> 20) + 1);
        assert_eq!(
            failures_of(&streamed),
            [(
                "memory://test/big.mbox#message=4",
                format!("message 4: {length} bytes, longer than the 256 MiB a message of a mailbox read as a stream may hold").as_str()
            )]
        );
        // A gzip stream cut partway: the messages read before are kept, the file fails from there.
        let compressed = gzip(&mailbox(600));
        let cut = compressed[..compressed.len() / 2].to_vec();
        let streamed: Parsed = stream("cut.mbox", cut).map(Result::unwrap).collect();
        assert!(streamed.documents.len() > 200, "{}", streamed.documents.len());
        let last = streamed.failures.last().unwrap();
        assert!(last.reason.starts_with("reading stopped in message "), "{last:?}");
        assert_eq!(last.uri, "memory://test/cut.mbox");
        // Cut before its first message ends: the file fails, saying where.
        let streamed: Parsed = stream("cut.mbox", compressed[..30].to_vec())
            .map(Result::unwrap)
            .collect();
        assert!(streamed.documents.is_empty());
        let only = &streamed.failures[0];
        assert!(
            only.reason.starts_with("reading stopped before the first message: "),
            "{only:?}"
        );
    }

    #[test]
    fn a_stream_with_no_separator_fails_as_a_mailbox_read_whole_does() {
        for bytes in [b"no separator here\n".to_vec(), Vec::new()] {
            let error = stream("empty.mbox", bytes).next().unwrap().unwrap_err();
            assert!(
                error.detail().unwrap().starts_with("MBOX: no message found"),
                "{error:?}"
            );
        }
        // A separator and no message: the message fails, as read whole.
        let only = b"From nobody Thu Nov  5 11:00:00 2026\n".to_vec();
        let streamed: Parsed = stream("one.mbox", only.clone()).map(Result::unwrap).collect();
        let whole = AutoParser.parse(&raw_for_test("one.mbox", only)).unwrap();
        assert_eq!(failures_of(&streamed), failures_of(&whole));
        assert_eq!(streamed.failures.len(), 1);
    }
}
