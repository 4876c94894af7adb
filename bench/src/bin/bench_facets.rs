//! `bench-facets [--docs N] [--reps R] [--snapshot DIR]`: what facet counts add to a search,
//! on the synthetic snapshot of N one-chunk documents (default 1,000,000; exact-search index;
//! one row in a hundred tombstoned; written to DIR, or read from it when it holds one). Each
//! mode searches with its query already embedded, without facets, with one facet (tags: 60
//! values; source: one; metadata.year: five) and with all three, unfiltered and inside a tag
//! filter. Prints the documents counted, each case's first run (a field's first facet in a
//! segment interns its values) and median milliseconds.

use std::time::Instant;

use quarry_server::{Mode, SearchRequest};

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let bench = quarry_bench::synthetic_snapshot::SyntheticBench::from_args().await?;
    let (searcher, reps) = (&bench.searcher, bench.reps);
    let tag = searcher.snapshot().document_of(1).tags[0].clone();
    let query = "contract breach liability";
    let vector = searcher.embed_query(query)?;
    let facet_sets: [&[&str]; 5] = [
        &[],
        &["tags"],
        &["source"],
        &["metadata.year"],
        &["tags", "source", "metadata.year"],
    ];
    println!("| mode | filter | facets | documents counted | first run ms | median ms ({reps} runs) |\n|---|---|---|---:|---:|---:|");
    for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
        for filtered in [false, true] {
            for facets in facet_sets {
                let mut request = SearchRequest {
                    query: query.into(),
                    mode,
                    facets: facets.iter().map(|f| f.to_string()).collect(),
                    ..Default::default()
                };
                if filtered {
                    request.filters.tags = vec![tag.clone()];
                }
                let mut times = Vec::with_capacity(reps);
                let mut counted = 0;
                for _ in 0..reps {
                    let started = Instant::now();
                    let outcome =
                        searcher.search_with_vector(&request, (mode != Mode::Keyword).then_some(vector.as_slice()))?;
                    times.push(started.elapsed().as_secs_f64() * 1e3);
                    counted = outcome
                        .result
                        .facets
                        .as_ref()
                        .and_then(|f| f.values().next())
                        .map_or(0, |f| f.documents);
                }
                let first_run = times[0];
                times.sort_by(f64::total_cmp);
                let filter = if filtered {
                    format!("tags: {tag}")
                } else {
                    "none".into()
                };
                let named = if facets.is_empty() {
                    "none".to_string()
                } else {
                    facets.join(", ")
                };
                println!(
                    "| {} | {filter} | {named} | {counted} | {first_run:.2} | {:.2} |",
                    mode.as_str(),
                    times[reps / 2]
                );
            }
        }
    }
    Ok(())
}
