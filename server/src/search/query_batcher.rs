//! Query embeddings of concurrent searches share forward passes. A one-text `embed` call (a
//! search's query) or an `embed_queries` call (a query and its other reading) is tokenized
//! on its caller's thread and queued, a query a text; a few model threads each take
//! whatever has queued, up to a pass size ([`QUERIES_PER_PASS`] unless set), and embed it
//! in one pass. A query alone is embedded at once (nothing waits for company), so a lone
//! search costs what it did; under load each pass reads the model's weights once for several queries, which on
//! a CPU is what a short query's pass mostly costs (bench/RESULTS.md). Other calls (an
//! upload's chunks) go straight to the model.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Condvar, Mutex};

use prometheus::Histogram;
use quarry_indexer::embed::{Embedder, Embeddings, ModelInfo, ModelTokenizer};
use quarry_indexer::{IndexerError, Result};

/// The most queries one pass embeds by default. Measured on 2 cores (msmarco-5k queries, two model
/// threads): 4 per pass gave the most queries/s, 8 fewer (padding to the longest, and rows
/// past what the matmul tiles take at once).
pub const QUERIES_PER_PASS: usize = 4;

/// The most queries one pass embeds by default with the model on a GPU. A GPU pass of
/// short queries costs its kernel launches more than its arithmetic, so up to a pass this
/// wide costs about what one query does; narrow passes from many threads queue their
/// launches behind one another on the device's one stream (16 searches at once ran at half
/// the QPS of one at a time with one thread per core and 4 queries a pass: bench/RESULTS.md).
pub const GPU_QUERIES_PER_PASS: usize = 64;

/// Model threads by default with the model on a GPU: one pass is prepared and launched
/// while the other's rows come back.
pub const GPU_QUERY_EMBED_THREADS: usize = 2;

/// How the queries of concurrent searches are embedded together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryBatching {
    /// Model threads (0: each search embeds its own query).
    pub threads: usize,
    /// The most queries one pass embeds.
    pub per_pass: usize,
}

impl QueryBatching {
    /// The default for a model on `device` (an [`Embedder::device_name`]: `cpu`, `cuda:0`,
    /// ...): on the CPU one thread per core and [`QUERIES_PER_PASS`]; on a GPU
    /// [`GPU_QUERY_EMBED_THREADS`] and [`GPU_QUERIES_PER_PASS`].
    pub fn for_device(device: &str, cores: usize) -> Self {
        if device.starts_with("cpu") {
            Self {
                threads: cores.max(1),
                per_pass: QUERIES_PER_PASS,
            }
        } else {
            Self {
                threads: GPU_QUERY_EMBED_THREADS,
                per_pass: GPU_QUERIES_PER_PASS,
            }
        }
    }

    /// These settings with what was set explicitly in their place.
    pub fn with(self, threads: Option<usize>, per_pass: Option<usize>) -> Self {
        Self {
            threads: threads.unwrap_or(self.threads),
            per_pass: per_pass.unwrap_or(self.per_pass).max(1),
        }
    }
}

type Reply = std::result::Result<Vec<f32>, String>;

struct Waiting {
    ids: Vec<u32>,
    reply: SyncSender<Reply>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiting>,
    closed: bool,
}

struct Shared {
    inner: Arc<dyn Embedder>,
    /// The most queries one pass embeds.
    per_pass: usize,
    queue: Mutex<Queue>,
    queued: Condvar,
    /// Queries per pass (`quarry_query_embed_pass_queries`).
    pass_sizes: Histogram,
}

/// An embedder whose one-text calls are embedded together with whatever other one-text
/// calls are waiting (up to `per_pass` at a time), by `threads` model threads.
pub struct BatchingEmbedder {
    shared: Arc<Shared>,
}

impl BatchingEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, threads: usize, per_pass: usize, pass_sizes: Histogram) -> Self {
        let shared = Arc::new(Shared {
            inner,
            per_pass: per_pass.max(1),
            queue: Mutex::new(Queue::default()),
            queued: Condvar::new(),
            pass_sizes,
        });
        for i in 0..threads.max(1) {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("query-embed-{i}"))
                .spawn(move || embed_passes(&shared))
                .expect("spawn a query embedding thread");
        }
        Self { shared }
    }
}

impl Drop for BatchingEmbedder {
    /// The model threads embed what is still queued, then end.
    fn drop(&mut self) {
        self.shared.queue.lock().expect("query queue lock").closed = true;
        self.shared.queued.notify_all();
    }
}

