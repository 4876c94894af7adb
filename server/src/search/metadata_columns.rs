//! A loaded segment's document metadata values by key, parsed from the documents' JSON once,
//! on a filter's first use of the key, instead of at every filtered search (parsing a million
//! documents' metadata took about 0.3 s a query). Only the first [`MAX_CACHED_KEYS`] keys
//! asked for are kept; others are parsed per call, so odd requests cannot grow memory.

use std::sync::Arc;

use quarry_indexer::snapshot::DocumentRecord;
use rayon::prelude::*;
use serde_json::Value;

use crate::search::kept_columns::KeptColumns;

/// Keys kept per segment.
pub const MAX_CACHED_KEYS: usize = 16;

/// One key's value in each document (`None`: the document has no such key).
pub type MetadataColumn = Arc<Vec<Option<Value>>>;

pub struct MetadataColumns {
    columns: KeptColumns<String, Vec<Option<Value>>>,
}

impl Default for MetadataColumns {
    fn default() -> Self {
        Self {
            columns: KeptColumns::new(MAX_CACHED_KEYS),
        }
    }
}

impl MetadataColumns {
    /// `key`'s value in each of `documents` (the segment's own, in order).
    pub fn column(&self, key: &str, documents: &[DocumentRecord]) -> MetadataColumn {
        self.columns.get_or_build(key, || {
            documents
                .par_iter()
                .map(|document| {
                    serde_json::from_str::<serde_json::Map<String, Value>>(&document.metadata)
                        .ok()
                        .and_then(|mut metadata| metadata.remove(key))
                })
                .collect()
        })
    }

    /// Keys held.
    pub fn cached_keys(&self) -> usize {
        self.columns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(metadata: &str) -> DocumentRecord {
        crate::search::filter::tests::doc("s3", &[], metadata)
    }

    #[test]
    fn a_key_is_parsed_once_and_the_cache_is_bounded() {
        let documents = [document(r#"{"year": 2024}"#), document("{}"), document("not json")];
        let columns = MetadataColumns::default();
        let year = columns.column("year", &documents);
        assert_eq!(*year, [Some(serde_json::json!(2024)), None, None]);
        assert!(Arc::ptr_eq(&year, &columns.column("year", &documents)), "parsed once");
        for i in 0..MAX_CACHED_KEYS + 4 {
            assert_eq!(*columns.column(&format!("k{i}"), &documents), [None, None, None]);
        }
        assert_eq!(columns.cached_keys(), MAX_CACHED_KEYS);
    }
}
