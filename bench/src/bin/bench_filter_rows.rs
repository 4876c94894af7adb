//! `bench-filter-rows [--docs N] [--reps R] [--snapshot DIR] [--built-ahead]`: how long a search's filters
//! take to pick the rows both lanes may return (`Filters::allowed_rows`) on a loaded snapshot
//! of N one-chunk synthetic documents (default 1,000,000; exact-search index, so it builds in
//! seconds; written to DIR, or read from it when it holds one), one row in a hundred
//! tombstoned. Prints each filter's matched rows, its first run's milliseconds (a field's first
//! use builds its order), the median's, and the median of the rows and the vector lane's top 10
//! together (exact scan up to 20,000 rows a segment, else the index with an ID selector).
//! `--built-ahead` first builds every field index, as a server does once it loads a segment,
//! and prints how long that took.

use std::time::Instant;

use quarry_server::Filters;

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let bench = quarry_bench::synthetic_snapshot::SyntheticBench::from_args().await?;
    let (searcher, reps) = (&bench.searcher, bench.reps);
    let snapshot = searcher.snapshot().clone();
    let first = snapshot.document_of(1).clone();
    if std::env::args().any(|arg| arg == "--built-ahead") {
        // What a server does in the background once it loads a segment: the first uses below
        // then find every field index built.
        let started = Instant::now();
        for segment in &snapshot.segments {
            segment
                .data
                .field_index
                .build_all(&segment.data.documents, &segment.data.doc_of_row);
        }
        println!(
            "field indexes of {} segments built ahead in {:.2} s",
            snapshot.segments.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let query = searcher.embed_query("a report on the topic")?;
    let filter = |json: serde_json::Value| -> anyhow::Result<Filters> { Ok(serde_json::from_value(json)?) };
    let cases = [
        ("no filter (tombstones only)", filter(serde_json::json!({}))?),
        ("tags: one topic", filter(serde_json::json!({ "tags": first.tags[0] }))?),
        (
            "doc_id: one document",
            filter(serde_json::json!({ "doc_id": first.doc_id }))?,
        ),
        (
            "file_name: every document",
            filter(serde_json::json!({ "file_name": first.file_name }))?,
        ),
        ("source: none", filter(serde_json::json!({ "source": "nowhere" }))?),
        (
            "tags: one topic, ingested_after",
            filter(serde_json::json!({ "tags": first.tags[0], "ingested_after": "2000-01-01T00:00:00Z" }))?,
        ),
        (
            "ingested_after: every document",
            filter(serde_json::json!({ "ingested_after": "2000-01-01T00:00:00Z" }))?,
        ),
        (
            "doc_id: 20,000 listed (an access list)",
            filter(serde_json::json!({ "doc_id": listed_ids(&snapshot, 20_000) }))?,
        ),
        (
            "doc_id: 100,000 listed",
            filter(serde_json::json!({ "doc_id": listed_ids(&snapshot, 100_000) }))?,
        ),
        (
            "exclude doc_id: 100,000 listed",
            filter(serde_json::json!({ "exclude": { "doc_id": listed_ids(&snapshot, 100_000) } }))?,
        ),
    ];
    println!("| filter | rows allowed | first run ms | median ms ({reps} runs) | with the vector lane (top 10), median ms |\n|---|---:|---:|---:|---:|");
    for (label, filters) in &cases {
        let mut times = Vec::with_capacity(reps);
        let mut allowed = 0;
        for _ in 0..reps {
            let started = Instant::now();
            allowed = filters
                .allowed_rows(&snapshot)
                .map_or(snapshot.row_count(), |rows| rows.count());
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let first_run = times[0];
        times.sort_by(f64::total_cmp);
        let mut lane_times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let started = Instant::now();
            let rows = filters.allowed_rows(&snapshot);
            searcher.vector_lane(&query, 10, rows.as_ref())?;
            lane_times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        lane_times.sort_by(f64::total_cmp);
        println!(
            "| {label} | {allowed} | {first_run:.3} | {:.3} | {:.3} |",
            times[reps / 2],
            lane_times[reps / 2]
        );
    }
    Ok(())
}

/// `count` doc_ids for a long id filter: every other document's, then ids of none.
fn listed_ids(snapshot: &quarry_server::LoadedSnapshot, count: usize) -> Vec<String> {
    let ids = snapshot.documents().step_by(2).map(|d| d.doc_id.clone());
    ids.chain((0..).map(|i| format!("absent-{i}"))).take(count).collect()
}
