//! Filters on document fields — source, tags (any of), file_name, doc_id, when it was
//! ingested, metadata conditions (a value, or `$gte`-style operators:
//! [`crate::search::metadata_condition`]), and an `exclude` filter whose documents are left out —
//! turned into the set of chunk rows both lanes may return.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use quarry_indexer::index::RowSet;
use quarry_indexer::snapshot::DocumentRecord;
use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::field_index::{Candidates, Field};
use crate::search::loaded::{LoadedSnapshot, SegmentData};
use crate::search::metadata_condition::Condition;

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
    /// Document metadata key -> required value, or an object of operators (`{"$gte": 2020}`).
    #[serde(default)]
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// Documents ingested at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingested_after: Option<DateTime<Utc>>,
    /// Documents ingested before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingested_before: Option<DateTime<Utc>>,
    /// Documents matching any one of this filter's fields are left out (as a search engine's
    /// `must_not`): each of source, tags, file_name, doc_id and metadata key is a condition of
    /// its own, the ingestion window (after and before together) one more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Box<Filters>>,
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

/// Values one field of a filter (or of its exclude) may list: a body of 100,000 doc_ids is
/// about 4 MB, and each is looked up in constant time.
pub const MAX_FILTER_VALUES: usize = 100_000;

/// A filter's value lists as sets ([`Filters::field_sets`]).
struct FieldSets<'a> {
    source: HashSet<&'a str>,
    file_name: HashSet<&'a str>,
    doc_id: HashSet<&'a str>,
    tags: HashSet<&'a str>,
}

impl Filters {
    /// These filters with the documents `doc_ids` left out as well (a search by example's sources).
    pub fn leaving_out_documents(&self, doc_ids: &[String]) -> Filters {
        let mut filters = self.clone();
        filters
            .exclude
            .get_or_insert_with(Default::default)
            .doc_id
            .extend(doc_ids.iter().cloned());
        filters
    }

    pub fn is_empty(&self) -> bool {
        self.includes_all() && self.exclusion().is_none()
    }

    /// Does every document pass the fields besides `exclude`?
    fn includes_all(&self) -> bool {
        self.source.is_empty()
            && self.tags.is_empty()
            && self.file_name.is_empty()
            && self.doc_id.is_empty()
            && self.metadata.is_empty()
            && self.ingested_after.is_none()
            && self.ingested_before.is_none()
    }

    /// Checks the metadata conditions' operators and operands, and the exclude filter's.
    pub fn validate(&self) -> Result<(), ServerError> {
        self.conditions().map_err(ServerError::InvalidRequest)?;
        self.check_value_counts("filters")?;
        let Some(exclude) = &self.exclude else { return Ok(()) };
        exclude.check_value_counts("filters.exclude")?;
        let bad = |m: &str| Err(ServerError::InvalidRequest(format!("filters.exclude: {m}")));
        if exclude.exclude.is_some() {
            return bad("an exclude filter cannot hold another exclude");
        }
        if exclude.is_empty() {
            return bad("names no field to leave documents out by (source, tags, file_name, doc_id, ingested_after, ingested_before, metadata)");
        }
        exclude.conditions().map(|_| ()).or_else(|m| bad(&m))
    }

    /// Refuses a field listing more than [`MAX_FILTER_VALUES`] values (`at`: where the filter is).
    fn check_value_counts(&self, at: &str) -> Result<(), ServerError> {
        for (field, values) in [
            ("source", &self.source),
            ("tags", &self.tags),
            ("file_name", &self.file_name),
            ("doc_id", &self.doc_id),
        ] {
            if values.len() > MAX_FILTER_VALUES {
                return Err(ServerError::InvalidRequest(format!(
                    "{at}.{field} lists {} values; at most {MAX_FILTER_VALUES} are accepted",
                    values.len()
                )));
            }
        }
        Ok(())
    }

    /// The exclude filter, when it names a field (an empty one leaves nothing out).
    fn exclusion(&self) -> Option<&Filters> {
        self.exclude.as_deref().filter(|e| !e.is_empty())
    }

