//! A loaded segment's values of a facet field, interned on a facet's first use of the field:
//! each distinct value once, and each document's value numbers. A facet then counts its
//! documents by number into a vector (no hashing, no allocation per document) and looks up
//! only the distinct values it lists. The first [`MAX_CACHED_FIELDS`] fields asked for are
//! kept while the segment is loaded (8 bytes a document, and each distinct value once);
//! others are interned per call.

use std::collections::HashMap;
use std::sync::Arc;

use quarry_indexer::snapshot::DocumentRecord;
use serde_json::Value;

use crate::search::kept_columns::KeptColumns;
use crate::search::metadata_columns::MetadataColumns;

/// Fields kept per segment.
pub const MAX_CACHED_FIELDS: usize = 16;

/// A field a facet counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FacetField {
    Source,
    FileName,
    Tags,
    Metadata(String),
}

impl FacetField {
    /// `source`, `file_name`, `tags` or `metadata.<key>`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "source" => Ok(Self::Source),
            "file_name" => Ok(Self::FileName),
            "tags" => Ok(Self::Tags),
            _ => match name.strip_prefix("metadata.") {
                Some(key) if !key.is_empty() => Ok(Self::Metadata(key.to_string())),
                _ => Err(format!(
                    "facets: cannot count `{name}` (source, file_name, tags, or metadata.<key>)"
                )),
            },
        }
    }
}

/// One field's values in a segment's documents.
#[derive(Debug, PartialEq)]
pub struct FacetColumn {
    /// Each distinct value by number, as a key ([`value_of`] gives the value back): a
    /// string's text; any other value's JSON after a `\u{1}` (so the string "3" and the
    /// number 3 stay two values). Values are told apart and ordered by their keys.
    pub keys: Vec<String>,
    /// Document `d`'s value numbers are `numbers[offsets[d]..offsets[d + 1]]`, each once.
    offsets: Vec<u32>,
    numbers: Vec<u32>,
}

/// A string's key: its text, or its JSON after `\u{1}` when the text itself starts so.
fn text_key(text: &str) -> std::borrow::Cow<'_, str> {
    match text.starts_with('\u{1}') {
        true => format!("\u{1}{}", Value::from(text)).into(),
        false => text.into(),
    }
}

/// The value a [`FacetColumn`] key stands for.
pub fn value_of(key: &str) -> Value {
    match key.strip_prefix('\u{1}') {
        Some(json) => serde_json::from_str(json).unwrap_or_else(|_| Value::String(key.to_string())),
        None => Value::String(key.to_string()),
    }
}

impl FacetColumn {
    /// The value numbers of document `doc`.
    pub fn of(&self, doc: usize) -> &[u32] {
        &self.numbers[self.offsets[doc] as usize..self.offsets[doc + 1] as usize]
    }

    fn build(field: &FacetField, documents: &[DocumentRecord], metadata: &MetadataColumns) -> Self {
        match field {
            FacetField::Source => Self::of_texts(documents, |d| std::slice::from_ref(&d.source)),
            FacetField::FileName => Self::of_texts(documents, |d| std::slice::from_ref(&d.file_name)),
            FacetField::Tags => Self::of_texts(documents, |d| &d.tags),
            FacetField::Metadata(key) => Self::of_metadata(&metadata.column(key, documents)),
        }
    }

    fn of_texts(documents: &[DocumentRecord], texts: impl Fn(&DocumentRecord) -> &[String]) -> Self {
        let mut column = Interning::new();
        for document in documents {
            texts(document).iter().for_each(|text| column.add(&text_key(text)));
            column.end_document();
        }
        column.finish()
    }

    /// Each scalar of a list value, the value itself otherwise; null and no value give none.
    fn of_metadata(values: &[Option<Value>]) -> Self {
        let mut column = Interning::new();
        for value in values {
            let scalars: &[Value] = match value {
                Some(Value::Array(list)) => list,
                Some(value) => std::slice::from_ref(value),
                None => &[],
            };
            for scalar in scalars {
                match scalar {
                    Value::Null => {}
                    Value::String(text) => column.add(&text_key(text)),
                    other => column.add(&format!("\u{1}{other}")),
                }
            }
            column.end_document();
        }
        column.finish()
    }
}

/// A column being interned.
struct Interning {
    numbers_of: HashMap<String, u32>,
    keys: Vec<String>,
    offsets: Vec<u32>,
    numbers: Vec<u32>,
}

