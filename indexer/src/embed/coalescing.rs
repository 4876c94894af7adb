//! Coalesces concurrent small embedding calls — a search's one query — into shared forward
//! passes: calls that arrive while the model is busy wait, and go together in the next pass.
//! One pass over many short rows costs far less than one pass per row (a matrix of ten rows
//! leaves most of a matmul kernel's tile empty), so a loaded search server embeds more
//! queries per second; a lone call waits for nothing but a hand-over to the model thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::{Embedder, Embeddings, ModelInfo, ModelTokenizer};
use crate::error::{IndexerError, Result};

/// Calls with more texts than this go straight to the model (an upload's chunks): they fill
/// a pass on their own, and must not hold queries up behind them.
pub const MAX_COALESCED_CALL: usize = 16;
/// Texts one coalesced pass takes at most.
pub const MAX_COALESCED_TEXTS: usize = 128;

struct Call {
    ids: Vec<Vec<u32>>,
    reply: Sender<std::result::Result<Embeddings, String>>,
}

/// Calls made and forward passes run for them, since start.
#[derive(Debug, Default)]
pub struct CoalescingStats {
    pub calls: AtomicU64,
    pub passes: AtomicU64,
}

/// Wraps an embedder; small calls from many threads share forward passes on one model thread.
pub struct CoalescingEmbedder {
    inner: Arc<dyn Embedder>,
    calls: Sender<Call>,
    stats: Arc<CoalescingStats>,
}

impl CoalescingEmbedder {
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        let (calls, queue) = crossbeam_channel::unbounded();
        let stats = Arc::new(CoalescingStats::default());
        let (model, counted) = (inner.clone(), stats.clone());
        std::thread::Builder::new()
            .name("quarry-coalesce".into())
            .spawn(move || run_passes(model.as_ref(), &queue, &counted))
            .expect("spawn the embedding thread");
        Self { inner, calls, stats }
    }

    pub fn stats(&self) -> &CoalescingStats {
        &self.stats
    }
}

/// The model thread: takes the first waiting call, every call queued behind it (up to
/// [`MAX_COALESCED_TEXTS`] texts), embeds them in one go and hands each its rows. Ends when
/// the embedder is dropped.
fn run_passes(model: &dyn Embedder, queue: &Receiver<Call>, stats: &CoalescingStats) {
    while let Ok(first) = queue.recv() {
        let mut texts = first.ids.len();
        let mut calls = vec![first];
        while texts < MAX_COALESCED_TEXTS {
            let Ok(call) = queue.try_recv() else { break };
            texts += call.ids.len();
            calls.push(call);
        }
        let counts: Vec<usize> = calls.iter().map(|c| c.ids.len()).collect();
        let ids: Vec<Vec<u32>> = calls.iter_mut().flat_map(|c| std::mem::take(&mut c.ids)).collect();
        stats.passes.fetch_add(1, Ordering::Relaxed);
        match model.embed_tokens(&ids) {
            Ok(embeddings) => {
                let dim = embeddings.dim;
                let mut offset = 0;
                for (call, count) in calls.into_iter().zip(counts) {
                    let data = embeddings.data[offset * dim..(offset + count) * dim].to_vec();
                    offset += count;
                    let _ = call.reply.send(Ok(Embeddings { dim, data }));
                }
            }
            Err(e) => {
                let reason = match e {
                    IndexerError::Embed(reason) => reason,
                    other => other.to_string(),
                };
                for call in calls {
                    let _ = call.reply.send(Err(reason.clone()));
                }
            }
        }
    }
}

impl Embedder for CoalescingEmbedder {
    fn info(&self) -> &ModelInfo {
        self.inner.info()
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        self.inner.tokenizer()
    }

    /// Tokenizes on the calling thread; only the model's work is coalesced.
    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        if ids.len() > MAX_COALESCED_CALL || ids.is_empty() {
            return self.inner.embed_tokens(ids);
        }
        let (reply, answer) = crossbeam_channel::bounded(1);
        if self.calls.send(Call { ids: ids.to_vec(), reply }).is_err() {
            return self.inner.embed_tokens(ids); // the model thread is gone (it panicked)
        }
        match answer.recv() {
            Ok(rows) => rows.map_err(IndexerError::Embed),
            Err(_) => self.inner.embed_tokens(ids),
        }
    }

    fn device_name(&self) -> String {
        self.inner.device_name()
    }
}