    /// The exclude filter's conditions, one filter each: a document any of them matches is
    /// left out.
    fn exclusions(&self) -> Vec<Filters> {
        let Some(exclude) = self.exclusion() else {
            return Vec::new();
        };
        let mut parts = Vec::new();
        let mut part = |fill: &dyn Fn(&mut Filters)| {
            let mut filter = Filters::default();
            fill(&mut filter);
            if !filter.is_empty() {
                parts.push(filter);
            }
        };
        part(&|f: &mut Filters| f.source = exclude.source.clone());
        part(&|f: &mut Filters| f.tags = exclude.tags.clone());
        part(&|f: &mut Filters| f.file_name = exclude.file_name.clone());
        part(&|f: &mut Filters| f.doc_id = exclude.doc_id.clone());
        part(&|f: &mut Filters| {
            (f.ingested_after, f.ingested_before) = (exclude.ingested_after, exclude.ingested_before)
        });
        for (key, condition) in &exclude.metadata {
            part(&|f: &mut Filters| {
                f.metadata.insert(key.clone(), condition.clone());
            });
        }
        parts
    }

    /// Adds one CLI `key=value` spec to the exclude filter.
    pub fn add_exclusion(&mut self, spec: &str) -> Result<(), ServerError> {
        self.exclude.get_or_insert_default().add(spec)
    }

    /// The metadata conditions, each read and checked once.
    fn conditions(&self) -> Result<Vec<(&str, Condition)>, String> {
        self.metadata
            .iter()
            .map(|(key, wanted)| Ok((key.as_str(), Condition::parse(key, wanted)?)))
            .collect()
    }

