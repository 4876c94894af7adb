//! `quarry serve`: the search and knowledge-layer server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use quarry_indexer::embed::{load_embedder, ModelDir};
use quarry_server::app::{serve, start, ServeOptions};
use quarry_server::http::auth::ApiKeys;

use super::{at_least_one, runtime, LlmArgs, ModelArgs, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// A settings file (TOML): each key a flag's long name, at the top level or under
    /// [serve] / [index]; flags and their environment variables win over it (deploy/quarry.example.toml).
    #[arg(long, env = "QUARRY_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    /// NAME=URI: serve the snapshot at URI (folder or s3://...) as collection NAME. Repeatable.
    #[arg(long = "collection", env = "QUARRY_COLLECTIONS", value_delimiter = ';')]
    pub collections: Vec<String>,
    /// Collections created over the API, job records, uploads and the snapshot cache.
    #[arg(long, env = "QUARRY_DATA_DIR", default_value = "quarry-data")]
    pub data_dir: PathBuf,
    #[arg(long, env = "QUARRY_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    #[command(flatten)]
    pub parse: super::parse_worker::ParseArgs,
    /// Largest request body in MiB (uploads included); larger ones get 413.
    #[arg(long, env = "QUARRY_UPLOAD_LIMIT_MB", default_value_t = 100, value_parser = at_least_one::<usize>)]
    pub upload_limit_mb: usize,
    /// Ingestion jobs processed at once.
    #[arg(long, env = "QUARRY_INGEST_WORKERS", default_value_t = 2, value_parser = at_least_one::<usize>)]
    pub ingest_workers: usize,
    /// Searches run at once (default: 4 per CPU core; they mostly wait for their query's
    /// embedding, which the query embedding threads share between them).
    #[arg(long, env = "QUARRY_SEARCH_WORKERS", value_parser = at_least_one::<usize>)]
    pub search_workers: Option<usize>,
    /// Threads embedding the queries of concurrent searches, several per forward pass
    /// (default: one per CPU core with the model on the CPU, 2 on a GPU; 0: each search
    /// embeds its own query).
    #[arg(long, env = "QUARRY_QUERY_EMBED_THREADS")]
    pub query_embed_threads: Option<usize>,
    /// The most queries one of those threads embeds in one forward pass (default: 4 with the
    /// model on the CPU, 64 on a GPU).
    #[arg(long, env = "QUARRY_QUERY_PASS_QUERIES", value_parser = at_least_one::<usize>)]
    pub query_pass_queries: Option<usize>,
    /// Merge a collection's small segments (under 50,000 chunks; one per upload) into one once
    /// it has more than this many.
    #[arg(long, env = "QUARRY_COMPACT_AFTER", default_value_t = 8)]
    pub compact_after: usize,
    /// Searches allowed to wait for a worker; beyond that the server answers 503 at once.
    #[arg(long, env = "QUARRY_SEARCH_QUEUE", default_value_t = 64)]
    pub search_queue: usize,
    /// Recent query embeddings kept, so a repeated query skips the model (0 keeps none).
    #[arg(long, env = "QUARRY_QUERY_CACHE", default_value_t = 4096)]
    pub query_cache: usize,
    /// Seconds between checks of each collection's LATEST (0 disables hot reload by polling).
    #[arg(long, env = "QUARRY_POLL_INTERVAL", default_value_t = 30)]
    pub poll_interval: u64,
    /// The collection behind /api/rag.
    #[arg(long, env = "QUARRY_RAG_COLLECTION", default_value = "rag")]
    pub rag_collection: String,
    /// The collection behind /api/knowledge (seed 004's knowledge library).
    #[arg(long, env = "QUARRY_KNOWLEDGE_COLLECTION", default_value = "knowledge")]
    pub knowledge_collection: String,
    /// How an uploaded document's layers (seed 003's L0 abstract and L1 overview) are made:
    /// extractive (its most central sentences; no model) | llm (written by --llm-url; the
    /// extractive ones where it fails) | off
    #[arg(long, env = "QUARRY_SUMMARIES", default_value = "extractive")]
    pub summaries: quarry_indexer::summary::Summaries,
    /// Request timeout in seconds.
    #[arg(long, env = "QUARRY_REQUEST_TIMEOUT", default_value_t = 60, value_parser = at_least_one::<u64>)]
    pub request_timeout: u64,
    /// On shutdown, seconds to wait for running ingestion jobs (unfinished ones resume at the next start).
    #[arg(long, env = "QUARRY_DRAIN_SECS", default_value_t = 30)]
    pub drain_secs: u64,
    /// An admin API key (everything: collections, uploads, deletes, reloads, searches), at
    /// least 16 characters. Repeatable (rotation). With no keys at all every route is open.
    #[arg(
        long = "api-key",
        env = "QUARRY_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub api_keys: Vec<String>,
    /// A search API key: reads (collections, documents, jobs, events) and searches only. Repeatable.
    #[arg(
        long = "search-api-key",
        env = "QUARRY_SEARCH_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub search_api_keys: Vec<String>,
    /// A read-only replica: searches and reads only; every write (collections, uploads,
    /// deletes, reloads, rollbacks, RAG ingests) answers 405. New versions arrive by polling
    /// (`--poll-interval`), so several replicas can serve one root behind a load balancer.
    #[arg(long, env = "QUARRY_READ_ONLY")]
    pub read_only: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut signal) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            signal.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("shutting down: no new requests; finishing running jobs");
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut options = ServeOptions::new(args.addr, args.data_dir.clone());
    for spec in &args.collections {
        let (name, uri) = spec
            .split_once('=')
            .with_context(|| format!("--collection `{spec}` is not NAME=URI"))?;
        options
            .collections
            .push((name.trim().to_string(), uri.trim().to_string()));
    }
    options.store = args.store.options();
    options.upload_limit = args.upload_limit_mb * 1024 * 1024;
    options.ingest_workers = args.ingest_workers;
    if let Some(workers) = args.search_workers {
        options.search_workers = workers;
    }
    options.query_embed_threads = args.query_embed_threads;
    options.query_pass_queries = args.query_pass_queries;
    options.search_queue = args.search_queue;
    options.query_cache = args.query_cache;
    options.poll_interval = (args.poll_interval > 0).then(|| Duration::from_secs(args.poll_interval));
    options.rag_collection = args.rag_collection.clone();
    options.knowledge_collection = args.knowledge_collection.clone();
    options.summaries = args.summaries;
    options.read_only = args.read_only;
    options.llm = args.llm.settings();
    options.request_timeout = Duration::from_secs(args.request_timeout);
    options.compact.max_small_segments = args.compact_after;
    options.parser = args.parse.parser()?;
    options.api_keys = ApiKeys::new(&args.api_keys, &args.search_api_keys).map_err(anyhow::Error::msg)?;
    if !options.api_keys.enabled() && !args.addr.ip().is_loopback() {
        tracing::warn!(
            "serving {} with no API keys: anyone who can reach it may upload and delete (--api-key)",
            args.addr
        );
    }
    let embedder = load_embedder(&ModelDir::open(&args.model.model_dir()?)?, args.model.embed_options())?;
    tracing::info!(
        "model {} on {}",
        quarry_indexer::embed::Embedder::info(embedder.as_ref()).name,
        quarry_indexer::embed::Embedder::device_name(embedder.as_ref())
    );
    runtime()?.block_on(async {
        let state = start(options, embedder).await.map_err(anyhow::Error::msg)?;
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("binding {}", args.addr))?;
        tracing::info!("listening on http://{}", listener.local_addr()?);
        serve(state, listener, shutdown_signal(), Duration::from_secs(args.drain_secs)).await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
