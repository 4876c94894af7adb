//! The server's assembly: options, the parts of the state, start-up (collections, resumed
//! jobs, reload pollers), the router with its middleware, and graceful shutdown.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, FromRef};
use axum::Router;
use quarry_indexer::embed::Embedder;
use quarry_indexer::parse::{AutoParser, Parser};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::summary::Summaries;
use tokio::sync::Semaphore;

use crate::collection::{validate_name, Collection, CollectionRecord};
use crate::event_hub::EventHub;
use crate::http::auth::ApiKeys;
use crate::http::search::SearchParts;
use crate::http::search_queue::SearchQueue;
use crate::ingest::jobs::JobBook;
use crate::ingest::Ingestion;
use crate::metrics::Metrics;
use crate::persist::read_json;
use crate::registry::CollectionRegistry;
use crate::search::loaded::LoadOptions;
use crate::search::query_batcher::{BatchingEmbedder, QueryBatching};
use crate::search::query_cache::CachingEmbedder;
use quarry_indexer::pipeline::CompactOptions;

/// Everything `quarry serve` is told.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// `name` -> snapshot URI, served from start-up.
    pub collections: Vec<(String, String)>,
    /// Collections created over the API, job records, uploads and the snapshot cache.
    pub data_dir: PathBuf,
    pub store: StoreOptions,
    /// Largest request body (uploads included); beyond it, 413.
    pub upload_limit: usize,
    pub ingest_workers: usize,
    /// Searches run at once; they mostly wait for their query's embedding, so several per
    /// model thread let those threads embed queries together.
    pub search_workers: usize,
    /// Model threads embedding the queries of concurrent searches together, a pass of up to
    /// `query_pass_queries` at a time (0: each search embeds its own query; None: by the
    /// model's device, [`crate::search::query_batcher::QueryBatching::for_device`]).
    pub query_embed_threads: Option<usize>,
    /// The most queries one of those passes embeds (None: by the model's device).
    pub query_pass_queries: Option<usize>,
    pub search_queue: usize,
    /// Recent query embeddings kept so a repeated query skips the model (0: none kept).
    pub query_cache: usize,
    /// How often each collection checks its LATEST; `None` disables polling.
    pub poll_interval: Option<Duration>,
    /// The collection behind /api/rag.
    pub rag_collection: String,
    /// The collection behind /api/knowledge (seed 004's knowledge library).
    pub knowledge_collection: String,
    pub request_timeout: Duration,
    /// When a collection's small online segments are merged into one.
    pub compact: CompactOptions,
    /// Keys the routes need (none: every route open).
    pub api_keys: ApiKeys,
    /// A read-only replica: every write route answers 405, no job runs, and new versions
    /// arrive by polling.
    pub read_only: bool,
    /// What parses uploaded files: in this process by default; `quarry serve` parses them in
    /// worker processes, so that no upload can take the server down.
    pub parser: Arc<dyn Parser>,
    /// An OpenAI-compatible LLM endpoint for /api/chat (None: /api/chat answers 503).
    pub llm: Option<crate::llm::LlmSettings>,
    /// How an uploaded document's layers (L0, L1) are made.
    pub summaries: Summaries,
}

/// CPU cores available to the process.
fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

impl ServeOptions {
    pub fn new(addr: SocketAddr, data_dir: PathBuf) -> Self {
        Self {
            addr,
            collections: Vec::new(),
            data_dir,
            store: StoreOptions::default(),
            upload_limit: 100 * 1024 * 1024,
            ingest_workers: 2,
            search_workers: 4 * cores(),
            query_embed_threads: None,
            query_pass_queries: None,
            search_queue: 64,
            query_cache: 4096,
            poll_interval: Some(Duration::from_secs(30)),
            rag_collection: "rag".into(),
            knowledge_collection: "knowledge".into(),
            request_timeout: Duration::from_secs(60),
            compact: CompactOptions::default(),
            api_keys: ApiKeys::default(),
            read_only: false,
            parser: Arc::new(AutoParser),
            llm: None,
            summaries: Summaries::default(),
        }
    }
}

/// Whether the server is ready (start-up done) and whether it is shutting down.
#[derive(Default)]
pub struct Lifecycle {
    pub ready: AtomicBool,
    pub shutting_down: AtomicBool,
}

/// What the HTTP layer itself is told: keys, the body limit, the RAG collection's name,
/// whether writes are refused.
pub struct HttpSettings {
    pub api_keys: ApiKeys,
    pub upload_limit: usize,
    pub rag_collection: String,
    pub knowledge_collection: String,
    pub read_only: bool,
    /// The LLM endpoint /api/chat talks to (None: not configured, /api/chat answers 503).
    pub llm: Option<Arc<crate::llm::LlmClient>>,
}

