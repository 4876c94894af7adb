//! Concurrent searches' queries embedded in shared passes (`query_batcher`): each caller gets
//! its own query's embedding, waiting queries are taken together, and a failed or panicking
//! pass fails only its own queries. A query's texts (the query and its corrected reading)
//! share a pass, and the query cache (`query_cache`) answers each text it holds.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use prometheus::{Histogram, HistogramOpts};
use prometheus::{IntCounterVec, Opts};
use quarry_indexer::embed::{Embedder, Embeddings, ModelInfo, ModelTokenizer};
use quarry_server::search::query_batcher::{BatchingEmbedder, QUERIES_PER_PASS};
use quarry_server::search::query_cache::CachingEmbedder;

fn pass_sizes() -> Histogram {
    Histogram::with_opts(HistogramOpts::new("passes", "queries per pass").buckets(vec![1.0, 2.0, 3.0, 4.0, 8.0]))
        .unwrap()
}

/// The real model, with its first pass held back (so the other callers queue up behind it),
/// and an optional panic or error in a chosen pass.
struct Gated {
    model: Arc<dyn Embedder>,
    passes: AtomicUsize,
    /// Texts embedded, over every pass.
    texts: AtomicUsize,
    first_pass_delay: Duration,
    panic_in_pass: Option<usize>,
    fail_in_pass: Option<usize>,
}

impl Gated {
    fn new(first_pass_delay: Duration) -> Self {
        Self {
            model: common::embedder(),
            passes: AtomicUsize::new(0),
            texts: AtomicUsize::new(0),
            first_pass_delay,
            panic_in_pass: None,
            fail_in_pass: None,
        }
    }
}

