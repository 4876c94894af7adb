//! What a loaded segment keeps of the columns its searches build on first use (metadata
//! values by key, interned facet values by field): built once per key and shared, at most a
//! fixed number of keys kept so that odd requests cannot grow memory; a key past the limit is
//! built again per call.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

pub struct KeptColumns<K, V> {
    columns: Mutex<HashMap<K, Arc<V>>>,
    limit: usize,
}

impl<K: Hash + Eq, V> KeptColumns<K, V> {
    /// Keeps at most `limit` keys.
    pub fn new(limit: usize) -> Self {
        Self {
            columns: Mutex::new(HashMap::new()),
            limit,
        }
    }

    /// The column of `key`, built by `build` unless kept (and kept when there is room).
    pub fn get_or_build<Q>(&self, key: &Q, build: impl FnOnce() -> V) -> Arc<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(column) = self.columns.lock().expect("kept columns lock").get(key) {
            return column.clone();
        }
        // Built without the lock: another search may build the same key meanwhile; the first
        // one kept wins.
        let column = Arc::new(build());
        let mut columns = self.columns.lock().expect("kept columns lock");
        if columns.len() < self.limit {
            columns.entry(key.to_owned()).or_insert_with(|| column.clone());
        }
        column
    }

    /// Keys kept.
    pub fn len(&self) -> usize {
        self.columns.lock().expect("kept columns lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
