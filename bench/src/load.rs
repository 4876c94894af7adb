//! Search latency and QPS under concurrent load, per mode: in process (threads calling the
//! Searcher) and through the HTTP server on loopback, bounded in requests and seconds.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_datasets::beir::Query;
use quarry_server::{Mode, SearchRequest, Searcher};
use serde::Serialize;

/// One (mode, concurrency) point.
#[derive(Debug, Clone, Serialize)]
pub struct LoadPoint {
    pub path: String,
    pub mode: String,
    pub concurrency: usize,
    pub completed: usize,
    pub failed: usize,
    pub qps: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// Every latency, sorted, in ms (for the CDF plot).
    #[serde(skip)]
    pub latencies_ms: Vec<f64>,
}

/// The nearest-rank `q` percentile of ascending `sorted` samples (0 when there are none).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
}

pub fn point(
    path: &str,
    mode: &str,
    concurrency: usize,
    mut latencies: Vec<f64>,
    failed: usize,
    secs: f64,
) -> LoadPoint {
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| percentile(&latencies, q);
    LoadPoint {
        path: path.into(),
        mode: mode.into(),
        concurrency,
        completed: latencies.len(),
        failed,
        qps: latencies.len() as f64 / secs.max(1e-9),
        p50_ms: at(0.50),
        p95_ms: at(0.95),
        p99_ms: at(0.99),
        latencies_ms: latencies,
    }
}

/// In-process load: `concurrency` threads share a request budget.
pub fn in_process(
    searcher: &Arc<Searcher>,
    queries: &[Query],
    mode: Mode,
    concurrency: usize,
    requests: usize,
    max: Duration,
    top_k: usize,
) -> LoadPoint {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let handles: Vec<_> = (0..concurrency)
        .map(|_| {
            let (searcher, next, queries) = (searcher.clone(), next.clone(), queries.to_vec());
            std::thread::spawn(move || {
                let (mut latencies, mut failed) = (Vec::new(), 0);
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= requests || started.elapsed() > max {
                        break;
                    }
                    let request = SearchRequest {
                        query: queries[i % queries.len()].text.clone(),
                        mode,
                        top_k,
                        ..Default::default()
                    };
                    let begun = Instant::now();
                    match searcher.search(&request) {
                        Ok(_) => latencies.push(begun.elapsed().as_secs_f64() * 1e3),
                        Err(_) => failed += 1,
                    }
                }
                (latencies, failed)
            })
        })
        .collect();
    let (mut latencies, mut failed) = (Vec::new(), 0);
    for handle in handles {
        let (l, f) = handle.join().unwrap_or_default();
        latencies.extend(l);
        failed += f;
    }
    point(
        "in-process",
        mode.as_str(),
        concurrency,
        latencies,
        failed,
        started.elapsed().as_secs_f64(),
    )
}

/// HTTP load against `base` (a running server with the collection `collection`).
#[allow(clippy::too_many_arguments)] // the load point's coordinates, each named at the one caller
pub async fn http(
    base: &str,
    collection: &str,
    queries: &[Query],
    mode: Mode,
    concurrency: usize,
    requests: usize,
    max: Duration,
    top_k: usize,
) -> LoadPoint {
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, next, queries, url) = (client.clone(), next.clone(), queries.to_vec(), format!("{base}/v1/collections/{collection}/search"));
            tokio::spawn(async move {
                let (mut latencies, mut failed) = (Vec::new(), 0);
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= requests || started.elapsed() > max {
                        break;
                    }
                    let body = serde_json::json!({ "query": queries[i % queries.len()].text, "mode": mode.as_str(), "top_k": top_k });
                    let begun = Instant::now();
                    match client.post(&url).json(&body).send().await {
                        Ok(r) if r.status().is_success() => latencies.push(begun.elapsed().as_secs_f64() * 1e3),
                        _ => failed += 1,
                    }
                }
                (latencies, failed)
            })
        })
        .collect();
    let (mut latencies, mut failed) = (Vec::new(), 0);
    for task in tasks {
        let (l, f) = task.await.unwrap_or_default();
        latencies.extend(l);
        failed += f;
    }
    point(
        "http",
        mode.as_str(),
        concurrency,
        latencies,
        failed,
        started.elapsed().as_secs_f64(),
    )
}

/// A quarry server on a free loopback port serving one snapshot as collection `bench`, with
/// `query_cache` recent query embeddings kept (0: every search embeds its query, as a stream
/// of distinct queries would; benchmark queries repeat, so a cache would mostly answer them).
pub struct BenchServer {
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    handle: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl BenchServer {
    /// `tune` adjusts `quarry serve`'s defaults (the recent-query cache, workers).
    pub async fn start(
        snapshot: &str,
        embedder: Arc<dyn quarry_indexer::embed::Embedder>,
        data_dir: &std::path::Path,
        tune: impl FnOnce(&mut quarry_server::app::ServeOptions),
    ) -> anyhow::Result<Self> {
        let mut options = quarry_server::app::ServeOptions::new("127.0.0.1:0".parse()?, data_dir.to_path_buf());
        options.collections = vec![("bench".into(), snapshot.to_string())];
        options.poll_interval = None;
        options.search_queue = 4096;
        tune(&mut options);
        let state = quarry_server::app::start(options, embedder)
            .await
            .map_err(anyhow::Error::msg)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(quarry_server::app::serve(
            state,
            listener,
            async move {
                let _ = stopped.await;
            },
            Duration::from_secs(5),
        ));
        Ok(Self { base, stop, handle })
    }

    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.handle.await??;
        Ok(())
    }
}
