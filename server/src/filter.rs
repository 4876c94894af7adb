//! Filters on document fields — source, tags (any of), file_name, doc_id, metadata
//! key = value — turned into the set of chunk rows both lanes may return.

use std::collections::BTreeMap;

use quarry_indexer::index::RowSet;
use quarry_indexer::snapshot::DocumentRecord;
use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::loaded::LoadedSnapshot;

/// What a result's document must match. Within a field any listed value matches; across
/// fields all must match. An empty filter matches everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    #[serde(default, deserialize_with = "one_or_many")]
    pub source: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub file_name: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub doc_id: Vec<String>,
    /// Document metadata key -> required value.
    #[serde(default)]
    pub metadata: BTreeMap<String, serde_json::Value>,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(value) => vec![value],
        OneOrMany::Many(values) => values,
    })
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.source.is_empty() && self.tags.is_empty() && self.file_name.is_empty() && self.doc_id.is_empty() && self.metadata.is_empty()
    }

    /// Adds one `key=value[,value...]` filter (the CLI form); unknown keys are metadata keys
    /// (`metadata.key=value` also works).
    pub fn add(&mut self, spec: &str) -> Result<(), ServerError> {
        let (key, value) = spec
            .split_once('=')
            .ok_or_else(|| ServerError::InvalidRequest(format!("filter `{spec}` is not key=value")))?;
        let values = || value.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect::<Vec<_>>();
        match key.trim() {
            "source" => self.source.extend(values()),
            "tags" | "tag" => self.tags.extend(values()),
            "file_name" => self.file_name.extend(values()),
            "doc_id" => self.doc_id.extend(values()),
            other => {
                let key = other.strip_prefix("metadata.").unwrap_or(other);
                if key.is_empty() {
                    return Err(ServerError::InvalidRequest(format!("filter `{spec}` has an empty key")));
                }
                self.metadata.insert(key.to_string(), serde_json::Value::String(value.to_string()));
            }
        }
        Ok(())
    }

    /// Does a document match?
    pub fn matches(&self, document: &DocumentRecord) -> bool {
        let any = |wanted: &[String], value: &str| wanted.is_empty() || wanted.iter().any(|w| w == value);
        if !any(&self.source, &document.source) || !any(&self.file_name, &document.file_name) || !any(&self.doc_id, &document.doc_id) {
            return false;
        }
        if !self.tags.is_empty() && !document.tags.iter().any(|t| self.tags.contains(t)) {
            return false;
        }
        if self.metadata.is_empty() {
            return true;
        }
        let metadata: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&document.metadata).unwrap_or_default();
        self.metadata.iter().all(|(key, wanted)| metadata.get(key).is_some_and(|actual| values_equal(actual, wanted)))
    }

    /// The rows of `snapshot` a search may return: matching documents, tombstones removed.
    /// `None` means every row (no filter and no tombstones).
    pub fn allowed_rows(&self, snapshot: &LoadedSnapshot) -> Option<RowSet> {
        if self.is_empty() && snapshot.tombstoned.is_empty() {
            return None;
        }
        let mut allowed = RowSet::empty(snapshot.row_count());
        for segment in &snapshot.segments {
            let matching: Vec<bool> = segment.data.documents.iter().map(|d| self.matches(d)).collect();
            for (local, &doc) in segment.data.doc_of_row.iter().enumerate() {
                let row = segment.offset + local;
                if matching[doc as usize] && !snapshot.tombstoned.contains(row) {
                    allowed.insert(row);
                }
            }
        }
        Some(allowed)
    }
}

/// Metadata equality that lets a CLI string match a JSON number or boolean.
fn values_equal(actual: &serde_json::Value, wanted: &serde_json::Value) -> bool {
    if actual == wanted {
        return true;
    }
    match (actual, wanted) {
        (actual, serde_json::Value::String(text)) if !actual.is_string() => actual.to_string() == *text,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(source: &str, tags: &[&str], metadata: &str) -> DocumentRecord {
        DocumentRecord {
            doc_id: "d1".into(),
            uri: "s3://b/report.pdf".into(),
            file_name: "report.pdf".into(),
            title: String::new(),
            source: source.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            content_hash: String::new(),
            size: 0,
            etag: None,
            chunk_count: 1,
            metadata: metadata.into(),
            ingested_at: Default::default(),
        }
    }

    #[test]
    fn cli_specs_and_matching() {
        let mut filters = Filters::default();
        filters.add("tags=finance,legal").unwrap();
        filters.add("source=s3").unwrap();
        filters.add("year=2024").unwrap();
        assert!(filters.matches(&doc("s3", &["legal"], r#"{"year": 2024}"#)));
        assert!(!filters.matches(&doc("s3", &["hr"], r#"{"year": 2024}"#)), "no tag in common");
        assert!(!filters.matches(&doc("file", &["legal"], r#"{"year": 2024}"#)), "wrong source");
        assert!(!filters.matches(&doc("s3", &["legal"], r#"{"year": 2023}"#)), "wrong metadata");
        assert!(!filters.matches(&doc("s3", &["legal"], "{}")), "missing metadata");
        assert!(Filters::default().matches(&doc("x", &[], "{}")));
        assert!(filters.add("oops").is_err());
    }

    #[test]
    fn json_form_accepts_one_or_many_and_rejects_unknown_fields() {
        let filters: Filters = serde_json::from_str(r#"{"tags": "a", "source": ["s3", "file"], "metadata": {"k": true}}"#).unwrap();
        assert_eq!(filters.tags, ["a"]);
        assert_eq!(filters.source, ["s3", "file"]);
        assert!(serde_json::from_str::<Filters>(r#"{"colour": "red"}"#).is_err());
    }
}
