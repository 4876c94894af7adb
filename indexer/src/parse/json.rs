//! JSON and JSONL. BEIR-style records `{_id, title, text, metadata, tags}` become one
//! document each (URI `<file>#<_id>`); any other JSON is flattened to `path: value` lines.
//! In JSONL a bad line fails alone, named by its line number. A speech service's transcript
//! (Whisper's, Amazon Transcribe's, Deepgram's, AssemblyAI's, Azure's, Google's, IBM
//! Watson's, Rev.ai's, Speechmatics') is read as subtitles are ([`super::speech_json`]);
//! Firefox's bookmarks as lines under their folders ([`super::firefox_bookmarks`]).

use serde_json::{Map, Value};

use super::firefox_bookmarks::{bookmark_blocks, is_bookmarks};
use super::speech_json::{speech_transcript, SpeechTranscript};
use super::subtitles::transcript_document;
use super::text::decode_raw_text;
use super::{Block, Document, ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

fn tags_of(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(|t| t.as_str()).map(str::to_string).collect(),
        Some(Value::String(list)) => list
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// A BEIR-style record, if the object has a string `text`.
fn record_document(
    raw: &RawDocument,
    object: &Map<String, Value>,
    fallback_id: String,
    content: &[u8],
) -> Option<Document> {
    let text = object.get("text")?.as_str()?;
    let id = match object.get("_id").or_else(|| object.get("id")) {
        Some(Value::String(id)) => id.clone(),
        Some(Value::Number(id)) => id.to_string(),
        _ => fallback_id,
    };
    let title = object
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    let heading: Vec<String> = if title.is_empty() {
        Vec::new()
    } else {
        vec![title.clone()]
    };
    let mut blocks = Vec::new();
    if !title.is_empty() {
        blocks.push(Block::text(title.clone(), &heading));
    }
    blocks.push(Block::text(text, &heading));
    let metadata = object
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut tags = tags_of(object.get("tags"));
    tags.extend(tags_of(metadata.get("tags")));
    let mut document = Document::from_part(raw, format!("{}#{id}", raw.uri), content, title, blocks);
    if document.title.is_empty() {
        document.title = id;
    }
    document.tags = tags;
    document.metadata = metadata;
    Some(document)
}

fn flatten(prefix: &str, value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, child, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), child, out);
            }
        }
        Value::Null => {}
        Value::String(s) if prefix.is_empty() => out.push(s.clone()),
        Value::String(s) => out.push(format!("{prefix}: {s}")),
        other if prefix.is_empty() => out.push(other.to_string()),
        other => out.push(format!("{prefix}: {other}")),
    }
}

fn flattened_document(raw: &RawDocument, uri: String, value: &Value, content: &[u8]) -> Document {
    let mut lines = Vec::new();
    flatten("", value, &mut lines);
    let title = value
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_part(raw, uri, content, title, vec![Block::text(lines.join("\n"), &[])]);
    document.tags = tags_of(value.get("tags"));
    document
}

pub(super) fn parse_json(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| ParseError::Corrupt(format!("invalid JSON at line {}, column {}: {e}", e.line(), e.column())))?;
    if let Some(transcript) = speech_transcript(&value) {
        return speech_document(raw, transcript);
    }
    if is_bookmarks(&value) {
        let blocks = bookmark_blocks(&value);
        if !blocks.is_empty() {
            return Ok(Parsed::one(Document::from_raw(raw, Document::stem_of(raw), blocks)));
        }
    }
    let records: Option<Vec<Document>> = match &value {
        Value::Object(object) => record_document(raw, object, Document::stem_of(raw), &raw.bytes).map(|d| vec![d]),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let content = serde_json::to_vec(item).unwrap_or_default();
                item.as_object()
                    .and_then(|o| record_document(raw, o, format!("{i}"), &content))
            })
            .collect(),
        _ => None,
    };
    Ok(match records {
        Some(documents) => Parsed {
            documents,
            failures: Vec::new(),
        },
        None => Parsed::one(flattened_document(raw, raw.uri.clone(), &value, &raw.bytes)),
    })
}

