//! Facet counts: for each field a search names in `facets` (`source`, `file_name`, `tags`,
//! `metadata.<key>`), how many documents hold each value, most first. They are counted over
//! the documents the search could return: the live documents its filters allow, and in
//! keyword mode only those with a chunk holding a query word (the vector lane ranks every
//! row, so vector and hybrid count every allowed document). A document counts once per
//! value; a list value (tags, a metadata array) counts each of its values. In a search of
//! several collections each collection's documents count on their own.

use std::collections::{BTreeMap, HashMap};

use quarry_indexer::index::RowSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ServerError;
use crate::loaded::{LoadedSegment, LoadedSnapshot};

/// Most fields one search may count.
pub const MAX_FACETS: usize = 10;
/// Most values one facet may list.
pub const MAX_FACET_SIZE: usize = 1000;
/// Values a facet lists unless the request says otherwise.
pub const DEFAULT_FACET_SIZE: usize = 10;

/// One value and the documents holding it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FacetValue {
    /// As the documents hold it (a string for source, file_name and tags; any JSON scalar
    /// for metadata).
    pub value: Value,
    pub count: u64,
}

/// One field's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facet {
    /// Most documents first, then by value; at most the request's `facet_size`.
    pub values: Vec<FacetValue>,
    /// Values left out of `values` by `facet_size`.
    pub more_values: u64,
    /// Counted documents without the field (no tags; no such metadata key, or null).
    pub missing: u64,
    /// Documents counted.
    pub documents: u64,
}

/// Facets by the names the request gave.
pub type Facets = BTreeMap<String, Facet>;

/// A field a facet counts.
#[derive(Debug, Clone, PartialEq)]
enum FacetField {
    Source,
    FileName,
    Tags,
    Metadata(String),
}

impl FacetField {
    fn parse(name: &str) -> Result<Self, String> {
        match name {
            "source" => Ok(Self::Source),
            "file_name" => Ok(Self::FileName),
            "tags" => Ok(Self::Tags),
            _ => match name.strip_prefix("metadata.") {
                Some(key) if !key.is_empty() => Ok(Self::Metadata(key.to_string())),
                _ => Err(format!("facets: cannot count `{name}` (source, file_name, tags, or metadata.<key>)")),
            },
        }
    }
}

/// Checks the facet names and size of a request.
pub fn validate(names: &[String], size: usize) -> Result<(), ServerError> {
    let bad = |m: String| Err(ServerError::InvalidRequest(m));
    if names.len() > MAX_FACETS {
        return bad(format!("facets: at most {MAX_FACETS} fields, got {}", names.len()));
    }
    for (i, name) in names.iter().enumerate() {
        FacetField::parse(name).map_err(ServerError::InvalidRequest)?;
        if names[..i].contains(name) {
            return bad(format!("facets: `{name}` is named twice"));
        }
    }
    if size == 0 || size > MAX_FACET_SIZE {
        return bad(format!("facet_size must be between 1 and {MAX_FACET_SIZE}, got {size}"));
    }
    Ok(())
}

/// A value as counted: text borrowed from the documents, any other JSON value by its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key<'a> {
    Text(&'a str),
    Json(String),
}

impl Key<'_> {
    fn value(&self) -> Value {
        match self {
            Key::Text(text) => Value::String((*text).to_string()),
            Key::Json(json) => serde_json::from_str(json).unwrap_or(Value::Null),
        }
    }

    fn order_text(&self) -> &str {
        match self {
            Key::Text(text) => text,
            Key::Json(json) => json,
        }
    }
}

/// One field's counts while counting.
#[derive(Default)]
struct Tally<'a> {
    counts: HashMap<Key<'a>, u64>,
    missing: u64,
    documents: u64,
}

