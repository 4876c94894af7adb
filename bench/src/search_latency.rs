//! In-process search latency per mode: the query embedding timed apart from the search.

use std::time::Instant;

use quarry_indexer::index::RowSet;
use quarry_server::search::searcher::EXACT_SCAN_MAX_ROWS;
use quarry_server::{Mode, SearchRequest, Searcher};
use serde::Serialize;

/// Percentiles of one measurement, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Percentiles {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub samples: usize,
}

/// The p50 and p99 of `samples` (seconds), in milliseconds.
pub fn percentiles(mut samples: Vec<f64>) -> Percentiles {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| crate::load::percentile(&samples, q) * 1e3;
    Percentiles {
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        samples: samples.len(),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeLatency {
    pub mode: String,
    /// Query embedding (zero for keyword mode).
    pub embed: Percentiles,
    /// Index search and result assembly, query already embedded.
    pub search: Percentiles,
}

/// Runs every query `reps` times in each mode, top_k = 10, with at most `per_document`
/// chunks of a document when given.
pub fn measure(
    searcher: &Searcher,
    queries: &[String],
    reps: usize,
    per_document: Option<usize>,
) -> anyhow::Result<Vec<ModeLatency>> {
    let mut out = Vec::new();
    for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
        let (mut embed, mut search) = (Vec::new(), Vec::new());
        for _ in 0..reps.max(1) {
            for query in queries {
                let started = Instant::now();
                let vector = if mode == Mode::Keyword {
                    None
                } else {
                    Some(searcher.embed_query(query)?)
                };
                embed.push(started.elapsed().as_secs_f64());
                let request = SearchRequest {
                    query: query.clone(),
                    mode,
                    top_k: 10,
                    max_chunks_per_document: per_document,
                    ..Default::default()
                };
                let started = Instant::now();
                searcher.search_with_vector(&request, vector.as_deref())?;
                search.push(started.elapsed().as_secs_f64());
            }
        }
        out.push(ModeLatency {
            mode: mode.as_str().into(),
            embed: percentiles(embed),
            search: percentiles(search),
        });
    }
    Ok(out)
}

/// A filtered vector search that takes the exact-scan path at its largest: an evenly spread
/// filter allowing `EXACT_SCAN_MAX_ROWS` rows (every row of a smaller snapshot), each query
/// embedded beforehand; the scan time per query (top_k = 10).
#[derive(Debug, Clone, Serialize)]
pub struct FilteredScan {
    pub allowed_rows: usize,
    pub scan: Percentiles,
}

pub fn filtered_exact_scan(searcher: &Searcher, queries: &[String], reps: usize) -> anyhow::Result<FilteredScan> {
    let rows = searcher.snapshot().row_count();
    let step = rows.div_ceil(EXACT_SCAN_MAX_ROWS).max(1);
    let mut allowed = RowSet::empty(rows);
    (0..rows).step_by(step).for_each(|row| allowed.insert(row));
    let vectors = queries
        .iter()
        .map(|q| searcher.embed_query(q))
        .collect::<Result<Vec<_>, _>>()?;
    let mut samples = Vec::new();
    for _ in 0..reps.max(1) {
        for vector in &vectors {
            let started = Instant::now();
            searcher.vector_lane(vector, 10, Some(&allowed))?;
            samples.push(started.elapsed().as_secs_f64());
        }
    }
    Ok(FilteredScan {
        allowed_rows: allowed.count(),
        scan: percentiles(samples),
    })
}

/// Vector searches per second with `threads` threads searching at once, every query embedded
/// beforehand (the index and result assembly only: what the search workers share).
#[derive(Debug, Clone, Serialize)]
pub struct SearchThroughput {
    pub threads: usize,
    pub searches: usize,
    pub qps: f64,
}

/// Vector-mode searches (top_k = 10) over `queries`, once for each count in `thread_counts`
/// of threads searching at once: each thread runs through the queries from its own starting
/// point until half a second has passed.
pub fn vector_throughput(
    searcher: &Searcher,
    queries: &[String],
    thread_counts: &[usize],
) -> anyhow::Result<Vec<SearchThroughput>> {
    let vectors = queries
        .iter()
        .map(|q| searcher.embed_query(q))
        .collect::<Result<Vec<_>, _>>()?;
    let requests: Vec<SearchRequest> = queries
        .iter()
        .map(|q| SearchRequest {
            query: q.clone(),
            mode: Mode::Vector,
            top_k: 10,
            ..Default::default()
        })
        .collect();
    let mut out = Vec::new();
    for &threads in thread_counts {
        let started = Instant::now();
        let searches = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|thread| {
                    let (vectors, requests) = (&vectors, &requests);
                    scope.spawn(move || -> anyhow::Result<usize> {
                        let mut done = 0;
                        while started.elapsed().as_secs_f64() < crate::ann_sweep::MIN_WINDOW_SECS {
                            let i = (thread * 7 + done) % vectors.len().max(1);
                            searcher.search_with_vector(&requests[i], Some(&vectors[i]))?;
                            done += 1;
                        }
                        Ok(done)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("search thread"))
                .sum::<anyhow::Result<usize>>()
        })?;
        out.push(SearchThroughput {
            threads,
            searches,
            qps: searches as f64 / started.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}