impl Embedder for Gated {
    fn info(&self) -> &ModelInfo {
        self.model.info()
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        self.model.tokenizer()
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> quarry_indexer::Result<Embeddings> {
        let pass = self.passes.fetch_add(1, Ordering::SeqCst);
        self.texts.fetch_add(ids.len(), Ordering::SeqCst);
        if pass == 0 {
            std::thread::sleep(self.first_pass_delay);
        }
        if self.panic_in_pass == Some(pass) {
            panic!("planted panic");
        }
        if self.fail_in_pass == Some(pass) {
            return Err(quarry_indexer::IndexerError::Embed("planted failure".into()));
        }
        self.model.embed_tokens(ids)
    }

    fn device_name(&self) -> String {
        self.model.device_name()
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn concurrent_queries_share_passes_and_each_gets_its_own_embedding() {
    queries_share_passes_of_at_most(QUERIES_PER_PASS);
}

#[test]
fn a_smaller_pass_size_caps_the_passes() {
    queries_share_passes_of_at_most(2);
}

/// Nine concurrent queries through one model thread whose passes hold at most `per_pass`.
fn queries_share_passes_of_at_most(per_pass: usize) {
    let queries: Vec<String> = (0..9)
        .map(|i| format!("query number {i} about {} things", ["red", "green", "blue"][i % 3]).repeat(1 + i % 3))
        .collect();
    let histogram = pass_sizes();
    let gated = Arc::new(Gated::new(Duration::from_millis(300)));
    let batching = Arc::new(BatchingEmbedder::new(gated.clone(), 1, per_pass, histogram.clone()));
    let start = Arc::new(Barrier::new(queries.len()));
    let answers: Vec<(String, Vec<f32>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = queries
            .iter()
            .enumerate()
            .map(|(i, query)| {
                let (batching, start) = (batching.clone(), start.clone());
                scope.spawn(move || {
                    start.wait();
                    // The first caller's pass is held back; the others queue behind it.
                    if i > 0 {
                        std::thread::sleep(Duration::from_millis(30));
                    }
                    (query.clone(), batching.embed(&[query.as_str()]).unwrap().data)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let model = common::embedder();
    for (query, vector) in &answers {
        let alone = model.embed(&[query.as_str()]).unwrap().data;
        assert_eq!(vector.len(), alone.len());
        assert!(
            cosine(vector, &alone) > 0.99999,
            "{query}: cosine {} to its own embedding",
            cosine(vector, &alone)
        );
    }
    // Every query in exactly one pass; the eight that queued behind the first pass shared
    // passes (one pass each would be nine), none of more than `per_pass`. Expected with 4: 1, 4, 4.
    let passes = histogram.get_sample_count() as usize;
    assert_eq!(histogram.get_sample_sum() as usize, queries.len());
    assert!(
        passes < queries.len() && passes >= queries.len().div_ceil(per_pass),
        "{passes} passes"
    );
    use prometheus::core::Metric;
    let metric = histogram.metric();
    let at_most_cap = metric
        .get_histogram()
        .get_bucket()
        .iter()
        .find(|b| b.upper_bound() == per_pass as f64)
        .unwrap()
        .cumulative_count();
    assert_eq!(at_most_cap as usize, passes, "a pass larger than {per_pass}");
    assert_eq!(gated.passes.load(Ordering::SeqCst), passes);
}

#[test]
fn a_failed_or_panicking_pass_fails_only_its_queries_and_the_thread_goes_on() {
    let mut gated = Gated::new(Duration::ZERO);
    gated.panic_in_pass = Some(0);
    gated.fail_in_pass = Some(1);
    let batching = BatchingEmbedder::new(Arc::new(gated), 1, QUERIES_PER_PASS, pass_sizes());
    let panicked = batching.embed(&["first"]).unwrap_err().to_string();
    assert!(panicked.contains("panicked"), "{panicked}");
    let failed = batching.embed(&["second"]).unwrap_err().to_string();
    assert!(failed.contains("planted failure"), "{failed}");
    let fine = batching.embed(&["third"]).unwrap();
    assert_eq!(fine.data.len(), fine.dim);
    // Several texts at once (an upload's chunks) go straight to the model.
    let chunks = batching.embed(&["one chunk", "another chunk"]).unwrap();
    assert_eq!(chunks.data.len(), 2 * chunks.dim);
}

#[test]
fn a_querys_texts_share_a_pass_and_the_cache_answers_each_it_holds() {
    let histogram = pass_sizes();
    let gated = Arc::new(Gated::new(Duration::ZERO));
    let batching = Arc::new(BatchingEmbedder::new(
        gated.clone(),
        1,
        QUERIES_PER_PASS,
        histogram.clone(),
    ));
    let counted = IntCounterVec::new(Opts::new("cache", "query cache lookups"), &["result"]).unwrap();
    let cached = CachingEmbedder::new(batching.clone(), 16, counted.clone());
    let model = common::embedder();
    let alone = |text: &str| model.embed(&[text]).unwrap().data;
    let rows = |embeddings: Embeddings| -> Vec<Vec<f32>> {
        embeddings.data.chunks(embeddings.dim).map(<[f32]>::to_vec).collect()
    };
    let assert_rows = |got: &[Vec<f32>], texts: &[&str]| {
        assert_eq!(got.len(), texts.len());
        for (vector, text) in got.iter().zip(texts) {
            let cosine = cosine(vector, &alone(text));
            assert!(cosine > 0.99999, "{text}: cosine {cosine} to its own embedding");
        }
    };

    // The query and its corrected reading: one pass of two, rows in order.
    let texts = ["Hydorgen bsues", "Hydrogen buses"];
    assert_rows(&rows(batching.embed_queries(&texts).unwrap()), &texts);
    assert_eq!((histogram.get_sample_count(), histogram.get_sample_sum()), (1, 2.0));

    // Through the cache: what it holds is not embedded again.
    let hits = || counted.with_label_values(&["hit"]).get();
    let misses = || counted.with_label_values(&["miss"]).get();
    assert_rows(&rows(cached.embed_queries(&texts).unwrap()), &texts);
    assert_eq!((hits(), misses()), (0, 2));
    let before = gated.texts.load(Ordering::SeqCst);
    let texts = ["Hydorgen bsues", "river banks"];
    assert_rows(&rows(cached.embed_queries(&texts).unwrap()), &texts);
    assert_eq!((hits(), misses()), (1, 3));
    assert_eq!(
        gated.texts.load(Ordering::SeqCst) - before,
        1,
        "only the new text embedded"
    );
    // A one-text call is a query too, answered from the same cache.
    assert_rows(&rows(cached.embed(&["river banks"]).unwrap()), &["river banks"]);
    assert_eq!(
        (hits(), misses(), gated.texts.load(Ordering::SeqCst) - before),
        (2, 3, 1)
    );
}
