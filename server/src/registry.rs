//! The collections a server serves: their records (persisted under the data dir), each one's
//! current version, and loading a new one (telling the event streams and the version gauge).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use quarry_indexer::embed::Embedder;
use quarry_indexer::store::StoreOptions;

use crate::collection::{Collection, CollectionRecord};
use crate::event_hub::EventHub;
use crate::events::VersionEvent;
use crate::metrics::Metrics;
use crate::persist::{read_json, write_json_latest};
use crate::records::FileInfo;
use crate::search::loaded::LoadOptions;

pub struct CollectionRegistry {
    data_dir: PathBuf,
    load: LoadOptions,
    embedder: Arc<dyn Embedder>,
    collections: RwLock<BTreeMap<String, Arc<Collection>>>,
    events: Arc<EventHub>,
    metrics: Arc<Metrics>,
}

impl CollectionRegistry {
    /// An empty registry; `embedder` embeds the queries of every collection.
    pub fn new(
        data_dir: PathBuf,
        load: LoadOptions,
        embedder: Arc<dyn Embedder>,
        events: Arc<EventHub>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            data_dir,
            load,
            embedder,
            collections: RwLock::new(BTreeMap::new()),
            events,
            metrics,
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Collection>> {
        self.collections.read().expect("collections lock").get(name).cloned()
    }

    /// Every collection, by name.
    pub fn all(&self) -> Vec<Arc<Collection>> {
        self.collections
            .read()
            .expect("collections lock")
            .values()
            .cloned()
            .collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.collections
            .read()
            .expect("collections lock")
            .keys()
            .cloned()
            .collect()
    }

    /// The model that embeds queries and uploads.
    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    /// Where snapshots are read and written (S3 settings).
    pub fn store(&self) -> &StoreOptions {
        &self.load.store
    }

    /// The registry file: every collection's record.
    pub fn registry_path(&self) -> PathBuf {
        self.data_dir.join("collections.json")
    }

    /// Where a collection's uploaded-file records are kept.
    pub fn files_path(&self, name: &str) -> PathBuf {
        self.data_dir.join("files").join(format!("{name}.json"))
    }

    /// Where an API-created collection keeps its snapshot.
    pub fn managed_root(&self, name: &str) -> PathBuf {
        self.data_dir.join("collections").join(name)
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
    pub async fn reload(&self, collection: &Collection) -> Result<bool, String> {
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
    pub async fn add(&self, record: CollectionRecord) -> Result<Arc<Collection>, String> {
        let files: Vec<FileInfo> = read_json(&self.files_path(&record.name))
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let collection = Arc::new(Collection::new(record, files));
        if let Err(e) = self.reload(&collection).await {
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

    /// Removes a collection from the registry (persisted) and its file records; a collection
    /// created here also loses its snapshot.
    pub fn remove(&self, collection: &Collection) -> std::io::Result<()> {
        self.collections
            .write()
            .expect("collections lock")
            .remove(collection.name());
        self.save_registry()?;
        let _ = std::fs::remove_file(self.files_path(collection.name()));
        if collection.record.managed {
            let _ = std::fs::remove_dir_all(&collection.record.uri);
        }
        self.refresh_snapshot_metric();
        Ok(())
    }

    /// The version gauge: one series per collection, for the version it serves.
    pub fn refresh_snapshot_metric(&self) {
        self.metrics.snapshot.reset();
        for collection in self.all() {
            if let Some(version) = collection.version() {
                self.metrics
                    .snapshot
                    .with_label_values(&[collection.name(), &version])
                    .set(1);
            }
        }
    }
}
