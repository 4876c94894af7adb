//! Prometheus metrics: requests and latency per route, per-lane search latency, search
//! queue depth, jobs by state, the snapshot version each collection serves, query
//! embeddings answered from the recent-query cache, queries per shared query-embedding
//! pass, and uploaded chunks by where their vector came from.

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    pub requests: IntCounterVec,
    pub request_seconds: HistogramVec,
    pub lane_seconds: HistogramVec,
    pub queue_depth: IntGauge,
    pub jobs: IntGaugeVec,
    pub snapshot: IntGaugeVec,
    pub query_cache: IntCounterVec,
    pub query_embed_pass: Histogram,
    pub ingested_chunks: IntCounterVec,
}

const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "quarry_http_requests_total",
                "HTTP requests by route, method and status",
            ),
            &["route", "method", "status"],
        )
        .expect("metric");
        let request_seconds = HistogramVec::new(
            HistogramOpts::new("quarry_http_request_duration_seconds", "HTTP request latency by route")
                .buckets(LATENCY_BUCKETS.to_vec()),
            &["route"],
        )
        .expect("metric");
        let lane_seconds = HistogramVec::new(
            HistogramOpts::new(
                "quarry_search_lane_duration_seconds",
                "Search latency by stage: embed (query embedding) and search per mode",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["lane"],
        )
        .expect("metric");
        let queue_depth = IntGauge::new(
            "quarry_search_queue_depth",
            "Searches waiting for or holding a search worker",
        )
        .expect("metric");
        let jobs = IntGaugeVec::new(
            Opts::new("quarry_ingestion_jobs", "Ingestion jobs by state"),
            &["state"],
        )
        .expect("metric");
        let snapshot = IntGaugeVec::new(
            Opts::new(
                "quarry_collection_snapshot_info",
                "1 for the snapshot version each collection serves",
            ),
            &["collection", "version"],
        )
        .expect("metric");
        let query_cache = IntCounterVec::new(
            Opts::new(
                "quarry_query_cache_total",
                "Query embeddings answered from the recent-query cache (hit) or by the model (miss)",
            ),
            &["result"],
        )
        .expect("metric");
        let query_embed_pass = Histogram::with_opts(
            HistogramOpts::new(
                "quarry_query_embed_pass_queries",
                "Queries embedded together in one forward pass (concurrent searches share passes)",
            )
            .buckets(vec![1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0]),
        )
        .expect("metric");
        let ingested_chunks = IntCounterVec::new(
            Opts::new("quarry_ingested_chunks_total", "Chunks of uploaded documents by where their vector came from: embedded by the model, or reused from the copy they replace (same text)"),
            &["vector"],
        )
        .expect("metric");
        for metric in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(request_seconds.clone()),
            Box::new(lane_seconds.clone()),
            Box::new(queue_depth.clone()),
            Box::new(jobs.clone()),
            Box::new(snapshot.clone()),
            Box::new(query_cache.clone()),
            Box::new(query_embed_pass.clone()),
            Box::new(ingested_chunks.clone()),
        ] {
            registry.register(metric).expect("unique metric names");
        }
        Self {
            registry,
            requests,
            request_seconds,
            lane_seconds,
            queue_depth,
            jobs,
            snapshot,
            query_cache,
            query_embed_pass,
            ingested_chunks,
        }
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding");
        String::from_utf8(buffer).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
