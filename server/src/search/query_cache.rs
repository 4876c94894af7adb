//! Query embeddings of recent searches, kept so that a repeated query skips the model: on a
//! CPU server the query's forward pass is most of a vector or hybrid search. The model is
//! fixed for the server's lifetime and embeds deterministically, so a cached vector is the
//! one the model would give again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prometheus::IntCounterVec;
use quarry_indexer::embed::{Embedder, Embeddings, ModelInfo, ModelTokenizer};
use quarry_indexer::{IndexerError, Result};

/// At most `capacity` entries in two generations: lookups promote an entry of the older one,
/// and when the newer one is half full the older one is dropped. Entries used within the
/// last `capacity / 2` insertions always survive; each operation is O(1).
pub struct RecentMap<V> {
    newer: HashMap<String, V>,
    older: HashMap<String, V>,
    generation: usize,
}

impl<V: Clone> RecentMap<V> {
    pub fn new(capacity: usize) -> Self {
        Self {
            newer: HashMap::new(),
            older: HashMap::new(),
            generation: (capacity / 2).max(1),
        }
    }

    pub fn get(&mut self, key: &str) -> Option<V> {
        if let Some(value) = self.newer.get(key) {
            return Some(value.clone());
        }
        let value = self.older.remove(key)?;
        self.insert(key.to_string(), value.clone());
        Some(value)
    }

    pub fn insert(&mut self, key: String, value: V) {
        if self.newer.len() >= self.generation {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(key, value);
    }

    pub fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An embedder whose one-text calls and query calls (a search's query and its other reading,
/// [`Embedder::embed_queries`]) are answered from [`RecentMap`] for each text embedded
/// recently. Other calls (an upload's chunks) go straight through.
pub struct CachingEmbedder {
    inner: Arc<dyn Embedder>,
    recent: Mutex<RecentMap<Arc<[f32]>>>,
    /// `quarry_query_cache_total{result="hit"|"miss"}`.
    counted: IntCounterVec,
}

impl CachingEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, capacity: usize, counted: IntCounterVec) -> Self {
        Self {
            inner,
            recent: Mutex::new(RecentMap::new(capacity)),
            counted,
        }
    }
}

impl Embedder for CachingEmbedder {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        self.inner.tokenizer()
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        self.inner.embed_tokens(ids)
    }

    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        self.inner.embed_tokens_reporting(ids, done)
    }

    fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        match texts {
            [_] => self.embed_queries(texts),
            _ => self.inner.embed(texts),
        }
    }

    /// Each text from the recent ones where it is there; the rest embedded in one call.
    fn embed_queries(&self, texts: &[&str]) -> Result<Embeddings> {
        let dim = self.info().dim;
        let cached: Vec<Option<Arc<[f32]>>> = {
            let mut recent = self.recent.lock().expect("query cache lock");
            texts.iter().map(|text| recent.get(text)).collect()
        };
        let missing: Vec<&str> = texts
            .iter()
            .zip(&cached)
            .filter(|(_, vector)| vector.is_none())
            .map(|(text, _)| *text)
            .collect();
        self.counted
            .with_label_values(&["hit"])
            .inc_by((texts.len() - missing.len()) as u64);
        self.counted.with_label_values(&["miss"]).inc_by(missing.len() as u64);
        let embedded = match missing.is_empty() {
            true => Vec::new(),
            false => self.inner.embed_queries(&missing)?.data,
        };
        if embedded.len() != dim * missing.len() {
            return Err(IndexerError::Embed(format!(
                "the model returned {} values for {} queries of {dim} dimensions",
                embedded.len(),
                missing.len()
            )));
        }
        let mut fresh = embedded.chunks(dim.max(1));
        let mut data = Vec::with_capacity(dim * texts.len());
        let mut recent = self.recent.lock().expect("query cache lock");
        for (text, vector) in texts.iter().zip(cached) {
            match vector {
                Some(vector) => data.extend_from_slice(&vector),
                None => {
                    let vector = fresh.next().unwrap_or_default();
                    recent.insert(text.to_string(), vector.into());
                    data.extend_from_slice(vector);
                }
            }
        }
        Ok(Embeddings { dim, data })
    }

    fn device_name(&self) -> String {
        self.inner.device_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recently_used_entries_survive_and_the_size_is_bounded() {
        let mut map = RecentMap::new(4);
        for i in 0..3 {
            map.insert(format!("q{i}"), i);
        }
        // q0 and q1 went to the older generation when q2 came; reading q0 promotes it.
        assert_eq!(map.get("q0"), Some(0));
        map.insert("q3".into(), 3);
        map.insert("q4".into(), 4);
        assert_eq!(map.get("q1"), None, "q1 was not used and aged out");
        assert_eq!(map.get("q4"), Some(4));
        for i in 0..100 {
            map.insert(format!("x{i}"), i);
            assert!(map.len() <= 4, "{} entries", map.len());
        }
        assert_eq!(map.get("x99"), Some(99));
        assert_eq!(map.get("x98"), Some(98));
        assert!(!map.is_empty());
    }
}