/// The parts of the server, each shared by the routes that need it: a route takes the parts
/// it uses (`State<Arc<CollectionRegistry>>`, ...), never the whole. Only the router's
/// assembly below sees all of them.
#[derive(Clone)]
pub struct AppState {
    options: Arc<ServeOptions>,
    collections: Arc<CollectionRegistry>,
    ingestion: Arc<Ingestion>,
    search: Arc<SearchQueue>,
    metrics: Arc<Metrics>,
    events: Arc<EventHub>,
    lifecycle: Arc<Lifecycle>,
    http: Arc<HttpSettings>,
}

/// Each part of [`AppState`] is a state a route can ask for.
macro_rules! state_parts {
    ($($field:ident: $part:ty),* $(,)?) => {
        $(impl FromRef<AppState> for Arc<$part> {
            fn from_ref(state: &AppState) -> Self {
                state.$field.clone()
            }
        })*
    };
}

state_parts!(
    collections: CollectionRegistry,
    ingestion: Ingestion,
    search: SearchQueue,
    metrics: Metrics,
    events: EventHub,
    lifecycle: Lifecycle,
    http: HttpSettings,
);

impl FromRef<AppState> for SearchParts {
    fn from_ref(state: &AppState) -> Self {
        SearchParts {
            collections: state.collections.clone(),
            queue: state.search.clone(),
            metrics: state.metrics.clone(),
        }
    }
}

impl AppState {
    /// A served collection, by name.
    pub fn collection(&self, name: &str) -> Option<Arc<Collection>> {
        self.collections.get(name)
    }

    /// The ingestion side: jobs, their worker slots, online ingestion.
    pub fn ingestion(&self) -> &Arc<Ingestion> {
        &self.ingestion
    }

    /// The options the server was started with.
    pub fn options(&self) -> &ServeOptions {
        &self.options
    }
}