impl<'a> Tally<'a> {
    /// Counts one document holding `keys` (duplicates counted once).
    fn add(&mut self, mut keys: Vec<Key<'a>>) {
        self.documents += 1;
        if keys.is_empty() {
            self.missing += 1;
            return;
        }
        if keys.len() > 1 {
            let mut seen = Vec::with_capacity(keys.len());
            keys.retain(|key| {
                let new = !seen.contains(key);
                if new {
                    seen.push(key.clone());
                }
                new
            });
        }
        for key in keys {
            *self.counts.entry(key).or_default() += 1;
        }
    }

    /// Adds another tally's counts, its keys copied.
    fn absorb(&mut self, other: Tally<'_>) {
        self.documents += other.documents;
        self.missing += other.missing;
        for (key, count) in other.counts {
            *self.counts.entry(owned(key)).or_default() += count;
        }
    }

    fn into_facet(self, size: usize) -> Facet {
        let mut counted: Vec<(Key<'a>, u64)> = self.counts.into_iter().collect();
        counted.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.order_text().cmp(b.0.order_text())));
        let more_values = counted.len().saturating_sub(size) as u64;
        counted.truncate(size);
        Facet { values: counted.into_iter().map(|(key, count)| FacetValue { value: key.value(), count }).collect(), more_values, missing: self.missing, documents: self.documents }
    }
}

/// The keys of a metadata value: each scalar of a list, the value itself otherwise; none for
/// null or no value.
fn metadata_keys(value: Option<&Value>) -> Vec<Key<'_>> {
    fn key(value: &Value) -> Option<Key<'_>> {
        match value {
            Value::Null => None,
            Value::String(text) => Some(Key::Text(text)),
            other => Some(Key::Json(other.to_string())),
        }
    }
    match value {
        None => Vec::new(),
        Some(Value::Array(values)) => values.iter().filter_map(key).collect(),
        Some(value) => key(value).into_iter().collect(),
    }
}

/// Counts facets over several snapshots' documents.
pub struct FacetCounter<'a> {
    fields: Vec<(String, FacetField, Tally<'a>)>,
    size: usize,
}

impl<'a> FacetCounter<'a> {
    /// A counter of the named fields (checked by [`validate`] first).
    pub fn new(names: &[String], size: usize) -> Result<Self, ServerError> {
        validate(names, size)?;
        let fields = names.iter().map(|name| Ok((name.clone(), FacetField::parse(name).map_err(ServerError::InvalidRequest)?, Tally::default()))).collect::<Result<_, ServerError>>()?;
        Ok(Self { fields, size })
    }

    /// Counts the documents of `snapshot` with a row in `allowed` (every live row when None)
    /// and, when `matching` is given, in that segment's set of matching rows too (local
    /// numbers; one set per segment, in order).
    pub fn count(&mut self, snapshot: &'a LoadedSnapshot, allowed: Option<&RowSet>, matching: Option<&[RowSet]>) {
        for (at, segment) in snapshot.segments.iter().enumerate() {
            let counted = counted_documents(snapshot, segment, allowed, matching.map(|sets| &sets[at]));
            let documents = &segment.data.documents;
            for (_, field, tally) in &mut self.fields {
                match field {
                    FacetField::Source => counted.iter().for_each(|&doc| tally.add(vec![Key::Text(&documents[doc].source)])),
                    FacetField::FileName => counted.iter().for_each(|&doc| tally.add(vec![Key::Text(&documents[doc].file_name)])),
                    FacetField::Tags => counted.iter().for_each(|&doc| tally.add(documents[doc].tags.iter().map(|tag| Key::Text(tag)).collect())),
                    FacetField::Metadata(key) => {
                        // The column may be a copy made for this call: counted here, and only
                        // its distinct values copied into the field's tally.
                        let column = segment.data.metadata_columns.column(key, documents);
                        let mut here = Tally::default();
                        counted.iter().for_each(|&doc| here.add(metadata_keys(column[doc].as_ref())));
                        tally.absorb(here);
                    }
                }
            }
        }
    }

    /// The counts, by field name.
    pub fn finish(self) -> Facets {
        let size = self.size;
        self.fields.into_iter().map(|(name, _, tally)| (name, tally.into_facet(size))).collect()
    }
}