/// One model thread: a pass over the queries waiting (at most `per_pass`) at a time.
fn embed_passes(shared: &Shared) {
    loop {
        let pass: Vec<Waiting> = {
            let mut queue = shared.queue.lock().expect("query queue lock");
            while queue.waiting.is_empty() && !queue.closed {
                queue = shared.queued.wait(queue).expect("query queue lock");
            }
            if queue.waiting.is_empty() {
                return;
            }
            let take = queue.waiting.len().min(shared.per_pass);
            queue.waiting.drain(..take).collect()
        };
        shared.pass_sizes.observe(pass.len() as f64);
        let (ids, replies): (Vec<Vec<u32>>, Vec<SyncSender<Reply>>) =
            pass.into_iter().map(|waiting| (waiting.ids, waiting.reply)).unzip();
        let embedded = catch_unwind(AssertUnwindSafe(|| shared.inner.embed_tokens(&ids)));
        let rows: std::result::Result<Vec<Vec<f32>>, String> = match embedded {
            Ok(Ok(embeddings)) if embeddings.data.len() == embeddings.dim * ids.len() => Ok(embeddings
                .data
                .chunks(embeddings.dim.max(1))
                .map(<[f32]>::to_vec)
                .collect()),
            Ok(Ok(embeddings)) => Err(format!(
                "the model returned {} values for {} queries of {} dimensions",
                embeddings.data.len(),
                ids.len(),
                embeddings.dim
            )),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("the model panicked while embedding the query".to_string()),
        };
        match rows {
            Ok(rows) => replies.into_iter().zip(rows).for_each(|(reply, row)| {
                let _ = reply.send(Ok(row));
            }),
            Err(reason) => replies.into_iter().for_each(|reply| {
                let _ = reply.send(Err(reason.clone()));
            }),
        }
    }
}

impl Embedder for BatchingEmbedder {
    fn info(&self) -> &ModelInfo {
        self.shared.inner.info()
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        self.shared.inner.tokenizer()
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        self.shared.inner.embed_tokens(ids)
    }

    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        self.shared.inner.embed_tokens_reporting(ids, done)
    }

    fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        match texts {
            [_] => self.embed_queries(texts),
            _ => self.shared.inner.embed(texts),
        }
    }

    /// Each text queued as a query of its own, together (so they share a pass unless it is
    /// full), the rows gathered in order.
    fn embed_queries(&self, texts: &[&str]) -> Result<Embeddings> {
        let ids = self.tokenize(texts)?;
        let mut answers = Vec::with_capacity(ids.len());
        {
            let mut queue = self.shared.queue.lock().expect("query queue lock");
            for ids in ids {
                let (reply, answer) = sync_channel(1);
                queue.waiting.push_back(Waiting { ids, reply });
                answers.push(answer);
            }
        }
        // One model thread takes every text queued here, in one pass (as a lone query woke
        // one thread before).
        self.shared.queued.notify_one();
        let mut data = Vec::with_capacity(self.info().dim * texts.len());
        for answer in answers {
            match answer.recv() {
                Ok(Ok(row)) => data.extend(row),
                Ok(Err(reason)) => return Err(IndexerError::Embed(reason)),
                Err(_) => return Err(IndexerError::Embed("the query embedding thread ended".into())),
            }
        }
        Ok(Embeddings {
            dim: self.info().dim,
            data,
        })
    }

    fn device_name(&self) -> String {
        self.shared.inner.device_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_batching_follows_the_models_device_and_explicit_settings_win() {
        assert_eq!(
            QueryBatching::for_device("cpu", 16),
            QueryBatching {
                threads: 16,
                per_pass: QUERIES_PER_PASS
            }
        );
        let gpu = QueryBatching::for_device("cuda:0", 16);
        assert_eq!(
            gpu,
            QueryBatching {
                threads: GPU_QUERY_EMBED_THREADS,
                per_pass: GPU_QUERIES_PER_PASS
            }
        );
        // Replicas on several GPUs are named "cuda:0,cuda:1".
        assert_eq!(QueryBatching::for_device("cuda:0,cuda:1", 2), gpu);
        assert_eq!(
            gpu.with(Some(0), None),
            QueryBatching {
                threads: 0,
                per_pass: GPU_QUERIES_PER_PASS
            }
        );
        assert_eq!(
            QueryBatching::for_device("cpu", 2).with(None, Some(0)).per_pass,
            1,
            "a pass takes at least one query"
        );
    }
}
