//! The server: options, shared state, start-up (collections, resumed jobs, reload pollers),
//! the router, and graceful shutdown.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use quarry_indexer::embed::Embedder;
use quarry_indexer::parse::{AutoParser, Parser};
use quarry_indexer::store::StoreOptions;
use tokio::sync::Semaphore;

use crate::collection::{validate_name, Collection, CollectionRecord};
use crate::event_hub::EventHub;
use crate::events::VersionEvent;
use crate::http::auth::ApiKeys;
use crate::http::metrics::Metrics;
use crate::http::search_queue::SearchQueue;
use crate::ingest::jobs::JobBook;
use crate::persist::{read_json, write_json_latest};
use crate::records::FileInfo;
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
    pub request_timeout: Duration,
    /// When a collection's small online segments are merged into one.
    pub compact: CompactOptions,
    /// Keys the routes need (none: every route open).
    pub api_keys: ApiKeys,
    /// What parses uploaded files: in this process by default; `quarry serve` parses them in
    /// worker processes, so that no upload can take the server down.
    pub parser: Arc<dyn Parser>,
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
            request_timeout: Duration::from_secs(60),
            compact: CompactOptions::default(),
            api_keys: ApiKeys::default(),
            parser: Arc::new(AutoParser),
        }
    }
}

pub struct AppState {
    pub options: ServeOptions,
    pub embedder: Arc<dyn Embedder>,
    pub collections: RwLock<BTreeMap<String, Arc<Collection>>>,
    pub jobs: JobBook,
    /// The collections' events (ingestion, new versions) for their event streams.
    pub events: EventHub,
    pub ingest_slots: Arc<Semaphore>,
    pub search: SearchQueue,
    pub metrics: Metrics,
    pub load: LoadOptions,
    pub ready: AtomicBool,
    pub shutting_down: AtomicBool,
}

impl AppState {
    fn registry_path(&self) -> PathBuf {
        self.options.data_dir.join("collections.json")
    }

    pub fn files_path(&self, name: &str) -> PathBuf {
        self.options.data_dir.join("files").join(format!("{name}.json"))
    }

    pub fn collection(&self, name: &str) -> Option<Arc<Collection>> {
        self.collections.read().expect("collections lock").get(name).cloned()
    }

    /// Persists the collection list.
    pub fn save_registry(&self) -> std::io::Result<()> {
        write_json_latest(&self.registry_path(), || {
            self.collections
                .read()
                .expect("collections lock")
                .values()
                .map(|c| c.record.clone())
                .collect::<Vec<CollectionRecord>>()
        })
    }

    /// Persists one collection's uploaded-file records.
    pub fn save_files(&self, collection: &Collection) -> std::io::Result<()> {
        write_json_latest(&self.files_path(collection.name()), || {
            collection.files.lock().expect("files lock").clone()
        })
    }

    /// Loads `collection`'s LATEST if it changed (see [`Collection::reload`]), telling its
    /// event stream when it serves a new version.
    pub async fn reload_collection(&self, collection: &Collection) -> Result<bool, String> {
        let previous_version = collection.version();
        let changed = collection.reload(&self.load, &self.embedder).await?;
        if let (true, Some(searcher)) = (changed, collection.searcher()) {
            let counts = &searcher.snapshot().manifest.counts;
            self.events.publish(VersionEvent {
                event: VersionEvent::NAME,
                collection_name: collection.name().to_string(),
                version: searcher.snapshot().manifest.version.clone(),
                previous_version,
                documents: counts.documents,
                chunks: counts.chunks,
                timestamp: chrono::Utc::now(),
            });
        }
        Ok(changed)
    }

    /// Adds a collection (loading its snapshot) and persists the registry.
    pub async fn add_collection(&self, record: CollectionRecord) -> Result<Arc<Collection>, String> {
        let files: Vec<FileInfo> = read_json(&self.files_path(&record.name))
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let collection = Arc::new(Collection::new(record, files));
        if let Err(e) = self.reload_collection(&collection).await {
            tracing::error!("collection {}: {e}", collection.name());
        }
        self.collections
            .write()
            .expect("collections lock")
            .insert(collection.name().to_string(), collection.clone());
        self.save_registry().map_err(|e| e.to_string())?;
        self.refresh_snapshot_metric();
        Ok(collection)
    }