/// A key that outlives the value it was read from.
fn owned<'b>(key: Key<'_>) -> Key<'b> {
    match key {
        Key::Text(text) => Key::Json(Value::String(text.to_string()).to_string()),
        Key::Json(json) => Key::Json(json),
    }
}

/// The segment's documents (local numbers, ascending) with a live row that `allowed`
/// (global numbers) and `matching` (local numbers) both hold.
fn counted_documents(snapshot: &LoadedSnapshot, segment: &LoadedSegment, allowed: Option<&RowSet>, matching: Option<&RowSet>) -> Vec<usize> {
    let data = &segment.data;
    let mut counted = vec![false; data.documents.len()];
    for (local, &doc) in data.doc_of_row.iter().enumerate() {
        let row = segment.offset + local;
        let live = match allowed {
            Some(allowed) => allowed.contains(row),
            None => !snapshot.tombstoned.contains(row),
        };
        if live && matching.is_none_or(|m| m.contains(local)) {
            counted[doc as usize] = true;
        }
    }
    counted.iter().enumerate().filter(|(_, &c)| c).map(|(doc, _)| doc).collect()
}

/// Facets of nothing counted: every named field with no values.
pub fn empty_facets(names: &[String]) -> Facets {
    names.iter().map(|name| (name.clone(), Tally::default().into_facet(0))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes_are_checked() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(validate(&names(&["tags", "source", "file_name", "metadata.team"]), 10).is_ok());
        for (list, size, says) in [
            (names(&["doc_id"]), 10, "cannot count `doc_id`"),
            (names(&["team"]), 10, "metadata.<key>"),
            (names(&["metadata."]), 10, "cannot count"),
            (names(&["tags", "tags"]), 10, "named twice"),
            (names(&["tags"]), 0, "facet_size must be between 1 and 1000, got 0"),
            (names(&["tags"]), 1001, "got 1001"),
            ((0..11).map(|i| format!("metadata.k{i}")).collect(), 10, "at most 10 fields"),
        ] {
            let error = validate(&list, size).unwrap_err().to_string();
            assert!(error.contains(says), "{list:?}: {error}");
        }
    }

    #[test]
    fn a_tally_counts_documents_once_per_value_and_orders_most_first() {
        let mut tally = Tally::default();
        tally.add(vec![Key::Text("b"), Key::Text("a"), Key::Text("b")]);
        tally.add(vec![Key::Text("b")]);
        tally.add(vec![Key::Json("2024".into())]);
        tally.add(vec![Key::Text("c")]);
        tally.add(Vec::new());
        let facet = tally.into_facet(3);
        let values: Vec<(Value, u64)> = facet.values.iter().map(|v| (v.value.clone(), v.count)).collect();
        assert_eq!(values, [(Value::from("b"), 2), (serde_json::json!(2024), 1), (Value::from("a"), 1)]);
        assert_eq!((facet.more_values, facet.missing, facet.documents), (1, 1, 5));
    }

    #[test]
    fn metadata_values_count_each_scalar_of_a_list_and_nothing_for_null() {
        let json = serde_json::json!(["x", 3, null, true]);
        let keys = metadata_keys(Some(&json));
        assert_eq!(keys, [Key::Text("x"), Key::Json("3".into()), Key::Json("true".into())]);
        assert!(metadata_keys(Some(&Value::Null)).is_empty());
        assert!(metadata_keys(None).is_empty());
        assert_eq!(owned(Key::Text("x")).value(), Value::from("x"));
        let (mut all, mut part) = (Tally::default(), Tally::default());
        part.add(vec![Key::Text("x")]);
        part.add(Vec::new());
        all.add(vec![Key::Json("\"x\"".into())]);
        all.absorb(part);
        let facet = all.into_facet(10);
        assert_eq!((facet.values, facet.missing, facet.documents), (vec![FacetValue { value: Value::from("x"), count: 2 }], 1, 3));
    }
}
