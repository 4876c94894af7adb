//! Facet counts: for each field a search names in `facets` (`source`, `file_name`, `tags`,
//! `metadata.<key>`), how many documents hold each value, most first. They are counted over
//! the documents the search could return: the live documents its filters allow, and in
//! keyword mode only those with a chunk holding a query word (the vector lane ranks every
//! row, so vector and hybrid count every allowed document). A document counts once per
//! value; a list value (tags, a metadata array) counts each of its values. In a search of
//! several collections each collection's documents count on their own.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use quarry_indexer::index::RowSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ServerError;
use crate::search::facet_columns::{value_of, FacetColumn, FacetField};
use crate::search::loaded::{LoadedSegment, LoadedSnapshot};

/// Most fields one search may count.
pub const MAX_FACETS: usize = 10;
/// Most values one facet may list.
pub const MAX_FACET_SIZE: usize = 1000;
/// Values a facet lists unless the request says otherwise.
pub const DEFAULT_FACET_SIZE: usize = 10;

/// One value and the documents holding it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FacetValue {
    /// As the documents hold it (a string for source, file_name and tags; any JSON scalar
    /// for metadata).
    pub value: Value,
    pub count: u64,
}

/// One field's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// One field's counts while counting: each counted segment's column and its documents per
/// value number.
struct Tally {
    name: String,
    field: FacetField,
    parts: Vec<(Arc<FacetColumn>, Vec<u64>)>,
    missing: u64,
    documents: u64,
}

impl Tally {
    /// Counts `counted` (document numbers of the column's segment).
    fn count(&mut self, column: Arc<FacetColumn>, counted: &[usize]) {
        let mut counts = vec![0u64; column.keys.len()];
        for &doc in counted {
            let numbers = column.of(doc);
            if numbers.is_empty() {
                self.missing += 1;
            }
            numbers.iter().for_each(|&number| counts[number as usize] += 1);
        }
        self.documents += counted.len() as u64;
        self.parts.push((column, counts));
    }

    fn into_facet(self, size: usize) -> Facet {
        // (value key, documents) of each value some counted document holds; the parts'
        // values merged by key when there are several.
        let mut held: Vec<(&str, u64)> = match self.parts.as_slice() {
            [(column, counts)] => counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (column.keys[i].as_str(), n))
                .collect(),
            parts => {
                let mut merged: HashMap<&str, u64> = HashMap::new();
                for (column, counts) in parts {
                    for (i, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
                        *merged.entry(column.keys[i].as_str()).or_default() += n;
                    }
                }
                merged.into_iter().collect()
            }
        };
        let (values, more_values) = most_first(&mut held, size);
        Facet {
            values,
            more_values,
            missing: self.missing,
            documents: self.documents,
        }
    }
}

/// The first `size` of `held` by documents, most first, ties by key; and how many are left out.
fn most_first(held: &mut Vec<(&str, u64)>, size: usize) -> (Vec<FacetValue>, u64) {
    let order = |a: &(&str, u64), b: &(&str, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    let more_values = held.len().saturating_sub(size) as u64;
    if held.len() > size && size > 0 {
        held.select_nth_unstable_by(size - 1, order);
    }
    held.truncate(size);
    held.sort_unstable_by(order);
    (
        held.iter()
            .map(|&(key, count)| FacetValue {
                value: value_of(key),
                count,
            })
            .collect(),
        more_values,
    )
}

/// Counts facets over several snapshots' documents.
pub struct FacetCounter {
    tallies: Vec<Tally>,
    size: usize,
}

impl FacetCounter {
    /// A counter of the named fields (checked as [`validate`] does).
    pub fn new(names: &[String], size: usize) -> Result<Self, ServerError> {
        validate(names, size)?;
        let tallies = names
            .iter()
            .map(|name| {
                Ok(Tally {
                    name: name.clone(),
                    field: FacetField::parse(name).map_err(ServerError::InvalidRequest)?,
                    parts: Vec::new(),
                    missing: 0,
                    documents: 0,
                })
            })
            .collect::<Result<_, ServerError>>()?;
        Ok(Self { tallies, size })
    }

    /// Counts the documents of `snapshot` with a row in `allowed` (every live row when None)
    /// and, when `matching` is given, in that segment's set of matching rows too (local
    /// numbers; one set per segment, in order).
    pub fn count(&mut self, snapshot: &LoadedSnapshot, allowed: Option<&RowSet>, matching: Option<&[RowSet]>) {
        for (at, segment) in snapshot.segments.iter().enumerate() {
            let counted = counted_documents(snapshot, segment, allowed, matching.map(|sets| &sets[at]));
            let data = &segment.data;
            for tally in &mut self.tallies {
                let column = data
                    .facet_columns
                    .column(&tally.field, &data.documents, &data.metadata_columns);
                tally.count(column, &counted);
            }
        }
    }

    /// The counts, by field name.
    pub fn finish(self) -> Facets {
        let size = self.size;
        self.tallies
            .into_iter()
            .map(|tally| (tally.name.clone(), tally.into_facet(size)))
            .collect()
    }
}

/// The segment's documents (local numbers, ascending) with a live row that `allowed`
/// (global numbers) and `matching` (local numbers) both hold.
fn counted_documents(
    snapshot: &LoadedSnapshot,
    segment: &LoadedSegment,
    allowed: Option<&RowSet>,
    matching: Option<&RowSet>,
) -> Vec<usize> {
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
    counted
        .iter()
        .enumerate()
        .filter(|(_, &c)| c)
        .map(|(doc, _)| doc)
        .collect()
}

/// Facets of nothing counted: every named field with no values.
pub fn empty_facets(names: &[String]) -> Facets {
    names
        .iter()
        .map(|name| {
            (
                name.clone(),
                Facet {
                    values: Vec::new(),
                    more_values: 0,
                    missing: 0,
                    documents: 0,
                },
            )
        })
        .collect()
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
            (
                (0..11).map(|i| format!("metadata.k{i}")).collect(),
                10,
                "at most 10 fields",
            ),
        ] {
            let error = validate(&list, size).unwrap_err().to_string();
            assert!(error.contains(says), "{list:?}: {error}");
        }
    }

    #[test]
    fn the_most_held_values_come_first_ties_by_key() {
        let mut held = vec![("c", 1), ("b", 2), ("\u{1}3", 1), ("a", 1)];
        let (values, more) = most_first(&mut held, 3);
        let listed: Vec<(Value, u64)> = values.into_iter().map(|v| (v.value, v.count)).collect();
        assert_eq!(
            (listed, more),
            (
                vec![(Value::from("b"), 2), (serde_json::json!(3), 1), (Value::from("a"), 1)],
                1
            )
        );
        assert_eq!(most_first(&mut vec![("a", 5)], 10).1, 0);
    }
}
