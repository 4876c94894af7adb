//! `bench-metadata-filter [--docs N] [--reps R]`: how long a metadata filter takes to pick a
//! segment's documents, parsing every document's metadata JSON per query (`Filters::matches`)
//! against the segment's parsed columns (`MetadataColumns`: the first query parses the key,
//! later ones read it). N synthetic documents (default 1,000,000) with three metadata keys;
//! the filter `year >= 2023` matches 2 in 5.

use std::time::Instant;

use quarry_indexer::snapshot::DocumentRecord;
use quarry_server::search::metadata_columns::MetadataColumns;
use quarry_server::search::metadata_condition::Condition;
use quarry_server::Filters;

fn value(name: &str) -> Option<usize> {
    quarry_bench::arg_value(name).and_then(|v| v.parse().ok())
}

fn main() -> anyhow::Result<()> {
    let (docs, reps) = (value("--docs").unwrap_or(1_000_000), value("--reps").unwrap_or(3));
    let documents: Vec<DocumentRecord> = (0..docs)
        .map(|i| DocumentRecord {
            doc_id: format!("d{i}"),
            uri: String::new(),
            file_name: "corpus.jsonl".into(),
            title: String::new(),
            source: "synthetic".into(),
            tags: Vec::new(),
            content_hash: String::new(),
            size: 0,
            etag: None,
            chunk_count: 1,
            metadata: format!(
                r#"{{"year": {}, "team": "legal", "author": "someone somewhere"}}"#,
                2020 + i % 5
            ),
            ingested_at: Default::default(),
            layers: Default::default(),
            warnings: Vec::new(),
        })
        .collect();
    let mut filters = Filters::default();
    filters.add("year>=2023").map_err(anyhow::Error::msg)?;
    let condition = Condition::parse("year", &filters.metadata["year"]).map_err(anyhow::Error::msg)?;
    let timed = |label: &str, pick: &dyn Fn() -> usize| {
        let started = Instant::now();
        let matched = pick();
        println!(
            "{label}: {matched} of {docs} documents in {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
    };
    for _ in 0..reps {
        timed("parse per query", &|| {
            documents.iter().filter(|d| filters.matches(d)).count()
        });
    }
    let columns = MetadataColumns::default();
    for rep in 0..reps.max(2) {
        let label = if rep == 0 {
            "columns, first query (parses the key)"
        } else {
            "columns, later query"
        };
        timed(label, &|| {
            columns
                .column("year", &documents)
                .iter()
                .filter(|v| condition.holds(v.as_ref()))
                .count()
        });
    }
    Ok(())
}