    /// Adds one `key=value[,value...]` filter (the CLI form); unknown keys are metadata keys
    /// (`metadata.key=value` also works), which also take `key>=value`, `>`, `<=`, `<` and `!=`.
    pub fn add(&mut self, spec: &str) -> Result<(), ServerError> {
        if let Some((key, operator, value)) = comparison(spec) {
            let key = key.trim().strip_prefix("metadata.").unwrap_or(key.trim());
            if key.is_empty() || ["source", "tags", "tag", "file_name", "doc_id"].contains(&key) {
                return Err(ServerError::InvalidRequest(format!(
                    "filter `{spec}`: {operator} compares a metadata key's value"
                )));
            }
            let condition = self
                .metadata
                .entry(key.to_string())
                .or_insert_with(|| serde_json::json!({}));
            let Some(operators) = condition.as_object_mut() else {
                return Err(ServerError::InvalidRequest(format!(
                    "filter `{spec}`: metadata.{key} already has a value to equal"
                )));
            };
            operators.insert(operator.into(), serde_json::Value::String(value.trim().to_string()));
            return Ok(());
        }
        let (key, value) = spec.split_once('=').ok_or_else(|| {
            ServerError::InvalidRequest(format!(
                "filter `{spec}` is not key=value (or key>=value, >, <=, <, !=)"
            ))
        })?;
        let values = || {
            value
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect::<Vec<_>>()
        };
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
                self.metadata
                    .insert(key.to_string(), serde_json::Value::String(value.to_string()));
            }
        }
        Ok(())
    }

    /// Does a document match?
    pub fn matches(&self, document: &DocumentRecord) -> bool {
        if !self.matches_fields(&self.field_sets(), document) || self.exclusions().iter().any(|e| e.matches(document)) {
            return false;
        }
        if self.metadata.is_empty() {
            return true;
        }
        // A condition that does not read (validation refuses it first) matches nothing.
        let Ok(conditions) = self.conditions() else {
            return false;
        };
        let metadata: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&document.metadata).unwrap_or_default();
        conditions
            .iter()
            .all(|(key, condition)| condition.holds(metadata.get(*key)))
    }

    /// The filter's value lists as sets, so that a document is checked in time independent
    /// of their length (a filter may name 100,000 doc_ids).
    fn field_sets(&self) -> FieldSets<'_> {
        fn set(values: &[String]) -> HashSet<&str> {
            values.iter().map(String::as_str).collect()
        }
        FieldSets {
            source: set(&self.source),
            file_name: set(&self.file_name),
            doc_id: set(&self.doc_id),
            tags: set(&self.tags),
        }
    }

    /// Does a document match every filter but the metadata conditions? (`sets`: this filter's [`Self::field_sets`].)
    fn matches_fields(&self, sets: &FieldSets<'_>, document: &DocumentRecord) -> bool {
        let any = |wanted: &HashSet<&str>, value: &str| wanted.is_empty() || wanted.contains(value);
        if !any(&sets.source, &document.source)
            || !any(&sets.file_name, &document.file_name)
            || !any(&sets.doc_id, &document.doc_id)
        {
            return false;
        }
        if !sets.tags.is_empty() && !document.tags.iter().any(|t| sets.tags.contains(t.as_str())) {
            return false;
        }
        !(self.ingested_after.is_some_and(|after| document.ingested_at < after)
            || self
                .ingested_before
                .is_some_and(|before| document.ingested_at >= before))
    }

    /// The rows of `snapshot` a search may return: matching documents less the excluded
    /// ones, tombstones removed. `None` means every row (no filter and no tombstones).
    pub fn allowed_rows(&self, snapshot: &LoadedSnapshot) -> Option<RowSet> {
        let included = self.included_rows(snapshot);
        let exclusions = self.exclusions();
        if exclusions.is_empty() {
            return included;
        }
        let mut allowed = included.unwrap_or_else(|| RowSet::empty(snapshot.row_count()).complement());
        for exclusion in &exclusions {
            if let Some(excluded) = exclusion.included_rows(snapshot) {
                allowed.remove_all(&excluded);
            }
        }
        Some(allowed)
    }

    /// The rows of documents matching every field but `exclude`, tombstones removed.
    fn included_rows(&self, snapshot: &LoadedSnapshot) -> Option<RowSet> {
        if self.includes_all() {
            return (!snapshot.tombstoned.is_empty()).then(|| snapshot.tombstoned.complement());
        }
        let mut allowed = RowSet::empty(snapshot.row_count());
        // A condition that does not read (validation refuses it first) matches nothing.
        let Ok(conditions) = self.conditions() else {
            return Some(allowed);
        };
        let sets = self.field_sets();
        for segment in &snapshot.segments {
            let data = &segment.data;
            // Metadata values come from the segment's columns, parsed once per key.
            let documents = &data.documents;
            let columns: Vec<_> = conditions
                .iter()
                .map(|(key, condition)| (data.metadata_columns.column(key, documents), condition))
                .collect();
            let matches = |at: usize| {
                self.matches_fields(&sets, &documents[at])
                    && columns
                        .iter()
                        .all(|(column, condition)| condition.holds(column[at].as_ref()))
            };
            let mut allow = |local: usize| {
                let row = segment.offset + local;
                if !snapshot.tombstoned.contains(row) {
                    allowed.insert(row);
                }
            };
            let found = self.field_candidates(data);
            // Few documents can fail the filter: allow the segment's rows, less those of the
            // documents it leaves out and the tombstoned ones, a byte at a time.
            if let Some(left_out) = self.left_out_documents(data, &found) {
                allowed.insert_range_except(
                    segment.offset,
                    segment.offset + data.doc_of_row.len(),
                    &snapshot.tombstoned,
                );
                for doc in left_out {
                    data.field_index
                        .rows_of(doc, &data.doc_of_row, documents.len())
                        .iter()
                        .for_each(|&local| allowed.remove(segment.offset + local as usize));
                }
                continue;
            }
            match candidate_documents(data, found) {
                // Few documents can match: check those, and visit only their rows.
                Some(candidates) => {
                    for doc in candidates.into_iter().filter(|&doc| matches(doc as usize)) {
                        data.field_index
                            .rows_of(doc, &data.doc_of_row, documents.len())
                            .iter()
                            .for_each(|&local| allow(local as usize));
                    }
                }
                None => {
                    let matching: Vec<bool> = (0..documents.len()).map(matches).collect();
                    for (local, &doc) in data.doc_of_row.iter().enumerate() {
                        if matching[doc as usize] {
                            allow(local);
                        }
                    }
                }
            }
        }
        Some(allowed)
    }

    /// The documents of a segment the filter leaves out, when they are under an eighth of them
    /// and the filter is one on `doc_id`, `file_name`, `source` and ingestion time only, the
    /// time bounds holding for every document of the segment (`found`: the fields' documents,
    /// [`Self::field_candidates`]); `None` otherwise.
    fn left_out_documents(&self, data: &SegmentData, found: &[Candidates<'_>]) -> Option<Vec<u32>> {
        if !self.tags.is_empty() || !self.metadata.is_empty() {
            return None;
        }
        let (documents, index) = (&data.documents, &data.field_index);
        if self.ingested_after.is_some() || self.ingested_before.is_some() {
            let (earliest, latest) = index.ingested_span(documents)?;
            let all_after = self.ingested_after.is_none_or(|after| earliest >= after);
            let all_before = self.ingested_before.is_none_or(|before| latest < before);
            if !(all_after && all_before) {
                return None;
            }
        }
        let limit = documents.len() / 8;
        let mut left_out = Vec::new();
        for candidates in found {
            if documents.len() - candidates.len() + left_out.len() >= limit.max(1) {
                return None;
            }
            left_out.extend(candidates.outside()?);
        }
        left_out.sort_unstable();
        left_out.dedup();
        Some(left_out)
    }

    /// The documents each of the filter's `doc_id`, `file_name`, `source` and `tags` fields
    /// leaves in a segment (found in the segment's field index), in that order.
    fn field_candidates<'a>(&self, data: &'a SegmentData) -> Vec<Candidates<'a>> {
        let (documents, index) = (&data.documents, &data.field_index);
        let mut found: Vec<Candidates<'a>> = [
            (Field::DocId, &self.doc_id),
            (Field::FileName, &self.file_name),
            (Field::Source, &self.source),
        ]
        .into_iter()
        .filter(|(_, wanted)| !wanted.is_empty())
        .map(|(field, wanted)| index.with_value(field, wanted, documents))
        .collect();
        if !self.tags.is_empty() {
            found.push(index.tagged(&self.tags, documents));
        }
        found
    }
}