impl Interning {
    fn new() -> Self {
        Self {
            numbers_of: HashMap::new(),
            keys: Vec::new(),
            offsets: vec![0],
            numbers: Vec::new(),
        }
    }

    /// Adds a value of the current document (once, however often it is added).
    fn add(&mut self, key: &str) {
        let number = match self.numbers_of.get(key) {
            Some(&number) => number,
            None => {
                let number = self.keys.len() as u32;
                self.numbers_of.insert(key.to_string(), number);
                self.keys.push(key.to_string());
                number
            }
        };
        let start = *self.offsets.last().expect("offsets start with 0") as usize;
        if !self.numbers[start..].contains(&number) {
            self.numbers.push(number);
        }
    }

    /// The current document is complete; the next one starts.
    fn end_document(&mut self) {
        self.offsets.push(self.numbers.len() as u32);
    }

    fn finish(self) -> FacetColumn {
        FacetColumn {
            keys: self.keys,
            offsets: self.offsets,
            numbers: self.numbers,
        }
    }
}

pub struct FacetColumns {
    columns: KeptColumns<FacetField, FacetColumn>,
}

impl Default for FacetColumns {
    fn default() -> Self {
        Self {
            columns: KeptColumns::new(MAX_CACHED_FIELDS),
        }
    }
}

impl FacetColumns {
    /// `field`'s column over `documents` (the segment's own, in order).
    pub fn column(
        &self,
        field: &FacetField,
        documents: &[DocumentRecord],
        metadata: &MetadataColumns,
    ) -> Arc<FacetColumn> {
        self.columns
            .get_or_build(field, || FacetColumn::build(field, documents, metadata))
    }

    /// Fields held.
    pub fn cached_fields(&self) -> usize {
        self.columns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(tags: &[&str], metadata: &str) -> DocumentRecord {
        crate::search::filter::tests::doc("s3", tags, metadata)
    }

    #[test]
    fn values_are_numbered_once_and_each_document_holds_each_once() {
        let documents = [
            document(&["b", "a", "b"], r#"{"team": ["x", 3, null, "3", 3]}"#),
            document(&[], r#"{"team": null}"#),
            document(&["a"], r#"{"team": [true, "\u00013"]}"#),
        ];
        let (metadata, columns) = (MetadataColumns::default(), FacetColumns::default());
        let tags = columns.column(&FacetField::Tags, &documents, &metadata);
        assert_eq!(
            (tags.keys.clone(), tags.of(0), tags.of(1), tags.of(2)),
            (vec!["b".to_string(), "a".into()], &[0, 1][..], &[][..], &[1][..])
        );
        let team = columns.column(&FacetField::Metadata("team".into()), &documents, &metadata);
        assert_eq!(team.keys, ["x", "\u{1}3", "3", "\u{1}true", "\u{1}\"\\u00013\""]);
        let values: Vec<Value> = team.keys.iter().map(|key| value_of(key)).collect();
        assert_eq!(
            values,
            [
                Value::from("x"),
                serde_json::json!(3),
                Value::from("3"),
                Value::Bool(true),
                Value::from("\u{1}3")
            ]
        );
        assert_eq!(
            (team.of(0), team.of(1), team.of(2)),
            (&[0, 1, 2][..], &[][..], &[3, 4][..])
        );
        assert!(
            Arc::ptr_eq(&tags, &columns.column(&FacetField::Tags, &documents, &metadata)),
            "interned once"
        );
        for i in 0..MAX_CACHED_FIELDS + 3 {
            columns.column(&FacetField::Metadata(format!("k{i}")), &documents, &metadata);
        }
        assert_eq!(columns.cached_fields(), MAX_CACHED_FIELDS);
        let none = FacetColumns::default().column(&FacetField::Source, &[], &metadata);
        assert!(none.keys.is_empty());
    }

    #[test]
    fn names() {
        assert_eq!(
            FacetField::parse("metadata.team"),
            Ok(FacetField::Metadata("team".into()))
        );
        assert_eq!(FacetField::parse("tags"), Ok(FacetField::Tags));
        assert!(FacetField::parse("doc_id")
            .unwrap_err()
            .contains("cannot count `doc_id`"));
        assert!(FacetField::parse("metadata.").is_err());
    }
}
