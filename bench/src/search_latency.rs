//! In-process search latency per mode: the query embedding timed apart from the search.

use std::time::Instant;

use quarry_server::{Mode, SearchRequest, Searcher};
use serde::Serialize;

/// Percentiles of one measurement, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Percentiles {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub samples: usize,
}

fn percentiles(mut samples: Vec<f64>) -> Percentiles {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| crate::load::percentile(&samples, q) * 1e3;
    Percentiles { p50_ms: at(0.50), p99_ms: at(0.99), samples: samples.len() }
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeLatency {
    pub mode: String,
    /// Query embedding (zero for keyword mode).
    pub embed: Percentiles,
    /// Index search and result assembly, query already embedded.
    pub search: Percentiles,
}

/// Runs every query `reps` times in each mode, top_k = 10.
pub fn measure(searcher: &Searcher, queries: &[String], reps: usize) -> anyhow::Result<Vec<ModeLatency>> {
    let mut out = Vec::new();
    for mode in [Mode::Vector, Mode::Keyword, Mode::Hybrid] {
        let (mut embed, mut search) = (Vec::new(), Vec::new());
        for _ in 0..reps.max(1) {
            for query in queries {
                let started = Instant::now();
                let vector = if mode == Mode::Keyword { None } else { Some(searcher.embed_query(query)?) };
                embed.push(started.elapsed().as_secs_f64());
                let request = SearchRequest { query: query.clone(), mode, top_k: 10, ..Default::default() };
                let started = Instant::now();
                searcher.search_with_vector(&request, vector.as_deref())?;
                search.push(started.elapsed().as_secs_f64());
            }
        }
        out.push(ModeLatency { mode: mode.as_str().into(), embed: percentiles(embed), search: percentiles(search) });
    }
    Ok(out)
}
