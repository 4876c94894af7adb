#![no_main]
//! Any bytes as a search request's `filters` object: parsed, validated, and matched against a
//! document, as a search does before it looks anything up.

use quarry_indexer::snapshot::DocumentRecord;
use quarry_server::Filters;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(filters) = serde_json::from_slice::<Filters>(data) else {
        return;
    };
    if filters.validate().is_err() {
        return;
    }
    let document = DocumentRecord {
        doc_id: "d1".into(),
        uri: "file:///docs/a.md".into(),
        file_name: "a.md".into(),
        title: "A".into(),
        source: "wiki".into(),
        tags: vec!["x".into(), "y".into()],
        content_hash: String::new(),
        size: 10,
        etag: None,
        chunk_count: 1,
        metadata: r#"{"year": 2021, "team": "ops", "score": 0.5, "labels": ["a", "b"], "nested": {"k": null}}"#.into(),
        ingested_at: chrono::Utc::now(),
        layers: Default::default(),
        warnings: Vec::new(),
    };
    let _ = filters.matches(&document);
});
