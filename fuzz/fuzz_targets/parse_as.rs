//! Shared by the parser targets: the bytes parsed in process as a file of that name (what a
//! worker process runs), so a crash, a hang or a runaway allocation shows up to the fuzzer.

use quarry_indexer::parse::{AutoParser, Parser};
use quarry_indexer::source::RawDocument;

pub fn parse_as(file_name: &str, data: &[u8]) {
    let raw = RawDocument {
        uri: format!("memory://fuzz/{file_name}"),
        relative_path: file_name.to_string(),
        bytes: bytes::Bytes::copy_from_slice(data),
        etag: None,
        size: data.len() as u64,
        source: "memory".into(),
        content_type: None,
    };
    // A refusal is a fine answer; only a crash, a hang or memory past the limit is a finding.
    let _ = AutoParser.parse(&raw);
}
