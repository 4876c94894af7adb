#![no_main]
//! Any bytes as a file read as a stream (what a file past `--max-file-mb`, or compressed, is
//! read as): the first byte picks the kind, JSONL, a MediaWiki dump, a Stack Exchange table, a
//! mailbox, an Evernote export, CSV or TSV; every batch read to the end, in process.

use std::sync::Arc;

use quarry_indexer::parse::{AutoParser, Parser, RecordStream, StreamKind};
use quarry_indexer::source::{RawDocument, StreamedFile};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (name, kind) = [
        ("fuzz.jsonl", StreamKind::Jsonl),
        ("fuzz.xml", StreamKind::MediaWikiDump),
        ("Posts.xml", StreamKind::StackExchangeTable),
        ("fuzz.mbox", StreamKind::Mailbox),
        ("fuzz.enex", StreamKind::EvernoteExport),
        ("fuzz.csv", StreamKind::Table { delimiter: b',' }),
        ("fuzz.tsv", StreamKind::Table { delimiter: b'\t' }),
    ][pick as usize % 7];
    let file = RawDocument {
        uri: format!("memory://fuzz/{name}"),
        relative_path: name.to_string(),
        bytes: bytes::Bytes::new(),
        etag: None,
        size: rest.len() as u64,
        source: "memory".into(),
        content_type: None,
    };
    let streamed = StreamedFile {
        file,
        bytes: Box::new(std::io::Cursor::new(rest.to_vec())),
    };
    let members: Arc<dyn Parser> = Arc::new(AutoParser);
    // A refusal is a fine answer; only a crash, a hang or memory past the limit is a finding.
    if let Ok(stream) = RecordStream::open(streamed, kind, &members) {
        stream.for_each(drop);
    }
});
