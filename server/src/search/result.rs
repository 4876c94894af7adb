//! The seed-000 result records: the `Chunk` golden record and the `RetrievalResult`
//! container, with quarry's `mode`, `underfilled` and (when asked for) `facets` added.

use quarry_indexer::index::{char_ranges, QueryTerms};
use quarry_indexer::parse::ContentType;
use serde::{Deserialize, Serialize};

use crate::search::facets::Facets;
use crate::search::loaded::LoadedSnapshot;
use crate::search::spelling::Suggestion;

/// The golden record: one retrieved chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChunkResult {
    pub chunk_id: String,
    /// Never null: the chunk text.
    pub content: String,
    /// In [0, 1], higher is more relevant.
    pub score: f32,
    pub file_name: String,
    /// 1-based, or null for unpaged formats.
    pub page_number: Option<u32>,
    /// "report.pdf, p.15", "notes.md", "corpus.jsonl#doc-7", "meeting.vtt, 12:34" (where in
    /// a recording a transcript's chunk starts).
    pub display_citation: String,
    /// text, table, chart or image.
    #[schemars(with = "String")]
    pub content_type: ContentType,
    pub content_subtype: Option<String>,
    /// For tables: the rows as CSV-like text.
    pub structured_data: Option<String>,
    pub image_storage_uri: Option<String>,
    pub image_url: Option<String>,
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

/// The container a search returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RetrievalResult {
    pub chunks: Vec<ChunkResult>,
    /// Sum of the model tokens of the returned chunks.
    pub total_tokens: u64,
    pub query: String,
    pub backend: String,
    pub success: bool,
    pub error_message: Option<String>,
    /// vector, keyword or hybrid.
    pub mode: String,
    /// True when fewer than top_k chunks matched (filters, min_score, a small corpus).
    pub underfilled: bool,
    /// Documents by value of each field the request named in `facets` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facets: Option<Facets>,
    /// The query the search ran with when the request asked the LLM to rewrite it
    /// (`rewrite_query`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_query: Option<String>,
    /// The query with its words no live row holds corrected, when the request asked
    /// (`suggest`) and some were (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Suggestion>,
}

/// The citation label of a chunk: its file's name, and the part of the file it is from (a
/// JSONL record, a mailbox's message, a page, the minute of a recording); a file inside a ZIP
/// archive by its path there.
pub fn display_citation(file_name: &str, uri: &str, page: Option<u32>, start_seconds: Option<u32>) -> String {
    let base = match uri.rsplit_once('#') {
        Some((_, fragment)) => match fragment.strip_prefix("member=") {
            Some(path) => path.to_string(),
            None => format!("{file_name}#{fragment}"),
        },
        None => file_name.to_string(),
    };
    match (page, start_seconds) {
        (Some(page), _) => format!("{base}, p.{page}"),
        (None, Some(seconds)) => format!("{base}, {}", clock_time(seconds)),
        (None, None) => base,
    }
}

/// A time into a recording as players show it: `m:ss`, or `h:mm:ss` from the first hour on.
fn clock_time(seconds: u32) -> String {
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match hours {
        0 => format!("{minutes}:{seconds:02}"),
        _ => format!("{hours}:{minutes:02}:{seconds:02}"),
    }
}

/// Builds the golden record of chunk `row` with its final score and lane details.
pub fn chunk_result(
    snapshot: &LoadedSnapshot,
    row: usize,
    score: f32,
    lanes: serde_json::Map<String, serde_json::Value>,
) -> ChunkResult {
    let chunk = snapshot.chunk(row);
    let document = snapshot.document_of(row);
    let mut metadata = serde_json::Map::new();
    metadata.insert("doc_id".into(), document.doc_id.clone().into());
    metadata.insert("uri".into(), document.uri.clone().into());
    metadata.insert("title".into(), document.title.clone().into());
    metadata.insert("source".into(), document.source.clone().into());
    metadata.insert("tags".into(), document.tags.clone().into());
    metadata.insert("heading_path".into(), chunk.heading_path.clone().into());
    metadata.insert("chunk_index".into(), chunk.index.into());
    metadata.insert("token_count".into(), chunk.token_count.into());
    if let Some(seconds) = chunk.start_seconds {
        metadata.insert("start_seconds".into(), seconds.into());
    }
    metadata.insert("snapshot_version".into(), snapshot.manifest.version.clone().into());
    if let Ok(serde_json::Value::Object(extra)) = serde_json::from_str(&document.metadata) {
        if !extra.is_empty() {
            metadata.insert("document".into(), serde_json::Value::Object(extra));
        }
    }
    metadata.extend(lanes);
    let is_table = chunk.content_type == ContentType::Table;
    ChunkResult {
        chunk_id: chunk.chunk_id.clone(),
        content: chunk.text.clone(),
        score: score.clamp(0.0, 1.0),
        file_name: document.file_name.clone(),
        page_number: chunk.page,
        display_citation: display_citation(&document.file_name, &document.uri, chunk.page, chunk.start_seconds),
        content_type: chunk.content_type,
        content_subtype: None,
        structured_data: is_table.then(|| chunk.text.clone()),
        image_storage_uri: None,
        image_url: None,
        metadata,
    }
}

/// Adds `metadata.highlights` to a chunk: `[start, end)` character (Unicode scalar) ranges
/// of its content's words that match a word of the query `terms` were read from, in order.
pub fn add_highlights(chunk: &mut ChunkResult, terms: &mut QueryTerms) {
    let ranges = char_ranges(&chunk.content, &terms.spans_in(&chunk.content));
    let ranges: Vec<serde_json::Value> = ranges
        .into_iter()
        .map(|r| serde_json::json!([r.start, r.end]))
        .collect();
    chunk.metadata.insert("highlights".into(), ranges.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations() {
        assert_eq!(
            display_citation("report.pdf", "s3://b/report.pdf", Some(15), None),
            "report.pdf, p.15"
        );
        assert_eq!(
            display_citation("notes.md", "file:///x/notes.md", None, None),
            "notes.md"
        );
        assert_eq!(
            display_citation("corpus.jsonl", "file:///x/corpus.jsonl#d7", None, None),
            "corpus.jsonl#d7"
        );
        assert_eq!(
            display_citation("deck.ppt", "file:///x/handover.zip#member=2026/deck.ppt", Some(2), None),
            "2026/deck.ppt, p.2"
        );
        assert_eq!(
            display_citation(
                "Inbox.mbox",
                "file:///x/a.zip#member=mail/Inbox.mbox#message=3",
                None,
                None
            ),
            "Inbox.mbox#message=3"
        );
        assert_eq!(
            display_citation("meeting.vtt", "s3://b/meeting.vtt", None, Some(754)),
            "meeting.vtt, 12:34"
        );
        assert_eq!(
            display_citation("lecture.srt", "file:///x/lecture.srt", None, Some(3723)),
            "lecture.srt, 1:02:03"
        );
        assert_eq!(
            display_citation("a.vtt", "file:///x/a.vtt", None, Some(5)),
            "a.vtt, 0:05"
        );
    }
}