/// The documents of a segment that can match, when one of the filter's fields (`found`,
/// [`Filters::field_candidates`]) leaves fewer than an eighth of them (the fewest); `None` to
/// check every document.
fn candidate_documents(data: &SegmentData, found: Vec<Candidates<'_>>) -> Option<Vec<u32>> {
    let fewest = found.into_iter().min_by_key(Candidates::len)?;
    (fewest.len() < data.documents.len() / 8 + 1).then(|| fewest.documents())
}

/// A CLI comparison `key>=value` (`>`, `<=`, `<`, `!=`): its key, operator and value.
fn comparison(spec: &str) -> Option<(&str, &'static str, &str)> {
    let at = spec.find(['<', '>', '!', '='])?;
    let (key, rest) = spec.split_at(at);
    let (operator, length) = match rest.as_bytes() {
        [b'>', b'=', ..] => ("$gte", 2),
        [b'<', b'=', ..] => ("$lte", 2),
        [b'!', b'=', ..] => ("$ne", 2),
        [b'>', ..] => ("$gt", 1),
        [b'<', ..] => ("$lt", 1),
        _ => return None,
    };
    Some((key, operator, &rest[length..]))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A document with these fields (the others plain), for filter tests.
    pub(crate) fn doc(source: &str, tags: &[&str], metadata: &str) -> DocumentRecord {
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
            layers: Default::default(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn cli_specs_and_matching() {
        let mut filters = Filters::default();
        filters.add("tags=finance,legal").unwrap();
        filters.add("source=s3").unwrap();
        filters.add("year=2024").unwrap();
        assert!(filters.matches(&doc("s3", &["legal"], r#"{"year": 2024}"#)));
        assert!(
            !filters.matches(&doc("s3", &["hr"], r#"{"year": 2024}"#)),
            "no tag in common"
        );
        assert!(
            !filters.matches(&doc("file", &["legal"], r#"{"year": 2024}"#)),
            "wrong source"
        );
        assert!(
            !filters.matches(&doc("s3", &["legal"], r#"{"year": 2023}"#)),
            "wrong metadata"
        );
        assert!(!filters.matches(&doc("s3", &["legal"], "{}")), "missing metadata");
        assert!(Filters::default().matches(&doc("x", &[], "{}")));
        assert!(filters.add("oops").is_err());
    }

    #[test]
    fn cli_comparisons_and_ingestion_times() {
        let mut filters = Filters::default();
        filters.add("year>=2020").unwrap();
        filters.add("metadata.year<2025").unwrap();
        filters.add("status!=draft").unwrap();
        assert_eq!(
            serde_json::Value::Object(filters.metadata.clone().into_iter().collect()),
            serde_json::json!({ "year": { "$gte": "2020", "$lt": "2025" }, "status": { "$ne": "draft" } })
        );
        assert!(filters.matches(&doc("s3", &[], r#"{"year": 2024}"#)));
        assert!(!filters.matches(&doc("s3", &[], r#"{"year": 2019}"#)));
        assert!(!filters.matches(&doc("s3", &[], r#"{"year": 2024, "status": "draft"}"#)));
        assert!(filters.add("tags>=a").is_err(), "only metadata keys compare");
        filters.add("kind=memo").unwrap();
        assert!(filters
            .add("kind>a")
            .unwrap_err()
            .to_string()
            .contains("already has a value"));

        let mut document = doc("s3", &[], "{}");
        document.ingested_at = "2026-11-20T12:00:00Z".parse().unwrap();
        let window: Filters = serde_json::from_str(
            r#"{"ingested_after": "2026-11-20T12:00:00Z", "ingested_before": "2026-11-21T00:00:00Z"}"#,
        )
        .unwrap();
        assert!(window.matches(&document), "after is inclusive");
        document.ingested_at = "2026-11-21T00:00:00Z".parse().unwrap();
        assert!(!window.matches(&document), "before is exclusive");
        assert!(serde_json::from_str::<Filters>(r#"{"ingested_after": "yesterday"}"#).is_err());
    }

    #[test]
    fn exclude_leaves_out_documents_any_of_its_fields_match() {
        let filters: Filters = serde_json::from_str(
            r#"{"source": "s3", "exclude": {"tags": ["draft", "old"], "metadata": {"year": {"$lt": 2020}}}}"#,
        )
        .unwrap();
        filters.validate().unwrap();
        assert!(filters.matches(&doc("s3", &["final"], r#"{"year": 2024}"#)));
        assert!(
            !filters.matches(&doc("s3", &["old", "final"], r#"{"year": 2024}"#)),
            "a tag excluded"
        );
        assert!(
            !filters.matches(&doc("s3", &["final"], r#"{"year": 2019}"#)),
            "the metadata condition alone excludes"
        );
        assert!(
            !filters.matches(&doc("file", &["final"], r#"{"year": 2024}"#)),
            "the filter itself still holds"
        );
        assert!(
            filters.matches(&doc("s3", &[], "{}")),
            "a missing key is not below 2020"
        );
        // The CLI form: each --exclude adds a condition.
        let mut cli = Filters::default();
        cli.add_exclusion("tags=draft").unwrap();
        cli.add_exclusion("year<2020").unwrap();
        assert_eq!(
            cli.exclude.as_deref().map(|e| (e.tags.clone(), e.metadata.len())),
            Some((vec!["draft".to_string()], 1))
        );
        assert!(!cli.is_empty());
        assert!(!cli.matches(&doc("x", &["draft"], "{}")) && cli.matches(&doc("x", &["final"], "{}")));
        // Refused: an exclude naming nothing, one inside another, a bad operator inside.
        for (body, message) in [
            (r#"{"exclude": {}}"#, "names no field"),
            (
                r#"{"exclude": {"tags": "a", "exclude": {"tags": "b"}}}"#,
                "cannot hold another exclude",
            ),
            (
                r#"{"exclude": {"metadata": {"year": {"$between": 1}}}}"#,
                "filters.exclude: metadata.year: unknown operator $between",
            ),
        ] {
            let filters: Filters = serde_json::from_str(body).unwrap();
            let error = filters.validate().unwrap_err().to_string();
            assert!(error.contains(message), "{body}: {error}");
        }
        // Lists longer than the limit, in the filter or its exclude, are refused by name.
        let too_many: Vec<String> = (0..=MAX_FILTER_VALUES).map(|i| format!("d{i}")).collect();
        let filters = Filters {
            doc_id: too_many.clone(),
            ..Default::default()
        };
        assert_eq!(
            filters.validate().unwrap_err().to_string(),
            ServerError::InvalidRequest(format!(
                "filters.doc_id lists {} values; at most {MAX_FILTER_VALUES} are accepted",
                MAX_FILTER_VALUES + 1
            ))
            .to_string()
        );
        let filters = Filters {
            exclude: Some(Box::new(Filters {
                tags: too_many,
                ..Default::default()
            })),
            ..Default::default()
        };
        assert!(filters
            .validate()
            .unwrap_err()
            .to_string()
            .contains("filters.exclude.tags lists"));
        let filters = Filters {
            doc_id: (0..MAX_FILTER_VALUES).map(|i| format!("d{i}")).collect(),
            ..Default::default()
        };
        filters.validate().unwrap();
    }

    #[test]
    fn json_form_accepts_one_or_many_and_rejects_unknown_fields() {
        let filters: Filters =
            serde_json::from_str(r#"{"tags": "a", "source": ["s3", "file"], "metadata": {"k": true}}"#).unwrap();
        assert_eq!(filters.tags, ["a"]);
        assert_eq!(filters.source, ["s3", "file"]);
        assert!(serde_json::from_str::<Filters>(r#"{"colour": "red"}"#).is_err());
    }
}