/// A speech service's transcript read as subtitles are, the language it names as metadata.
fn speech_document(raw: &RawDocument, transcript: SpeechTranscript) -> Result<Parsed, ParseError> {
    if transcript.cues.is_empty() {
        return Err(ParseError::NoTextIn("a speech transcript with no words said".into()));
    }
    let mut parsed = transcript_document(raw, &transcript.cues)?;
    if let Some(language) = transcript.language {
        for document in &mut parsed.documents {
            document.metadata.insert("language".into(), language.clone().into());
        }
    }
    Ok(parsed)
}

pub(super) fn parse_jsonl(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let mut parsed = Parsed::default();
    for (index, line) in text.lines().enumerate() {
        read_jsonl_line(raw, line, index + 1, &mut parsed);
    }
    Ok(parsed)
}

/// One line of a JSONL file, numbered `line_no` from 1: its document, or its failure, added to
/// `parsed` (a blank line adds nothing).
pub(super) fn read_jsonl_line(raw: &RawDocument, line: &str, line_no: usize, parsed: &mut Parsed) {
    if line.trim().is_empty() {
        return;
    }
    let uri_of_line = format!("{}#L{line_no}", raw.uri);
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => {
            let document = record_document(raw, &object, format!("L{line_no}"), line.as_bytes())
                .unwrap_or_else(|| flattened_document(raw, uri_of_line, &Value::Object(object), line.as_bytes()));
            if document.blocks.iter().all(|b| b.text.trim().is_empty()) {
                parsed.failures.push(ItemFailure {
                    uri: document.uri,
                    reason: format!("line {line_no}: no text content found"),
                });
            } else {
                parsed.documents.push(document);
            }
        }
        Ok(_) => parsed.failures.push(ItemFailure {
            uri: uri_of_line,
            reason: format!("line {line_no}: expected a JSON object"),
        }),
        Err(e) => parsed.failures.push(ItemFailure {
            uri: uri_of_line,
            reason: format!("line {line_no}: invalid JSON at column {}: {e}", e.column()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, raw_for_test, AutoParser, Parser};

    #[test]
    fn beir_lines_become_documents_and_bad_lines_fail_alone() {
        let body = "{\"_id\": \"d1\", \"title\": \"GPUs\", \"text\": \"GPUs are fast.\", \"metadata\": {\"tags\": [\"hw\"], \"year\": 2024}}\n\
                    {not json}\n\
                    {\"_id\": \"d2\", \"title\": \"\", \"text\": \"No title here.\"}\n\
                    [1, 2]\n";
        let parsed = AutoParser.parse(&raw_for_test("corpus.jsonl", body)).unwrap();
        assert_eq!(parsed.documents.len(), 2);
        let d1 = &parsed.documents[0];
        assert_eq!(d1.uri, "memory://test/corpus.jsonl#d1");
        assert_eq!(d1.title, "GPUs");
        assert_eq!(d1.tags, ["hw"]);
        assert_eq!(d1.metadata["year"], 2024);
        assert_eq!(
            d1.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(),
            ["GPUs", "GPUs are fast."]
        );
        assert_eq!(parsed.documents[1].title, "d2");
        assert_ne!(d1.doc_id, parsed.documents[1].doc_id);
        assert_eq!(parsed.failures.len(), 2);
        assert!(
            parsed.failures[0].reason.starts_with("line 2: invalid JSON"),
            "{:?}",
            parsed.failures
        );
        assert_eq!(parsed.failures[1].reason, "line 4: expected a JSON object");
    }

    #[test]
    fn other_json_is_flattened() {
        let doc = document_of(
            "cfg.json",
            r#"{"service": {"name": "quarry", "ports": [80, 443]}, "tags": ["ops"]}"#,
        );
        assert_eq!(
            doc.blocks[0].text,
            "service.name: quarry\nservice.ports[0]: 80\nservice.ports[1]: 443\ntags[0]: ops"
        );
        assert_eq!(doc.tags, ["ops"]);
        let err = AutoParser.parse(&raw_for_test("bad.json", "{\"a\": ")).unwrap_err();
        // Seed 004's message, with where the JSON broke kept apart.
        assert_eq!(
            err.to_string(),
            "File appears corrupted. Please verify the file and try again."
        );
        assert!(err.detail().unwrap().contains("invalid JSON at line 1"), "{err:?}");
    }
}