    /// The version gauge: one series per collection, for the version it serves.
    pub fn refresh_snapshot_metric(&self) {
        self.metrics.snapshot.reset();
        for collection in self.collections.read().expect("collections lock").values() {
            if let Some(version) = collection.version() {
                self.metrics
                    .snapshot
                    .with_label_values(&[collection.name(), &version])
                    .set(1);
            }
        }
    }

    /// Where an API-created collection keeps its snapshot.
    pub fn managed_root(&self, name: &str) -> PathBuf {
        self.options.data_dir.join("collections").join(name)
    }
}

/// Builds the state: the registry from the data dir, the `--collection` snapshots, the RAG
/// collection, and the jobs a previous run left unfinished.
pub async fn start(options: ServeOptions, embedder: Arc<dyn Embedder>) -> Result<Arc<AppState>, String> {
    std::fs::create_dir_all(&options.data_dir).map_err(|e| format!("{}: {e}", options.data_dir.display()))?;
    let load = LoadOptions {
        store: options.store.clone(),
        cache_dir: options.data_dir.join("cache"),
        verify: true,
        version: None,
    };
    let metrics = Metrics::new();
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
    let embedder: Arc<dyn Embedder> = match options.query_cache {
        0 => embedder,
        capacity => Arc::new(CachingEmbedder::new(embedder, capacity, metrics.query_cache.clone())),
    };
    let state = Arc::new(AppState {
        jobs: JobBook::open(options.data_dir.join("jobs")).map_err(|e| e.to_string())?,
        events: EventHub::default(),
        ingest_slots: Arc::new(Semaphore::new(options.ingest_workers.max(1))),
        search: SearchQueue::new(options.search_workers, options.search_queue),
        metrics,
        collections: RwLock::new(BTreeMap::new()),
        ready: AtomicBool::new(false),
        shutting_down: AtomicBool::new(false),
        load,
        embedder,
        options,
    });
    let saved: Vec<CollectionRecord> = read_json(&state.registry_path())
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let mut wanted: BTreeMap<String, CollectionRecord> = saved.into_iter().map(|r| (r.name.clone(), r)).collect();
    for (name, uri) in &state.options.collections {
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
    let rag = state.options.rag_collection.clone();
    if !wanted.contains_key(&rag) {
        validate_name(&rag)?;
        let uri = state.managed_root(&rag).display().to_string();
        wanted.insert(
            rag.clone(),
            CollectionRecord {
                name: rag,
                uri,
                managed: true,
                description: Some("Documents ingested through /api/rag/ingest".into()),
                metadata: Default::default(),
                created_at: chrono::Utc::now(),
            },
        );
    }
    for record in wanted.into_values() {
        if record.managed {
            std::fs::create_dir_all(&record.uri).map_err(|e| format!("{}: {e}", record.uri))?;
        }
        state.add_collection(record).await?;
    }
    crate::ingest::jobs::resume(&state).await;
    state.ready.store(true, Ordering::SeqCst);
    if let Some(interval) = state.options.poll_interval {
        tokio::spawn(poll_latest(state.clone(), interval));
    }
    Ok(state)
}

/// Hot reload: every collection checks its LATEST on an interval.
async fn poll_latest(state: Arc<AppState>, interval: Duration) {
    let mut ticker = tokio::time::interval(interval);
    ticker.tick().await;
    while !state.shutting_down.load(Ordering::SeqCst) {
        ticker.tick().await;
        let collections: Vec<Arc<Collection>> = state
            .collections
            .read()
            .expect("collections lock")
            .values()
            .cloned()
            .collect();
        for collection in collections {
            let _guard = collection.publish_lock.lock().await;
            match state.reload_collection(&collection).await {
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
        state.refresh_snapshot_metric();
    }
}

/// The HTTP surface.
pub fn router(state: Arc<AppState>) -> Router {
    crate::http::routes()
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::http::auth::require_key,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::http::ops::track,
        ))
        .layer(DefaultBodyLimit::max(state.options.upload_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
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
    state: Arc<AppState>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    drain: Duration,
) -> std::io::Result<()> {
    let app = router(state.clone());
    let flag = state.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            flag.shutting_down.store(true, Ordering::SeqCst);
            // Event streams never end on their own; closing them lets the connections drain.
            flag.events.close();
        })
        .await?;
    let deadline = tokio::time::Instant::now() + drain;
    while state.ingest_slots.available_permits() < state.options.ingest_workers.max(1)
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
