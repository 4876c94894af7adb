//! A collection's own layers (seed 003's GenerateDatasetContext), made from the abstracts of
//! the live documents of the version it serves, by the server's summarizer, once a version:
//! the first request that asks makes them (on a blocking thread: an LLM's take two calls),
//! and the next asks of that version get them kept. A new version (a batch run, an upload,
//! a delete) makes them again from its own documents.

use std::sync::Arc;

use quarry_indexer::summary::{DocumentLayers, NamedAbstract, Summarizer, COLLECTION_SAMPLE};

use crate::search::loaded::LoadedSnapshot;

/// One version's collection layers, and how many abstracts they were read from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectionLayers {
    pub version: String,
    pub layers: DocumentLayers,
    /// The abstracts read (the collection's, or an even sample of them).
    pub from_documents: usize,
}

/// The layers of the version last asked for.
#[derive(Default)]
pub struct CollectionLayersCache {
    kept: tokio::sync::Mutex<Option<Arc<CollectionLayers>>>,
}

impl CollectionLayersCache {
    /// The collection layers of `snapshot`, made by `summarizer` unless this version's are
    /// kept. `name_of` names a document as the collection's listing does. Fails only where
    /// the summarizer panicked.
    pub async fn of(
        &self,
        snapshot: Arc<LoadedSnapshot>,
        summarizer: Arc<dyn Summarizer>,
        name_of: fn(&quarry_indexer::snapshot::DocumentRecord) -> &str,
    ) -> Result<Arc<CollectionLayers>, tokio::task::JoinError> {
        // Held while they are made: requests for the same version wait for one making.
        let mut kept = self.kept.lock().await;
        let version = snapshot.manifest.version.clone();
        if let Some(layers) = kept.as_ref().filter(|kept| kept.version == version) {
            return Ok(layers.clone());
        }
        let made = tokio::task::spawn_blocking(move || {
            let documents: Vec<NamedAbstract<'_>> = snapshot
                .live_documents()
                .map(|(document, _, _)| document)
                .filter(|document| !document.layers.abstract_text.is_empty())
                .map(|document| NamedAbstract {
                    name: name_of(document),
                    text: &document.layers.abstract_text,
                })
                .collect();
            CollectionLayers {
                layers: summarizer.collection_layers(&documents),
                from_documents: documents.len().min(COLLECTION_SAMPLE),
                version,
            }
        })
        .await?;
        let made = Arc::new(made);
        *kept = Some(made.clone());
        Ok(made)
    }
}
