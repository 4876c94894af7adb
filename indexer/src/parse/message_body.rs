//! What an e-mail message is read into, whichever file it comes from (`.eml` through
//! [`super::email`], Outlook's `.msg` through [`super::msg`]): a block of who sent it, to whom
//! and when; its bodies by paragraphs (plain text) or through the HTML reader; its attached
//! documents parsed as their formats under "<subject> / <file name>", an attachment that fails
//! listed as the message's failed item, one that is no document (a picture) left out.

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use super::html::read_page;
use super::{AutoParser, Block, Document, ItemFailure, Parsed, Parser};
use crate::source::RawDocument;

/// A message's fields a search filters by, kept in its document's metadata: `from` (the
/// sender's address), `from_name`, `to` and `cc` (lists of addresses; addresses lower-cased),
/// `date` (in UTC, `2026-11-03T00:30:00Z`: times in one zone sort as strings in time order, as
/// the filters' `$gte` and `$lt` compare them) and `message_id`. Those it has no value for are
/// left out.
#[derive(Debug, Default)]
pub(super) struct Envelope {
    pub from: Option<String>,
    pub from_name: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub date: Option<DateTime<Utc>>,
    pub message_id: Option<String>,
}

impl Envelope {
    /// An address as the metadata keeps it: trimmed and lower-cased; none where it holds no `@`
    /// (an Exchange directory name, a display name).
    pub fn address(address: &str) -> Option<String> {
        let address = address.trim().trim_start_matches('<').trim_end_matches('>');
        address.contains('@').then(|| address.to_lowercase())
    }

    fn into_metadata(self) -> Map<String, Value> {
        let text = |value: Option<String>| value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let list = |values: Vec<String>| (!values.is_empty()).then(|| Value::from(values));
        [
            ("from", text(self.from).map(Value::from)),
            ("from_name", text(self.from_name).map(Value::from)),
            ("to", list(self.to)),
            ("cc", list(self.cc)),
            ("date", self.date.map(date_value)),
            ("message_id", text(self.message_id).map(Value::from)),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_string(), value?)))
        .collect()
    }
}

/// A message's time as its metadata's `date` holds it: RFC 3339 in UTC, to the second.
pub(super) fn date_value(date: DateTime<Utc>) -> Value {
    Value::from(date.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// What a message is read into.
pub(super) struct Reading<'a> {
    /// The message: a file, or one message of a mailbox (its URI then names its place).
    raw: &'a RawDocument,
    blocks: Vec<Block>,
    failures: Vec<ItemFailure>,
    metadata: Map<String, Value>,
}

impl<'a> Reading<'a> {
    /// A file that is one message (or one message of a mailbox: its URI names its place).
    pub fn new(raw: &'a RawDocument) -> Self {
        Self {
            raw,
            blocks: Vec::new(),
            failures: Vec::new(),
            metadata: Map::new(),
        }
    }

    /// The message's own envelope (not a forwarded message's), for its document's metadata.
    pub fn envelope(&mut self, envelope: Envelope) {
        self.metadata = envelope.into_metadata();
    }

    /// The block of who sent the message, to whom and when: its fields that have a value.
    pub fn header(&mut self, fields: [(&str, Option<String>); 4], path: &[String]) {
        let lines: Vec<String> = fields
            .into_iter()
            .filter_map(|(name, value)| Some(format!("{name}: {}", value.filter(|v| !v.trim().is_empty())?)))
            .collect();
        if !lines.is_empty() {
            self.blocks.push(Block::text(lines.join("\n"), path));
        }
    }

    /// A plain-text body, by paragraphs (the runs of lines between blank lines).
    pub fn text(&mut self, text: &str, path: &[String]) {
        let paragraphs = text.split("\n\n").flat_map(|p| p.split("\r\n\r\n"));
        for paragraph in paragraphs
            .map(|p| p.trim().replace("\r\n", "\n"))
            .filter(|p| !p.is_empty())
        {
            self.blocks.push(Block::text(paragraph, path));
        }
    }

    /// A body's blocks as another reader read them (an RTF body's paragraphs and tables).
    pub fn blocks(&mut self, blocks: Vec<Block>, path: &[String]) {
        self.blocks.extend(blocks.into_iter().map(|block| Block {
            heading_path: path.to_vec(),
            ..block
        }));
    }

    /// An HTML body, through the HTML reader (its headings under `path`).
    pub fn html(&mut self, html: &str, path: &[String]) {
        for mut block in read_page(html).blocks {
            block.heading_path = [path, &block.heading_path].concat();
            self.blocks.push(block);
        }
    }

    /// The message's document, titled `title`, and its failed attachments.
    pub fn finish(self, title: String) -> Parsed {
        let mut document = Document::from_raw(self.raw, title, self.blocks);
        document.metadata = self.metadata;
        Parsed {
            documents: vec![document],
            failures: self.failures,
        }
    }

    /// An attached file, parsed as its format; one that is no document is left out.
    pub fn attached_file(&mut self, name: &str, bytes: &[u8], path: &[String]) {
        let attachment = Attachment {
            uri: format!("{}#attachment={name}", self.raw.uri),
            name,
            bytes: Bytes::copy_from_slice(bytes),
            content_type: None,
        };
        attachment.read_into(self.raw, &AutoParser, path, &mut self.blocks, &mut self.failures);
    }
}

/// A file attached to a document (a message, a note) and read into it.
pub(super) struct Attachment<'a> {
    /// Its URI, which names it as the document's part.
    pub uri: String,
    pub name: &'a str,
    pub bytes: Bytes,
    /// The type its document declares for it.
    pub content_type: Option<String>,
}

impl Attachment<'_> {
    /// The file parsed as its format by `parser` (that of the document's file, `raw`): its
    /// documents' blocks into `blocks` under `path` then its name, its failed items into
    /// `failures`; a file that is no document (a picture) left out, one that fails a failed item.
    pub fn read_into(
        self,
        raw: &RawDocument,
        parser: &dyn Parser,
        path: &[String],
        blocks: &mut Vec<Block>,
        failures: &mut Vec<ItemFailure>,
    ) {
        let attached = RawDocument {
            uri: self.uri.clone(),
            relative_path: self.name.to_string(),
            size: self.bytes.len() as u64,
            bytes: self.bytes,
            etag: None,
            source: raw.source.clone(),
            content_type: self.content_type,
        };
        match parser.parse(&attached) {
            Ok(parsed) => {
                let path = [path, &[self.name.to_string()]].concat();
                for document in parsed.documents {
                    for mut block in document.blocks {
                        block.heading_path = [&path[..], &block.heading_path].concat();
                        blocks.push(block);
                    }
                }
                failures.extend(parsed.failures);
            }
            Err(error) if error.is_no_document() => {}
            Err(error) => failures.push(ItemFailure {
                uri: self.uri,
                reason: format!("attachment {}: {}", self.name, error.as_item_reason()),
            }),
        }
    }
}
