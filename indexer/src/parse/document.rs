//! The parsed form of a document: metadata plus typed blocks of text.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::source::RawDocument;

/// What a block holds (the seed-000 `content_type` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ContentType {
    #[default]
    Text,
    Table,
    Chart,
    Image,
}

impl ContentType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Table => "table",
            Self::Chart => "chart",
            Self::Image => "image",
        }
    }
}

/// One unit of text: a paragraph, list item, table row, page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Block {
    pub text: String,
    /// 1-based page number, for paged formats.
    pub page: Option<u32>,
    /// Headings above the block, outermost first.
    pub heading_path: Vec<String>,
    pub kind: ContentType,
    /// For table rows: the header line, repeated at the top of every chunk.
    pub header: Option<String>,
    /// For a recording's transcript: where in the recording the block's words are said, in
    /// the order of the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub times: Vec<TimeMark>,
}

/// From byte `at` of a block's text on, the words are said `seconds` into the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeMark {
    pub at: u32,
    pub seconds: u32,
}

impl Block {
    pub fn text(text: impl Into<String>, heading_path: &[String]) -> Self {
        Self {
            text: text.into(),
            heading_path: heading_path.to_vec(),
            ..Default::default()
        }
    }

    /// A block of `kind` under `heading_path`.
    pub fn of_kind(text: String, kind: ContentType, heading_path: Vec<String>) -> Self {
        Self {
            text,
            heading_path,
            kind,
            ..Default::default()
        }
    }
}

/// A parsed document, ready to chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Stable id: the first 16 bytes of sha256(uri), hex.
    pub doc_id: String,
    pub uri: String,
    pub file_name: String,
    pub title: String,
    /// `file`, `s3` or `memory`.
    pub source: String,
    pub tags: Vec<String>,
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// sha256 of the bytes this document came from, hex.
    pub content_hash: String,
    pub size: u64,
    pub etag: Option<String>,
    pub blocks: Vec<Block>,
    /// What was read less than whole while the document itself was read (a damaged styles
    /// part, pages whose text could not be extracted), for the run report: at most
    /// [`MAX_WARNINGS`], each cut at [`MAX_WARNING_CHARS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Warnings a document keeps at most (later ones are dropped).
pub const MAX_WARNINGS: usize = 8;
/// Characters of one warning kept (it may quote what the file holds).
pub const MAX_WARNING_CHARS: usize = 400;

/// The stable document id for a URI.
pub fn doc_id_for(uri: &str) -> String {
    hex::encode(&Sha256::digest(uri.as_bytes())[..16])
}

/// The URI of the file a document (or failed item) came from: a part of a file (one JSONL
/// line) has the URI `<file>#<item>`.
pub fn file_uri_of(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(file, _)| file)
}

/// The URI schemes of documents a server added through its API: files uploaded to a
/// collection (`upload://<collection>/<file id>/<name>`) and RAG ingests (`rag://<source>/<path>`).
pub const API_URI_SCHEMES: [&str; 2] = ["upload://", "rag://"];

/// Whether a document was added through a server's API rather than read from a batch run's
/// source. A batch run keeps such documents: they are not its source's to remove.
pub fn added_through_api(uri: &str) -> bool {
    API_URI_SCHEMES.iter().any(|scheme| uri.starts_with(scheme))
}

impl Document {
    /// A document for a whole raw file.
    pub fn from_raw(raw: &RawDocument, title: String, blocks: Vec<Block>) -> Self {
        Self::from_part(raw, raw.uri.clone(), &raw.bytes, title, blocks)
    }

    /// A document for part of a file (one JSONL line): its own URI and content hash.
    pub fn from_part(raw: &RawDocument, uri: String, content: &[u8], title: String, blocks: Vec<Block>) -> Self {
        let file_name = raw
            .relative_path
            .rsplit('/')
            .next()
            .unwrap_or(&raw.relative_path)
            .to_string();
        Self {
            doc_id: doc_id_for(&uri),
            uri,
            file_name,
            title,
            source: raw.source.clone(),
            tags: Vec::new(),
            metadata: Default::default(),
            content_hash: crate::snapshot::sha256_hex(content),
            size: content.len() as u64,
            etag: raw.etag.clone(),
            blocks,
            warnings: Vec::new(),
        }
    }

    /// The document with `warnings` noted, each as [`Document::warn`] notes it.
    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = String>) -> Self {
        warnings.into_iter().for_each(|warning| self.warn(warning));
        self
    }

    /// Notes that part of the file was read less than whole (see [`Document::warnings`]).
    pub fn warn(&mut self, warning: impl Into<String>) {
        let warning: String = warning.into();
        if self.warnings.len() >= MAX_WARNINGS {
            return;
        }
        self.warnings.push(match warning.char_indices().nth(MAX_WARNING_CHARS) {
            None => warning,
            Some((cut, _)) => format!("{}…", &warning[..cut]),
        });
    }

    /// The file stem, the fallback title.
    pub fn stem_of(raw: &RawDocument) -> String {
        let name = raw.relative_path.rsplit('/').next().unwrap_or(&raw.relative_path);
        name.rsplit_once('.').map(|(stem, _)| stem).unwrap_or(name).to_string()
    }
}

/// The documents and failures of many, in order (an archive's files, a mailbox's messages).
impl FromIterator<Parsed> for Parsed {
    fn from_iter<I: IntoIterator<Item = Parsed>>(parts: I) -> Self {
        let mut all = Parsed::default();
        parts.into_iter().for_each(|one| all.append(one));
        all
    }
}

/// One item inside a file (a JSONL line) that failed while the rest of the file did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemFailure {
    pub uri: String,
    pub reason: String,
}

/// The documents a file yielded, and the items in it that failed.
#[derive(Debug, Default)]
pub struct Parsed {
    pub documents: Vec<Document>,
    pub failures: Vec<ItemFailure>,
}

impl Parsed {
    pub fn one(document: Document) -> Self {
        Self {
            documents: vec![document],
            failures: Vec::new(),
        }
    }

    /// A file's item that failed, and nothing else.
    pub fn failed(failure: ItemFailure) -> Self {
        Self {
            documents: Vec::new(),
            failures: vec![failure],
        }
    }

    /// Adds `other`'s documents and failures after these (an archive's files, a mailbox's messages).
    pub fn append(&mut self, other: Parsed) {
        self.documents.extend(other.documents);
        self.failures.extend(other.failures);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::raw_for_test;

    #[test]
    fn a_documents_warnings_are_bounded_in_count_and_length() {
        let raw = raw_for_test("a.pdf", "x");
        let mut document = Document::from_raw(&raw, "a".into(), Vec::new());
        document.warn("é".repeat(MAX_WARNING_CHARS + 50));
        assert_eq!(document.warnings[0].chars().count(), MAX_WARNING_CHARS + 1);
        assert!(document.warnings[0].ends_with("é…"));
        (0..MAX_WARNINGS + 3).for_each(|i| document.warn(format!("page {i}")));
        assert_eq!(document.warnings.len(), MAX_WARNINGS);
        assert_eq!(
            document.warnings[MAX_WARNINGS - 1],
            format!("page {}", MAX_WARNINGS - 2)
        );
        // Carried through a worker's reply as JSON; a document without warnings writes none.
        let json = serde_json::to_string(&document).unwrap();
        assert_eq!(serde_json::from_str::<Document>(&json).unwrap(), document);
        let plain = Document::from_raw(&raw, "a".into(), Vec::new());
        assert!(!serde_json::to_string(&plain).unwrap().contains("warnings"));
    }
}