/// Builds the state: the registry from the data dir, the `--collection` snapshots, the RAG
/// collection, and the jobs a previous run left unfinished.
pub async fn start(options: ServeOptions, embedder: Arc<dyn Embedder>) -> Result<AppState, String> {
    std::fs::create_dir_all(&options.data_dir).map_err(|e| format!("{}: {e}", options.data_dir.display()))?;
    let load = LoadOptions {
        store: options.store.clone(),
        cache_dir: options.data_dir.join("cache"),
        verify: true,
        version: None,
    };
    let llm = match &options.llm {
        Some(settings) => Some(Arc::new(
            crate::llm::LlmClient::new(settings.clone()).map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let metrics = Arc::new(Metrics::new());
    let events = Arc::new(EventHub::default());
    let collections = Arc::new(CollectionRegistry::new(
        options.data_dir.clone(),
        load,
        query_embedder(&options, embedder, &metrics),
        events.clone(),
        metrics.clone(),
    ));
    let ingestion = Arc::new(Ingestion {
        collections: collections.clone(),
        jobs: JobBook::open(options.data_dir.join("jobs")).map_err(|e| e.to_string())?,
        events: events.clone(),
        metrics: metrics.clone(),
        ingest_slots: Arc::new(Semaphore::new(options.ingest_workers.max(1))),
        workers: options.ingest_workers.max(1),
        uploads_root: options.data_dir.join("uploads"),
        parser: options.parser.clone(),
        compact: options.compact.clone(),
        summarizer: crate::llm_summaries::summarizer_for(
            options.summaries,
            options.llm.as_ref(),
            tokio::runtime::Handle::current(),
        )
        .map_err(|e| e.to_string())?,
    });
    let state = AppState {
        search: Arc::new(SearchQueue::new(options.search_workers, options.search_queue)),
        http: Arc::new(HttpSettings {
            api_keys: options.api_keys.clone(),
            upload_limit: options.upload_limit,
            rag_collection: options.rag_collection.clone(),
            knowledge_collection: options.knowledge_collection.clone(),
            read_only: options.read_only,
            llm,
        }),
        lifecycle: Arc::new(Lifecycle::default()),
        options: Arc::new(options),
        collections,
        ingestion,
        metrics,
        events,
    };
    for record in wanted_collections(&state.options, &state.collections)? {
        if record.managed {
            std::fs::create_dir_all(&record.uri).map_err(|e| format!("{}: {e}", record.uri))?;
        }
        state.collections.add(record).await?;
    }
    if !state.options.read_only {
        crate::ingest::jobs::resume(&state.ingestion).await;
    }
    state.lifecycle.ready.store(true, Ordering::SeqCst);
    if let Some(interval) = state.options.poll_interval {
        tokio::spawn(poll_latest(
            state.collections.clone(),
            state.lifecycle.clone(),
            interval,
        ));
    }
    Ok(state)
}

/// The embedder searches use: the model behind shared query passes (sized by the model's
/// device unless the options say) and the recent-query cache.
fn query_embedder(options: &ServeOptions, embedder: Arc<dyn Embedder>, metrics: &Metrics) -> Arc<dyn Embedder> {
    let batching = QueryBatching::for_device(&embedder.device_name(), cores())
        .with(options.query_embed_threads, options.query_pass_queries);
    let embedder: Arc<dyn Embedder> = match batching.threads {
        0 => embedder,
        threads => Arc::new(BatchingEmbedder::new(
            embedder,
            threads,
            batching.per_pass,
            metrics.query_embed_pass.clone(),
        )),
    };
    match options.query_cache {
        0 => embedder,
        capacity => Arc::new(CachingEmbedder::new(embedder, capacity, metrics.query_cache.clone())),
    }
}

/// The collections to serve: those the data dir's registry lists, the `--collection` ones
/// (a name given again with another URI takes the new one) and the RAG collection.
fn wanted_collections(options: &ServeOptions, registry: &CollectionRegistry) -> Result<Vec<CollectionRecord>, String> {
    let saved: Vec<CollectionRecord> = read_json(&registry.registry_path())
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let mut wanted: BTreeMap<String, CollectionRecord> = saved.into_iter().map(|r| (r.name.clone(), r)).collect();
    for (name, uri) in &options.collections {
        validate_name(name)?;
        let keep = wanted.get(name).filter(|r| &r.uri == uri).cloned();
        wanted.insert(
            name.clone(),
            keep.unwrap_or(CollectionRecord {
                name: name.clone(),
                uri: uri.clone(),
                managed: false,
                description: None,
                metadata: Default::default(),
                created_at: chrono::Utc::now(),
            }),
        );
    }
    let built_in = [
        (&options.rag_collection, "Documents ingested through /api/rag/ingest"),
        (&options.knowledge_collection, "The knowledge library of /api/knowledge"),
    ];
    for (name, description) in built_in {
        if !wanted.contains_key(name) {
            validate_name(name)?;
            let uri = registry.managed_root(name).display().to_string();
            wanted.insert(
                name.clone(),
                CollectionRecord {
                    name: name.clone(),
                    uri,
                    managed: true,
                    description: Some(description.into()),
                    metadata: Default::default(),
                    created_at: chrono::Utc::now(),
                },
            );
        }
    }
    Ok(wanted.into_values().collect())
}

/// Hot reload: every collection checks its LATEST on an interval.
async fn poll_latest(collections: Arc<CollectionRegistry>, lifecycle: Arc<Lifecycle>, interval: Duration) {
    let mut ticker = tokio::time::interval(interval);
    ticker.tick().await;
    while !lifecycle.shutting_down.load(Ordering::SeqCst) {
        ticker.tick().await;
        for collection in collections.all() {
            let _guard = collection.publish_lock.lock().await;
            match collections.reload(&collection).await {
                Ok(true) => tracing::info!(
                    "collection {} now serves {}",
                    collection.name(),
                    collection.version().unwrap_or_default()
                ),
                Ok(false) => {}
                Err(e) => tracing::error!(
                    "collection {}: reload failed, previous version keeps serving: {e}",
                    collection.name()
                ),
            }
        }
        collections.refresh_snapshot_metric();
    }
}

/// The HTTP surface.
pub fn router(state: AppState) -> Router {
    // Layers run outside in: the last added first. A request meets the key check before the
    // read-only refusal, so an unauthenticated client learns nothing of the routes.
    crate::http::routes()
        .layer(axum::middleware::from_fn_with_state(
            state.http.clone(),
            crate::http::read_only::refuse_writes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.http.clone(),
            crate::http::auth::require_key,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.metrics.clone(),
            crate::http::ops::track,
        ))
        .layer(DefaultBodyLimit::max(state.http.upload_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.http.clone(),
            crate::http::ops::refuse_oversized,
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            state.options.request_timeout,
        ))
        .layer(axum::middleware::from_fn(crate::http::api_error::shape_bare_errors))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// Serves until `shutdown` resolves, then stops accepting, lets requests finish and waits
/// (up to `drain`) for running jobs; unfinished jobs resume at the next start.
pub async fn serve(
    state: AppState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    drain: Duration,
) -> std::io::Result<()> {
    let app = router(state.clone());
    let (lifecycle, events) = (state.lifecycle.clone(), state.events.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            lifecycle.shutting_down.store(true, Ordering::SeqCst);
            // Event streams never end on their own; closing them lets the connections drain.
            events.close();
        })
        .await?;
    let deadline = tokio::time::Instant::now() + drain;
    while !state.ingestion.idle() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
