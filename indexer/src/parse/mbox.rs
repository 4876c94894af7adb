//! Mailboxes (`.mbox`: the messages a mail client or an export keeps in one file, each after a
//! `From ` separator line; Thunderbird's folders, Google Takeout's mail, Unix spools): one
//! document per message, read as an `.eml` is ([`super::email`]), named
//! `<file>#message=<n>` (its place in the mailbox, from 1: a mailbox grows at its end, so the
//! messages before keep their names). `>From ` lines are unquoted (mboxrd). A message that
//! cannot be read fails alone, as the mailbox's failed item; the others are indexed. Messages
//! are read in parallel (a mailbox may be a whole export, one file).

use mail_parser::mailbox::mbox::MessageIterator;
use rayon::prelude::*;

use super::email::read_message_file;
use super::message_body::Reading;
use super::{Document, ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    // Reading from a slice cannot fail: each item is a message.
    let messages: Vec<_> = MessageIterator::new(raw.bytes.as_ref()).flatten().collect();
    if messages.is_empty() {
        return Err(ParseError::Corrupt(
            "MBOX: no message found (each message of a mailbox begins with a line \"From <sender> <date>\")".into(),
        ));
    }
    // A mailbox may hold a whole export: its messages are read in parallel, kept in order.
    let read: Vec<Parsed> = messages
        .par_iter()
        .enumerate()
        .map(|(index, message)| {
            let number = index + 1;
            let uri = format!("{}#message={number}", raw.uri);
            let reading = Reading::of_part(raw, uri.clone(), message.contents());
            let untitled = || format!("{}, message {number}", Document::stem_of(raw));
            read_message_file(reading, message.contents(), untitled).unwrap_or_else(|error| Parsed {
                documents: Vec::new(),
                failures: vec![ItemFailure {
                    uri,
                    reason: format!("message {number}: {}", error.as_item_reason()),
                }],
            })
        })
        .collect();
    let mut parsed = Parsed::default();
    for one in read {
        parsed.documents.extend(one.documents);
        parsed.failures.extend(one.failures);
    }
    Ok(parsed)
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
    let carries_a_time = separator.split_whitespace().any(|word| {
        let parts: Vec<&str> = word.split(':').collect();
        parts.len() >= 2
            && parts
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()))
    });
    let field_name = field.split_once(':').map(|(name, _)| name).unwrap_or_default();
    separator.starts_with("From ")
        && carries_a_time
        && !field_name.is_empty()
        && field_name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
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
